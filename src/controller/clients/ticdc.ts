/**
 * What the controller asks a TiCDC capture, one step per call: handing its tables over and its
 * ownership away before its Pod is scaled in or restarts (tidb-operator v1: `ticdc_scaler.go`,
 * `ticdc_upgrader.go`, `ticdc_control.go`).
 *
 * Every function asks the servers once or twice and says whether the capture may go now (`done`) or
 * what is awaited; the caller requeues until done. The timeout of the whole procedure (the operator's
 * `gracefulShutdownTimeout`) is the caller's: these functions keep no state.
 *
 * Outcomes vs. errors: an answer the protocol knows (503, tables still there, state `closing`…) is an
 * outcome with `done: false`; a server that cannot be reached or answers something unexpected is a
 * thrown {@link GracefulError} naming the URL and what was expected.
 */
import { podHost, type ClusterInfo } from '../model/cluster';
import { GracefulError, isObject, parseJson, send, snippet, trimSlash, type RequestOptions, type StepOutcome } from './http';

/** TiCDC's error body (`model.HTTPError`: `error_msg`, `error_code`), else the raw text. */
function cdcErrorText(body: string): string {
  try {
    const v = JSON.parse(body) as unknown;
    if (isObject(v) && typeof v.error_msg === 'string')
      return typeof v.error_code === 'string' && v.error_code ? `${v.error_msg} (${v.error_code})` : v.error_msg;
  } catch {
    // not JSON: fall through
  }
  return snippet(body);
}

/** A capture as TiCDC's `GET /api/v1/captures` lists it. */
export interface Capture {
  readonly id: string;
  readonly isOwner: boolean;
  /** The capture's advertised `host:port`. */
  readonly address: string;
}

/**
 * How the capture of a TiCDC Pod advertises itself, up to the port: `<pod>.<cluster>-ticdc-peer.<ns>`,
 * with `.svc.<clusterDomain>` when a cluster domain is set, which tells it from a namesake in another
 * Kubernetes cluster (tidb-operator `ticdc_control.go` getCaptureAdvertiseAddressPrefix).
 */
export function captureAddressPrefix(c: Pick<ClusterInfo, 'name' | 'namespace' | 'clusterDomain'>, pod: string): string {
  const host = podHost(c, 'ticdc', pod);
  return c.clusterDomain ? `${host}.svc.${c.clusterDomain}` : host;
}

/**
 * Is `address` the capture advertised by the Pod whose address starts with `prefix`? The operator
 * tests `strings.Contains(address, "<pod>.<peer>.<ns>[.svc.<domain>]")`; here the prefix must start
 * the address and end at a label or port boundary, so `demo-ticdc-1` never matches `demo-ticdc-10`.
 */
export function captureMatches(address: string, prefix: string): boolean {
  if (!address.startsWith(prefix)) return false;
  const next = address.charAt(prefix.length);
  return next === '' || next === '.' || next === ':';
}

type CaptureList = { kind: 'list'; captures: Capture[] } | { kind: 'unsupported' } | { kind: 'unavailable'; text: string };

/**
 * `GET <base>/api/v1/captures`: 404 means a TiCDC without the API; 503 a server not ready yet; 500
 * what the capture answers while no owner is elected (`election: no leader`, as after a resign), since
 * it forwards the list to the owner (tiflow `cdc/api/middleware` ForwardToOwnerMiddleware).
 */
