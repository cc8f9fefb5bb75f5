/**
 * `GET /prestop/<pod>`: what the preStop hook of a PD (and its micro-services'), TiKV or TiCDC Pod asks when the Pod is being
 * deleted. The answer comes once what the Pod had to hand over is gone, or once the Pod's wait is
 * over (its grace period less the time the server needs to stop, the bound the hook was rendered
 * with), whichever is first:
 *
 * - TiKV: PD counts no region leader on the Pod's store (the planner, `plan/drain.ts`, asked PD to
 *   move them);
 * - PD: the member no longer leads (the planner asked PD to transfer the leadership); TSO and
 *   scheduling: the server is not the service's primary (the planner asked for a transfer);
 * - TiCDC: the capture handed its tables over; the request drives the drain itself (`drainCapture`:
 *   ownership resigned first, then the tables moved), since a drain keeps no state to clean up.
 *
 * TiKV's wait lasts as long as the leaders keep moving: while the store's leader count drops, up to
 * the Pod's wait; once it has not dropped for {@link LEADER_STALL_MS}, the Pod is let go. A Pod let go
 * with leaders still on its store is told to `stoppedWithLeaders` (a Warning Event and a status line).
 *
 * The hook asks with `?wait=<s>` (`PRESTOP_ASK_SECONDS`): the answer then comes within `s` seconds,
 * `wait: <what is left>` while the hook should ask again; what the wait has seen is kept between
 * asks (`waits`). An ask without it (an older hook) is held until the end.
 *
 * Always 200 for a Pod of the cluster that is terminating: the hook's job is to wait, not to fail
 * the stop.
 */
import { LABEL } from '../../tidbcluster/names';
import { drainWaitSeconds, PRESTOP_AGAIN } from '../../tidbcluster/guard-rails';
import type { PdClient } from '../clients/pd';
import type { ClientTls } from '../clients/http';
import { captureAddressPrefix, drainCapture } from '../clients/ticdc';
import { names, PORT, type ComponentKind } from '../../tidbcluster/names';
import type { ClusterInfo } from '../model/cluster';
import { isTerminating, type Pod } from '../model/objects';
import { captureHints } from '../model/values';
import { storeOfPod } from '../view/lookups';
import { podOfMsMember } from '../plan/pdms';
import { stoppedWithLeadersMessage, type StoppedWithLeaders } from '../records/stopped-with-leaders';

export interface PreStopDeps {
  readonly cluster: ClusterInfo;
  /** The cluster's Pods (informer cache). */
  pods(): readonly Pod[];
  /** PD clients to read the stores from, in order; the first that answers is used. */
  readonly pdClients: readonly PdClient[];
  /** Reject callers whose address is not their Pod's. */
  readonly checkSource: boolean;
  /** Whether the request comes from the Pod's own address. */
  fromPod(pod: Pod, remote: string | undefined): boolean;
  /** The cluster's client certificate, for TiCDC under cluster TLS. @default none */
  readonly tls?: ClientTls;
  /** Where a capture's API is (tests reach it on a loopback address). @default `<scheme>://<pod host>:8301` */
  readonly ticdcUrl?: (pod: string) => string;
  /** How often PD is asked again. @default 1000 */
  readonly pollMs?: number;
  /** The clock. @default Date.now */
  now?(): number;
  /** What each Pod's wait has seen, by Pod uid, kept across the hook's asks. @default a new one per ask */
  readonly waits?: Map<string, PreStopWaitState>;
  /** How long a store's leader count may stay without dropping before its Pod is let go. @default LEADER_STALL_MS */
  readonly stallMs?: number;
  /** Told when a TiKV Pod is let go with region leaders still on its store. @default none */
  stoppedWithLeaders?(entry: StoppedWithLeaders): void;
}

/** What a Pod's wait has seen so far. */
export interface PreStopWaitState {
  /** When the first ask came (the clock's ms). */
  readonly start: number;
  /** The end of the wait (the clock's ms). */
  readonly deadline: number;
  /** The fewest region leaders seen on the store. @default none (not read yet) */
  fewest?: number;
  /** The store and its region leaders as last read. @default none (not read yet) */
  leaders?: { readonly store: number; readonly count: number };
  /** When the leader count last dropped (the first ask, before it is read). */
  progressAt: number;
}

