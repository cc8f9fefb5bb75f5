/**
 * The StatefulSet health check Argo CD runs (argocd/health/statefulset.lua), executed with fengari, a
 * Lua 5.3 VM, set up the way Argo CD sets up gopher-lua (Lua 5.1): only the base and table libraries,
 * the live object as the global `obj`, the returned table read as the health.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

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

type Obj = Record<string, any>;

/** A StatefulSet as the renderer writes it and the API server returns it (basic-tikv, desired 3 replicas). */
function statefulSet(overrides: { generation?: number; spec?: Obj; status?: Obj | null; annotations?: Obj } = {}): Obj {
  const obj: Obj = {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: {
      name: 'basic-tikv',
      namespace: 'tidb',
      generation: overrides.generation ?? 1,
      labels: { 'app.kubernetes.io/component': 'tikv', 'app.kubernetes.io/instance': 'basic' },
      annotations: overrides.annotations ?? { 'tidb-gitops.io/replicas': '3', 'tidb-gitops.io/settings': '{}' },
    },
    spec: {
      replicas: 3,
      serviceName: 'basic-tikv-peer',
      podManagementPolicy: 'Parallel',
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 3 } },
      selector: { matchLabels: { 'app.kubernetes.io/component': 'tikv' } },
      template: { metadata: { labels: {} }, spec: { containers: [{ name: 'tikv', image: 'pingcap/tikv:v8.5.7' }] } },
      ...overrides.spec,
    },
  };
  if (overrides.status !== null) {
    obj.status = {
      observedGeneration: overrides.generation ?? 1,
      replicas: 3,
      readyReplicas: 3,
      currentReplicas: 3,
      updatedReplicas: 3,
      availableReplicas: 3,
      currentRevision: 'basic-tikv-7d9f8b6c5',
      updateRevision: 'basic-tikv-7d9f8b6c5',
      collisionCount: 0,
      ...overrides.status,
    };
  }
  return obj;
}