async function listCaptures(base: string, opts: RequestOptions): Promise<CaptureList> {
  const url = `${base}/api/v1/captures`;
  const res = await send('GET', url, opts);
  if (res.status === 404) return { kind: 'unsupported' };
  if (res.status === 503 || res.status === 500) return { kind: 'unavailable', text: `HTTP ${res.status} ${cdcErrorText(res.body)}` };
  if (res.status !== 200) {
    throw new GracefulError(
      `GET ${url}: expected HTTP 200 with the capture list, got HTTP ${res.status} ${cdcErrorText(res.body)}`,
      url,
      res.status,
    );
  }
  const v = parseJson('GET', url, res, 'a JSON array of captures');
  if (!Array.isArray(v) || !v.every((c) => isObject(c) && typeof c.id === 'string')) {
    throw new GracefulError(
      `GET ${url}: expected a JSON array of captures ({id, is_owner, address}), got "${snippet(res.body)}"`,
      url,
      res.status,
    );
  }
  return {
    kind: 'list',
    captures: (v as Record<string, unknown>[]).map((c) => ({
      id: c.id as string,
      isOwner: c.is_owner === true,
      address: typeof c.address === 'string' ? c.address : '',
    })),
  };
}

/** `POST <base>/api/v1/owner/resign` (TiCDC answers 202); returns what happened. */
async function resignOwner(base: string, capture: Capture, opts: RequestOptions): Promise<StepOutcome | 'unsupported'> {
  const url = `${base}/api/v1/owner/resign`;
  const res = await send('POST', url, opts);
  if (res.status === 404) return 'unsupported';
  if (res.status === 503)
    return { done: false, detail: `capture ${capture.id} (${capture.address}) is the owner and not ready to resign (HTTP 503); retrying` };
  if (res.status >= 200 && res.status < 300) {
    return {
      done: false,
      detail: `capture ${capture.id} (${capture.address}) was the owner; asked it to resign, waiting for another capture to take over`,
    };
  }
  return {
    done: false,
    detail: `capture ${capture.id} (${capture.address}) is the owner; resign answered HTTP ${res.status} ${cdcErrorText(res.body)}; retrying`,
  };
}

/**
 * What a drain answer of `current_table_count: 0` means, by TiCDC's architecture and release:
 * - `tables`: tiflow's TiCDC (pingcap/tiflow `cdc/`): the owner's scheduler moved every table away.
 * - `best-effort`: the new architecture from v8.5.7 (coordinator/controller_drain.go `DrainNode`, also
 *   on master): the coordinator saw the drain converge, or chose a plain restart because a capture
 *   in the cluster cannot take part in a drain (a release without the protocol).
 * - `none`: the new architecture in v8.5.4-v8.5.6, v9.0.0-beta.1 and v26.3.1-v26.3.4 (api/v1/api.go
 *   `drainCapture`): the handler answers from a call counter and moves nothing, so its answer says
 *   nothing. An unknown version of the new architecture counts as this, the safe reading.
 */
export type DrainMeaning = 'tables' | 'best-effort' | 'none';

/** See {@link DrainMeaning}; `version` is the capture's own (`/api/v1/status`) or its image tag. */
export function drainMeaning(version: string | undefined, newArchitecture: boolean): DrainMeaning {
  const v = version === undefined ? undefined : semver(version);
  // v9.0.0-beta.1 (pingcap/ticdc) has only the new architecture.
  const newArch = newArchitecture || (v !== undefined && v[0] === 9 && v[1] === 0 && v[2] === 0 && /-beta/.test(version!));
  if (!newArch) return 'tables';
  if (version !== undefined && /^(latest|nightly|master)$/i.test(version.trim())) return 'best-effort';
  if (v === undefined) return 'none';
  // A suffixed tag ranks below its release, as semver ranks a pre-release: in pingcap/ticdc
  // v8.5.7-release.1 (cut before v8.5.7) and the hotfix v8.5.7-20260728-c8d4d68 (built from a branch
  // without v8.5.7's commits) still answer from the counter (api/v1/api.go `drainCapture`).
  const from = (min: readonly [number, number, number]) => cmp(v, min) > 0 || (cmp(v, min) === 0 && !SUFFIXED.test(version!.trim()));
  return (v[0] === 8 && v[1] === 5 && from([8, 5, 7])) || from([26, 3, 5]) ? 'best-effort' : 'none';
}

/** A tag with text after x.y.z: `v8.5.7-release.1`, `v8.5.7-20260728-c8d4d68`, `v8.5.4-nextgen.202510.1`. */
const SUFFIXED = /^v?\d+\.\d+\.\d+-/;

