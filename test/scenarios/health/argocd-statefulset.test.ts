/**
 * The StatefulSet health check Argo CD runs (argocd/health/statefulset.lua), executed with fengari, a
 * Lua 5.3 VM, set up the way Argo CD sets up gopher-lua (Lua 5.1): only the base and table libraries,
 * the live object as the global `obj`, the returned table read as the health. The cases are shared
 * with the Flux test (test/support/statefulset-health-cases.ts); StatefulSets not rendered by
 * tidb-gitops are checked against a port of Argo CD's built-in check as well.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import fc from 'fast-check';
import { parseAllDocuments } from 'yaml';
import { builtinStatefulSetHealth } from '../../support/argocd-builtin-health';
import { HEALTH_LUA as script, runHealth, type Health } from '../../support/argocd-lua';
import { HEALTH_CASES, statefulSet, type Obj } from '../../support/statefulset-health-cases';
import { TEST_DIR } from '../../support/paths';

const root = join(TEST_DIR, '..');

/** Runs with both number representations and checks they agree. */
function health(obj: unknown): Health {
  const asFloat = runHealth(obj, 'float');
  expect(runHealth(obj, 'integer')).toEqual(asFloat);
  return asFloat;
}

describe('argocd/health/statefulset.lua', () => {
  test.each(HEALTH_CASES.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const h = health(c.object);
    expect(h.status).toBe(c.argo);
    if (c.message !== undefined) expect(h.message).toBe(c.message);
  });

  test('StatefulSets not rendered by tidb-gitops get exactly what the built-in check gives', () => {
    const others = HEALTH_CASES.filter((c) => c.object.metadata.annotations?.['tidb-gitops.io/replicas'] === undefined);
    expect(others.length).toBeGreaterThanOrEqual(6);
    for (const c of others) expect(health(c.object)).toEqual(builtinStatefulSetHealth(c.object));
  });

  test('a partitioned canary of another app is Healthy, as with the built-in check, not Progressing', () => {
    const canary = HEALTH_CASES.find((c) => c.name.startsWith('other app: a partitioned canary with'))!;
    expect(health(canary.object).status).toBe('Healthy');
    // The same state with the tidb-gitops annotation is a rollout the controller is still stepping.
    const ours = { ...canary.object, metadata: { ...canary.object.metadata, annotations: { 'tidb-gitops.io/replicas': '3' } } };
    expect(health(ours).status).toBe('Progressing');
  });

  test('the fallback agrees with the built-in check on any StatefulSet (property)', () => {
    const count = fc.option(fc.integer({ min: 0, max: 12 }), { nil: undefined });
    const revision = fc.constantFrom(undefined, 'r1', 'r2');
    const arbitrary = fc.record({
      generation: fc.integer({ min: 1, max: 5 }),
      observedLag: fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined }),
      replicas: count,
      strategy: fc.constantFrom(undefined, 'RollingUpdate', 'OnDelete'),
      rollingUpdate: fc.option(fc.record({ partition: count }, { requiredKeys: [] }), { nil: undefined }),
      ready: count,
      updated: count,
      current: count,
      currentRevision: revision,
      updateRevision: revision,
      hasStatus: fc.boolean(),
    });
    fc.assert(
      fc.property(arbitrary, (a) => {
        const sts: Obj = {
          apiVersion: 'apps/v1',
          kind: 'StatefulSet',
          metadata: { name: 'web', generation: a.generation },
          spec: {
            replicas: a.replicas,
            updateStrategy: a.strategy === undefined ? undefined : { type: a.strategy, rollingUpdate: a.rollingUpdate },
          },
        };
        if (!a.hasStatus) sts.status = { replicas: 0, availableReplicas: 0 };
        else {
          sts.status = {
            observedGeneration: a.observedLag === undefined ? undefined : a.generation - a.observedLag,
            readyReplicas: a.ready,
            updatedReplicas: a.updated,
            currentReplicas: a.current,
            currentRevision: a.currentRevision,
            updateRevision: a.updateRevision,
          };
        }
        expect(runHealth(sts)).toEqual(builtinStatefulSetHealth(sts));
      }),
      { seed: 14, numRuns: 400 },
    );
  });

  test('missing numbers count as 0, a missing spec.replicas as 1', () => {
    const bare = {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'x', generation: 1, annotations: { 'tidb-gitops.io/replicas': '1' } },
      spec: {},
      status: { observedGeneration: 1 },
    };
    expect(health(bare)).toEqual({ status: 'Progressing', message: '0 of 1 Pods ready' });
    const readyOne = { ...bare, status: { observedGeneration: 1, readyReplicas: 1 } };
    expect(health(readyOne)).toEqual({ status: 'Healthy', message: '1 of 1 Pods ready' });
    expect(health(statefulSet()).status).toBe('Healthy');
  });

  test('uses nothing Lua 5.1 or the base and table libraries lack', () => {
    const code = script
      .split('\n')
      .map((line) => line.replace(/--.*$/, ''))
      .join('\n');
    expect(code).not.toMatch(/\/\/|\bgoto\b|::|[&|~]\s*\d|<<|>>/); // integer division, goto, labels, bit operators
    expect(code).not.toMatch(/\b(string|math|os|io|utf8)\.|:\w+\(/); // libraries Argo CD does not open, string methods
  });

  test('install-patch puts the file into argocd-cm byte for byte', () => {
    const r = spawnSync(process.execPath, [join(root, 'bin/tidb-gitops.js'), 'argocd', 'install-patch', '--only', 'argocd-cm'], {
      encoding: 'utf8',
    });
    expect(r.status).toBe(0);
    const [cm] = parseAllDocuments(r.stdout).map((d) => d.toJS());
    expect(cm.data['resource.customizations.health.apps_StatefulSet']).toBe(script);
  });
});
