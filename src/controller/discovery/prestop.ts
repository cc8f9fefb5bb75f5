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
 * Always 200 for a Pod of the cluster that is terminating: the hook's job is to wait, not to fail
 * the stop.
 */
import { LABEL } from '../../tidbcluster/names';
import { drainWaitSeconds } from '../../tidbcluster/guard-rails';
import type { PdClient } from '../clients/pd';
import type { ClientTls } from '../clients/http';
import { captureAddressPrefix, drainCapture } from '../clients/ticdc';
import { names, PORT, type ComponentKind } from '../../tidbcluster/names';
import type { ClusterInfo } from '../model/cluster';
import { isTerminating, type Pod } from '../model/objects';
import { captureHints } from '../model/values';
import { storeOfPod } from '../view/lookups';
import { podOfMsMember } from '../plan/pdms';

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
}

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
}

export async function preStopWait(deps: PreStopDeps, podName: string, remote: string | undefined): Promise<PreStopAnswer> {
  const { cluster } = deps;
  const now = deps.now ?? Date.now;
  const find = () =>
    deps.pods().find((p) => p.metadata.name === podName && p.metadata.labels?.[LABEL.instance] === cluster.name && HOOKED.includes(p.metadata.labels?.[LABEL.component] as ComponentKind));
  const pod = find();
  if (!pod) return { status: 404, body: `${podName} is not a PD, TSO, scheduling, TiKV or TiCDC Pod of cluster ${cluster.name}\n` };
  if (deps.checkSource && !deps.fromPod(pod, remote)) return { status: 403, body: `the request does not come from Pod ${podName}'s address\n` };
  const kind = pod.metadata.labels![LABEL.component] as Hooked;
  const seconds = drainWaitSeconds(pod.spec?.terminationGracePeriodSeconds);
  // A second before the hook's own timeout, so that it hears the answer.
  const start = now();
  const deadline = start + Math.max(0, seconds - 1) * 1000;
  // The informer may not have seen the deletion yet when the hook asks: a Pod not seen terminating
  // within NOT_DELETED_MS is refused.
  const notDeletedDeadline = Math.min(deadline, start + NOT_DELETED_MS);
  const pollMs = deps.pollMs ?? 1000;
  let last = '';
  for (;;) {
    const current = find();
    if (!current) return { status: 200, body: `${podName} is gone\n` };
    if (isTerminating(current)) {
      const look = await lookAt(deps, kind, podName).catch((e: Error): Look => ({ done: false, detail: e.message }));
      if (look.done) return { status: 200, body: `${look.detail}\n` };
      last = look.detail;
    } else {
      last = `${podName} is not being deleted`;
      // The hook runs only on deletion: a Pod that is not being deleted is refused.
      if (now() >= notDeletedDeadline) return { status: 409, body: `${podName} is not being deleted: nothing to wait for\n` };
    }
    if (now() >= deadline) return { status: 200, body: `stopped waiting after ${seconds}s: ${last}\n` };
    await sleep(Math.min(pollMs, Math.max(0, deadline - now())));
  }
}

type Hooked = 'pd' | 'tso' | 'scheduling' | 'tikv' | 'ticdc';

async function lookAt(deps: PreStopDeps, kind: Hooked, podName: string): Promise<Look> {
  const { cluster } = deps;
  if (kind === 'tso' || kind === 'scheduling') {
    const primary = await first(deps.pdClients, (pd) => pd.msPrimary(kind));
    if (typeof primary !== 'string') return { done: false, detail: primary.error };
    const leads = primary !== '' && podOfMsMember({ serviceAddr: primary }) === podName;
    return leads ? { done: false, detail: `${podName} is still the ${kind} primary` } : { done: true, detail: `${podName} is not the ${kind} primary${primary ? ` (${primary} is)` : ''}` };
  }
  if (kind === 'ticdc') {
    const host = captureAddressPrefix(cluster, podName);
    const base = deps.ticdcUrl?.(podName) ?? `${cluster.tls ? 'https' : 'http'}://${host}:${PORT.ticdc}`;
    return drainCapture(base, { tls: deps.tls, captureAddress: host, ...captureHints(deps.pods().find((p) => p.metadata.name === podName)) });
  }
  if (kind === 'pd') {
    const leader = await first(deps.pdClients, (pd) => pd.leader());
    if (typeof leader !== 'string' && leader !== undefined) return { done: false, detail: leader.error };
    // Members are named after their Pod, or after its address (`<pod>.<cluster>-pd-peer...`).
    const leads = leader !== undefined && (leader === podName || leader.startsWith(`${podName}.${names.peerService(cluster.name, 'pd')}`));
    return leads ? { done: false, detail: `${podName} still leads PD` } : { done: true, detail: `${podName} does not lead PD${leader ? ` (${leader} does)` : ''}` };
  }
  const stores = await first(deps.pdClients, (pd) => pd.stores());
  if (!Array.isArray(stores)) return { done: false, detail: stores?.error ?? 'PD lists no stores' };
  const store = storeOfPod(stores, cluster.name, 'tikv', podName);
  if (!store) return { done: true, detail: `PD has no store of ${podName}: nothing to wait for` };
  if (store.state !== 'Up') return { done: true, detail: `store ${store.id} of ${podName} is ${store.state}: nothing to wait for` };
  if (store.leaderCount === 0) return { done: true, detail: `store ${store.id} of ${podName} has no region leaders left` };
  return { done: false, detail: `store ${store.id} still has ${store.leaderCount} region leaders` };
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