/**
 * Whether the TiCDC cluster is healthy, as tidb-operator's `IsHealthy` asks before the next capture
 * restarts (`GET /api/v1/health`, answered by the owner): 200 yes; 404 a TiCDC without the route,
 * taken as yes; 500 (ErrClusterIsUnhealthy, or no owner) and 503 (not ready) no.
 */
async function clusterHealthy(root: string, opts: RequestOptions): Promise<{ healthy: boolean; text: string }> {
  const url = `${root}/api/v1/health`;
  const res = await send('GET', url, opts);
  if (res.status === 200) return { healthy: true, text: 'healthy' };
  if (res.status === 404) return { healthy: true, text: 'no health API (HTTP 404)' };
  return { healthy: false, text: `HTTP ${res.status} ${cdcErrorText(res.body)}`.trim() };
}

/** `PUT <base>/api/v1/captures/drain` with `{"capture_id"}`; TiCDC answers `{"current_table_count": n}`. */
async function requestDrain(base: string, capture: Capture, opts: RequestOptions, meaning: DrainMeaning = 'tables'): Promise<StepOutcome> {
  const url = `${base}/api/v1/captures/drain`;
  const res = await send('PUT', url, opts, JSON.stringify({ capture_id: capture.id }));
  const who = `capture ${capture.id} (${capture.address})`;
  if (res.status === 404) return { done: true, detail: `${who}: this TiCDC has no drain API (HTTP 404); nothing to wait for` };
  if (res.status === 503) return { done: false, detail: `${who}: drain not possible yet (HTTP 503 ${cdcErrorText(res.body)}); retrying` };
  if (res.status === 401) return unauthorizedDrain(base, who, res.status, cdcErrorText(res.body), opts);
  if (res.status < 200 || res.status >= 300) {
    // The operator reads any JSON answer as a table count (an error body then counts as 0 tables);
    // an error is not a drained capture, so wait; the caller's graceful-shutdown timeout bounds this.
    return { done: false, detail: `${who}: drain answered HTTP ${res.status} ${cdcErrorText(res.body)}; retrying` };
  }
  const v = parseJson('PUT', url, res, '{"current_table_count": n}');
  if (!isObject(v) || typeof v.current_table_count !== 'number') {
    throw new GracefulError(`PUT ${url}: expected {"current_table_count": n}, got "${snippet(res.body)}"`, url, res.status);
  }
  const n = v.current_table_count;
  if (n !== 0) return { done: false, detail: `${who} is draining: ${n} table${n === 1 ? '' : 's'} left` };
  return meaning === 'best-effort'
    ? {
        done: true,
        detail: `${who} is drained, or TiCDC chose a plain restart for it (a capture in the cluster cannot take part in a drain)`,
      }
    : { done: true, detail: `${who} is drained: no tables left` };
}

/**
 * TiCDC from v8.5.7 (pingcap/ticdc api/v1/api.go: `PUT("/drain", authenticateMiddleware, ...)`) wants
 * a user for the drain when its config sets `security.client-user-required`: HTTP basic auth with a
 * user in `security.client-allowed-user` that can log in to the upstream TiDB
 * (api/middleware/authenticate_middleware.go `verify`). The TidbCluster has no field for such
 * credentials (nor had tidb-operator v1, which sends none), so asking again only waits for the
 * graceful-shutdown timeout: the capture goes now, with its tables, once the owner answers healthy,
 * as where the drain moves nothing.
 */
async function unauthorizedDrain(base: string, who: string, status: number, text: string, opts: RequestOptions): Promise<StepOutcome> {
  const health = await clusterHealthy(base, opts);
  const why = `${who}: TiCDC refuses the drain without a client user (HTTP ${status} ${text}; security.client-user-required is set and tidb-gitops sends no TiCDC credentials)`;
  if (!health.healthy)
    return { done: false, detail: `${why}; waiting for the TiCDC owner to be healthy (${health.text}) before it goes with its tables` };
  return {
    done: true,
    detail: `${why}: it goes with its tables, which the other captures resume from their changefeed checkpoints (replication lags meanwhile)`,
  };
}

