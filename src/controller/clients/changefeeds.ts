/**
 * The controller's client of TiCDC's changefeed API (open API v2, `/api/v2/changefeeds`), which every
 * capture forwards to the owner (tiflow) or coordinator (the new architecture, pingcap/ticdc):
 *
 * - paths and methods are the same in tiflow v7.1-v8.5 and the new architecture (tiflow
 *   cdc/api/v2/api.go, pingcap/ticdc api/v2/api.go `RegisterOpenAPIV2Routes`); the changefeed's scope is
 *   the `namespace` query in tiflow (and the `namespace` body field on create), the `keyspace` query in
 *   the new architecture (ignored by its classic builds, where it is always "default");
 * - a missing changefeed is 400 `CDC:ErrChangeFeedNotExists` (`ErrorHandleMiddleware` maps the errors of
 *   `httpBadRequestError` to 400, others to 500); a duplicate create is 500 `CDC:ErrChangeFeedAlreadyExists`
 *   in every tag (400 on pingcap/ticdc master); a delete of a missing one is 200;
 * - an update is refused (400 `CDC:ErrChangefeedUpdateRefused`) unless the changefeed is stopped or failed,
 *   and tiflow also refuses one that changes nothing;
 * - tiflow's resume binds a JSON body, so `{}` is always sent.
 *
 * uint64 timestamps (TSOs, ~4.5e17) are read from the raw body as decimal strings, never as JS numbers.
 * Sink URIs carry credentials, and TiCDC masks only a userinfo password and `sasl-password`
 * (pkg/util/uri.go `MaskSinkURI`); the new architecture echoes the raw URI in sink errors. So every text
 * this client builds from a request or an answer goes through {@link redactText}, and the sink URI it
 * returns through {@link redactSinkUri}.
 */
import { GracefulError, isObject, send, snippet, trimSlash, type HttpResult, type RequestOptions } from './http';
import { parseJsonExact } from './json';

/** tiflow's TiCDC (pingcap/tiflow `cdc/`), or the new architecture (pingcap/ticdc, `newarch`). */
export type TicdcApiFlavour = 'tiflow' | 'new';

export interface ChangefeedApiOptions extends RequestOptions {
  /** Which TiCDC serves the API: the scope is the `namespace` query (tiflow) or `keyspace` (new). @default 'tiflow' */
  readonly flavour?: TicdcApiFlavour;
  /** The changefeed's namespace (tiflow) or keyspace (new architecture). @default 'default' */
  readonly namespace?: string;
  /**
   * The TiCDC version, named in error messages. The routes this client uses are the same in every
   * release it knows (v7.1-v8.5, the new architecture). @default unknown
   */
  readonly version?: string;
  /**
   * Timeout of a delete: tiflow answers only once the owner removed the changefeed (`deleteChangefeed`
   * retries for up to about a minute). @default 65000
   */
  readonly removeTimeoutMs?: number;
}

/** A changefeed as TiCDC reports it. */
export interface ChangefeedStatus {
  readonly id: string;
  /** The namespace (tiflow) or keyspace (new architecture) TiCDC names. */
  readonly namespace?: string;
  /** `normal`, `stopped`, `failed`, `finished`, `warning` (v7.5+), `error` (v7.1), `pending`, `removed`. */
  readonly state: string;
  /** uint64 TSO as a decimal string. */
  readonly checkpointTs?: string;
  /** As TiCDC writes it: `2006-01-02 15:04:05.000`, the server's time zone. */
  readonly checkpointTime?: string;
  readonly error?: { readonly code?: string; readonly message: string; readonly time?: string };
  /** The sink URI TiCDC returns (masked by TiCDC), with any credential it left redacted too. */
  readonly sinkUri?: string;
  readonly startTs?: string;
  /** Absent when the changefeed has no target (TiCDC omits 0). */
  readonly targetTs?: string;
  readonly config?: Record<string, unknown>;
}

