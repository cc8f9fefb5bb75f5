// Evaluates a Flux Kustomization's healthCheckExprs against objects, the way kustomize-controller
// does (fluxcd/pkg runtime/cel/status_evaluator.go, StatusEvaluator.Evaluate; the environment in
// runtime/cel/expression.go): the object's top-level fields are the variables; an
// status.observedGeneration that differs from metadata.generation is InProgress before any
// expression; then inProgress, failed and current are tried in that order, and InProgress when none
// holds. Optional types are on there, as here. A top-level field the object lacks is an error there
// as here; the API server always returns a StatefulSet with a status. Integers are int64 there, so whole numbers become
// BigInt here.
//
// Input on stdin: {"exprs": {...}, "objects": [...]}; output: one status (or "error: ...") per object.
import { Environment } from '@marcbachmann/cel-js';

const input = JSON.parse(
  await new Promise((resolve) => {
    let text = '';
    process.stdin.on('data', (d) => (text += d)).on('end', () => resolve(text));
  }),
);

const env = new Environment({ enableOptionalTypes: true, unlistedVariablesAreDyn: true });
const ints = (v) =>
  Array.isArray(v)
    ? v.map(ints)
    : v !== null && typeof v === 'object'
      ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, ints(x)]))
      : Number.isInteger(v)
        ? BigInt(v)
        : v;

function evaluate(exprs, obj) {
  const observed = obj.status?.observedGeneration;
  const generation = obj.metadata?.generation;
  if (Number.isInteger(observed) && Number.isInteger(generation) && observed !== generation) return 'InProgress';
  const vars = ints(obj);
  for (const [key, status] of [
    ['inProgress', 'InProgress'],
    ['failed', 'Failed'],
    ['current', 'Current'],
  ]) {
    if (!exprs[key]) continue;
    const result = env.evaluate(exprs[key], vars);
    if (typeof result !== 'boolean') throw new Error(`${key} is not a boolean: ${String(result)}`);
    if (result) return status;
  }
  return 'InProgress';
}

process.stdout.write(
  JSON.stringify(
    input.objects.map((o) => {
      try {
        return evaluate(input.exprs, o);
      } catch (e) {
        return `error: ${e.message}`;
      }
    }),
  ),
);
