/**
 * The TiCDC changefeeds Git declares (`Changefeed`), kept in TiCDC: pure. From the declared
 * changefeeds, TiCDC's as read, the records of the ones the controller manages and the versions of the
 * credential Secrets, the API calls to make, changefeed by changefeed, and how each stands.
 *
 * The rules:
 * - A missing changefeed is created (and paused at once when Git asks it paused: TiCDC's create takes
 *   no state). One that exists and is not recorded is adopted, never removed and created again: when
 *   what TiCDC shows of it matches Git it is only recorded, else it is updated as below.
 * - What Git declares (sink URI, credentials' Secret version, target, replica config) is compared with
 *   what was last applied (the record). A change is made the way TiCDC requires: a running changefeed
 *   is paused first (TiCDC updates only a stopped or failed one; the record remembers the pause was for
 *   the update), then updated, then resumed unless Git asks it paused. A rotated credential is such a
 *   change: the Secret's version is part of what was applied.
 * - Git's `paused` is kept: a running changefeed Git asks paused is paused, a stopped one Git asks
 *   running is resumed. A failed one is left as it is (resuming would fail the same way) until Git
 *   changes it, and reported.
 * - A changefeed is removed only when the controller manages it and its document left Git with
 *   `deletionPolicy: Delete`; with `Retain` it is left running in TiCDC and no longer changed.
 *   Changefeeds neither declared nor recorded are never touched: they are listed as unmanaged.
 */
import { stableJson } from '../../base/stable-json';
import type { ChangefeedInfo } from '../../tidbcluster/contract/changefeeds';
import { type ChangefeedStatus, redactSinkUri } from '../clients/changefeeds';
import type { AppliedChangefeed, ChangefeedRecord } from '../records/changefeeds';

/** One call to TiCDC's changefeed API. */
export type ChangefeedCall = 'create' | 'pause' | 'update' | 'resume' | 'remove';

export interface ChangefeedsInput {
  readonly feeds: readonly ChangefeedInfo[];
  /** TiCDC's changefeeds, by id (removed ones left out). */
  readonly observed: ReadonlyMap<string, ChangefeedStatus>;
  readonly records: Readonly<Record<string, ChangefeedRecord>>;
  /** The credential Secrets there are: name → `<uid>/<resourceVersion>` and the keys they hold. */
  readonly secrets: ReadonlyMap<string, { readonly version: string; readonly keys: readonly string[] }>;
  /** Now, ms since the epoch (for the lag). */
  readonly now: number;
}

/** The calls for one changefeed, in order, and the record to keep once they all succeeded. */
export interface ChangefeedStep {
  readonly id: string;
  readonly calls: readonly ChangefeedCall[];
  /** The declared changefeed the calls carry out. @default none (a removal, or only the record) */
  readonly feed?: ChangefeedInfo;
  /** The record once the calls succeeded; undefined: none is kept. */
  readonly record: ChangefeedRecord | undefined;
}

/** How a declared changefeed stands: what its ConfigMap's phase and `status.json` say. */
export interface ChangefeedReport {
  readonly document: string;
  readonly id: string;
  /** `Complete`: in the state Git asks; `Running`: calls under way; `Waiting`: on `message`; `Failed`: TiCDC failed it. */
  readonly phase: 'Complete' | 'Running' | 'Waiting' | 'Failed';
  /** TiCDC's state. @default none (not there yet) */
  readonly state?: string;
  /** A line for the ConfigMap and the status. */
  readonly message: string;
  /** @default none */
  readonly checkpointTs?: string;
  /** The checkpoint as a time (RFC 3339). @default none */
  readonly checkpointTime?: string;
  /** How far behind now the checkpoint is, ms. @default none */
  readonly lagMs?: number;
  /** TiCDC's last error, redacted. @default none */
  readonly error?: string;
}

export interface ChangefeedsPlan {
  readonly steps: readonly ChangefeedStep[];
  /** The declared changefeeds, in Git's order. */
  readonly feeds: readonly ChangefeedReport[];
  /** In TiCDC, neither declared nor managed: left alone. */
  readonly unmanaged: readonly string[];
  /** Managed changefeeds whose document left Git with `Retain`: left in TiCDC, no longer changed. */
  readonly kept: readonly string[];
}

/**
 * TiCDC's states in which a changefeed replicates (tiflow `FeedState`; `pending` and `warning` retry by
 * themselves, as `error` does in v7.1.0-v7.1.1: pingcap/tiflow cdc/owner/feed_state_manager.go (v7.1.1), which
 * pauses it like a normal one and fails it only on an unretryable error).
 */
