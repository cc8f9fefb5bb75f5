/**
 * Which keys of a component's InPlace config are sent to its running servers, without a restart
 * (reconcile/online-config.ts carries it out). The config is the TOML of the ConfigMap
 * `<cluster>-<component>`, flattened to dotted keys; a key is sent only where its server's release
 * changes it online (`changedOnline`, src/tidbcluster/config-schema), and only to a member whose
 * reported value differs once both sides are normalized (sizes to bytes, durations to milliseconds).
 * Keys that need a restart are never sent: they wait for the member's next start, which reads the
 * file. Pure: the caller reads the members and the records and gives them here.
 */
import { isTomlFloat, isTomlTable, type TomlTable, type TomlValue } from '../../base/toml';
import type { ConfigType } from '../../tidbcluster/config-schema/types';
import type { AppliedKey, SentValue } from '../records/online-config';

export type { AppliedKey, SentValue } from '../records/online-config';

/** One key of the file, flattened. */
export interface FlatKey {
  readonly path: readonly string[];
  /** The path joined with dots. */
  readonly key: string;
  readonly value: TomlValue;
}

/** One running server as the side task found it. */
export interface OnlineMember {
  /** The Pod's name (TiKV), or the PD member the cluster-wide config was read from. */
  readonly name: string;
  /** Whether its release changes the dotted key online. */
  readonly online: (path: readonly string[]) => boolean;
  /** Its config as it reports it (JSON, nested tables), or why it could not be read. */
  readonly reported: unknown;
  /** Why its config could not be read this pass. @default none (read) */
  readonly error?: string;
  /** When its server started (epoch ms): a member started after a key was applied read the file. @default unknown */
  readonly startedMs?: number;
}

/** A refusal remembered from an earlier pass: not sent again while Git asks the same value. */
export interface Refusal {
  readonly member: string;
  readonly key: string;
  readonly value: SentValue;
  /** The server's words. */
  readonly error: string;
}

export interface OnlineConfigInput {
  /** The ConfigMap's TOML, parsed. */
  readonly config: TomlTable;
  /** The type the server's schema gives a dotted key, when it knows it. */
  readonly typeOf: (path: readonly string[]) => ConfigType | undefined;
  readonly members: readonly OnlineMember[];
  /** The keys applied online before (records). @default none */
  readonly applied?: Readonly<Record<string, AppliedKey>>;
  /** Refusals of earlier passes. @default none */
  readonly refused?: readonly Refusal[];
}

/** One request to one member. */
export interface OnlineSend {
  readonly member: string;
  readonly values: Readonly<Record<string, SentValue>>;
}

export interface OnlineConfigPlan {
  readonly sends: readonly OnlineSend[];
  /** Keys of the file the servers change online, sorted. */
  readonly onlineKeys: readonly string[];
  /** Keys of the file that need a restart and that some member reports at another value: they wait for its restart. */
  readonly waitRestart: readonly string[];
  /** Online keys not sent, and why (a value of a kind not sent online, a key the member does not report). */
  readonly notSent: readonly { readonly key: string; readonly reason: string }[];
  /** Refusals that still stand: the same value is not sent again. */
  readonly refused: readonly Refusal[];
  /** Members whose config could not be read, and why. */
  readonly unread: readonly { readonly member: string; readonly error: string }[];
  /**
   * Keys applied online before and no longer in the file: a member that has not restarted since
   * keeps the value until it does. Recorded keys every member has restarted past are dropped.
   */
  readonly lingering: readonly string[];
  /** The applied keys to keep in the records (lingering ones included, those every member restarted past left out). */
  readonly keepApplied: Readonly<Record<string, AppliedKey>>;
}

/** The file's keys, flattened to their leaves (arrays are leaves), in the file's order. */
export function flattenConfig(table: TomlTable, parent: readonly string[] = []): FlatKey[] {
  const out: FlatKey[] = [];
  for (const [name, value] of Object.entries(table)) {
    const path = [...parent, name];
    if (isTomlTable(value)) out.push(...flattenConfig(value, path));
    else out.push({ path, key: path.join('.'), value });
  }
  return out;
}

