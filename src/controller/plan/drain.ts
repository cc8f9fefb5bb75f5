/**
 * A Pod that someone else deletes: a node drain's eviction (which the PodDisruptionBudget let
 * through), a cluster autoscaler, `kubectl delete pod`. Its container's preStop hook holds it for a
 * bounded time; the controller uses it as it does before its own restarts, so that nothing is lost
 * with the Pod: a TiKV store's region leaders move away (the scheduler stays until the Pod is back
 * and Ready, `leftovers.ts`, so leaders do not return to a store that is going), PD's leadership
 * moves off a PD member, and a micro-service's primary off its server. A TiCDC capture's tables are handed over by the hook's own request
 * (`discovery/prestop.ts`): draining keeps no state to clean up.
 */
import { isTerminating } from '../model/objects';
import { memberOfPod, pdOf, pdStoresOf, storeOfPod } from '../view/lookups';
import type { ComponentState, PlanInput } from '../view/view';
import { act, evictBegin, type Step } from './action';
import { transferTarget } from './upgrade-pd';
import { isMsService, prepareMs, type MsService } from './pdms';

/**
 * The first terminating TiKV Pod whose store is Up with leaders and no evict-leader scheduler yet.
 * The controller's own deletions always come after their eviction (a scheduler exists), and a store
 * that is going (Offline) or down has nothing to move; both are left alone.
 */
export function drainStep(input: PlanInput, c: ComponentState): Step | undefined {
  if (c.kind === 'pd') return pdDrainStep(input, c);
  if (isMsService(c.kind)) return msDrainStep(input, c as ComponentState & { kind: MsService });
  if (c.kind !== 'tikv') return undefined;
  const terminating = c.pods.filter(isTerminating);
  if (terminating.length === 0) return undefined;
  // Without PD's stores there is nothing to ask; what the component does next decides.
  const pd = pdStoresOf(input);
  if (typeof pd === 'string') return undefined;
  for (const pod of terminating) {
    const name = pod.metadata.name!;
    const store = storeOfPod(pd.stores, input.cluster.name, 'tikv', name);
    if (!store || store.state !== 'Up' || store.leaderCount === 0 || pd.evicting.has(store.id)) continue;
    return act(
      `${name} is being deleted (a node drain, or someone deleting it): evicting region leaders from its store ${store.id} while its preStop hook holds it`,
      evictBegin(input, pd, name, store.id, undefined, 'drain'),
      {
        type: 'Normal',
        reason: 'DrainEvictLeader',
        message: `${name} is being deleted: moving the region leaders of store ${store.id} (${store.leaderCount}) away before TiKV stops`,
        pod: name,
      },
    );
  }
  return undefined;
}

/**
 * The PD leader's Pod is being deleted: leadership moves to the member the operator would pick
 * (`transferTarget`), so clients do not wait out an election. Asked again only after a while
 * (`transfer-leader` keeps its own patience), since a transfer may take PD seconds.
 */
function pdDrainStep(input: PlanInput, c: ComponentState): Step | undefined {
  const terminating = c.pods.filter(isTerminating);
  if (terminating.length === 0) return undefined;
  const pd = pdOf(input);
  if (typeof pd === 'string') return undefined;
  for (const pod of terminating) {
    const name = pod.metadata.name!;
    const member = memberOfPod(pd.members, name);
    if (!member || pd.leader !== member.name) continue;
    const target = transferTarget(input, c, pd, name);
    if (!target) continue;
    return act(
      `${name}, the PD leader, is being deleted: moving the leadership to ${target} while its preStop hook holds it`,
      { type: 'transfer-leader', pod: name, from: member.name, to: target },
      {
        type: 'Normal',
        reason: 'DrainPDLeaderTransfer',
        message: `${name} is being deleted: transferring PD leadership from ${member.name} to ${target} before PD stops`,
        pod: name,
      },
    );
  }
  return undefined;
}

/**
 * The primary of PD's TSO or scheduling service is on a Pod being deleted: it moves as before an
 * upgrade's restart (`prepareMs`: the operator's choice of server, none before v8.3.0).
 */
function msDrainStep(input: PlanInput, c: ComponentState & { kind: MsService }): Step | undefined {
  for (const pod of c.pods.filter(isTerminating)) {
    const step = prepareMs(input, c, pod);
    if (step.ok || !step.action) continue;
    const name = pod.metadata.name!;
    return act(
      `${name} is being deleted: ${step.reason.replace(/ before restarting .*$/, '')} while its preStop hook holds it`,
      step.action,
      {
        type: 'Normal',
        reason: 'DrainPrimaryTransfer',
        message: `${name} is being deleted: moving the ${c.kind} primary away before its server stops`,
        pod: name,
      },
    );
  }
  return undefined;
}
