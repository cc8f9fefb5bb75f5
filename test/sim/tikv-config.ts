/**
 * TiKV's config on its status port, for the TiKV simulator (tikv.ts): `GET /config` and
 * `POST /config`, as tikv/tikv answers them (src/server/status_server/mod.rs `get_config`,
 * `update_config`, `decode_json`; src/config/mod.rs `ConfigController::update`, `to_config_change`,
 * `to_change_value`, `serde_to_online_config`; v7.5 ... v8.5):
 *
 * - A server starts with its config file (the Pod's ConfigMap) over a few defaults; `GET /config`
 *   answers it as nested JSON, sizes as `ReadableSize` writes them (`0KiB`, `512MiB`, else bytes
 *   `B`) and durations as `ReadableDuration` does (`1h30m`, `10s`, `0s`)
 *   (components/tikv_util/src/config.rs `Display`).
 * - `POST /config` takes a JSON object of dotted keys; a value is a bool, number or string
 *   (`decode_json`: an array is `"array type are not supported"`, another kind or a body that is not
 *   an object `"wrong format"`, bad JSON serde's error), all answered 500 `failed to decode, error:
 *   <Debug of the error>`. The keys are checked before any is changed: the first segment the
 *   release does not read is `unexpect fields: <segment>`, a key the release does not change online
 *   (`#[online_config(skip)]`) `config <field> can not be changed`, a value that does not parse as
 *   the key's type `failed to parse: <value>`, each 500 `failed to update, error: "<message>"`.
 *   Segments are named as `serde_to_online_config` renames them (`raftstore` to `raft_store`, `-` to
 *   `_`). Which keys a release reads and changes online comes from the generated config schema
 *   (src/tidbcluster/config-schema), itself taken from the release's source.
 * - With `persist=false` (from v7.5) the change is made and the file is left alone: 200, no body.
 *   v7.1 has no `persist` and writes the file, a read-only ConfigMap mount: the change is made, then
 *   500 `config changed, but failed to persist change due to err: Os { code: 30, kind:
 *   ReadOnlyFilesystem, message: "Read-only file system" }`. (v7.5+ without `persist=false` too.)
 * - Changes live in the process: a restart reads the file again.
 */
import { parseToml, type TomlTable } from '../../src/base/toml';
import { configSchema, linesOf, nodeOf, onlineAt, readAt, type ConfigNode } from '../../src/tidbcluster/config-schema';
import { flattenConfig, parseDurationMs, parseSize, sentValue } from '../../src/controller/plan/online-config';

/** A few of TiKV's defaults (src/config/mod.rs, components/raftstore/src/store/config.rs), reported when the file sets none. */
export const TIKV_DEFAULTS: Readonly<Record<string, string | number | boolean>> = {
  'log.level': 'info',
  'raftstore.apply-pool-size': 2,
  'raftstore.store-pool-size': 2,
  'raftstore.raft-base-tick-interval': '1s',
  'raftstore.region-split-check-diff': '6MiB',
  'server.grpc-concurrency': 5,
  'storage.reserve-space': '5GiB',
  'storage.scheduler-worker-pool-size': 4,
};

const KIB = 1024;
const UNITS: [number, string][] = [
  [KIB ** 5, 'PiB'],
  [KIB ** 4, 'TiB'],
  [KIB ** 3, 'GiB'],
  [KIB ** 2, 'MiB'],
  [KIB, 'KiB'],
];

/** `ReadableSize`'s Display. */
export function readableSize(bytes: number): string {
  if (bytes === 0) return '0KiB';
  for (const [unit, name] of UNITS) if (bytes % unit === 0) return `${bytes / unit}${name}`;
  return `${bytes}B`;
}

/** `ReadableDuration`'s Display (days, hours, minutes, seconds, ms, us; `0s` for none). */
export function readableDuration(ms: number): string {
  let us = Math.round(ms * 1000);
  let out = '';
  for (const [unit, name] of [
    [86_400_000_000, 'd'],
    [3_600_000_000, 'h'],
    [60_000_000, 'm'],
    [1_000_000, 's'],
    [1000, 'ms'],
    [1, 'us'],
  ] as const) {
    if (us >= unit) {
      out += `${Math.floor(us / unit)}${name}`;
      us %= unit;
    }
  }
  return out || '0s';
}

/** `serde_to_online_config`: the key's segments as TiKV's typed config names them. */
export function onlineConfigName(key: string): string {
  const res = key.replace('raftstore', 'raft_store').replace(/-/g, '_');
  if (res === 'raft_store.store_pool_size' || res === 'raft_store.store_max_batch_size')
    return res.replace('store_', 'store_batch_system.');
  if (res === 'raft_store.apply_pool_size' || res === 'raft_store.apply_max_batch_size')
    return res.replace('apply_', 'apply_batch_system.');
  return res;
}

/** One TiKV process's config: the file's keys over the defaults, then what was changed online. */
export class TikvConfig {
  private readonly values = new Map<string, string | number | boolean>();
  /** The schema lines the release is checked at (two around a release between lines); none without a schema. */
  private readonly lines: readonly string[];

