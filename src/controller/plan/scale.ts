/**
 * Safe scaling, one ordinal per step: scale-out clears the claims a scale-in left behind before the
 * ordinal comes back; scale-in first retires what the highest Pod holds (PD membership and leadership,
 * TiKV and TiFlash stores until PD reports them Tombstone, TiCDC tables, the Pump node), marks its
 * claims for deferred deletion and only then lowers replicas. Every step reads its state from the
 * cluster, so a step interrupted by a crash is simply taken again.
 */
import { names, type ComponentKind } from '../../tidbcluster/names';
import { DEFER_DELETING_ANNOTATION, RETIRED_ANNOTATION, SCALE_IN_TIME_ANNOTATION } from '../model/annotations';
import { isReady, ordinalOf, type Pod } from '../model/objects';
import type { ComponentSettings } from '../../tidbcluster/contract';
import { toMillis } from '../model/values';
import {
  memberOfPod,
  ownsEviction,
  pdOf,
  pdStoresOf,
  podList,
  podsByOrdinal,
  storeOfPod,
  storesOf,
  unreadyPods,
  volumesOfPod,
} from '../view/lookups';
import { DEFAULT_PLAN_OPTIONS, type ComponentState, type PdState, type PlanInput } from '../view/view';
import { act, evictBegin, OK, wait, waitPd, type Action, type PlanEvent, type Step, waitOn, type WaitOn } from './action';
import { prepareMs } from './pdms';
import { removalHold } from './store-safety';
import { drainTimedOut } from './upgrade-ticdc';

/** How long a TiKV store being scaled in may keep its leaders before it is taken offline anyway (the operator's fixed 5m). */
export const SCALE_IN_EVICT_TIMEOUT_MS = 5 * 60_000;
/** Components whose Pods depend on PD: PD cannot be scaled to 0 while they run. */
const PD_CLIENTS: readonly ComponentKind[] = ['tso', 'scheduling', 'tikv', 'tiflash', 'tidb', 'ticdc', 'pump', 'tiproxy'];

export interface ScaleStep extends WaitOn {
  readonly reason: string;
  readonly action?: Action;
  readonly event?: PlanEvent;
}

/**
 * The next step from `replicas` toward `target`. `partition` is undefined for OnDelete StatefulSets;
 * it follows replicas (new Pods start from the current revision), except while an upgrade step is
 * in flight below it (`upgrading`), which it must not undo.
 */
export function scaleStep(
  input: PlanInput,
  c: ComponentState,
  settings: ComponentSettings,
  replicas: number,
  target: number,
  partition: number | undefined,
  upgrading: boolean,
): ScaleStep {
  const cluster = input.cluster.name;
  const sts = names.statefulSet(cluster, c.kind);
  const stepping = upgrading && partition !== undefined && partition < replicas;
  const apply = (r: number): Action => ({
    type: 'apply',
    replicas: r,
    partition: partition === undefined ? undefined : stepping ? Math.min(partition, r) : r,
  });

  if (target > replicas) {
    const pod = names.pod(cluster, c.kind, replicas);
    const stale = volumesOfPod(input.volumes ?? [], c.sts, pod).filter(
      (v) => v.metadata.annotations?.[DEFER_DELETING_ANNOTATION] !== undefined,
    );
    const deletable = stale.filter((v) => !v.metadata.deletionTimestamp);
    if (deletable.length > 0) {
      const list = deletable.map((v) => v.metadata.name!);
      return {
        reason: `deleting volumes ${list.join(', ')} left by an earlier scale-in, so that ${pod} starts on fresh data`,
        action: { type: 'delete-volumes', pod, volumes: deletable.map((v) => ({ name: v.metadata.name!, uid: v.metadata.uid ?? '' })) },
        event: {
          type: 'Normal',
          reason: 'DeleteVolumes',
          message: `${sts}: deleting volumes ${list.join(', ')} marked at scale-in before ${pod} is created again`,
        },
      };
    }
    if (stale.length > 0) return { reason: `waiting for volumes of ${pod} to be deleted: ${stale.map((v) => v.metadata.name).join(', ')}` };
    return {
      reason: `scaling out from ${replicas} to ${target} replicas`,
      action: apply(replicas + 1),
      event: { type: 'Normal', reason: 'ScaleOut', message: `${sts}: replicas ${replicas} -> ${replicas + 1} (target ${target})` },
    };
  }

  const ord = replicas - 1;
  const podName = names.pod(cluster, c.kind, ord);
  const pod = podsByOrdinal(cluster, c.kind, c.pods).get(ord);
  // Taking one Pod away while another is not Ready (a failing node, say) would leave too little.
  const unready = unreadyPods(input, c, ord);
  if (unready.length > 0)
    return { reason: `scale-in waits: ${podList(unready)} not Ready; ${podName} is removed once every remaining Pod is Ready` };
  const s = retire(input, c, settings, pod, podName, target);
  if (!s.ok) return { reason: s.reason, action: s.action, event: s.event, ...waitOn(s) };
  const unmarked = volumesOfPod(input.volumes ?? [], c.sts, podName).filter(
    (v) => v.metadata.annotations?.[DEFER_DELETING_ANNOTATION] === undefined && !v.metadata.deletionTimestamp,
  );
  if (unmarked.length > 0) {
    return {
      reason: `marking the volumes of ${podName} for deferred deletion`,
      action: { type: 'mark-volumes', pod: podName, volumes: unmarked.map((v) => v.metadata.name!) },
    };
  }
  return {
    reason: `scaling in from ${replicas} to ${target} replicas: removing ${podName}`,
    action: apply(ord),
    event: s.event ?? {
      type: 'Normal',
      reason: 'ScaleIn',
      message: `${sts}: replicas ${replicas} -> ${ord} (target ${target}); ${podName} is removed`,
    },
  };
}