/** A file value as it is sent: scalars only (TiKV's status server refuses arrays; dates have no JSON form). */
export function sentValue(value: TomlValue): SentValue | undefined {
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'bigint')
    return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : undefined;
  if (isTomlFloat(value)) return Number.isFinite(value.value) ? value.value : undefined;
  return undefined;
}

/**
 * Binary units, as both servers read sizes: PD's typeutil.ByteSize through docker/go-units
 * `RAMInBytes` (tikv/pd pkg/utils/typeutil/size.go), TiKV's `ReadableSize` (tikv/tikv
 * components/tikv_util/src/config.rs): `1GB` and `1GiB` are both 1024³ bytes.
 */
const SIZE_UNITS: Record<string, number> = { '': 1, b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4, p: 1024 ** 5 };
const SIZE = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*([kmgtp]?)(i?b)?\s*$/i;

/** A size in bytes (`512MiB`, `1GB`, `96MB`, `1024`); undefined when it is not one. */
export function parseSize(text: string): number | undefined {
  const m = SIZE.exec(text);
  if (!m || (m[2] === '' && m[3] !== undefined && m[3].toLowerCase() !== 'b')) return undefined;
  return Math.round(Number(m[1]) * SIZE_UNITS[m[2].toLowerCase()]);
}

/** Go's time.ParseDuration units and TiKV's `ReadableDuration` ones (which add `d`), in ms. */
const DURATION_UNITS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};
const DURATION = /^(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h|d))+$/;

/** A duration in milliseconds (`10s`, `1m`, `1h0m0s`, `1m30s`, `250ms`, `0s`); undefined when it is not one. */
export function parseDurationMs(text: string): number | undefined {
  const t = text.trim();
  if (t === '0') return 0;
  if (!DURATION.test(t)) return undefined;
  let total = 0;
  for (const m of t.matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h|d)/g)) total += Number(m[1]) * DURATION_UNITS[m[2]];
  return Math.round(total * 1e6) / 1e6;
}

/** A normalized value, for comparison: sizes in bytes, durations in ms, numbers, bools, strings. */
export type Normalized = number | boolean | string;

/**
 * The comparable form of a value of the key's type (from the schema; undefined: guessed from the
 * text, a size before a duration only when it ends in a size unit). Undefined for values with no
 * scalar form (objects, arrays, null).
 */
export function normalize(value: unknown, type?: ConfigType): Normalized | undefined {
  if (isTomlFloat(value)) return value.value;
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'number' || typeof value === 'boolean') return value;
  if (typeof value !== 'string') return undefined;
  if (type === 'size') return parseSize(value) ?? value;
  if (type === 'duration') return parseDurationMs(value) ?? value;
  if (type === 'bool') return value === 'true' ? true : value === 'false' ? false : value;
  if (type === 'int' || type === 'float') return value.trim() !== '' && Number.isFinite(Number(value)) ? Number(value) : value;
  if (type === undefined || type === 'any') {
    if (/[0-9.]\s*[kmgtp]?i?b$/i.test(value.trim())) {
      const size = parseSize(value);
      if (size !== undefined) return size;
    }
    const ms = DURATION.test(value.trim()) ? parseDurationMs(value) : undefined;
    if (ms !== undefined) return ms;
  }
  return value;
}

/** Whether two normalized values are the same (floats within a relative 1e-9). */
export function sameValue(a: Normalized | undefined, b: Normalized | undefined): boolean {
  if (a === undefined || b === undefined) return false;
  if (typeof a === 'number' && typeof b === 'number') return a === b || Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b));
  return a === b;
}