const RUNNING = new Set(['normal', 'warning', 'pending', 'error', '']);
/** The states TiCDC updates a changefeed in (pingcap/tiflow cdc/api/v2/changefeed.go `updateChangefeed`: stopped or failed, v7.1.0-v8.5.x). */
const UPDATABLE = new Set(['stopped', 'failed']);
const FAILED = new Set(['failed']);

/** What of a changefeed Git declares that, once applied, is remembered: credentials only by their Secret's version. */
export function appliedOf(feed: ChangefeedInfo, secretVersion: string | undefined): AppliedChangefeed {
  return {
    sinkUri: feed.sinkUri,
    ...(feed.credentials && { credentials: stableJson(feed.credentials), secretVersion: secretVersion ?? '' }),
    ...(feed.targetTs !== undefined && { targetTs: feed.targetTs }),
    ...(feed.replicaConfig && { replicaConfig: stableJson(feed.replicaConfig) }),
  };
}

/** A TSO's physical time, ms since the epoch (the high 46 bits). */
export const tsoTime = (ts: string): number => Number(BigInt(ts) >> 18n);

/** The Secret a changefeed's credentials need is missing, or lacks a key: why, else undefined. */
function missingCredentials(feed: ChangefeedInfo, secrets: ChangefeedsInput['secrets']): string | undefined {
  const c = feed.credentials;
  if (!c) return undefined;
  const s = secrets.get(c.secret);
  if (!s) return `the Secret ${c.secret} with the sink's credentials is not there`;
  const keys = [c.password, ...Object.values(c.params ?? {}), ...Object.values(c.fields ?? {})].filter((k): k is string => k !== undefined);
  const lacking = keys.filter((k) => !s.keys.includes(k));
  return lacking.length > 0 ? `the Secret ${c.secret} has no key ${lacking.join(', ')}` : undefined;
}

/**
 * Whether what TiCDC shows of a changefeed made by hand is what Git declares: the sink URI (TiCDC
 * masks its password, so credentials are compared by place only), the target, and every replica config
 * field Git writes (TiCDC shows its defaults beside them).
 */
