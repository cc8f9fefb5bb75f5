/**
 * The Flux health check of the example Kustomization (examples/gitops/flux/tidb-clusters.yaml), its
 * healthCheckExprs evaluated with a real CEL implementation the way kustomize-controller evaluates
 * them (test/support/flux-cel.mjs), on the cases the Argo CD check is tested with: both tools must
 * agree on every one, and on any StatefulSet a property generates.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { parse } from 'yaml';
import { builtinStatefulSetHealth } from '../../support/argocd-builtin-health';
import { runHealth } from '../../support/argocd-lua';
import { FLUX_OF, HEALTH_CASES, statefulSet, type FluxStatus, type Obj } from '../../support/statefulset-health-cases';
import { TEST_DIR } from '../../support/paths';

const root = join(TEST_DIR, '..');
const kustomization = parse(readFileSync(join(root, 'examples/gitops/flux/tidb-clusters.yaml'), 'utf8'));
const exprs = kustomization.spec.healthCheckExprs.find((h: Obj) => h.apiVersion === 'apps/v1' && h.kind === 'StatefulSet');

/** Flux's verdict on each object, from one run of the CEL evaluator. */
function flux(objects: readonly Obj[]): string[] {
  const r = spawnSync(process.execPath, [join(TEST_DIR, 'support/flux-cel.mjs')], {
    input: JSON.stringify({ exprs, objects }),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout);
}

/** Argo CD's verdict from the Lua check. */
const argo = (obj: Obj): string => runHealth(obj).status;

test('the Kustomization waits on its objects with expressions for StatefulSets', () => {
  expect(kustomization.spec.wait).toBe(true);
  expect(Object.keys(exprs).sort()).toEqual(['apiVersion', 'current', 'failed', 'inProgress', 'kind']);
});

describe('healthCheckExprs on the shared cases', () => {
  const results = flux(HEALTH_CASES.map((c) => c.object));
  test.each(HEALTH_CASES.map((c, i) => [c.name, c, i] as const))('%s', (_name, c, i) => {
    expect(results[i]).toBe(FLUX_OF[c.argo]);
  });

  test('the cases the issue named: scale-out from Git, OnDelete, pending and refused scale-in', () => {
    const of = (prefix: string) => results[HEALTH_CASES.findIndex((c) => c.name.startsWith(prefix))];
    expect(of('scaling out from Git: spec.replicas raised to 3')).toBe('InProgress');
    expect(of('OnDelete: a template change')).toBe('Current');
    expect(of('pending scale-in: the annotation says 2')).toBe('InProgress');
    expect(of('refused scale-in')).toBe('Failed');
  });
});

test('Flux and Argo CD agree on any StatefulSet, rendered by tidb-gitops or not (property)', () => {
  const count = fc.integer({ min: 0, max: 6 });
  const arbitrary = fc.record({
    ours: fc.boolean(),
    desired: count,
    failover: fc.option(fc.integer({ min: 1, max: 2 }), { nil: undefined }),
    refused: fc.boolean(),
    generation: fc.integer({ min: 1, max: 4 }),
    observedLag: fc.option(fc.integer({ min: 0, max: 1 }), { nil: undefined }),
    replicas: fc.option(count, { nil: undefined }),
    strategy: fc.constantFrom(undefined, 'RollingUpdate', 'OnDelete'),
    partition: fc.option(count, { nil: undefined }),
    statusReplicas: fc.option(count, { nil: undefined }),
    ready: fc.option(count, { nil: undefined }),
    updated: fc.option(count, { nil: undefined }),
    currentRevision: fc.constantFrom(undefined, 'r1', 'r2'),
    updateRevision: fc.constantFrom(undefined, 'r1', 'r2'),
    hasStatus: fc.boolean(),
  });
  // The API server always returns a status (replicas and availableReplicas are never left out), so
  // "no status" is that empty one, as Flux would see it.
  const objects = fc.sample(arbitrary, { seed: 24, numRuns: 600 }).map((a) => {
    const annotations: Obj = a.ours ? { 'tidb-gitops.io/replicas': String(a.desired) } : {};
    if (a.ours && a.failover !== undefined) annotations['tidb-gitops.io/failover-replicas'] = String(a.failover);
    if (a.ours && a.refused) annotations['tidb-gitops.io/refused'] = 'would leave fewer stores than max-replicas';
    const sts = statefulSet({
      generation: a.generation,
      annotations: a.ours ? annotations : null,
      spec: {
        replicas: a.replicas,
        updateStrategy:
          a.strategy === undefined
            ? undefined
            : { type: a.strategy, ...(a.strategy === 'RollingUpdate' ? { rollingUpdate: { partition: a.partition } } : {}) },
      },
      status: a.hasStatus
        ? {
            observedGeneration: a.observedLag === undefined ? undefined : a.generation - a.observedLag,
            replicas: a.statusReplicas,
            readyReplicas: a.ready,
            updatedReplicas: a.updated,
            currentRevision: a.currentRevision,
            updateRevision: a.updateRevision,
          }
        : null,
    });
    if (a.ours) expect(sts.metadata.annotations['tidb-gitops.io/settings']).toBe('{}');
    return JSON.parse(JSON.stringify(sts)) as Obj;
  });
  const verdicts = flux(objects);
  const seen = new Set<FluxStatus>();
  objects.forEach((o, i) => {
    const expected = FLUX_OF[argo(o) as keyof typeof FLUX_OF];
    if (verdicts[i] !== expected) throw new Error(`Flux says ${verdicts[i]}, Argo CD ${argo(o)} for\n${JSON.stringify(o, null, 1)}`);
    if (o.metadata.annotations?.['tidb-gitops.io/replicas'] === undefined) expect(argo(o)).toBe(builtinStatefulSetHealth(o).status);
    seen.add(expected);
  });
  // The sample reaches every verdict, so agreement is not vacuous.
  expect([...seen].sort()).toEqual(['Current', 'Failed', 'InProgress']);
});

describe("healthCheckExprs for a BackupSchedule's CronJob", () => {
  const cronExprs = kustomization.spec.healthCheckExprs.find((h: Obj) => h.apiVersion === 'batch/v1' && h.kind === 'CronJob');
  const verdict = (status: Obj): string => {
    const r = spawnSync(process.execPath, [join(TEST_DIR, 'support/flux-cel.mjs')], {
      input: JSON.stringify({
        exprs: cronExprs,
        objects: [{ apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'backup-n', generation: 1 }, spec: {}, status }],
      }),
      encoding: 'utf8',
    });
    if (r.status !== 0) throw new Error(r.stderr);
    return JSON.parse(r.stdout)[0];
  };
  test.each([
    ['never run', {}, 'Current'],
    ['a run under way', { active: [{ name: 'backup-n-1' }], lastScheduleTime: '2026-11-27T02:00:00Z' }, 'InProgress'],
    ['the last run succeeded', { lastScheduleTime: '2026-11-27T02:00:00Z', lastSuccessfulTime: '2026-11-27T02:04:10Z' }, 'Current'],
    [
      'the last run failed after an earlier success',
      { lastScheduleTime: '2026-11-28T02:00:00Z', lastSuccessfulTime: '2026-11-27T02:04:10Z' },
      'Failed',
    ],
    ['no run ever succeeded', { lastScheduleTime: '2026-11-27T02:00:00Z' }, 'Failed'],
  ])('%s: %s', (_name, status, expected) => {
    expect(verdict(status)).toBe(expected);
  });
});