/**
 * How long a TiKV store's region leader count may stay without dropping before its Pod is let go,
 * in ms. PD's evict-leader scheduler moves leaders every few seconds while another store can take
 * them; a minute without one moving means none will (no store to take them, PD without a leader,
 * the planner not asking for the eviction), and waiting longer only holds the drain.
 */
export const LEADER_STALL_MS = 60_000;

export interface PreStopAnswer {
  readonly status: number;
  readonly body: string;
}

/** How long a caller whose Pod is not (yet) seen terminating is kept before it is refused. */
const NOT_DELETED_MS = 5000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The components whose Pods have a preStop hook. */
const HOOKED: readonly ComponentKind[] = ['pd', 'tso', 'scheduling', 'tikv', 'ticdc'];

/** What one look finds: whether the Pod has nothing left to hand over, and what it still has. */
interface Look {
  readonly done: boolean;
  readonly detail: string;
  /** TiKV: the store and its region leaders. @default none */
  readonly leaders?: { readonly store: number; readonly count: number };
}

/** The answer that lets the Pod stop. */
const stop = (body: string): PreStopAnswer => ({ status: 200, body: body.endsWith('\n') ? body : `${body}\n` });

/**
 * The answer to `/prestop/<pod>`; with `askSeconds` (the hook's `?wait=`), within that many seconds.
 */
export async function preStopWait(
  deps: PreStopDeps,
  podName: string,
  remote: string | undefined,
  askSeconds?: number,
): Promise<PreStopAnswer> {
  const { cluster } = deps;
  const now = deps.now ?? Date.now;
  const find = () =>
    deps
      .pods()
      .find(
        (p) =>
          p.metadata.name === podName &&
          p.metadata.labels?.[LABEL.instance] === cluster.name &&
          HOOKED.includes(p.metadata.labels?.[LABEL.component] as ComponentKind),
      );
  const pod = find();
  if (!pod) return { status: 404, body: `${podName} is not a PD, TSO, scheduling, TiKV or TiCDC Pod of cluster ${cluster.name}\n` };
  if (deps.checkSource && !deps.fromPod(pod, remote))
    return { status: 403, body: `the request does not come from Pod ${podName}'s address\n` };
  const kind = pod.metadata.labels![LABEL.component] as Hooked;
  const seconds = drainWaitSeconds(pod.spec?.terminationGracePeriodSeconds);
  const asked = now();
  const waits = deps.waits ?? new Map<string, PreStopWaitState>();
  for (const [key, w] of waits) if (w.deadline + 60_000 < asked) waits.delete(key);
  const key = pod.metadata.uid ?? podName;
  // A second before the hook's own timeout, so that it hears the answer.
  const state = waits.get(key) ?? { start: asked, deadline: asked + Math.max(0, seconds - 1) * 1000, progressAt: asked };
  waits.set(key, state);
  const { deadline } = state;
  const answerBy = askSeconds === undefined ? deadline : Math.min(deadline, asked + askSeconds * 1000);
  // The informer may not have seen the deletion yet when the hook asks: a Pod not seen terminating
  // within NOT_DELETED_MS is refused (an older hook), or let go (the hook runs on a restart too).
  const notDeletedDeadline = Math.min(deadline, asked + NOT_DELETED_MS);
  const pollMs = deps.pollMs ?? 1000;
  const stallMs = deps.stallMs ?? LEADER_STALL_MS;
  const waited = () => Math.round((now() - state.start) / 1000);
  const letGo = (why: 'deadline' | 'stalled', leaders: Look['leaders'], body: string): PreStopAnswer => {
    waits.delete(key);
    if (leaders && leaders.count > 0) {
      const entry = { pod: podName, store: leaders.store, leaders: leaders.count, why, waitedSeconds: waited() };
      deps.stoppedWithLeaders?.({
        ...entry,
        at: new Date(now()).toISOString(),
        message: stoppedWithLeadersMessage(entry, Math.round(stallMs / 1000)),
      });
    }
    return stop(body);
  };
  let last = '';
  for (;;) {
    const current = find();
    if (!current) {
      waits.delete(key);
      return stop(`${podName} is gone`);
    }
    if (isTerminating(current)) {
      const look = await lookAt(deps, kind, podName).catch((e: Error): Look => ({ done: false, detail: e.message }));
      if (look.done) {
        waits.delete(key);
        return stop(look.detail);
      }
      last = look.detail;
      if (look.leaders) {
        state.leaders = look.leaders;
        if (state.fewest === undefined || look.leaders.count < state.fewest) {
          state.fewest = look.leaders.count;
          state.progressAt = now();
        } else if (now() - state.progressAt >= stallMs) {
          return letGo(
            'stalled',
            state.leaders,
            `stopped waiting after ${waited()}s: ${last}, none moved for ${Math.round(stallMs / 1000)}s`,
          );
        }
      }
    } else {
      last = `${podName} is not being deleted`;
      // The hook runs only on deletion: a Pod that is not being deleted is refused.
      if (now() >= notDeletedDeadline) {
        waits.delete(key);
        if (askSeconds !== undefined) return stop(`${podName} is not being deleted: nothing to wait for`);
        return { status: 409, body: `${podName} is not being deleted: nothing to wait for\n` };
      }
    }
    if (now() >= deadline) return letGo('deadline', state.leaders, `stopped waiting after ${seconds}s: ${last}`);
    if (now() >= answerBy) return { status: 200, body: `${PRESTOP_AGAIN}${last}\n` };
    await sleep(Math.min(pollMs, Math.max(0, answerBy - now())));
  }
}