/**
 * One step of retiring the TiCDC capture of a Pod, as tidb-operator's `gracefulDrainTiCDC`:
 *
 * 1. List the captures on the Pod (`GET /api/v1/captures`; TiCDC forwards it to the owner). No such API
 *    (404): done. Not ready (503): wait. One capture or none: done, there is nobody to hand tables to.
 * 2. Find the Pod's capture by its advertised address. Not listed in a cluster of several: wait (the
 *    operator errors and requeues; the caller's graceful-shutdown timeout ends that).
 * 3. If it is the owner: `POST /api/v1/owner/resign` and wait for the next step (404: go on to drain).
 *    No owner listed: wait (an election is under way).
 * 4. `PUT /api/v1/captures/drain` `{"capture_id"}`: done when `current_table_count` is 0; 404
 *    (unsupported): done; 503: wait. In TiCDC's new architecture what 0 means depends on the release
 *    (see {@link DrainMeaning}): where the drain moves nothing it is not asked at all, and the capture
 *    goes once the owner answers healthy (`GET /api/v1/health`).
 *
 * @param base `<scheme>://<pod>.<cluster>-ticdc-peer.<ns>.svc:8301`.
 * @param opts.captureAddress How the capture's advertised address starts (`<pod>.<cluster>-ticdc-peer.<ns>`,
 *   with `.svc.<domain>` across Kubernetes clusters). Defaults to the host name of `base`.
 * @param opts.newArchitecture The Pod runs TiCDC's new architecture (`newarch`). @default false
 * @param opts.imageTag The Pod's TiCDC image tag, read where the capture cannot tell its version. @default none
 * @throws GracefulError when the Pod cannot be reached or answers something that is not TiCDC's.
 */
export async function drainCapture(
  base: string,
  opts: RequestOptions & { readonly captureAddress?: string; readonly newArchitecture?: boolean; readonly imageTag?: string } = {},
): Promise<StepOutcome> {
  const root = trimSlash(base);
  const prefix = opts.captureAddress ?? new URL(root).hostname;
  const list = await listCaptures(root, opts);
  if (list.kind === 'unsupported') return { done: true, detail: `${root} has no captures API (HTTP 404); nothing to drain` };
  if (list.kind === 'unavailable') return { done: false, detail: `${root} cannot list captures yet (${list.text}); retrying` };
  const { captures } = list;
  if (captures.length === 0) return { done: true, detail: `${root} lists no captures; nothing to drain` };
  if (captures.length === 1)
    return {
      done: true,
      detail: `capture ${captures[0].id} (${captures[0].address}) is the only one; no other capture can take its tables`,
    };

  const self = captures.find((c) => captureMatches(c.address, prefix));
  if (!self) {
    return {
      done: false,
      detail: `no capture advertises ${prefix} among ${captures.length} (${captures.map((c) => c.address).join(', ')}); waiting for it to register`,
    };
  }
  const owner = captures.find((c) => c.isOwner);
  if (!owner) return { done: false, detail: `no owner among ${captures.length} captures; waiting for an owner to be elected` };
  if (owner.id === self.id) {
    const resigned = await resignOwner(root, self, opts);
    if (resigned !== 'unsupported') return resigned;
  }
  const tagMeaning = drainMeaning(opts.imageTag, opts.newArchitecture === true);
  if (tagMeaning === 'tables') return requestDrain(root, self, opts);
  // The new architecture: what 0 means depends on the release the capture runs.
  const version = await captureVersion(root, opts).catch(() => opts.imageTag);
  const meaning = drainMeaning(version, true);
  if (meaning === 'best-effort') return requestDrain(root, self, opts, meaning);
  const health = await clusterHealthy(root, opts);
  if (!health.healthy)
    return {
      done: false,
      detail: `capture ${self.id} (${self.address}): waiting for the TiCDC owner ${owner.address} to be healthy (${health.text}) before it goes`,
    };
  return {
    done: true,
    detail:
      `capture ${self.id} (${self.address}) runs TiCDC ${version ?? '(version unknown)'} in its new architecture, whose drain API moves no table ` +
      `(it answers 0 without draining; v8.5.7 drains): not the owner and the owner ${owner.address} is healthy, so it goes with its tables, ` +
      'which the other captures resume from their changefeed checkpoints after it stops (replication lags meanwhile)',
  };
}