/** What to create: a uint64 ts is a decimal string. */
export interface ChangefeedSpec {
  readonly id: string;
  readonly sinkUri: string;
  /** @default the current TSO (TiCDC's) */
  readonly startTs?: string;
  /** @default none: replicate until stopped */
  readonly targetTs?: string;
  /** TiCDC's `replica_config` (snake_case keys, as its open API names them). @default TiCDC's defaults */
  readonly replicaConfig?: Record<string, unknown>;
}

/** What to change; TiCDC takes it only from a stopped or failed changefeed. */
export interface ChangefeedPatch {
  /** @default unchanged */
  readonly sinkUri?: string;
  /** @default unchanged */
  readonly targetTs?: string;
  /** Replaces the whole replica config. @default unchanged */
  readonly replicaConfig?: Record<string, unknown>;
}

/** TiCDC answered a changefeed request with an error; the message is redacted. */
export class ChangefeedApiError extends GracefulError {
  constructor(
    message: string,
    url: string,
    status: number,
    /** TiCDC's `error_code` (`CDC:ErrChangeFeedNotExists`...), "" when it gave none. */
    readonly code: string,
    /** TiCDC's `error_msg`, redacted. */
    readonly detail: string,
  ) {
    super(message, url, status);
    this.name = 'ChangefeedApiError';
  }
}

export const isChangefeedNotFound = (e: unknown): boolean => e instanceof ChangefeedApiError && e.code === 'CDC:ErrChangeFeedNotExists';
export const isChangefeedAlreadyExists = (e: unknown): boolean =>
  e instanceof ChangefeedApiError && e.code === 'CDC:ErrChangeFeedAlreadyExists';
/** The update was refused because the changefeed runs (tiflow and new arch `updateChangefeed`): pause it first. */
export const isUpdateRefusedWhileRunning = (e: unknown): boolean =>
  e instanceof ChangefeedApiError &&
  e.code === 'CDC:ErrChangefeedUpdateRefused' &&
  /only update changefeed config when it is stopped/.test(e.detail);

// ---- redaction ----

/** Query parameters whose value is a secret (after tiflow pkg/util/uri.go `sensitiveQueryParameterNames`, and more). */
const SENSITIVE_NAME = /pass|pwd|secret|token|key|signature|credential|private|client|access|sas|auth|sig/i;
const MASK = 'xxxxx';

const safeDecode = (s: string): string => {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
};

