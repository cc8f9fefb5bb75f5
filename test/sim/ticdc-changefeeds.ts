/**
 * The changefeeds a simulated TiCDC cluster holds, behind TiCDC's open API v2 (`/api/v2/changefeeds`),
 * answered as the owner (tiflow) or coordinator (new architecture) of the release that answers does:
 * paths, `namespace` (tiflow) or `keyspace` (new architecture) query, JSON shapes with uint64 numbers,
 * status codes and `{"error_msg","error_code"}` bodies. `TicdcSim` (ticdc.ts) forwards the routes to
 * the owner's version and calls `handle`. Upstream sources are named beside each behaviour; the facts
 * per release are summed up in `ChangefeedFlavour`.
 *
 * Progress: a changefeed in state `normal` has its checkpoint `lagMs` behind the current TSO (taken
 * from the clock: physical ms << 18) and turns `finished` once it reaches its `target_ts`; in any other
 * state the checkpoint stands still.
 *
 * Not modelled: the upstream (tables, filters: `ErrTableIneligible`), real sink connections (sinks are
 * accepted unless `rejectSink` says otherwise), the owner's tick between an admin job and its effect
 * (pause/resume/delete take effect at once), the full default replica config (a small subset is
 * returned), TLS and `security.client-user-required` on these routes, next-gen keyspaces.
 */
import { randomBytes } from 'node:crypto';
import {
  type CdcError,
  errorAnswer,
  ginJson,
  jsonTime,
  KNOWN_SINK_SCHEMES,
  maskSinkUri,
  rfc3339,
  sinkScheme,
  tsoMs,
  tsoOf,
  type WireAnswer,
  ZERO_TIME,
} from './ticdc-changefeeds-wire';
import { bindBody, type ChangefeedConfigBody, DEFAULT_CONFIG, merge } from './ticdc-changefeeds-bind';
import {
  type AnsweringCapture,
  type ChangefeedFlavour,
  type ChangefeedOp,
  changefeedFlavour,
  type FeedState,
  stateName,
  validId,
} from './ticdc-changefeeds-releases';

export { matchChangefeedRoute, servesChangefeedsV2, type FeedState, type AnsweringCapture } from './ticdc-changefeeds-releases';

export interface RunningErrorView {
  code: string;
  message: string;
  /** Epoch ms. */
  time: number;
  addr: string;
}

/** A changefeed as a test sees it; ts as decimal strings. */
export interface ChangefeedView {
  namespace: string;
  id: string;
  state: FeedState;
  /** The sink URI as it was sent, credentials included. */
  sinkUri: string;
  startTs: string;
  targetTs: string;
  checkpointTs: string;
  config: Record<string, unknown>;
  error?: RunningErrorView;
  lagMs: number;
}

/** One request to a changefeed route, as sent (credentials included): what a test checks the controller sent. */
export interface ChangefeedCall {
  method: string;
  /** Path and query. */
  url: string;
  body: string;
  status: number;
  /** The version of the capture that answered. */
  version: string;
  time: number;
}

interface Feed {
  namespace: string;
  id: string;
  upstreamId: bigint;
  sinkUri: string;
  createMs: number;
  startTs: bigint;
  targetTs: bigint;
  config: Record<string, unknown>;
  state: FeedState;
  error?: RunningErrorView;
  checkpointTs: bigint;
  lagMs: number;
  creatorVersion: string;
  gid: { low: bigint; high: bigint };
}

const UPSTREAM_ID = 7_301_234_567_890_123_456n;
const NOT_EXISTS = (what: string): CdcError => ({ code: 'CDC:ErrChangeFeedNotExists', message: `changefeed not exists, ${what}` });
const INVALID_ID = (id: string): CdcError => ({ code: 'CDC:ErrAPIInvalidParam', message: `invalid changefeed_id: ${id}` });
const REFUSED = (why: string): CdcError => ({ code: 'CDC:ErrChangefeedUpdateRefused', message: `changefeed update error: ${why}` });
const BEFORE_GC = (ts: bigint, gc: bigint): CdcError => ({
  code: 'CDC:ErrStartTsBeforeGC',
  message: `fail to create or maintain changefeed because start-ts ${ts} is earlier than or equal to GC safepoint at ${gc}`,
});

