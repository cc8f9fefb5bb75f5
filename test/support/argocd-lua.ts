/**
 * Runs argocd/health/statefulset.lua the way Argo CD runs a health customization: a Lua VM (fengari,
 * Lua 5.3, standing in for Argo CD's gopher-lua 5.1) with only the base and table libraries, the
 * live object as the global `obj`, the returned table read as the health.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

// fengari ships no type declarations.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { lua, lauxlib, lualib, to_luastring } = require('fengari');

export const HEALTH_LUA = readFileSync(join(__dirname, '../../argocd/health/statefulset.lua'), 'utf8');
/** The check of a one-shot operation's ConfigMap. */
export const CONFIGMAP_HEALTH_LUA = readFileSync(join(__dirname, '../../argocd/health/configmap.lua'), 'utf8');
/** The check of a CronJob (a BackupSchedule's, and any other). */
export const CRONJOB_HEALTH_LUA = readFileSync(join(__dirname, '../../argocd/health/cronjob.lua'), 'utf8');

export interface Health {
  status: string;
  message: string;
}

/**
 * gopher-lua holds every number as a float64; Lua 5.3 tells integers from floats. Running each case
 * both ways shows the messages never depend on it (no "3.0").
 */
export type NumberMode = 'float' | 'integer';

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

export function runHealth(obj: unknown, mode: NumberMode = 'float', script = HEALTH_LUA): Health {
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
  if (
    lauxlib.luaL_loadbuffer(L, to_luastring(script), null, to_luastring(script === HEALTH_LUA ? '=statefulset.lua' : '=configmap.lua')) !==
    lua.LUA_OK
  ) {
    throw new Error(`does not compile: ${lua.lua_tojsstring(L, -1)}`);
  }
  if (lua.lua_pcall(L, 0, 1, 0) !== lua.LUA_OK) throw new Error(`failed: ${lua.lua_tojsstring(L, -1)}`);
  if (lua.lua_type(L, -1) !== lua.LUA_TTABLE) throw new Error('did not return a table');
  return { status: stringField(L, 'status'), message: stringField(L, 'message') };
}
