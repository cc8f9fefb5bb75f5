import { ApiObject } from 'cdk8s';
import type { Construct } from 'constructs';
import { ApiRefusalError, apiRefusals } from './api-check';

/** Constructs whose objects are checked at synthesis: a construct inside one adds no check of its own. */
const CHECKED = new WeakSet<Construct>();

/**
 * The objects, when the API server would take every one; else {@link ApiRefusalError} listing every
 * problem, each with the path of the construct that made its object (`constructs`, by index), so
 * that it can be told which document it comes from.
 */
export function refusedUnlessValid<T extends Record<string, unknown>>(
  objects: T[],
  kubeMinor: number,
  constructs: readonly string[] = [],
): T[] {
  const refusals = objects.flatMap((o, i) =>
    apiRefusals([o], kubeMinor).map((r) => (constructs[i] === undefined ? r : { ...r, construct: constructs[i] })),
  );
  if (refusals.length > 0) throw new ApiRefusalError(refusals);
  return objects;
}

/**
 * Refuses at synthesis (`app.synth()`, `Chart.toJson()`, which validate every construct before
 * anything is written) what the API server would refuse among the objects under `scope`: as they are
 * then, after whatever the app added or patched, however the constructs were composed. Each object
 * is checked once: a scope inside one already checked adds nothing.
 */
export function refuseAtSynthesis(scope: Construct, kubeMinor: number): void {
  for (let s = scope.node.scope; s; s = s.node.scope) if (CHECKED.has(s)) return;
  CHECKED.add(scope);
  scope.node.addValidation({
    validate: () => {
      // Thrown rather than returned, so that the app can tell it from cdk8s's own errors.
      const made = scope.node.findAll().filter((c): c is ApiObject => c instanceof ApiObject);
      refusedUnlessValid(
        made.map((c) => c.toJson() as Record<string, unknown>),
        kubeMinor,
        made.map((c) => c.node.path),
      );
      return [];
    },
  });
}