export class TicdcChangefeeds {
  /** Every request to a changefeed route, bodies as sent. */
  readonly calls: ChangefeedCall[] = [];
  /** Every sink URI received by create and update, as sent. */
  readonly sinkUris: string[] = [];
  /** PD's GC safepoint: a start or resume ts at or below it is refused. @default 0n */
  gcSafePoint = 0n;
  /** The checkpoint lag of changefeeds created through the API. @default 2000 */
  defaultLagMs = 2000;

  private readonly feeds = new Map<string, Feed>();
  private readonly sinkRejections: { pattern: RegExp; cause: string; code?: string }[] = [];
  private lastTso = 0n;

  /** The current TSO (strictly increasing). */
  currentTso(): bigint {
    const ts = tsoOf(Date.now());
    this.lastTso = ts > this.lastTso ? ts : this.lastTso + 1n;
    return this.lastTso;
  }

  // ---- test hooks ----

  /** Seeds a changefeed made by hand (`cdc cli changefeed create`), in state `normal` unless told. */
  addChangefeed(spec: {
    id: string;
    sinkUri: string;
    namespace?: string;
    state?: FeedState;
    startTs?: bigint;
    targetTs?: bigint;
    checkpointTs?: bigint;
    config?: Record<string, unknown>;
    lagMs?: number;
  }): void {
    const now = this.currentTso();
    const startTs = spec.startTs ?? now - tsoOf(60_000);
    this.feeds.set(key(spec.namespace ?? 'default', spec.id), {
      namespace: spec.namespace ?? 'default',
      id: spec.id,
      upstreamId: UPSTREAM_ID,
      sinkUri: spec.sinkUri,
      createMs: tsoMs(startTs),
      startTs,
      targetTs: spec.targetTs ?? 0n,
      config: merge(DEFAULT_CONFIG, spec.config ?? {}),
      state: spec.state ?? 'normal',
      checkpointTs: spec.checkpointTs ?? startTs,
      lagMs: spec.lagMs ?? this.defaultLagMs,
      creatorVersion: 'v8.5.0',
      gid: randomGid(),
    });
  }

  /**
   * The changefeed meets an error: `failed` (not retried, `ShouldFailChangefeed`) by default, or
   * `retrying` (shown `error` by v7.1, `warning` by later releases). Its checkpoint stops.
   */
  failChangefeed(
    id: string,
    message: string,
    code = 'CDC:ErrSinkURIInvalid',
    opts: { state?: 'failed' | 'retrying'; namespace?: string } = {},
  ): void {
    const f = this.must(opts.namespace ?? 'default', id);
    this.advance(f);
    f.state = opts.state ?? 'failed';
    f.error = { code, message, time: Date.now(), addr: '' };
  }

  /** Sets how far a changefeed's checkpoint trails the TSO while it runs (`lagMs`), or moves its checkpoint. */
  setProgress(id: string, p: { lagMs?: number; checkpointTs?: bigint }, namespace = 'default'): void {
    const f = this.must(namespace, id);
    this.advance(f);
    if (p.lagMs !== undefined) f.lagMs = p.lagMs;
    if (p.checkpointTs !== undefined) f.checkpointTs = p.checkpointTs;
  }

  /** Sink verification fails for URIs matching `pattern` (a downstream that cannot be reached). */
  rejectSink(pattern: RegExp, cause: string, code?: string): void {
    this.sinkRejections.push({ pattern, cause, code });
  }

  /** Snapshot of the changefeeds, progress brought up to now. */
  changefeeds(): ChangefeedView[] {
    return [...this.feeds.values()].map((f) => {
      this.advance(f);
      return {
        namespace: f.namespace,
        id: f.id,
        state: f.state,
        sinkUri: f.sinkUri,
        startTs: f.startTs.toString(),
        targetTs: f.targetTs.toString(),
        checkpointTs: f.checkpointTs.toString(),
        config: f.config,
        error: f.error,
        lagMs: f.lagMs,
      };
    });
  }

