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
import { builtinStatefulSetHealth } from './support/argocd-builtin-health';
import { FLUX_OF, HEALTH_CASES, statefulSet, type FluxStatus, type Obj } from './support/statefulset-health-cases';

// fengari ships no type declarations.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { lua, lauxlib, lualib, to_luastring } = require('fengari');

const root = join(__dirname, '..');
const kustomization = parse(readFileSync(join(root, 'examples/gitops/flux/tidb-clusters.yaml'), 'utf8'));
const exprs = kustomization.spec.healthCheckExprs.find((h: Obj) => h.apiVersion === 'apps/v1' && h.kind === 'StatefulSet');
const lua51 = readFileSync(join(root, 'argocd/health/statefulset.lua'), 'utf8');

/** Flux's verdict on each object, from one run of the CEL evaluator. */
function flux(objects: readonly Obj[]): string[] {
  const r = spawnSync(process.execPath, [join(__dirname, 'support/flux-cel.mjs')], { input: JSON.stringify({ exprs, objects }), encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout);
}

/** Argo CD's verdict from the Lua check (base and table libraries only, as Argo CD opens them). */
function argo(obj: Obj): string {
  const L = lauxlib.luaL_newstate();
  for (const [name, open] of [
    ['_G', lualib.luaopen_base],
    ['table', lualib.luaopen_table],
  ] as const) {
    lauxlib.luaL_requiref(L, to_luastring(name), open, 1);
    lua.lua_pop(L, 1);
  }
  const push = (v: unknown): void => {
    if (v === null || v === undefined) lua.lua_pushnil(L);
    else if (typeof v === 'boolean') lua.lua_pushboolean(L, v);
    else if (typeof v === 'number') lua.lua_pushnumber(L, v);
    else if (typeof v === 'string') lua.lua_pushstring(L, to_luastring(v));
    else {
      lua.lua_createtable(L, 0, 0);
      for (const [k, x] of Object.entries(v as Obj)) {
        push(x);
        lua.lua_setfield(L, -2, to_luastring(k));
      }
    }
  };
  push(obj);
  lua.lua_setglobal(L, to_luastring('obj'));
  if (lauxlib.luaL_loadbuffer(L, to_luastring(lua51), null, to_luastring('=statefulset.lua')) !== lua.LUA_OK || lua.lua_pcall(L, 0, 1, 0) !== lua.LUA_OK) {
    throw new Error(lua.lua_tojsstring(L, -1));
  }
  lua.lua_getfield(L, -1, to_luastring('status'));
  return lua.lua_tojsstring(L, -1);
}

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
        updateStrategy: a.strategy === undefined ? undefined : { type: a.strategy, ...(a.strategy === 'RollingUpdate' ? { rollingUpdate: { partition: a.partition } } : {}) },
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
