/**
 * gin's `c.BindJSON` of the changefeed API's request bodies (tiflow cdc/api/v2/model.go `ChangefeedConfig`,
 * `ResumeChangefeedConfig`; pingcap/ticdc api/v2/model.go), with uint64 fields read exactly (as BigInt).
 * A body that does not decode is `ErrAPIInvalidParam` wrapping encoding/json's error (400): `EOF` for an
 * empty body, `json: cannot unmarshal ...` for a wrong type; for malformed JSON the cause is JavaScript's
 * parser message, not Go's.
 */
import type { CdcError } from './ticdc-changefeeds-wire';

export interface ChangefeedConfigBody {
  namespace: string;
  changefeed_id: string;
  start_ts: bigint;
  target_ts: bigint;
  sink_uri: string;
  replica_config?: Record<string, unknown>;
}

interface ResumeBody {
  overwrite_checkpoint_ts: bigint;
}

type Bound<T> = { value: T } | { error: CdcError };

const INT = '\u0000int:';

/** Marks every integer literal outside strings, so that none loses digits in JSON.parse. */
function markIntegers(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    if (ch === '"') {
      const start = i++;
      while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
      out += text.slice(start, ++i);
      continue;
    }
    const m = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if ((ch === '-' || (ch >= '0' && ch <= '9')) && m !== null) {
      // Written as the JSON escape `\u0000`, which JSON.parse turns into the marker's NUL.
      out += /^-?\d+$/.test(m[0]) ? `"\\u0000int:${m[0]}"` : m[0];
      i += m[0].length;
      continue;
    }
    out += ch;
    i++;
  }
  return out;
}

/** Undoes `markIntegers` in a decoded value, back to numbers (for fields not read as uint64). */
function unmark(v: unknown): unknown {
  if (typeof v === 'string' && v.startsWith(INT)) return Number(v.slice(INT.length));
  if (Array.isArray(v)) return v.map(unmark);
  if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, unmark(x)]));
  return v;
}

const invalid = (cause: string): { error: CdcError } => ({
  error: { code: 'CDC:ErrAPIInvalidParam', message: `invalid api parameter: ${cause}` },
});

const kindOf = (v: unknown): string =>
  typeof v === 'string'
    ? v.startsWith(INT)
      ? `number ${v.slice(INT.length)}`
      : 'string'
    : Array.isArray(v)
      ? 'array'
      : v === null
        ? 'null'
        : typeof v === 'boolean'
          ? 'bool'
          : typeof v === 'number'
            ? `number ${v}`
            : 'object';

export function bindBody(raw: string, type: 'ChangefeedConfig'): Bound<ChangefeedConfigBody>;
export function bindBody(raw: string, type: 'ResumeChangefeedConfig'): Bound<ResumeBody>;
export function bindBody(raw: string, type: 'ChangefeedConfig' | 'ResumeChangefeedConfig'): Bound<ChangefeedConfigBody | ResumeBody> {
  if (raw.trim() === '') return invalid('EOF');
  let v: unknown;
  try {
    v = JSON.parse(markIntegers(raw));
  } catch (e) {
    return invalid((e as Error).message);
  }
  if (v === null) v = {};
  if (typeof v !== 'object' || Array.isArray(v))
    return invalid(`json: cannot unmarshal ${kindOf(v).split(' ')[0]} into Go value of type v2.${type}`);
  const o = v as Record<string, unknown>;
  const wrong = (field: string, goType: string) =>
    invalid(`json: cannot unmarshal ${kindOf(o[field]).split(' ')[0]} into Go struct field ${type}.${field} of type ${goType}`);
  const u64 = (field: string): bigint | { error: CdcError } => {
    const x = o[field];
    if (x === undefined || x === null) return 0n;
    if (typeof x === 'string' && x.startsWith(INT)) {
      const n = BigInt(x.slice(INT.length));
      if (n >= 0n && n < 1n << 64n) return n;
      return invalid(`json: cannot unmarshal number ${n} into Go struct field ${type}.${field} of type uint64`);
    }
    return wrong(field, 'uint64');
  };
  const str = (field: string): string | { error: CdcError } => {
    const x = o[field];
    if (x === undefined || x === null) return '';
    return typeof x === 'string' && !x.startsWith(INT) ? x : wrong(field, 'string');
  };
  if (type === 'ResumeChangefeedConfig') {
    const ts = u64('overwrite_checkpoint_ts');
    return typeof ts === 'bigint' ? { value: { overwrite_checkpoint_ts: ts } } : ts;
  }
  const fields = {
    namespace: str('namespace'),
    changefeed_id: str('changefeed_id'),
    sink_uri: str('sink_uri'),
    start_ts: u64('start_ts'),
    target_ts: u64('target_ts'),
  };
  for (const f of Object.values(fields)) if (typeof f === 'object') return f;
  const rc = o.replica_config;
  if (rc !== undefined && rc !== null && (typeof rc !== 'object' || Array.isArray(rc))) return wrong('replica_config', 'v2.ReplicaConfig');
  return {
    value: {
      ...(fields as unknown as Omit<ChangefeedConfigBody, 'replica_config'>),
      ...(rc !== undefined && rc !== null ? { replica_config: unmark(rc) as Record<string, unknown> } : {}),
    },
  };
}

/** A subset of `GetDefaultReplicaConfig` (cdc/api/v2/model.go), merged under what a request gives. */
export const DEFAULT_CONFIG: Record<string, unknown> = {
  memory_quota: 1073741824,
  case_sensitive: false,
  force_replicate: false,
  ignore_ineligible_table: false,
  check_gc_safe_point: true,
  enable_sync_point: false,
  bdr_mode: false,
  filter: { rules: ['*.*'] },
};

export function merge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] = isRecord(v) && isRecord(b) ? merge(b, v) : v;
  }
  return out;
}
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