  // ---- the API ----

  /** One request to a changefeed route, on the owner `by`. Records it in `calls`. */
  handle(route: { op: ChangefeedOp; id: string }, by: AnsweringCapture, method: string, url: string, body: string): WireAnswer {
    const answer = this.answer(route, by, new URL(url, 'http://cdc').searchParams, body);
    this.calls.push({ method, url, body, status: answer.status, version: by.version, time: Date.now() });
    return answer;
  }

  private answer(route: { op: ChangefeedOp; id: string }, by: AnsweringCapture, query: URLSearchParams, body: string): WireAnswer {
    const fl = changefeedFlavour(by);
    const fail = (e: CdcError) => errorAnswer(e, fl.alreadyExistsIs400);
    // tiflow: `getNamespaceValueWithDefault` (cdc/api/v2/changefeed.go); new arch classic:
    // `GetKeyspaceValueWithDefault` is always "default" (api/v2/changefeed.go).
    const ns = fl.newArch ? 'default' : query.get('namespace') || 'default';
    if (route.op === 'list') return this.list(fl, ns, query.get('state') ?? '');
    if (route.op === 'create') return this.create(fl, by, body, fail);
    if (!validId(route.id)) return fail(INVALID_ID(route.id));
    const f = this.feeds.get(key(ns, route.id));
    if (f !== undefined) this.advance(f);
    if (route.op === 'delete') {
      // tiflow `deleteChangefeed`: 200 `{}` when missing; new arch `DeleteChangefeed`: 200 `null`.
      if (f !== undefined) this.feeds.delete(key(ns, route.id));
      return ginJson(200, f === undefined && fl.newArch ? null : {});
    }
    if (f === undefined) return fail(NOT_EXISTS(fl.newArch ? route.id : `${ns}/${route.id}`));
    switch (route.op) {
      case 'get':
        return ginJson(200, this.info(f, fl, by));
      case 'pause':
        return this.pause(f, fl);
      case 'resume':
        return this.resume(f, fl, body, fail);
      default:
        return this.update(f, fl, by, body, fail);
    }
  }

  /**
   * tiflow `createChangefeed` + api_helpers.go `verifyCreateChangefeedConfig`; new arch `CreateChangefeed`.
   * Order: bind, sink_uri empty, id, exists, start_ts vs TSO, GC safepoint, target_ts, sink verification.
   */
  private create(fl: ChangefeedFlavour, by: AnsweringCapture, raw: string, fail: (e: CdcError) => WireAnswer): WireAnswer {
    const cfg = bindBody(raw, 'ChangefeedConfig');
    if ('error' in cfg) return fail(cfg.error);
    const c: ChangefeedConfigBody = cfg.value;
    if (c.sink_uri) this.sinkUris.push(c.sink_uri);
    if (!c.sink_uri)
      return fail({
        code: 'CDC:ErrSinkURIInvalid',
        message: "sink uri invalid 'sink_uri is empty, cannot create a changefeed without sink_uri'",
      });
    const id = c.changefeed_id || randomUuid();
    if (!validId(id)) return fail(INVALID_ID(id));
    // tiflow takes the namespace from the body (`cfg.Namespace`); the new architecture from the query (always "default" in classic).
    const ns = fl.newArch ? 'default' : c.namespace || 'default';
    if (this.feeds.has(key(ns, id))) return fail({ code: 'CDC:ErrChangeFeedAlreadyExists', message: `changefeed already exists, ${id}` });
    const now = this.currentTso();
    const startTs = c.start_ts === 0n ? now : c.start_ts;
    if (startTs > now)
      return fail({ code: 'CDC:ErrAPIInvalidParam', message: `invalid start-ts ${startTs}, larger than current tso ${now}` });
    if (startTs < this.gcSafePoint + 1n) return fail(BEFORE_GC(startTs, this.gcSafePoint));
    if (c.target_ts > 0n && c.target_ts <= startTs)
      return fail({
        code: 'CDC:ErrTargetTsBeforeStartTs',
        message: `fail to create changefeed because target-ts ${c.target_ts} is earlier than start-ts ${startTs}`,
      });
    const rejected = this.verifySink(c.sink_uri, fl);
    if (rejected !== undefined) return fail(rejected);
    const f: Feed = {
      namespace: ns,
      id,
      upstreamId: UPSTREAM_ID,
      sinkUri: c.sink_uri,
      createMs: Date.now(),
      startTs,
      targetTs: c.target_ts,
      config: merge(DEFAULT_CONFIG, c.replica_config ?? {}),
      state: 'normal',
      checkpointTs: startTs,
      lagMs: this.defaultLagMs,
      creatorVersion: by.version,
      gid: randomGid(),
    };
    this.feeds.set(key(ns, id), f);
    return ginJson(200, this.info(f, fl, by));
  }