/**
 * The version a TiCDC capture runs (`GET <base>/api/v1/status`: `{"version": "v8.5.0", ...}`), or
 * undefined for a TiCDC without that route (404). Not ready yet (503, 500): a GracefulError.
 */
export async function captureVersion(base: string, opts: RequestOptions = {}): Promise<string | undefined> {
  const url = `${trimSlash(base)}/api/v1/status`;
  const res = await send('GET', url, opts);
  if (res.status === 404) return undefined;
  if (res.status !== 200)
    throw new GracefulError(
      `GET ${url}: expected HTTP 200 with the capture's status, got HTTP ${res.status} ${cdcErrorText(res.body)}`,
      url,
      res.status,
    );
  const v = parseJson('GET', url, res, 'a JSON object with "version"');
  if (!isObject(v) || typeof v.version !== 'string')
    throw new GracefulError(`GET ${url}: expected a JSON object with "version", got "${snippet(res.body)}"`, url, res.status);
  return v.version;
}

const semver = (v: string): [number, number, number] | undefined => {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(v);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
};
const cmp = (a: readonly number[], b: readonly number[]): number => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

/**
 * Whether a capture at `running` can hand its tables over before restarting at `target`, by
 * tidb-operator's rules (`isTiCDCPodSupportGracefulUpgrade`): always within one version, and when a
 * version cannot be read; across versions only from v6.3.0 on and to less than two majors ahead.
 */
export function gracefulUpgradeSupported(running: string | undefined, target: string | undefined): boolean {
  if (running === undefined) return false;
  const r = semver(running);
  const t = target === undefined ? undefined : semver(target);
  if (!r || !t || cmp(r, t) === 0) return true;
  if (cmp(r, [6, 3, 0]) < 0) return false;
  return cmp(t, [r[0] + 2, 0, 0]) < 0;
}

/**
 * Takes ownership from the capture of another Pod (the next to restart), as tidb-operator's
 * `gracefulResignOwnerTiCDC`: done when that capture is not the owner and an owner is elected;
 * otherwise asks the owner to resign (`POST /api/v1/owner/resign`, which TiCDC forwards to the owner)
 * and waits.
 */
export async function resignOwnerOf(base: string, prefix: string, opts: RequestOptions = {}): Promise<StepOutcome> {
  const root = trimSlash(base);
  const list = await listCaptures(root, opts);
  if (list.kind === 'unsupported') return { done: true, detail: `${root} has no captures API (HTTP 404); no owner to move` };
  if (list.kind === 'unavailable') return { done: false, detail: `${root} cannot list captures yet (${list.text}); retrying` };
  const owner = list.captures.find((c) => c.isOwner);
  if (!owner) return { done: false, detail: `no owner among ${list.captures.length} captures; waiting for an owner to be elected` };
  if (!captureMatches(owner.address, prefix) || list.captures.length === 1) {
    const health = await clusterHealthy(root, opts);
    if (!health.healthy)
      return {
        done: false,
        detail: `the owner is capture ${owner.id} (${owner.address}); waiting for TiCDC to be healthy (${health.text})`,
      };
    return { done: true, detail: `the owner is capture ${owner.id} (${owner.address}) and TiCDC is healthy` };
  }
  const resigned = await resignOwner(root, owner, opts);
  return resigned === 'unsupported' ? { done: true, detail: `${root} has no resign API (HTTP 404)` } : resigned;
}
