/**
 * PD's cluster-wide config for the PD simulator's `/pd/api/v1/config` routes (pd-http.ts), as
 * tikv/pd v8.5.x answers them (server/api/config.go `GetConfig`, `SetConfig`, `updateConfig`;
 * pkg/utils/jsonutil/jsonutil.go `AddKeyValue`; pkg/utils/reflectutil/tag.go
 * `FindJSONFullTagByChildTag`):
 *
 * - `GET` shows `schedule`, `replication` and the rest with PD's defaults
 *   (pkg/schedule/config/config.go `default...`), then what was set online; durations as Go writes
 *   them (`1h0m0s`: typeutil.Duration `MarshalJSON`).
 * - `POST` takes a JSON object (not one: 400 with Go's unmarshal error). Each key in turn, stopping at
 *   the first refusal, answered 400 with a JSON string: a dotted key goes by its first segment
 *   (`schedule`, `replication`, `pd-server`, `keyspace`, `micro-service` take the last segment as the
 *   field: `config item <field> not found` when the section has none; `replication-mode` the rest of
 *   the path: `config item [<a> <b>] not found`; `log` only `log.level`: `only support changing log
 *   level`; `cluster-version`; any other `config prefix <prefix> not found`). A key without a dot is
 *   looked up as a field anywhere in the config (`config item <key> not found` when none is), then
 *   goes the same way. A value of the wrong JSON type is refused with Go's unmarshal error (a
 *   duration or size must be a string: `invalid syntax`; most bools are `json:",string"` fields,
 *   shown and taken as `"true"`/`"false"`: a bare bool is refused). Success: 200 `"The config is updated."`.
 *   Which fields each section has at the release comes from the generated config schema
 *   (src/tidbcluster/config-schema), itself taken from PD's source.
 * - The config is PD's (the leader's, persisted in etcd): it outlives restarts of PD members.
 */
import { configSchema, linesOf, nodeOf, readAt, type ConfigNode } from '../../src/tidbcluster/config-schema';
import { parseDurationMs, parseSize } from '../../src/controller/plan/online-config';
import type { ReplicationConfig } from './pd-http';
import { goDuration } from './pd-wire';

/** PD v8.5's defaults for the `schedule` keys the simulator shows (pkg/schedule/config/config.go). */
export const PD_SCHEDULE_DEFAULTS: Readonly<Record<string, string | number | boolean>> = {
  'max-snapshot-count': 64,
  'max-pending-peer-count': 64,
  'max-merge-region-size': 54,
  'leader-schedule-limit': 4,
  'region-schedule-limit': 2048,
  'replica-schedule-limit': 64,
  'merge-schedule-limit': 8,
  'hot-region-schedule-limit': 4,
  'tolerant-size-ratio': 0,
  'low-space-ratio': 0.8,
  'high-space-ratio': 0.7,
  'leader-schedule-policy': 'count',
  'patrol-region-interval': '10ms',
  'split-merge-interval': '1h0m0s',
  'enable-cross-table-merge': 'true',
  'halt-scheduling': false,
};

/**
 * The bools PD writes and reads as JSON strings (`json:"<name>,string"`: pkg/schedule/config/config.go,
 * server/config/config.go, v8.5.7); a bare JSON bool for one is refused.
 */
export const STRING_BOOLS = new Set([
  'block-safe-point-v1',
  'enable-cross-table-merge',
  'enable-debug-metrics',
  'enable-diagnostic',
  'enable-gogc-tuner',
  'enable-heartbeat-breakdown-metrics',
  'enable-heartbeat-concurrent-runner',
  'enable-joint-consensus',
  'enable-location-replacement',
  'enable-make-up-replica',
  'enable-one-way-merge',
  'enable-placement-rules',
  'enable-placement-rules-cache',
  'enable-remove-down-replica',
  'enable-remove-extra-replica',
  'enable-replace-offline-replica',
  'enable-scheduling-fallback',
  'enable-tikv-split-region',
  'enable-witness',
  'pause-region-split',
  'strictly-match-label',
  'use-region-storage',
]);