  /**
   * Sink verification: tiflow `validator.Validate` (cdc/sink/validator/validator.go) connects to a MySQL
   * downstream, whose failure is ErrMySQLConnectionError; the new architecture wraps any `sink.Verify`
   * error as ErrSinkURIInvalid with the raw URI in the message (api/v2/changefeed.go
   * `errors.WrapError(errors.ErrSinkURIInvalid, err, cfg.SinkURI)`): credentials included.
   */
  private verifySink(uri: string, fl: ChangefeedFlavour): CdcError | undefined {
    const scheme = sinkScheme(uri);
    if (scheme === undefined || !KNOWN_SINK_SCHEMES.has(scheme)) {
      const cause = `the sink scheme (${scheme ?? ''}) is not supported`;
      return { code: 'CDC:ErrSinkURIInvalid', message: fl.newArch ? `sink uri invalid '${uri}': ${cause}` : cause };
    }
    const r = this.sinkRejections.find((x) => x.pattern.test(uri));
    if (r === undefined) return undefined;
    if (fl.newArch) return { code: 'CDC:ErrSinkURIInvalid', message: `sink uri invalid '${uri}': ${r.cause}` };
    return { code: r.code ?? 'CDC:ErrMySQLConnectionError', message: `MySQL connection error: ${r.cause}` };
  }

  /**
   * tiflow `updateChangefeed` + `verifyUpdateChangefeedConfig`; new arch `UpdateChangefeed`. Only a
   * `stopped` or `failed` changefeed is updated (checked before the body is read).
   */
  private update(f: Feed, fl: ChangefeedFlavour, by: AnsweringCapture, raw: string, fail: (e: CdcError) => WireAnswer): WireAnswer {
    if (f.state !== 'stopped' && f.state !== 'failed')
      return fail(REFUSED('can only update changefeed config when it is stopped or failed'));
    const cfg = bindBody(raw, 'ChangefeedConfig');
    if ('error' in cfg) return fail(cfg.error);
    const c = cfg.value;
    if (c.sink_uri) this.sinkUris.push(c.sink_uri);
    let targetTs = f.targetTs;
    if (c.target_ts !== 0n) {
      if (c.target_ts <= f.startTs)
        return fail({
          code: 'CDC:ErrChangefeedUpdateRefused',
          message: `can not update target_ts:${c.target_ts} less than start_ts:${f.startTs}`,
        });
      targetTs = c.target_ts;
    }
    const config = c.replica_config !== undefined ? merge(DEFAULT_CONFIG, c.replica_config) : f.config;
    const sinkUri = c.sink_uri || f.sinkUri;
    if (fl.newArch && c.start_ts !== 0n)
      return fail({ code: 'CDC:ErrAPIInvalidParam', message: 'invalid api parameter: start_ts can not be updated' });
    // tiflow validates the sink only when it or the config changed; the new architecture always.
    if (fl.newArch || c.sink_uri || c.replica_config !== undefined) {
      const rejected = this.verifySink(sinkUri, fl);
      if (rejected !== undefined) return fail(fl.newArch ? rejected : REFUSED(`${rejected.message}`));
    }
    const same = targetTs === f.targetTs && sinkUri === f.sinkUri && JSON.stringify(config) === JSON.stringify(f.config);
    if (!fl.newArch && same) return fail(REFUSED('changefeed config is the same with the old one, do nothing'));
    Object.assign(f, { targetTs, sinkUri, config });
    return ginJson(200, this.info(f, fl, by));
  }

