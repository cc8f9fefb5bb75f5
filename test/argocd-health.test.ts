/**
 * The StatefulSet health check Argo CD runs (argocd/health/statefulset.lua), executed with fengari, a
 * Lua 5.3 VM, set up the way Argo CD sets up gopher-lua (Lua 5.1): only the base and table libraries,
 * the live object as the global `obj`, the returned table read as the health. The cases are shared
 * with the Flux test (test/support/statefulset-health-cases.ts); StatefulSets not rendered by
 * tidb-gitops are checked against a port of Argo CD's built-in check as well.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { parseAllDocuments } from 'yaml';
import { builtinStatefulSetHealth } from './support/argocd-builtin-health';
import { HEALTH_CASES, statefulSet, type Obj } from './support/statefulset-health-cases';

// fengari ships no type declarations.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { lua, lauxlib, lualib, to_luastring } = require('fengari');

const root = join(__dirname, '..');
const LUA_FILE = join(root, 'argocd/health/statefulset.lua');
const script = readFileSync(LUA_FILE, 'utf8');

interface Health {
  status: string;
  message: string;
}

/**
 * gopher-lua holds every number as a float64; Lua 5.3 tells integers from floats. Running each case
 * both ways shows the messages never depend on it (no "3.0").
 */
type NumberMode = 'float' | 'integer';

function pushValue(L: unknown, value: unknown, mode: NumberMode): void {
  if (value === null || value === undefined) lua.lua_pushnil(L);
  else if (typeof value === 'boolean') lua.lua_pushboolean(L, value);
  else if (typeof value === 'number') {
    if (mode === 'integer' && Number.isInteger(value)) lua.lua_pushinteger(L, value);
    else lua.lua_pushnumber(L, value);
  } else if (typeof value === 'string') lua.lua_pushstring(L, to_luastring(value));
  else if (Array.isArray(value)) {
    lua.lua_createtable(L, value.length, 0);
    value.forEach((item, i) => {
      pushValue(L, item, mode);
      lua.lua_rawseti(L, -2, i + 1);
    });
  } else {
    lua.lua_createtable(L, 0, 0);
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      pushValue(L, v, mode);
      lua.lua_setfield(L, -2, to_luastring(k));
    }
  }
}

function stringField(L: unknown, name: string): string {
  lua.lua_getfield(L, -1, to_luastring(name));
  const text = lua.lua_type(L, -1) === lua.LUA_TSTRING ? lua.lua_tojsstring(L, -1) : `<${lua.lua_typename(L, lua.lua_type(L, -1))}>`;
  lua.lua_pop(L, 1);
  return text;
}

function runHealth(obj: unknown, mode: NumberMode = 'float'): Health {
  const L = lauxlib.luaL_newstate();
  for (const [name, open] of [
    ['_G', lualib.luaopen_base],
    ['table', lualib.luaopen_table],
  ] as const) {
    lauxlib.luaL_requiref(L, to_luastring(name), open, 1);
    lua.lua_pop(L, 1);
  }
  pushValue(L, obj, mode);
  lua.lua_setglobal(L, to_luastring('obj'));
  if (lauxlib.luaL_loadbuffer(L, to_luastring(script), null, to_luastring('=statefulset.lua')) !== lua.LUA_OK) {
    throw new Error(`does not compile: ${lua.lua_tojsstring(L, -1)}`);
  }
  if (lua.lua_pcall(L, 0, 1, 0) !== lua.LUA_OK) throw new Error(`failed: ${lua.lua_tojsstring(L, -1)}`);
  if (lua.lua_type(L, -1) !== lua.LUA_TTABLE) throw new Error('did not return a table');
  return { status: stringField(L, 'status'), message: stringField(L, 'message') };
}

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
          spec: { replicas: a.replicas, updateStrategy: a.strategy === undefined ? undefined : { type: a.strategy, rollingUpdate: a.rollingUpdate } },
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
    const bare = { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'x', generation: 1, annotations: { 'tidb-gitops.io/replicas': '1' } }, spec: {}, status: { observedGeneration: 1 } };
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
    const r = spawnSync(process.execPath, [join(root, 'bin/tidb-gitops.js'), 'argocd', 'install-patch', '--only', 'argocd-cm'], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    const [cm] = parseAllDocuments(r.stdout).map((d) => d.toJS());
    expect(cm.data['resource.customizations.health.apps_StatefulSet']).toBe(script);
  });
});