/** A sink URI with its userinfo password and every secret-looking query value replaced by `xxxxx`. */
export function redactSinkUri(uri: string): string {
  let out = uri.replace(/^([a-z][a-z0-9+.-]*:\/\/)([^@/?#\s]*)@/i, (_m, scheme: string, userinfo: string) => {
    const colon = userinfo.indexOf(':');
    return `${scheme}${colon >= 0 ? `${userinfo.slice(0, colon)}:${MASK}` : userinfo}@`;
  });
  out = out.replace(/([?&;])([^=&;#\s]+)=([^&;#\s]*)/g, (m, sep: string, name: string) =>
    SENSITIVE_NAME.test(safeDecode(name)) ? `${sep}${name}=${MASK}` : m,
  );
  return out;
}

/** The secret values of a sink URI (password, secret query values), raw and decoded, for scrubbing text. */
export function sinkUriSecrets(uri: string): string[] {
  const found: string[] = [];
  const user = /^[a-z][a-z0-9+.-]*:\/\/([^@/?#\s]*)@/i.exec(uri)?.[1];
  if (user !== undefined && user.includes(':')) found.push(user.slice(user.indexOf(':') + 1));
  for (const m of uri.matchAll(/[?&;]([^=&;#\s]+)=([^&;#\s]*)/g)) if (SENSITIVE_NAME.test(safeDecode(m[1]))) found.push(m[2]);
  return [...new Set(found.flatMap((s) => [s, safeDecode(s), encodeURIComponent(safeDecode(s))]))].filter(
    (s) => s.length >= 3 && s !== MASK,
  );
}

/**
 * Text from TiCDC or about a request, safe to log: the known `secrets` scrubbed wherever they appear,
 * every URI in it redacted, `name=value` pairs with a secret-looking name masked, and the password of a
 * Go MySQL DSN (`user:pass@tcp(`) masked.
 */
export function redactText(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const s of [...secrets].sort((a, b) => b.length - a.length)) out = out.split(s).join(MASK);
  out = out.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s'"<>]+/gi, (u) => redactSinkUri(u));
  out = out.replace(/([\w.-]+)=([^&;,\s'"]+)/g, (m, name: string) =>
    SENSITIVE_NAME.test(name) && !m.endsWith(`=${MASK}`) ? `${name}=${MASK}` : m,
  );
  return out.replace(/([\w.-]+):([^@\s/:]+)@(tcp|unix)\(/g, `$1:${MASK}@$3(`);
}

// ---- requests ----

type Ctx = { readonly root: string; readonly opts: ChangefeedApiOptions; readonly secrets: string[] };

function context(base: string, opts: ChangefeedApiOptions, sinkUris: (string | undefined)[] = []): Ctx {
  return { root: trimSlash(base), opts, secrets: sinkUris.flatMap((u) => (u === undefined ? [] : sinkUriSecrets(u))) };
}

/** `/api/v2/changefeeds[/<id>][/<action>]?<namespace|keyspace>=<ns>[&...]`. */
function url(ctx: Ctx, id?: string, action?: string, extra: Record<string, string> = {}): string {
  const q = new URLSearchParams({ [ctx.opts.flavour === 'new' ? 'keyspace' : 'namespace']: ctx.opts.namespace ?? 'default', ...extra });
  const path = `/api/v2/changefeeds${id === undefined ? '' : `/${encodeURIComponent(id)}`}${action ? `/${action}` : ''}`;
  return `${ctx.root}${path}?${q.toString()}`;
}

/** TiCDC's error body, redacted: `{code, message}`, or the body's first characters. */
function errorOf(ctx: Ctx, res: HttpResult): { code: string; message: string } {
  try {
    const v = JSON.parse(res.body) as unknown;
    if (isObject(v) && typeof v.error_msg === 'string')
      return { code: typeof v.error_code === 'string' ? v.error_code : '', message: redactText(v.error_msg, ctx.secrets) };
  } catch {
    // not JSON
  }
  return { code: '', message: redactText(snippet(res.body), ctx.secrets) };
}

function fail(ctx: Ctx, method: string, u: string, res: HttpResult, what: string): ChangefeedApiError {
  const { code, message } = errorOf(ctx, res);
  const who = ctx.opts.version ? ` (TiCDC ${ctx.opts.version})` : '';
  const text =
    res.status === 404 && code === ''
      ? `${method} ${u}${who}: HTTP 404: this TiCDC has no changefeed API v2 (${message})`
      : `${method} ${u}${who}: ${what} failed: HTTP ${res.status}${code ? ` ${code}` : ''}: ${message}`;
  return new ChangefeedApiError(text, u, res.status, code, message);
}

/** A JSON body from TiCDC, with uint64 numbers kept exact. */
function body(ctx: Ctx, method: string, u: string, res: HttpResult, expected: string): unknown {
  try {
    return parseJsonExact(res.body);
  } catch {
    throw new GracefulError(
      `${method} ${u}: expected ${expected}, got HTTP ${res.status} "${redactText(snippet(res.body), ctx.secrets)}"`,
      u,
      res.status,
    );
  }
}

/** A uint64 field as a decimal string: a safe number, or the string `parseJsonExact` made of a larger one. */
function u64(v: unknown): string | undefined {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return String(v);
  if (typeof v === 'string' && /^\d+$/.test(v)) return v;
  return undefined;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

function runningError(v: unknown, ctx: Ctx): ChangefeedStatus['error'] {
  if (!isObject(v) || typeof v.message !== 'string') return undefined;
  const time = str(v.time);
  return {
    ...(str(v.code) ? { code: v.code as string } : {}),
    message: redactText(v.message, ctx.secrets),
    ...(time && !time.startsWith('0001-01-01') ? { time } : {}),
  };
}

/** `ChangeFeedInfo` (get, create, update) or `ChangefeedCommonInfo` (list) to a status. */
function toStatus(v: Record<string, unknown>, ctx: Ctx): ChangefeedStatus {
  const sink = str(v.sink_uri);
  const targetTs = u64(v.target_ts);
  const ns = str(v.namespace) ?? str(v.keyspace);
  const error = runningError(v.error, ctx);
  return {
    id: str(v.id) ?? '',
    ...(ns !== undefined ? { namespace: ns } : {}),
    state: str(v.state) ?? '',
    ...(u64(v.checkpoint_ts ?? v.checkpoint_tso) !== undefined ? { checkpointTs: u64(v.checkpoint_ts ?? v.checkpoint_tso) } : {}),
    ...(str(v.checkpoint_time) !== undefined ? { checkpointTime: str(v.checkpoint_time) } : {}),
    ...(error ? { error } : {}),
    ...(sink ? { sinkUri: redactSinkUri(redactText(sink, ctx.secrets)) } : {}),
    ...(u64(v.start_ts) !== undefined ? { startTs: u64(v.start_ts) } : {}),
    ...(targetTs !== undefined && targetTs !== '0' ? { targetTs } : {}),
    ...(isObject(v.config) ? { config: v.config } : {}),
  };
}

function infoOf(ctx: Ctx, method: string, u: string, res: HttpResult): ChangefeedStatus {
  const v = body(ctx, method, u, res, 'a changefeed (ChangeFeedInfo)');
  if (!isObject(v) || typeof v.id !== 'string')
    throw new GracefulError(
      `${method} ${u}: expected a changefeed with "id", got "${redactText(snippet(res.body), ctx.secrets)}"`,
      u,
      res.status,
    );
  return toStatus(v, ctx);
}

const U64 = /^\d{1,20}$/;
/** JSON with uint64 fields (decimal strings) written as bare numbers, as TiCDC's Go structs want them. */
function jsonBody(fields: Record<string, unknown>, u64Fields: Record<string, string | undefined>): string {
  const parts = Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`);
  for (const [k, v] of Object.entries(u64Fields)) {
    if (v === undefined) continue;
    if (!U64.test(v) || BigInt(v) >= 1n << 64n) throw new Error(`${k} must be a uint64 in decimal, got ${JSON.stringify(v)}`);
    parts.push(`${JSON.stringify(k)}:${BigInt(v).toString()}`);
  }
  return `{${parts.join(',')}}`;
}

// ---- the API ----

/** `GET /api/v2/changefeeds/<id>`: the changefeed, or undefined when TiCDC says it does not exist. */
export async function getChangefeed(base: string, id: string, opts: ChangefeedApiOptions = {}): Promise<ChangefeedStatus | undefined> {
  const ctx = context(base, opts);
  const u = url(ctx, id);
  const res = await send('GET', u, opts);
  if (res.status === 200) return infoOf(ctx, 'GET', u, res);
  const err = fail(ctx, 'GET', u, res, `reading changefeed ${id}`);
  if (isChangefeedNotFound(err)) return undefined;
  throw err;
}

/** `GET /api/v2/changefeeds?state=all`: every changefeed of the namespace, finished ones included. */
export async function listChangefeeds(base: string, opts: ChangefeedApiOptions = {}): Promise<ChangefeedStatus[]> {
  const ctx = context(base, opts);
  const u = url(ctx, undefined, undefined, { state: 'all' });
  const res = await send('GET', u, opts);
  if (res.status !== 200) throw fail(ctx, 'GET', u, res, 'listing changefeeds');
  const v = body(ctx, 'GET', u, res, '{"total","items"}');
  if (!isObject(v) || !Array.isArray(v.items) || !v.items.every(isObject))
    throw new GracefulError(`GET ${u}: expected {"total","items"}, got "${redactText(snippet(res.body), ctx.secrets)}"`, u, res.status);
  return (v.items as Record<string, unknown>[]).map((item) => toStatus(item, ctx));
}

/** `POST /api/v2/changefeeds`: creates the changefeed; a duplicate id throws (see {@link isChangefeedAlreadyExists}). */
export async function createChangefeed(base: string, spec: ChangefeedSpec, opts: ChangefeedApiOptions = {}): Promise<ChangefeedStatus> {
  const ctx = context(base, opts, [spec.sinkUri]);
  const u = url(ctx);
  const scope = opts.flavour === 'new' ? { keyspace: opts.namespace ?? 'default' } : { namespace: opts.namespace ?? 'default' };
  const payload = jsonBody(
    { ...scope, changefeed_id: spec.id, sink_uri: spec.sinkUri, replica_config: spec.replicaConfig },
    { start_ts: spec.startTs, target_ts: spec.targetTs },
  );
  const res = await send('POST', u, opts, payload);
  if (res.status !== 200) throw fail(ctx, 'POST', u, res, `creating changefeed ${spec.id}`);
  return infoOf(ctx, 'POST', u, res);
}

/**
 * `PUT /api/v2/changefeeds/<id>`: `changed: false` when tiflow found nothing to change. A running
 * changefeed is refused: see {@link isUpdateRefusedWhileRunning}; pause, update, resume.
 */
export async function updateChangefeed(
  base: string,
  id: string,
  patch: ChangefeedPatch,
  opts: ChangefeedApiOptions = {},
): Promise<{ changed: boolean; status?: ChangefeedStatus }> {
  const ctx = context(base, opts, [patch.sinkUri]);
  const u = url(ctx, id);
  const payload = jsonBody({ sink_uri: patch.sinkUri, replica_config: patch.replicaConfig }, { target_ts: patch.targetTs });
  const res = await send('PUT', u, opts, payload);
  if (res.status === 200) return { changed: true, status: infoOf(ctx, 'PUT', u, res) };
  const err = fail(ctx, 'PUT', u, res, `updating changefeed ${id}`);
  if (err.code === 'CDC:ErrChangefeedUpdateRefused' && /is the same with the old one/.test(err.detail)) return { changed: false };
  throw err;
}

/** `POST /api/v2/changefeeds/<id>/pause` (a stopped one stays stopped: 200). */
export async function pauseChangefeed(base: string, id: string, opts: ChangefeedApiOptions = {}): Promise<void> {
  const ctx = context(base, opts);
  const u = url(ctx, id, 'pause');
  const res = await send('POST', u, opts);
  if (res.status !== 200) throw fail(ctx, 'POST', u, res, `pausing changefeed ${id}`);
}

/**
 * `POST /api/v2/changefeeds/<id>/resume` with `{}` (tiflow binds the body), or `overwrite_checkpoint_ts`.
 * TiCDC refuses a checkpoint GC has passed (400 `CDC:ErrStartTsBeforeGC`, v7.1.4+ and v8.1+).
 */
export async function resumeChangefeed(
  base: string,
  id: string,
  opts: ChangefeedApiOptions & { readonly overwriteCheckpointTs?: string } = {},
): Promise<void> {
  const ctx = context(base, opts);
  const u = url(ctx, id, 'resume');
  const res = await send('POST', u, opts, jsonBody({}, { overwrite_checkpoint_ts: opts.overwriteCheckpointTs }));
  if (res.status !== 200) throw fail(ctx, 'POST', u, res, `resuming changefeed ${id}`);
}

/** `DELETE /api/v2/changefeeds/<id>`; a changefeed that does not exist counts as removed. */
export async function removeChangefeed(base: string, id: string, opts: ChangefeedApiOptions = {}): Promise<void> {
  const ctx = context(base, opts);
  const u = url(ctx, id);
  const res = await send('DELETE', u, { ...opts, timeoutMs: opts.removeTimeoutMs ?? 65_000 });
  if (res.status === 200) return;
  const err = fail(ctx, 'DELETE', u, res, `removing changefeed ${id}`);
  if (!isChangefeedNotFound(err)) throw err;
}