  /**
   * tiflow: an AdminStop job, acted on only from normal/warning/pending (v7.1: normal/error) by
   * cdc/owner/feed_state_manager.go `handleAdminJob`, else ignored: 200 either way. New arch:
   * coordinator/controller.go `PauseChangefeed` sets `stopped` in any state.
   */
  private pause(f: Feed, fl: ChangefeedFlavour): WireAnswer {
    if (fl.newArch || f.state === 'normal' || f.state === 'retrying') f.state = 'stopped';
    return ginJson(200, {});
  }

  /**
   * tiflow `resumeChangefeed` (body bound with BindJSON: an empty body is 400 EOF); AdminResume acted on
   * from failed/stopped/finished (v7.1: and error). The checkpoint (or `overwrite_checkpoint_ts`) is
   * checked against the TSO and the GC safepoint (`verifyResumeChangefeedConfig`) from v7.1.4 and v8.1.0;
   * before, only an overwrite is, and a checkpoint GC has passed fails the changefeed once it runs
   * (ErrSnapshotLostByGC). New arch: body optional, `ResumeChangefeed` sets normal in any state.
   */
  private resume(f: Feed, fl: ChangefeedFlavour, raw: string, fail: (e: CdcError) => WireAnswer): WireAnswer {
    const cfg = fl.newArch && raw.trim() === '' ? { value: { overwrite_checkpoint_ts: 0n } } : bindBody(raw, 'ResumeChangefeedConfig');
    if ('error' in cfg) return fail(cfg.error);
    const overwrite = cfg.value.overwrite_checkpoint_ts;
    const checked = overwrite !== 0n ? overwrite : fl.resumeChecksCheckpoint ? f.checkpointTs : 0n;
    if (checked !== 0n) {
      const now = this.currentTso();
      if (checked > now)
        return fail({ code: 'CDC:ErrAPIInvalidParam', message: `invalid checkpoint-ts ${checked}, larger than current tso ${now}` });
      if (checked < this.gcSafePoint + 1n) return fail(BEFORE_GC(checked, this.gcSafePoint));
    }
    const resumable =
      fl.newArch || f.state === 'failed' || f.state === 'stopped' || f.state === 'finished' || (fl.v71 && f.state === 'retrying');
    if (!resumable) return ginJson(200, {});
    if (overwrite !== 0n) f.checkpointTs = overwrite;
    f.state = 'normal';
    f.error = undefined;
    if (f.checkpointTs < this.gcSafePoint + 1n) {
      // cdc/owner/changefeed.go: the GC manager's check fails the changefeed (ErrSnapshotLostByGC).
      f.state = 'failed';
      f.error = {
        code: 'CDC:ErrSnapshotLostByGC',
        message: `[CDC:ErrSnapshotLostByGC]fail to create or maintain changefeed due to snapshot loss caused by GC. checkpoint-ts ${f.checkpointTs} is earlier than or equal to GC safepoint at ${this.gcSafePoint}`,
        time: Date.now(),
        addr: '',
      };
    }
    return ginJson(200, {});
  }

