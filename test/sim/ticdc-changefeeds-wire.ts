/**
 * How TiCDC's changefeed API writes its answers, for the changefeed model of `ticdc-changefeeds.ts`:
 * encoding/json with uint64 numbers beyond 2^53 (TSOs), gin's compact and indented JSON, the error body
 * (`{"error_msg","error_code"}`), Go's time formats, TSO arithmetic and the sink URI mask.
 */

/** An answer as the TiCDC simulator writes it. */
export interface WireAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const BIG = '\u0000u64:';

/**
 * encoding/json of a value whose bigints are uint64 numbers, written bare (`4503599627370497`), as Go
 * writes them; HTML-safe escapes as Go's default; `indent` as MarshalIndent.
 */
export function goJsonBig(value: unknown, indent?: string): string {
  const text = JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? `${BIG}${v.toString()}` : v), indent);
  return text
    .replace(/"\\u0000u64:(\d+)"/g, '$1')
    .replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' };

/** gin `c.JSON`: compact. */
export const ginJson = (status: number, value: unknown): WireAnswer => ({ status, headers: JSON_TYPE, body: goJsonBig(value) });

/** gin `c.IndentedJSON`: four spaces. */
export const ginIndented = (status: number, value: unknown): WireAnswer => ({ status, headers: JSON_TYPE, body: goJsonBig(value, '    ') });

/**
 * TiCDC errors are pingcap/errors values: `err.Error()` is `[<RFC code>]<message>`; the API writes
 * `model.HTTPError` (tiflow cdc/model/http_model.go `NewHTTPError`; pingcap/ticdc pkg/api/util.go) with
 * IndentedJSON from `ErrorHandleMiddleware`.
 */
export interface CdcError {
  code: string;
  message: string;
}

/**
 * `ErrorHandleMiddleware` (tiflow cdc/api/middleware/middleware.go; pingcap/ticdc api/middleware/middleware.go):
 * 400 for the errors of `httpBadRequestError` (tiflow cdc/api/util.go, pingcap/ticdc pkg/api/util.go), 500
 * for any other. `alreadyExistsIs400`: pingcap/ticdc master after #5428 (2026-06-25), no tag.
 */
export function errorAnswer(err: CdcError, alreadyExistsIs400 = false): WireAnswer {
  const bad = BAD_REQUEST.has(err.code) || (alreadyExistsIs400 && err.code === 'CDC:ErrChangeFeedAlreadyExists');
  return ginIndented(bad ? 400 : 500, { error_msg: err.code === '' ? err.message : `[${err.code}]${err.message}`, error_code: err.code });
}

const BAD_REQUEST = new Set(
  [
    'ErrAPIInvalidParam',
    'ErrSinkURIInvalid',
    'ErrStartTsBeforeGC',
    'ErrChangeFeedNotExists',
    'ErrTargetTsBeforeStartTs',
    'ErrTableIneligible',
    'ErrFilterRuleInvalid',
    'ErrChangefeedUpdateRefused',
    'ErrMySQLConnectionError',
    'ErrMySQLInvalidConfig',
    'ErrCaptureNotExist',
    'ErrSchedulerRequestFailed',
  ].map((c) => `CDC:${c}`),
);

// ---- TSO ----

/** A TSO: physical milliseconds << 18 | logical (tikv/client-go oracle `ComposeTS`). */
export const tsoOf = (ms: number, logical = 0): bigint => (BigInt(Math.floor(ms)) << 18n) | BigInt(logical);

/** oracle `GetTimeFromTS`: the physical part as epoch milliseconds. */
export const tsoMs = (ts: bigint): number => Number(ts >> 18n);

// ---- Go time formats (the simulator's time zone is UTC, as a container's usually is) ----

/** `model.JSONTime` / `api.JSONTime`: `"2006-01-02 15:04:05.000"` (cdc/model/http_model.go `timeFormat`). */
export function jsonTime(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
}

/** time.Time's MarshalJSON, RFC 3339 with the fraction's trailing zeros trimmed. */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.?0+Z$/, 'Z');
}

/** The zero time.Time as encoding/json writes it. */
export const ZERO_TIME = '0001-01-01T00:00:00Z';

// ---- sink URIs ----

/** Go `url.QueryEscape`: all but `A-Za-z0-9-_.~` percent-encoded, space as `+`. */
function queryEscape(s: string): string {
  return encodeURIComponent(s)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+');
}

const decode = (s: string): string => {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
};

/**
 * `util.MaskSinkURI` (tiflow and pingcap/ticdc pkg/util/uri.go): the userinfo password becomes `xxxxx`
 * (Go `url.Redacted`); a `sasl-password` query value becomes `xxxxx`, and then the whole query is
 * re-encoded by `url.Values.Encode` (keys sorted). Nothing else is masked: `secret-access-key`,
 * `account-key`, `sas-token`... are returned as they were given. Undefined when the URI does not parse.
 */
export function maskSinkUri(uri: string): string | undefined {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*:)(\/\/([^/?#]*))?([^?#]*)(\?[^#]*)?(#.*)?$/.exec(uri);
  if (m === null) return undefined;
  const [, scheme, , authority, path, query, fragment] = m;
  let auth = authority;
  if (auth !== undefined) {
    const at = auth.lastIndexOf('@');
    if (at >= 0) {
      const userinfo = auth.slice(0, at);
      const colon = userinfo.indexOf(':');
      if (colon >= 0) auth = `${userinfo.slice(0, colon)}:xxxxx${auth.slice(at)}`;
    }
  }
  let q = query ?? '';
  const pairs = q
    .slice(1)
    .split('&')
    .filter((p) => p !== '')
    .map((p) => {
      const eq = p.indexOf('=');
      return eq < 0 ? [decode(p), ''] : [decode(p.slice(0, eq)), decode(p.slice(eq + 1))];
    });
  if (pairs.some(([k]) => k === 'sasl-password')) {
    const byKey = new Map<string, string[]>();
    for (const [k, v] of pairs) byKey.set(k, [...(byKey.get(k) ?? []), k === 'sasl-password' ? 'xxxxx' : v]);
    const keys = [...byKey.keys()].sort();
    // Values.Set replaces every value of the key with one.
    byKey.set('sasl-password', ['xxxxx']);
    q = `?${keys.flatMap((k) => (byKey.get(k) as string[]).map((v) => `${queryEscape(k)}=${queryEscape(v)}`)).join('&')}`;
  }
  return `${scheme}${auth !== undefined ? `//${auth}` : ''}${path}${q}${fragment ?? ''}`;
}

/** The scheme of a sink URI, lower case, or undefined. */
export const sinkScheme = (uri: string): string | undefined => /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(uri)?.[1].toLowerCase();

/**
 * Schemes TiCDC's sink factories accept (tiflow pkg/sink/sink_type.go `IsMQScheme`, `IsMySQLCompatibleScheme`,
 * `IsStorageScheme`, `IsPulsarScheme`; `blackhole`).
 */
export const KNOWN_SINK_SCHEMES = new Set([
  'mysql',
  'mysql+ssl',
  'tidb',
  'tidb+ssl',
  'kafka',
  'kafka+ssl',
  'pulsar',
  'pulsar+ssl',
  'pulsar+http',
  'pulsar+https',
  's3',
  'gcs',
  'gs',
  'azure',
  'azblob',
  'file',
  'noop',
  'blackhole',
]);