/** The sections whose last segment names the field (`updateConfig`'s cases). */
const BY_FIELD = ['schedule', 'replication', 'pd-server', 'keyspace', 'micro-service'];
/** The Go structs behind the sections, for unmarshal errors. */
const GO_STRUCT: Record<string, string> = {
  schedule: 'ScheduleConfig',
  replication: 'ReplicationConfig',
  'pd-server': 'PDServerConfig',
  keyspace: 'KeyspaceConfig',
  'micro-service': 'MicroServiceConfig',
};

const byModel = new WeakMap<object, PdOnlineConfig>();

/** The online config of one simulated PD cluster (its API model), made on first use. */
export function onlineConfigOf(model: object, version: string): PdOnlineConfig {
  let c = byModel.get(model);
  if (!c) {
    c = new PdOnlineConfig(version);
    byModel.set(model, c);
  }
  return c;
}

/** The config set online, per simulated PD cluster. */
export class PdOnlineConfig {
  /** Dotted key to the value as set. */
  readonly values = new Map<string, unknown>();

  constructor(private readonly version: string) {}

  /** Adds the schedule defaults and the online values to what `GET /config` shows. */
  view(base: Record<string, unknown>): Record<string, unknown> {
    const out = structuredClone(base);
    const schedule = (out.schedule ?? {}) as Record<string, unknown>;
    out.schedule = { ...PD_SCHEDULE_DEFAULTS, ...schedule };
    for (const [key, value] of this.values) {
      const path = key.split('.');
      let at = out;
      for (const part of path.slice(0, -1)) {
        const next = at[part];
        if (typeof next !== 'object' || next === null) at[part] = {};
        at = at[part] as Record<string, unknown>;
      }
      const t = this.node(path)?.t;
      at[path[path.length - 1]] = t === 'duration' && typeof value === 'string' ? goDuration((parseDurationMs(value) ?? 0) * 1e6) : value;
    }
    return out;
  }

  /**
   * Moves what was set under `replication` into the model's replication config, which the rest of
   * the simulator (`/config/replicate`, store removals) reads.
   */
  syncReplication(r: ReplicationConfig): void {
    const fields: Record<string, keyof ReplicationConfig> = {
      'max-replicas': 'maxReplicas',
      'strictly-match-label': 'strictlyMatchLabel',
      'enable-placement-rules': 'enablePlacementRules',
      'enable-placement-rules-cache': 'enablePlacementRulesCache',
      'isolation-level': 'isolationLevel',
    };
    for (const [key, value] of [...this.values]) {
      const field = key.startsWith('replication.') ? fields[key.slice('replication.'.length)] : undefined;
      if (field === undefined) continue;
      const v = typeof value === 'string' && (value === 'true' || value === 'false') ? value === 'true' : value;
      (r as unknown as Record<string, unknown>)[field] = v;
      this.values.delete(key);
    }
  }

  /** `SetConfig`: the status and the string PD answers. */
  set(body: string): { status: number; message: string } {
    let conf: unknown;
    try {
      conf = JSON.parse(body);
    } catch (e) {
      return { status: 400, message: (e as Error).message };
    }
    if (typeof conf !== 'object' || conf === null || Array.isArray(conf)) {
      const kind = Array.isArray(conf) ? 'array' : conf === null ? 'null' : typeof conf;
      if (conf !== null) return { status: 400, message: `json: cannot unmarshal ${kind} into Go value of type map[string]interface {}` };
      conf = {};
    }
    for (const [k, v] of Object.entries(conf as Record<string, unknown>)) {
      const key = k.includes('.') ? k : this.fullTag(k);
      if (key === undefined) return { status: 400, message: `config item ${k} not found` };
      const refusal = this.update(key, v);
      if (refusal !== undefined) return { status: 400, message: refusal };
    }
    return { status: 200, message: 'The config is updated.' };
  }