type Hooked = 'pd' | 'tso' | 'scheduling' | 'tikv' | 'ticdc';

async function lookAt(deps: PreStopDeps, kind: Hooked, podName: string): Promise<Look> {
  const { cluster } = deps;
  if (kind === 'tso' || kind === 'scheduling') {
    const primary = await first(deps.pdClients, (pd) => pd.msPrimary(kind));
    if (typeof primary !== 'string') return { done: false, detail: primary.error };
    const leads = primary !== '' && podOfMsMember({ serviceAddr: primary }) === podName;
    return leads
      ? { done: false, detail: `${podName} is still the ${kind} primary` }
      : { done: true, detail: `${podName} is not the ${kind} primary${primary ? ` (${primary} is)` : ''}` };
  }
  if (kind === 'ticdc') {
    const host = captureAddressPrefix(cluster, podName);
    const base = deps.ticdcUrl?.(podName) ?? `${cluster.tls ? 'https' : 'http'}://${host}:${PORT.ticdc}`;
    return drainCapture(base, {
      tls: deps.tls,
      captureAddress: host,
      ...captureHints(deps.pods().find((p) => p.metadata.name === podName)),
    });
  }
  if (kind === 'pd') {
    const leader = await first(deps.pdClients, (pd) => pd.leader());
    if (typeof leader !== 'string' && leader !== undefined) return { done: false, detail: leader.error };
    // Members are named after their Pod, or after its address (`<pod>.<cluster>-pd-peer...`).
    const leads = leader !== undefined && (leader === podName || leader.startsWith(`${podName}.${names.peerService(cluster.name, 'pd')}`));
    return leads
      ? { done: false, detail: `${podName} still leads PD` }
      : { done: true, detail: `${podName} does not lead PD${leader ? ` (${leader} does)` : ''}` };
  }
  const stores = await first(deps.pdClients, (pd) => pd.stores());
  if (!Array.isArray(stores)) return { done: false, detail: stores?.error ?? 'PD lists no stores' };
  const store = storeOfPod(stores, cluster.name, 'tikv', podName);
  if (!store) return { done: true, detail: `PD has no store of ${podName}: nothing to wait for` };
  if (store.state !== 'Up') return { done: true, detail: `store ${store.id} of ${podName} is ${store.state}: nothing to wait for` };
  if (store.leaderCount === 0) return { done: true, detail: `store ${store.id} of ${podName} has no region leaders left` };
  return {
    done: false,
    detail: `store ${store.id} still has ${store.leaderCount} region leaders`,
    leaders: { store: store.id, count: store.leaderCount },
  };
}

/** The first answer of the PD clients, or why none answered. */
async function first<T>(clients: readonly PdClient[], ask: (pd: PdClient) => Promise<T>): Promise<T | { error: string }> {
  let error = 'no PD client';
  for (const pd of clients) {
    try {
      return await ask(pd);
    } catch (e) {
      error = `PD unavailable: ${(e as Error).message}`;
    }
  }
  return { error };
}