/** The value at a dotted path of a reported (JSON) config; undefined when absent. */
export function reportedAt(reported: unknown, path: readonly string[]): unknown {
  let at: unknown = reported;
  for (const part of path) {
    if (typeof at !== 'object' || at === null || Array.isArray(at) || !Object.hasOwn(at, part)) return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
}

/** The plan: for each member read, the online keys whose reported value differs from the file's. */
export function planOnlineConfig(input: OnlineConfigInput): OnlineConfigPlan {
  const keys = flattenConfig(input.config);
  const fileKeys = new Set(keys.map((k) => k.key));
  const read = input.members.filter((m) => m.error === undefined);
  const unread = input.members.filter((m) => m.error !== undefined).map((m) => ({ member: m.name, error: m.error! }));
  const onlineKeys = new Set<string>();
  const waitRestart = new Set<string>();
  const notSent = new Map<string, string>();
  const refused: Refusal[] = [];
  const sends: OnlineSend[] = [];
  for (const m of read) {
    const values: Record<string, SentValue> = {};
    for (const k of keys) {
      const type = input.typeOf(k.path);
      const reported = reportedAt(m.reported, k.path);
      const wanted = normalize(k.value, type);
      if (!m.online(k.path)) {
        // Needs a restart: it waits for the next one, which reads the file.
        if (reported !== undefined && wanted !== undefined && !sameValue(wanted, normalize(reported, type))) waitRestart.add(k.key);
        continue;
      }
      onlineKeys.add(k.key);
      const value = sentValue(k.value);
      if (value === undefined || type === 'array' || type === 'table' || type === 'map') {
        notSent.set(k.key, 'a value of this kind is not changed online here; it waits for the next restart');
        continue;
      }
      if (reported === undefined) {
        notSent.set(k.key, `${m.name} does not report it`);
        continue;
      }
      if (sameValue(wanted, normalize(reported, type))) continue;
      const refusal = (input.refused ?? []).find((r) => r.member === m.name && r.key === k.key && r.value === value);
      if (refusal) {
        refused.push(refusal);
        continue;
      }
      // A bool goes in the form the member shows it: PD's bools are mostly `json:",string"` fields
      // (pkg/schedule/config/config.go, server/config/config.go), which take only a JSON string.
      values[k.key] = typeof value === 'boolean' && typeof reported === 'string' ? String(value) : value;
    }
    if (Object.keys(values).length > 0) sends.push({ member: m.name, values });
  }
  const { lingering, keepApplied } = applied(input, fileKeys);
  return {
    sends,
    onlineKeys: [...onlineKeys].sort(),
    waitRestart: [...waitRestart].sort(),
    notSent: [...notSent].map(([key, reason]) => ({ key, reason })).sort((a, b) => a.key.localeCompare(b.key)),
    refused,
    unread,
    lingering,
    keepApplied,
  };
}

/**
 * The recorded keys that are no longer in the file: lingering while a member started before they
 * were applied (or when it is not known when it started); forgotten once every member restarted
 * past them.
 */
function applied(input: OnlineConfigInput, fileKeys: ReadonlySet<string>): Pick<OnlineConfigPlan, 'lingering' | 'keepApplied'> {
  const lingering: string[] = [];
  const keepApplied: Record<string, AppliedKey> = {};
  for (const [key, a] of Object.entries(input.applied ?? {})) {
    if (fileKeys.has(key)) {
      keepApplied[key] = a;
      continue;
    }
    const stale = input.members.some((m) => m.startedMs === undefined || m.startedMs <= a.at);
    if (!stale) continue;
    lingering.push(key);
    keepApplied[key] = a;
  }
  return { lingering: lingering.sort(), keepApplied };
}

/** Whether a member reports every sent value (normalized): the check after a send. */
export function reportsValues(
  reported: unknown,
  values: Readonly<Record<string, SentValue>>,
  typeOf: OnlineConfigInput['typeOf'],
): string[] {
  const off: string[] = [];
  for (const [key, value] of Object.entries(values)) {
    const path = key.split('.');
    const type = typeOf(path);
    if (!sameValue(normalize(value, type), normalize(reportedAt(reported, path), type))) off.push(key);
  }
  return off;
}
