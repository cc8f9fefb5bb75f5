/**
 * The releases the changefeed model of `ticdc-changefeeds.ts` plays, and what differs between them:
 * the routes of `/api/v2/changefeeds`, the state names, which checks a handler makes. tiflow v7.1.x,
 * v7.5.x, v8.1.x, v8.5.x (pingcap/tiflow cdc/api/v2) and the new architecture (pingcap/ticdc api/v2).
 */

/**
 * The states a changefeed is in. `retrying` is the state of a changefeed that hit a retryable error:
 * `error` in tiflow v7.1.x (cdc/model/changefeed.go `StateError`), `warning` from v7.5 and in the new
 * architecture (`StateWarning`; pkg/config/changefeed.go).
 */
export type FeedState = 'normal' | 'stopped' | 'failed' | 'finished' | 'retrying';

/** Who answers: the owner's (coordinator's) version, architecture and advertised address. */
export interface AnsweringCapture {
  version: string;
  architecture: 'tiflow' | 'new';
  address: string;
}

/** What differs between the releases this model plays (tiflow v7.1.x, v7.5.x, v8.1.x, v8.5.x; pingcap/ticdc v8.5.4+). */
export interface ChangefeedFlavour {
  newArch: boolean;
  /** tiflow before v7.5: state `error` rather than `warning`; list filter normal/stopped/failed only. */
  v71: boolean;
  /** Resume checks the changefeed's own checkpoint against the TSO and GC safepoint (tiflow v7.1.4+, v8.1.0+; new arch). */
  resumeChecksCheckpoint: boolean;
  /** pingcap/ticdc master (#5428): duplicate create is 400. */
  alreadyExistsIs400: boolean;
}

export function changefeedFlavour(c: AnsweringCapture): ChangefeedFlavour {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(c.version.trim());
  const v = m ? [Number(m[1]), Number(m[2]), Number(m[3])] : [99, 0, 0];
  const at = (a: number, b: number, p: number) => (v[0] !== a ? v[0] > a : v[1] !== b ? v[1] > b : v[2] >= p);
  const newArch = c.architecture === 'new';
  return {
    newArch,
    v71: !newArch && !at(7, 5, 0),
    resumeChecksCheckpoint: newArch || at(8, 1, 0) || (v[0] === 7 && v[1] === 1 && v[2] >= 4),
    alreadyExistsIs400: newArch && m === null,
  };
}

/**
 * Whether this model answers a release's v2 changefeed routes: tiflow v7.1.0 and later, and the new
 * architecture. Older releases' v2 routes go to `UNSIMULATED_PREFIXES` (ticdc.ts).
 */
export function servesChangefeedsV2(version: string, architecture: 'tiflow' | 'new'): boolean {
  const m = /^v?(\d+)\.(\d+)\./.exec(version.trim());
  return architecture === 'new' || m === null || Number(m[1]) > 7 || (Number(m[1]) === 7 && Number(m[2]) >= 1);
}

/** The v2 changefeed routes (tiflow cdc/api/v2/api.go, pingcap/ticdc api/v2/api.go `RegisterOpenAPIV2Routes`). */
export type ChangefeedOp = 'create' | 'list' | 'get' | 'update' | 'pause' | 'resume' | 'delete';

export function matchChangefeedRoute(method: string, path: string): { op: ChangefeedOp; id: string } | undefined {
  if (path === '/api/v2/changefeeds')
    return method === 'POST' ? { op: 'create', id: '' } : method === 'GET' ? { op: 'list', id: '' } : undefined;
  const m = /^\/api\/v2\/changefeeds\/([^/]+)(\/(pause|resume))?$/.exec(path);
  if (m === null) return undefined;
  const id = decodeURIComponent(m[1]);
  if (m[3] !== undefined) return method === 'POST' ? { op: m[3] as 'pause' | 'resume', id } : undefined;
  const op = ({ GET: 'get', PUT: 'update', DELETE: 'delete' } as const)[method as 'GET' | 'PUT' | 'DELETE'];
  return op === undefined ? undefined : { op, id };
}

/** `model.ValidateChangefeedID` (tiflow cdc/model/changefeed.go; pingcap/ticdc pkg/common). */
const ID_RE = /^[a-zA-Z0-9]+(-[a-zA-Z0-9]+)*$/;
export const validId = (id: string): boolean => ID_RE.test(id) && id.length <= 128;

/** The state name the release writes. */
export function stateName(s: FeedState, fl: ChangefeedFlavour): string {
  return s === 'retrying' ? (fl.v71 ? 'error' : 'warning') : s;
}