/** What must happen before the Pod at the highest ordinal may go. */
function retire(
  input: PlanInput,
  c: ComponentState,
  settings: ComponentSettings,
  pod: Pod | undefined,
  podName: string,
  target: number,
): Step {
  switch (c.kind) {
    case 'pd':
      return retirePd(input, podName, target);
    case 'tikv':
    case 'tiflash':
      return retireStore(input, c, pod, podName);
    case 'ticdc':
    case 'pump':
      return retireNode(input, c, settings, pod, podName);
    case 'tso':
    case 'scheduling':
      // A primary hands over before its Pod goes, as before a restart.
      return pod ? prepareMs(input, { ...c, kind: c.kind }, pod) : OK;
    default:
      return OK;
  }
}

function retirePd(input: PlanInput, podName: string, target: number): Step {
  if (target === 0) {
    const users = input.components.filter((x) => PD_CLIENTS.includes(x.kind) && (x.sts.spec?.replicas ?? 1) > 0).map((x) => x.kind);
    if (users.length > 0) {
      const reason = `PD cannot be scaled to 0 while ${users.join(', ')} run`;
      return wait(reason, { type: 'Warning', reason: 'FailedScaleIn', message: reason });
    }
  }
  const pd = pdOf(input);
  if (typeof pd === 'string') return waitPd(pd);
  const member = memberOfPod(pd.members, podName);
  if (!member) return OK;
  if (pd.leader === member.name && pd.members.length > 1) {
    const to = leaderTarget(input, pd, podName);
    if (!to) return wait(`PD member ${member.name} leads and no other member is healthy to take over`);
    return act(
      `moving PD leadership from ${member.name} to ${to} before removing it`,
      { type: 'transfer-leader', pod: podName, from: member.name, to },
      {
        type: 'Normal',
        reason: 'PDLeaderTransfer',
        message: `transferring PD leadership from ${member.name} to ${to} before scale-in`,
        pod: podName,
      },
    );
  }
  return act(
    `deleting PD member ${member.name} before removing ${podName}`,
    { type: 'delete-member', pod: podName, member: member.name },
    {
      type: 'Normal',
      reason: 'PDMemberDeleted',
      message: `deleting PD member ${member.name} from the cluster before scale-in`,
      pod: podName,
    },
  );
}

/** The healthy member of the lowest remaining ordinal, else any other healthy member. */
function leaderTarget(input: PlanInput, pd: PdState, podName: string): string | undefined {
  const sts = names.statefulSet(input.cluster.name, 'pd');
  const self = ordinalOf(podName, sts)!;
  const others = pd.members.filter((m) => m.healthy && !(m.name === podName || m.name.startsWith(`${podName}.`)));
  const ord = (name: string) => ordinalOf(name.split('.')[0], sts);
  const ours = others.filter((m) => ord(m.name) !== undefined && ord(m.name)! < self).sort((a, b) => ord(a.name)! - ord(b.name)!);
  return (ours[0] ?? others[0])?.name;
}