export function matchesGit(feed: ChangefeedInfo, has: ChangefeedStatus): boolean {
  const secretParams = new Set(Object.keys(feed.credentials?.params ?? {}).map((p) => p.toLowerCase()));
  // The credentials, masked by TiCDC (or by the client) on one side and absent from Git's URI on the other, are left out;
  // Git's URI is masked as the client masks TiCDC's (`sasl-user`, `sasl-mechanism` look secret to it), so both lose the same.
  const strip = (u: string) => {
    const [head, query = ''] = redactSinkUri(u)
      .replace(/^([a-z][a-z0-9+.-]*:\/\/[^:@/?#]*):[^@/?#]*@/i, '$1@')
      .split('?', 2);
    const kept = query
      .split('&')
      .filter((kv) => kv !== '' && !kv.endsWith('=xxxxx') && !secretParams.has(kv.split('=')[0].toLowerCase()))
      .sort();
    return kept.length > 0 ? `${head}?${kept.join('&')}` : head;
  };
  if (has.sinkUri === undefined || strip(has.sinkUri) !== strip(feed.sinkUri)) return false;
  if (has.targetTs !== feed.targetTs && !(has.targetTs === '0' && feed.targetTs === undefined)) return false;
  return within(feed.replicaConfig ?? {}, has.config ?? {});
}

/** Every value of `want` is in `have` (objects compared key by key, lists and scalars whole). */
function within(want: unknown, have: unknown): boolean {
  if (typeof want === 'object' && want !== null && !Array.isArray(want))
    return (
      typeof have === 'object' && have !== null && Object.entries(want).every(([k, v]) => within(v, (have as Record<string, unknown>)[k]))
    );
  return stableJson(want) === stableJson(have ?? null);
}

/** The calls that keep TiCDC's changefeeds as Git declares them. */
export function planChangefeeds(input: ChangefeedsInput): ChangefeedsPlan {
  const steps: ChangefeedStep[] = [];
  const reports: ChangefeedReport[] = [];
  const declared = new Set(input.feeds.map((f) => f.id));
  for (const feed of input.feeds) {
    const has = input.observed.get(feed.id);
    const record = input.records[feed.id];
    const version = feed.credentials ? input.secrets.get(feed.credentials.secret)?.version : undefined;
    const applied = appliedOf(feed, version);
    const next: ChangefeedRecord = { document: feed.document, deletionPolicy: feed.deletionPolicy ?? 'Retain', applied };
    const report = (phase: ChangefeedReport['phase'], message: string): ChangefeedReport => ({
      document: feed.document,
      id: feed.id,
      phase,
      message,
      ...(has && describe(has, input.now)),
    });
    const missing = missingCredentials(feed, input.secrets);
    if (!has) {
      if (missing) {
        reports.push(report('Waiting', `waiting: ${missing}`));
        continue;
      }
      steps.push({ id: feed.id, calls: feed.paused ? ['create', 'pause'] : ['create'], feed, record: next });
      reports.push(report('Running', record ? 'creating it again: it was removed from TiCDC' : 'creating it'));
      continue;
    }
    const state = has.state;
    const changed = record?.applied ? stableJson(record.applied) !== stableJson(applied) : !matchesGit(feed, has);
    if (changed) {
      if (missing) {
        reports.push(report('Waiting', `waiting: ${missing}`));
        continue;
      }
      if (RUNNING.has(state)) {
        // An adopted one keeps no `applied` until updated: else the next pass would take Git's as applied and resume it unchanged.
        const before = record ?? { document: next.document, deletionPolicy: next.deletionPolicy };
        steps.push({ id: feed.id, calls: ['pause'], record: { ...before, pausedForUpdate: true } });
        reports.push(report('Running', 'pausing it to update it (TiCDC updates only a stopped changefeed)'));
      } else if (UPDATABLE.has(state)) {
        const resume = !feed.paused && (state === 'stopped' || record?.pausedForUpdate === true || FAILED.has(state));
        steps.push({ id: feed.id, calls: resume ? ['update', 'resume'] : ['update'], feed, record: next });
        reports.push(report('Running', resume ? 'updating and resuming it' : 'updating it'));
      } else reports.push(report('Waiting', `waiting: TiCDC cannot update a changefeed in state ${state || 'uninitialized'}`));
      continue;
    }
    const recordChanged = stableJson(record ?? null) !== stableJson(next);
    const keep = (calls: ChangefeedCall[], r: ChangefeedRecord | undefined) => {
      if (calls.length > 0 || recordChanged) steps.push({ id: feed.id, calls, record: r });
    };
    if (feed.paused && RUNNING.has(state)) {
      keep(['pause'], next);
      reports.push(report('Running', 'pausing it, as Git asks'));
    } else if (!feed.paused && state === 'stopped') {
      keep(['resume'], next);
      reports.push(report('Running', 'resuming it, as Git asks'));
    } else if (FAILED.has(state) && !record?.pausedForUpdate) {
      keep([], next);
      reports.push(
        report(
          'Failed',
          `TiCDC failed it${has.error ? `: ${has.error.message}` : ''}; change the document (or fix the sink and resume it by hand) to try again`,
        ),
      );
    } else if (FAILED.has(state)) {
      keep(['resume'], next);
      reports.push(report('Running', 'resuming it after its update'));
    } else {
      keep([], next);
      reports.push(
        report(state === 'warning' || state === 'pending' || state === 'error' ? 'Running' : 'Complete', summary(has, input.now)),
      );
    }
  }
  const kept: string[] = [];
  for (const [id, record] of Object.entries(input.records).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (declared.has(id)) continue;
    if (!input.observed.has(id)) {
      steps.push({ id, calls: [], record: undefined });
      continue;
    }
    if (record.deletionPolicy === 'Delete') {
      steps.push({ id, calls: ['remove'], record: undefined });
      continue;
    }
    kept.push(id);
    if (!record.retained) steps.push({ id, calls: [], record: { ...record, retained: true } });
  }
  const unmanaged = [...input.observed.keys()].filter((id) => !declared.has(id) && !input.records[id]).sort();
  return { steps, feeds: reports, unmanaged, kept };
}

/** The checkpoint, its time and lag, and TiCDC's error, as the status shows them. */
function describe(has: ChangefeedStatus, now: number): Partial<ChangefeedReport> {
  const at = has.checkpointTs && /^\d+$/.test(has.checkpointTs) && has.checkpointTs !== '0' ? tsoTime(has.checkpointTs) : undefined;
  return {
    state: has.state,
    ...(has.checkpointTs && { checkpointTs: has.checkpointTs }),
    ...(at !== undefined && { checkpointTime: new Date(at).toISOString(), lagMs: Math.max(0, now - at) }),
    ...(has.error && { error: has.error.message }),
  };
}

/** `normal, checkpoint 2026-12-08T03:00:00.000Z (1.2 s behind)`. */
function summary(has: ChangefeedStatus, now: number): string {
  const d = describe(has, now);
  const lag = d.lagMs === undefined ? '' : ` (${d.lagMs < 1000 ? `${d.lagMs} ms` : `${(d.lagMs / 1000).toFixed(1)} s`} behind)`;
  return `${has.state || 'uninitialized'}${d.checkpointTime ? `, checkpoint ${d.checkpointTime}${lag}` : ''}${has.error ? `: ${has.error.message}` : ''}`;
}