  /**
   * tiflow `listChangeFeeds`, new arch `ListChangeFeeds`: `{"total","items"}` sorted by id; without
   * `state=all` only normal/stopped/failed (v7.5+: and warning) are listed (`FeedState.IsNeeded`).
   */
  private list(fl: ChangefeedFlavour, ns: string, state: string): WireAnswer {
    const items = [...this.feeds.values()]
      .filter((f) => f.namespace === ns)
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .filter((f) => {
        const shown = stateName(f.state, fl);
        if (state === 'all') return true;
        if (state === '') return ['normal', 'stopped', 'failed', 'warning'].includes(shown);
        return state === shown;
      })
      .map((f) => {
        this.advance(f);
        const shown = stateName(f.state, fl);
        // tiflow v7.5+: error hidden for normal/stopped/finished; v7.1: for normal; new arch: never.
        const hide = fl.newArch ? false : fl.v71 ? shown === 'normal' : ['normal', 'stopped', 'finished'].includes(shown);
        return {
          upstream_id: f.upstreamId,
          ...(fl.newArch ? { id: f.id, keyspace: f.namespace } : { namespace: f.namespace, id: f.id }),
          state: shown,
          checkpoint_tso: f.checkpointTs,
          checkpoint_time: jsonTime(tsoMs(f.checkpointTs)),
          error:
            f.error === undefined || hide
              ? null
              : { time: rfc3339(f.error.time), addr: f.error.addr, code: f.error.code, message: f.error.message },
        };
      });
    return ginJson(200, { total: items.length, items });
  }

  /** `ChangeFeedInfo` (tiflow cdc/api/v2/model.go, `toAPIModel`; new arch api/v2/model.go, `CfInfoToAPIModel`). */
  private info(f: Feed, fl: ChangefeedFlavour, by: AnsweringCapture): Record<string, unknown> {
    const shown = stateName(f.state, fl);
    // A retrying changefeed's error is `info.Warning` from v7.5 (feed_state_manager.go `handleWarning`),
    // which get does not show: `toAPIModel` / `CfInfoToAPIModel` take `info.Error` only.
    const inWarning = f.state === 'retrying' && !fl.v71;
    const showError =
      f.error !== undefined && !inWarning && (fl.v71 ? shown !== 'normal' : !['normal', 'stopped', 'finished'].includes(shown));
    const err =
      showError && f.error
        ? { ...(fl.newArch ? { time: ZERO_TIME } : {}), addr: f.error.addr, code: f.error.code, message: f.error.message }
        : undefined;
    return {
      upstream_id: f.upstreamId,
      ...(fl.newArch ? { id: f.id, keyspace: f.namespace } : { namespace: f.namespace, id: f.id }),
      sink_uri: maskSinkUri(f.sinkUri) ?? '',
      create_time: rfc3339(f.createMs),
      start_ts: f.startTs,
      ...(f.targetTs !== 0n ? { target_ts: f.targetTs } : {}),
      config: f.config,
      state: shown,
      ...(err ? { error: err } : {}),
      creator_version: f.creatorVersion,
      resolved_ts: f.checkpointTs,
      checkpoint_ts: f.checkpointTs,
      checkpoint_time: jsonTime(tsoMs(f.checkpointTs)),
      ...(fl.newArch ? { gid: f.gid, maintainer_addr: by.address } : {}),
    };
  }

  /** Brings a running changefeed's checkpoint up to now; `finished` at its target_ts (cdc/owner/changefeed.go). */
  private advance(f: Feed): void {
    if (f.state !== 'normal') return;
    const goal = tsoOf(Date.now() - f.lagMs);
    if (goal > f.checkpointTs) f.checkpointTs = goal;
    if (f.targetTs !== 0n && f.checkpointTs >= f.targetTs) {
      f.checkpointTs = f.targetTs;
      f.state = 'finished';
    }
  }

  private must(ns: string, id: string): Feed {
    const f = this.feeds.get(key(ns, id));
    if (f === undefined) throw new Error(`TicdcChangefeeds: no changefeed ${ns}/${id}`);
    return f;
  }
}

const key = (ns: string, id: string) => `${ns}/${id}`;

const randomGid = () => ({ low: randomBytes(8).readBigUInt64BE(), high: randomBytes(8).readBigUInt64BE() });
const randomUuid = () => {
  const h = randomBytes(16).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};