  private lines(): readonly string[] {
    return linesOf(configSchema('pd'), this.version)?.lines ?? [];
  }

  private node(path: readonly string[]): ConfigNode | undefined {
    const n = nodeOf(configSchema('pd'), path);
    return n && this.lines().some((l) => readAt(n, l)) ? n : undefined;
  }

  /** `FindJSONFullTagByChildTag`: the first field named `tag`, depth first in the config's order. */
  private fullTag(tag: string): string | undefined {
    const walk = (keys: Readonly<Record<string, ConfigNode>>, parent: string[]): string | undefined => {
      for (const [name, n] of Object.entries(keys)) {
        if (name === tag) return [...parent, name].join('.');
        if (n.t === 'table' && n.k) {
          const found = walk(n.k, [...parent, name]);
          if (found) return found;
        }
      }
      return undefined;
    };
    return walk(configSchema('pd').keys, []);
  }

  /** `updateConfig`: undefined when the key was set, else PD's words. */
  private update(key: string, value: unknown): string | undefined {
    const kp = key.split('.');
    const prefix = kp[0];
    if (BY_FIELD.includes(prefix)) {
      const field = kp[kp.length - 1];
      const node = this.node([prefix, field]);
      if (!node) return `config item ${field} not found`;
      const typeError = goTypeError(node, value, `${GO_STRUCT[prefix]}.${field}`, STRING_BOOLS.has(field));
      if (typeError) return typeError;
      this.values.set(`${prefix}.${field}`, value);
      return undefined;
    }
    if (prefix === 'replication-mode') {
      if (kp.length < 2) return `cannot update config prefix ${prefix}`;
      const node = this.node(kp);
      if (!node) return `config item [${kp.slice(1).join(' ')}] not found`;
      this.values.set(key, value);
      return undefined;
    }
    if (prefix === 'log') {
      if (kp.length !== 2 || kp[1] !== 'level') return 'only support changing log level';
      if (typeof value !== 'string') return `input value ${String(value)} is illegal`;
      this.values.set(key, value);
      return undefined;
    }
    if (prefix === 'cluster-version') {
      if (typeof value !== 'string') return `input value ${String(value)} is illegal`;
      this.values.set(key, value);
      return undefined;
    }
    return `config prefix ${prefix} not found`;
  }
}

/** encoding/json's refusal of a value of the wrong kind for the field, as PD passes it on. */
function goTypeError(node: ConfigNode, value: unknown, field: string, stringBool: boolean): string | undefined {
  const kind = Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value === 'boolean' ? 'bool' : typeof value;
  const wrong = (goType: string) => `json: cannot unmarshal ${kind} into Go struct field ${field} of type ${goType}`;
  switch (node.t) {
    case 'int':
      return typeof value === 'number' && Number.isInteger(value) ? undefined : wrong('uint64');
    case 'float':
      return typeof value === 'number' ? undefined : wrong('float64');
    case 'bool':
      // encoding/json decode.go: a `,string` field takes a quoted literal only.
      if (stringBool) {
        if (typeof value !== 'string') return 'json: invalid use of ,string struct tag, trying to unmarshal unquoted value into bool';
        return value === 'true' || value === 'false'
          ? undefined
          : `json: invalid use of ,string struct tag, trying to unmarshal ${JSON.stringify(value)} into bool`;
      }
      return typeof value === 'boolean' ? undefined : wrong('bool');
    case 'string':
      return typeof value === 'string' ? undefined : wrong('string');
    case 'duration':
      // typeutil.Duration UnmarshalJSON: strconv.Unquote, then time.ParseDuration.
      if (typeof value !== 'string') return 'invalid syntax';
      return parseDurationMs(value) === undefined ? `time: invalid duration "${value}"` : undefined;
    case 'size':
      if (typeof value !== 'string') return 'invalid syntax';
      return parseSize(value) === undefined ? `invalid size: '${value}'` : undefined;
    default:
      return undefined;
  }
}