function retireStore(input: PlanInput, c: ComponentState, pod: Pod | undefined, podName: string): Step {
  const pd = pdStoresOf(input);
  if (typeof pd === 'string') return waitPd(pd);
  const cluster = input.cluster.name;
  const store = storeOfPod(pd.stores, cluster, c.kind, podName);
  if (store) {
    const hold = removalHold(pd, c.kind, store);
    if (hold?.why === 'max-replicas-unknown') return wait('reading PD max-replicas before a TiKV scale-in');
    if (hold?.why === 'too-few-up-stores') {
      const reason = `TiKV cannot scale in: ${hold.up} Up stores and PD keeps ${hold.maxReplicas} replicas of each region (replication.max-replicas)`;
      return wait(reason, { type: 'Warning', reason: 'FailedScaleIn', message: reason }, 'too-few-up-stores');
    }
    if (store.state === 'Offline') {
      const reason = `store ${store.id} (${podName}) is Offline: PD is moving its ${store.regionCount} regions away; replicas stay until it is Tombstone`;
      return wait(reason, undefined, 'store-offline-moving', store.id);
    }
    if (c.kind === 'tikv' && store.state === 'Up' && store.leaderCount > 0) {
      const begin = toMillis(pod?.metadata.annotations?.[SCALE_IN_TIME_ANNOTATION]);
      if (begin === undefined || input.now < begin + SCALE_IN_EVICT_TIMEOUT_MS) {
        if (begin === undefined || !pd.evicting.has(store.id)) {
          return act(
            `evicting region leaders from store ${store.id} (${podName}) before taking it offline`,
            evictBegin(input, pd, podName, store.id, SCALE_IN_TIME_ANNOTATION, 'scale-in'),
          );
        }
        return wait(`waiting for region leaders to leave store ${store.id} (${podName}): ${store.leaderCount} left`);
      }
    }
    return act(
      `taking store ${store.id} (${podName}) offline; PD moves its regions away`,
      { type: 'delete-store', pod: podName, storeId: store.id },
      {
        type: 'Normal',
        reason: 'StoreDeleted',
        message: `taking store ${store.id} offline before scale-in; ${podName} is removed once PD reports it Tombstone`,
        pod: podName,
      },
    );
  }
  const created = toMillis(pod?.metadata.creationTimestamp);
  const prefix = `${names.peerHost(cluster, c.kind, podName)}.`;
  const tombstone = (pd.tombstones ?? []).find(
    (s) => s.address.startsWith(prefix) && (created === undefined || s.lastHeartbeat === undefined || s.lastHeartbeat >= created),
  );
  if (tombstone) {
    if (ownsEviction(input, tombstone.id)) {
      return act(`removing the evict-leader scheduler of Tombstone store ${tombstone.id}`, {
        type: 'evict-cleanup',
        storeIds: [tombstone.id],
      });
    }
    return OK;
  }
  if (!pod) return OK;
  if (isReady(pod)) return wait(`waiting for the store of ${podName} to register with PD before removing it`);
  const everRegistered = storesOf([...pd.stores, ...(pd.tombstones ?? [])], cluster, c.kind).length > 0;
  if (!everRegistered || neverJoined(input, pod)) return OK;
  return wait(
    `${podName} has no store and is not Ready; it is removed ${Math.round(joinGraceMs(input) / 1000)}s after its creation`,
    undefined,
    'join-grace',
  );
}

/** How long a Pod may take to join before it counts as never joined: 5 resync periods, as the operator waits. */
const joinGraceMs = (input: PlanInput): number => 5 * (input.options ?? DEFAULT_PLAN_OPTIONS).resyncMs;

/** The Pod is not Ready and was created longer than the join grace ago. */
function neverJoined(input: PlanInput, pod: Pod): boolean {
  const created = toMillis(pod.metadata.creationTimestamp);
  return !isReady(pod) && created !== undefined && input.now >= created + joinGraceMs(input);
}

function retireNode(input: PlanInput, c: ComponentState, settings: ComponentSettings, pod: Pod | undefined, podName: string): Step {
  if (!pod || pod.metadata.annotations?.[RETIRED_ANNOTATION] !== undefined) return OK;
  if (c.kind === 'ticdc') {
    const late = drainTimedOut(input, pod, settings, 'removing it anyway');
    if (late) return late;
    return act(`draining the TiCDC capture of ${podName} before removing it`, { type: 'retire', pod: podName, how: 'ticdc' });
  }
  if ((c.sts.status?.replicas ?? c.sts.spec?.replicas) !== c.sts.spec?.replicas)
    return wait('waiting for the Pump StatefulSet to settle before the next scale-in');
  return act(`taking the Pump node of ${podName} offline before removing it`, {
    type: 'retire',
    pod: podName,
    how: 'pump',
    ...(neverJoined(input, pod) && { unregisteredIsDone: true as const }),
  });
}