  constructor(
    readonly version: string,
    file: string | undefined,
  ) {
    for (const [k, v] of Object.entries(TIKV_DEFAULTS)) this.values.set(k, v);
    const table: TomlTable = file ? parseToml(file) : {};
    for (const k of flattenConfig(table)) {
      const v = sentValue(k.value);
      if (v !== undefined) this.values.set(k.key, v);
    }
    this.lines = schemaLines(version);
  }

  /** The value the process holds for a dotted key. */
  get(key: string): string | number | boolean | undefined {
    return this.values.get(key);
  }

  /** `GET /config`: nested JSON, sizes and durations as TiKV writes them. */
  json(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [key, value] of this.values) {
      const path = key.split('.');
      let at = out;
      for (const part of path.slice(0, -1)) {
        const next = at[part];
        if (typeof next !== 'object' || next === null) at[part] = {};
        at = at[part] as Record<string, unknown>;
      }
      at[path[path.length - 1]] = this.display(path, value);
    }
    return out;
  }

  private display(path: string[], value: string | number | boolean): unknown {
    const t = this.node(path)?.t;
    if (t === 'size') {
      const bytes = typeof value === 'number' ? value : parseSize(String(value));
      return bytes === undefined ? value : readableSize(bytes);
    }
    if (t === 'duration' && typeof value === 'string') {
      const ms = parseDurationMs(value);
      return ms === undefined ? value : readableDuration(ms);
    }
    return value;
  }

  private node(path: readonly string[]): ConfigNode | undefined {
    try {
      return nodeOf(configSchema('tikv'), path);
    } catch {
      return undefined;
    }
  }

  /** `POST /config`: the status and body TiKV answers; the change is made when it is accepted. */
  update(body: string, persist: boolean): { status: number; body: string } {
    const decoded = decodeJson(body);
    if ('error' in decoded) return { status: 500, body: `failed to decode, error: ${decoded.error}` };
    const change = new Map<string, string | number | boolean>();
    for (const [key, raw] of Object.entries(decoded.map)) {
      const problem = this.check(key, raw);
      if (typeof problem === 'string') return { status: 500, body: `failed to update, error: ${JSON.stringify(problem)}` };
      change.set(key, problem.value);
    }
    for (const [k, v] of change) this.values.set(k, v);
    const v71 = /^v?7\.1\./.test(this.version);
    if (persist || v71) {
      return {
        status: 500,
        body: 'config changed, but failed to persist change due to err: Os { code: 30, kind: ReadOnlyFilesystem, message: "Read-only file system" }',
      };
    }
    return { status: 200, body: '' };
  }

  /** `to_config_change` for one key: the parsed value, or the error's message. */
  private check(key: string, raw: string): { value: string | number | boolean } | string {
    const path = key.split('.');
    const named = onlineConfigName(key).split('.');
    let node: ConfigNode | undefined;
    for (let i = 0; i < path.length; i++) {
      const n = this.node(path.slice(0, i + 1));
      if (!n || !this.lines.some((l) => readAt(n, l))) return `unexpect fields: ${named[Math.min(i, named.length - 1)]}`;
      node = n;
    }
    if (!node || this.lines.length === 0 || !this.lines.every((l) => onlineAt(node!, l)))
      return `config ${named[named.length - 1]} can not be changed`;
    const v = raw.replace(/^"+|"+$/g, '');
    switch (node.t) {
      case 'bool':
        return v === 'true' || v === 'false' ? { value: v === 'true' } : `failed to parse: ${raw}`;
      case 'int':
        return /^\d+$/.test(v) ? { value: Number(v) } : `failed to parse: ${raw}`;
      case 'float':
        return v.trim() !== '' && Number.isFinite(Number(v)) ? { value: Number(v) } : `failed to parse: ${raw}`;
      case 'size':
        return parseSize(v) !== undefined ? { value: v } : `failed to parse: ${raw}`;
      case 'duration':
        return parseDurationMs(v) !== undefined ? { value: v } : `failed to parse: ${raw}`;
      default:
        return { value: v };
    }
  }
}

/** `decode_json`: each value as the string TiKV parses (bools and numbers formatted, strings as they are). */
function decodeJson(body: string): { map: Record<string, string> } | { error: string } {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch (e) {
    return { error: `Error(${JSON.stringify((e as Error).message)})` };
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return { error: '"wrong format"' };
  const map: Record<string, string> = {};
  for (const [k, v] of Object.entries(json)) {
    if (typeof v === 'boolean' || typeof v === 'number') map[k] = String(v);
    else if (typeof v === 'string') map[k] = v;
    else if (Array.isArray(v)) return { error: '"array type are not supported"' };
    else return { error: '"wrong format"' };
  }
  return { map };
}

/** The schema lines a release is checked at; none without a schema or for a release older than it knows. */
function schemaLines(version: string): readonly string[] {
  try {
    return linesOf(configSchema('tikv'), version)?.lines ?? [];
  } catch {
    return [];
  }
}