describe('argocd/health/statefulset.lua', () => {
  test('a fresh StatefulSet the StatefulSet controller has not seen yet is Progressing', () => {
    expect(health(statefulSet({ status: null }))).toEqual({
      status: 'Progressing',
      message: 'waiting for the StatefulSet controller to observe generation 1',
    });
  });

  test('a fresh StatefulSet at the default one replica, while the controller scales to the annotation, is Progressing', () => {
    // No spec.replicas in the rendered object: the API server defaults it to 1.
    const fresh = statefulSet({
      spec: { replicas: 1 },
      status: { replicas: 1, readyReplicas: 0, currentReplicas: 1, updatedReplicas: 1, availableReplicas: 0 },
    });
    expect(health(fresh)).toEqual({ status: 'Progressing', message: '0 of 1 Pods ready; scaling to 3 replicas' });
    const oneReady = statefulSet({ spec: { replicas: 1 }, status: { replicas: 1, readyReplicas: 1, currentReplicas: 1, updatedReplicas: 1 } });
    expect(health(oneReady)).toEqual({
      status: 'Progressing',
      message: 'scaling to 3 replicas: 1 so far; the tidb-gitops controller adds Pods step by step',
    });
  });

  test('scaling: fewer ready Pods than spec.replicas is Progressing', () => {
    const scaling = statefulSet({ spec: { replicas: 5 }, annotations: { 'tidb-gitops.io/replicas': '5' }, status: { replicas: 5, readyReplicas: 3 } });
    expect(health(scaling)).toEqual({ status: 'Progressing', message: '3 of 5 Pods ready' });
  });

  test('mid-rollout with the partition held at the replica count is Progressing, where the built-in check says Healthy', () => {
    // A new template arrived from Git; the tidb-gitops controller has not stepped a Pod yet.
    const held = statefulSet({ generation: 2, status: { updateRevision: 'basic-tikv-5c4b3a291', updatedReplicas: 0, currentReplicas: 3 } });
    expect(health(held)).toEqual({
      status: 'Progressing',
      message: 'rolling update: 0 of 3 Pods updated; the tidb-gitops controller steps the partition one Pod at a time',
    });
    // Partition lowered to 2: Pod 2 restarts at the new revision.
    const stepping = statefulSet({
      generation: 3,
      spec: { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } },
      status: { updateRevision: 'basic-tikv-5c4b3a291', updatedReplicas: 1, currentReplicas: 2, readyReplicas: 2 },
    });
    expect(health(stepping)).toEqual({ status: 'Progressing', message: 'rolling update: 1 of 3 Pods updated' });
    // Pod 2 is back, the partition is held again while the next Pod is prepared.
    const between = statefulSet({ generation: 4, status: { updateRevision: 'basic-tikv-5c4b3a291', updatedReplicas: 1, currentReplicas: 2 } });
    expect(health(between).status).toBe('Progressing');
    expect(health(between).message).toBe('rolling update: 1 of 3 Pods updated; the tidb-gitops controller steps the partition one Pod at a time');
  });

  test('a finished rollout (current revision caught up, every Pod ready) is Healthy', () => {
    const done = statefulSet({ generation: 6, status: { currentRevision: 'basic-tikv-5c4b3a291', updateRevision: 'basic-tikv-5c4b3a291' } });
    expect(health(done)).toEqual({ status: 'Healthy', message: '3 of 3 Pods ready' });
  });

  test('a spec change the StatefulSet controller has not observed is Progressing', () => {
    const stale = statefulSet({ generation: 5, status: { observedGeneration: 4 } });
    expect(health(stale)).toEqual({ status: 'Progressing', message: 'waiting for the StatefulSet controller to observe generation 5' });
    const noObserved = statefulSet({ status: { observedGeneration: undefined } });
    expect(health(noObserved).status).toBe('Progressing');
  });

  test('missing numbers count as 0, a missing spec.replicas as 1', () => {
    const bare = { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'x', generation: 1 }, spec: {}, status: { observedGeneration: 1 } };
    expect(health(bare)).toEqual({ status: 'Progressing', message: '0 of 1 Pods ready' });
    const readyOne = { ...bare, status: { observedGeneration: 1, readyReplicas: 1 } };
    expect(health(readyOne)).toEqual({ status: 'Healthy', message: '1 of 1 Pods ready' });
  });

  test('counts print as whole numbers, also past one digit', () => {
    const big = statefulSet({ spec: { replicas: 12 }, annotations: {}, status: { replicas: 12, readyReplicas: 10 } });
    expect(health(big)).toEqual({ status: 'Progressing', message: '10 of 12 Pods ready' });
  });

  test('a StatefulSet scaled to zero is Healthy', () => {
    const zero = statefulSet({ spec: { replicas: 0 }, annotations: { 'tidb-gitops.io/replicas': '0' }, status: { replicas: 0, readyReplicas: 0, updatedReplicas: 0 } });
    expect(health(zero)).toEqual({ status: 'Healthy', message: '0 of 0 Pods ready' });
  });

  test('OnDelete: Pods waiting to be deleted keep it Healthy, as nothing would ever finish the rollout', () => {
    const onDelete = statefulSet({
      spec: { updateStrategy: { type: 'OnDelete' } },
      status: { updateRevision: 'basic-tikv-5c4b3a291', updatedReplicas: 1 },
    });
    expect(health(onDelete)).toEqual({
      status: 'Healthy',
      message: '3 of 3 Pods ready; 1 at the latest revision, the others update when they are deleted (OnDelete)',
    });
  });

  test("another application's StatefulSet (no tidb-gitops annotation) follows the same rules", () => {
    const plain = statefulSet({ annotations: {}, spec: { updateStrategy: { type: 'RollingUpdate' } } });
    expect(health(plain)).toEqual({ status: 'Healthy', message: '3 of 3 Pods ready' });
    const rolling = statefulSet({ annotations: {}, spec: { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } } }, status: { updateRevision: 'r2', updatedReplicas: 2 } });
    expect(health(rolling)).toEqual({ status: 'Progressing', message: 'rolling update: 2 of 3 Pods updated' });
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
