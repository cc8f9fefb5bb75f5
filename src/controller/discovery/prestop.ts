/**
 * `GET /prestop/<pod>`: what a TiKV Pod's preStop hook asks when the Pod is being deleted. The answer
 * comes once PD counts no region leader on the Pod's store, or once the Pod's wait is over (its grace
 * period less the time TiKV needs to stop, the same bound the hook was rendered with), whichever is
 * first. Always 200 for a Pod of the cluster that is terminating: the hook's job is to wait, not to
 * fail the stop. Read-only: the planner (`plan/drain.ts`) is what asks PD to move the leaders.
 */
import { LABEL } from '../../tidbcluster/names';
import { drainWaitSeconds } from '../../tidbcluster/guard-rails';
import type { PdClient } from '../clients/pd';
import type { ClusterInfo } from '../model/cluster';
import { isTerminating, type Pod } from '../model/objects';
import { storeOfPod } from '../view/lookups';

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

export async function preStopWait(deps: PreStopDeps, podName: string, remote: string | undefined): Promise<PreStopAnswer> {
  const { cluster } = deps;
  const now = deps.now ?? Date.now;
  const find = () => deps.pods().find((p) => p.metadata.name === podName && p.metadata.labels?.[LABEL.instance] === cluster.name && p.metadata.labels?.[LABEL.component] === 'tikv');
  const pod = find();
  if (!pod) return { status: 404, body: `${podName} is not a TiKV Pod of cluster ${cluster.name}\n` };
  if (deps.checkSource && !deps.fromPod(pod, remote)) return { status: 403, body: `the request does not come from Pod ${podName}'s address\n` };
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
    if (current && isTerminating(current)) {
      const stores = await readStores(deps.pdClients);
      if (typeof stores === 'string') last = stores;
      else {
        const store = storeOfPod(stores, cluster.name, 'tikv', podName);
        if (!store) return { status: 200, body: `PD has no store of ${podName}: nothing to wait for\n` };
        if (store.state !== 'Up') return { status: 200, body: `store ${store.id} of ${podName} is ${store.state}: nothing to wait for\n` };
        if (store.leaderCount === 0) return { status: 200, body: `store ${store.id} of ${podName} has no region leaders left\n` };
        last = `store ${store.id} still has ${store.leaderCount} region leaders`;
      }
    } else if (!current) {
      return { status: 200, body: `${podName} is gone\n` };
    } else {
      last = `${podName} is not being deleted`;
    }
    // The hook runs only on deletion: a Pod that is not being deleted is refused.
    if (current && !isTerminating(current) && now() >= notDeletedDeadline) return { status: 409, body: `${podName} is not being deleted: nothing to wait for\n` };
    if (now() >= deadline) {
      return { status: 200, body: `stopped waiting after ${seconds}s: ${last}\n` };
    }
    await sleep(Math.min(pollMs, Math.max(0, deadline - now())));
  }
}

async function readStores(clients: readonly PdClient[]) {
  let error = 'no PD client';
  for (const pd of clients) {
    try {
      return await pd.stores();
    } catch (e) {
      error = `PD stores unavailable: ${(e as Error).message}`;
    }
  }
  return error;
}
