/**
 * What the controller does next for each component, decided from a snapshot of the StatefulSets,
 * their Pods and PD. Pure: no clock (the time is an input), no I/O. The caller carries out at most one
 * action per component, then plans again from fresh state, so every step is safe to repeat after a
 * crash: the state that matters lives in the cluster (partition, Pod revisions, Pod and claim
 * annotations, PD members, stores and schedulers, failure records in the status ConfigMap), never only
 * in memory. Failover (`failover.ts`) comes first, then scaling (`scale.ts`), then upgrading.
 */
import { ANNOTATION, FORCE_UPGRADE_ANNOTATION, names, type ComponentKind } from '../../tidbcluster/names';
import { extraReplicas, failoverStep, hasRecords } from './failover';
import { imageTag, isAvailable, isReady, isTerminating, ordinalOf, parseDuration, podRevision, toMillis, versionAtLeast, type ComponentSettings, type Pod, type StatefulSet } from '../model/objects';
import { checkUpgradedMs, isMsService, prepareMs } from './pdms';
import { scaleStep } from './scale';
import { classifySmoothUpgrade, podImageTag, tagOf } from './upgrade-tidb';
import { volumeStep } from './volumes';
import { desiredReplicas, memberOfPod, OK, pdOf, podsByOrdinal, replicasOf, settingsOf, evictBegin, ownsEviction, pdStoresOf, podList, storeOfPod, unreadyPods, act, wait, TICDC_DRAINED_ANNOTATION, TICDC_SHUTDOWN_BEGIN_ANNOTATION, TICDC_DRAIN_TIMEOUT_MS, LOG_BACKUP_FLUSHED_ANNOTATION, SCALE_IN_TIME_ANNOTATION, type Action, type ComponentState, type PdState, type PlanEvent, type PlanInput, type Step } from '../view/view';

export * from '../view/view';

/** Pod annotation (the operator's literal key): when leader eviction began for this Pod's upgrade. */
export const EVICT_BEGIN_ANNOTATION = 'evictLeaderBeginTime';
/** Pod annotation (the operator's key): when the upgraded store's evict-leader scheduler was removed. */
export const EVICT_END_ANNOTATION = 'tidb.pingcap.com/tikv-evict-leader-end-at';
/** Pod annotations by which a user asks for leader eviction; the controller leaves such schedulers alone. */
const USER_EVICT_ANNOTATIONS = ['tidb.pingcap.com/evict-leader', 'tidb.pingcap.com/evict-leader-for-resize'];
/** tidb-operator's Pod-level request: `none` (evict, keep the Pod) or `delete-pod` (evict, then delete it). */
export const EVICT_REQUEST_ANNOTATION = 'tidb.pingcap.com/evict-leader';
/** When a request ends by itself (RFC 3339): the request annotations are then removed. */
export const EVICT_REQUEST_EXPIRY_ANNOTATION = 'tidb.pingcap.com/tikv-evict-leader-expiration-time';

/** Below this even share of leaders per store, an upgraded store is not waited for. */
const LEADERS_BACK_MIN_SHARE = 200;

/**
 * Which components must be neither upgrading nor scaling before a component may step (tidb-operator's
 * upgrade admission rules).
 */
export const BLOCKED_BY: Readonly<Record<ComponentKind, readonly ComponentKind[]>> = {
  // PD's micro-services go first, one after the other, in the order the operator reconciles them;
  // PD follows, so that at most one of the three services restarts at a time.
  tso: [],
  scheduling: ['tso'],
  pd: ['tso', 'scheduling'],
  tiproxy: [],
  tiflash: ['pd'],
  tikv: ['pd', 'tiflash'],
  pump: ['pd', 'tiflash', 'tikv'],
  tidb: ['pd', 'tikv', 'tiflash', 'pump'],
  ticdc: ['pd', 'tikv', 'tiflash', 'pump', 'tidb'],
};

export type Phase = 'Normal' | 'Upgrading' | 'Scaling' | 'Failover';

export interface ComponentPlan {
  readonly kind: ComponentKind;
  readonly phase: Phase;
  /** Replicas asked for by the rendered annotation (undefined when it is missing or not a number). */
  readonly desired: number | undefined;
  readonly action?: Action;
  /** Why the component is where it is: what the action does, or what it waits for. */
  readonly reason: string;
  /** True when the controller should look again soon (an operation is under way). */
  readonly busy: boolean;
  readonly event?: PlanEvent;
}

/** The update strategy Git asks for (the settings annotation; RollingUpdate when it names none). */
export const desiredStrategy = (sts: StatefulSet): 'RollingUpdate' | 'OnDelete' => (settingsOf(sts).updateStrategy === 'OnDelete' ? 'OnDelete' : 'RollingUpdate');
const isRolling = (sts: StatefulSet): boolean => desiredStrategy(sts) === 'RollingUpdate';
/** The strategy the StatefulSet has now (the API server defaults it to RollingUpdate). */
const liveStrategy = (sts: StatefulSet): string => sts.spec?.updateStrategy?.type ?? 'RollingUpdate';
/** The partition in effect: the StatefulSet controller reads a missing one as 0. */
const partitionOf = (sts: StatefulSet): number => sts.spec?.updateStrategy?.rollingUpdate?.partition ?? 0;
const statusCurrent = (sts: StatefulSet): boolean =>
  sts.status?.observedGeneration === undefined || sts.metadata.generation === undefined || sts.status.observedGeneration >= sts.metadata.generation;

/** A rolling upgrade is pending: the StatefulSet's revisions differ or a Pod is not at the update revision. */
export function isUpgrading(sts: StatefulSet, pods: readonly Pod[]): boolean {
  const update = sts.status?.updateRevision;
  if (!update) return false;
  return sts.status?.currentRevision !== update || pods.some((p) => podRevision(p) !== update);
}

/** Decides the next action of every component. */
export function plan(input: PlanInput): ComponentPlan[] {
  const phases = new Map<ComponentKind, Phase>();
  const moving = new Set<ComponentKind>();
  for (const c of input.components) {
    const target = targetReplicas(input, c);
    const replicas = replicasOf(c.sts);
    if ((target !== undefined && target !== replicas) || (c.sts.status?.replicas ?? replicas) !== replicas) moving.add(c.kind);
    phases.set(c.kind, phaseOf(input, c, moving.has(c.kind)));
  }
  // Upgrading and scaling hold back the components that wait for them; so does a failover that is
  // still changing replicas, but not one whose extra replicas are in place.
  const holding = new Set([...phases].filter(([k, p]) => p === 'Upgrading' || p === 'Scaling' || (p === 'Failover' && moving.has(k))).map(([k]) => k));
  return input.components.map((c) => planComponent(input, c, phases, holding));
}

/** Desired replicas plus failover replicas; undefined when the annotation is missing. */
export function targetReplicas(input: Pick<PlanInput, 'failover'>, c: ComponentState): number | undefined {
  const desired = desiredReplicas(c.sts);
  return desired === undefined ? undefined : desired + extraReplicas(c.kind, input.failover);
}

function phaseOf(input: PlanInput, c: ComponentState, moving: boolean): Phase {
  const records = hasRecords(c.kind, input.failover);
  if (moving) return records ? 'Failover' : 'Scaling';
  // Until the StatefulSet controller has seen the latest spec, its revisions may not show a new
  // template yet: a version bump applied to every component at once would otherwise let TiKV start
  // while PD's StatefulSet still looked up to date. Counted as upgrading, it holds what waits for it.
  if (isRolling(c.sts) && (!statusCurrent(c.sts) || isUpgrading(c.sts, c.pods))) return 'Upgrading';
  return records ? 'Failover' : 'Normal';
}

function planComponent(input: PlanInput, c: ComponentState, phases: Map<ComponentKind, Phase>, holding: ReadonlySet<ComponentKind>): ComponentPlan {
  const { sts } = c;
  const phase = phases.get(c.kind)!;
  const desired = desiredReplicas(sts);
  const settings = settingsOf(sts);
  const base = { kind: c.kind, phase, desired };
  const result = (reason: string, busy: boolean, action?: Action, event?: PlanEvent): ComponentPlan => ({ ...base, reason, busy, action, event });

  if (desired === undefined) return result(`annotation ${ANNOTATION.replicas} is missing or not a number: nothing to do`, false);
  if (settings.paused) return result('paused (spec.paused): no replicas or partition change', false);

  const replicas = replicasOf(sts);
  const strategy = desiredStrategy(sts);
  const rolling = strategy === 'RollingUpdate';
  const partition = rolling ? partitionOf(sts) : undefined;
  const apply = (r: number, p: number | undefined): Action => ({ type: 'apply', replicas: r, partition: rolling ? p : undefined });

  // The strategy and the partition change in one write: switching to RollingUpdate holds every Pod
  // at once, switching to OnDelete lets the partition go.
  if (liveStrategy(sts) !== strategy) {
    return result(`switching updateStrategy to ${strategy}${rolling ? `, partition ${replicas}` : ''}`, true, apply(replicas, replicas), {
      type: 'Normal',
      reason: 'UpdateStrategy',
      message: `${names.statefulSet(input.cluster.name, c.kind)}: updateStrategy ${liveStrategy(sts)} -> ${strategy}${rolling ? ` (partition ${replicas}: no Pod restarts until the controller steps it)` : ''}`,
    });
  }

  // Failover first, then scaling, then upgrading, in the operator's order.
  const failover = failoverStep(input, c, settings, desired);
  if (failover?.action) return result(failover.reason, true, failover.action, failover.event);
  const note = failover ? `; ${failover.reason}` : '';
  const noted = (reason: string, busy: boolean, action?: Action, event?: PlanEvent) => result(`${reason}${note}`, busy, action, event ?? failover?.event);

  const target = targetReplicas(input, c)!;
  const upgrading = rolling && isUpgrading(sts, c.pods);
  if (target !== replicas) {
    const s = scaleStep(input, c, settings, replicas, target, partition, upgrading);
    return noted(s.reason, true, s.action, s.event);
  }
  if (!upgrading) {
    if (rolling && partition !== replicas) return noted(`holding partition at ${replicas}`, false, apply(replicas, replicas));
    if (c.kind === 'tidb' && input.ddlPause) {
      const resume = ddlResumeStep(input, c, replicas);
      if (!resume.ok) return result(resume.reason, true, resume.action, resume.event);
    }
    const cleanup = leftoverEvictions(input, c);
    if (cleanup.length > 0) return result('removing the evict-leader schedulers the controller added, now that no operation needs them', true, { type: 'evict-cleanup', storeIds: cleanup });
    const marks = leftoverMarks(c);
    if (marks.length > 0) return result(`clearing the operation marks left on ${marks.map((m) => m.pod).join(', ')}, now that no operation needs them`, true, { type: 'clear-marks', marks });
    if (c.kind === 'tikv') {
      const request = evictRequestStep(input, c);
      if (request && !request.ok) return result(request.reason, true, request.action, request.event);
    }
    const volumes = volumeStep(input, c, replicas);
    if (volumes) return noted(volumes.reason, !volumes.refused, volumes.action, volumes.event);
    const unready = unreadyPods(input, c, replicas);
    const idle = rolling ? 'up to date' : 'updateStrategy OnDelete: Pods update when deleted';
    return noted(unready.length > 0 ? `${idle}; ${podList(unready)} not Ready` : idle, failover?.waiting === true);
  }
  if (!statusCurrent(sts)) return result('waiting for the StatefulSet controller to observe the new spec', true);

  const self = phase === 'Scaling' || (phase === 'Failover' && holding.has(c.kind)) ? [c.kind] : [];
  const blockers = [...self, ...BLOCKED_BY[c.kind].filter((k) => holding.has(k))];
  if (blockers.length > 0) {
    const who = blockers;
    return result(`upgrade waits until ${who.map((k) => `${k} (${phases.get(k)})`).join(', ')} is done`, true);
  }

  const force = settings.forceUpgrade === true || sts.metadata.annotations?.[FORCE_UPGRADE_ANNOTATION] === 'true';
  if (force) {
    if (partition === 0) return result('force-upgrade: the StatefulSet rolls every Pod without checks', true);
    return result('force-upgrade: partition 0, no health checks', true, apply(replicas, 0), {
      type: 'Warning',
      reason: 'ForceUpgrade',
      message: `${names.statefulSet(input.cluster.name, c.kind)}: force-upgrade set, every Pod restarts without health checks`,
    });
  }

  const update = sts.status!.updateRevision!;
  const pods = podsByOrdinal(input.cluster.name, c.kind, c.pods);

  if (c.kind === 'tidb') {
    const s = ddlPauseStep(input, c);
    if (!s.ok) return result(s.reason, true, s.action, s.event);
  }

  // A stepped Pod is back at the new revision: raise the partition again, so that a template arriving
  // from Git in the middle of the upgrade restarts nothing until the controller steps again.
  if (partition! < replicas) {
    let allStepped = pods.has(partition!);
    for (let ord = partition!; ord < replicas && allStepped; ord++) {
      const p = pods.get(ord);
      allStepped = p !== undefined && !isTerminating(p) && podRevision(p) === update;
    }
    if (allStepped) return result(`Pods from ordinal ${partition} are updated; holding partition at ${replicas}`, true, apply(replicas, replicas));
  }

  for (let ord = replicas - 1; ord >= 0; ord--) {
    const pod = pods.get(ord);
    const name = names.pod(input.cluster.name, c.kind, ord);
    if (!pod || isTerminating(pod)) return result(`waiting for Pod ${name} to be recreated`, true);
    if (podRevision(pod) === update) {
      const s = checkUpgraded(input, c, pod, settings);
      if (!s.ok) return result(s.reason, true, s.action, s.event);
      continue;
    }
    if (partition! <= ord) return result(`waiting for Pod ${name} to restart at the new revision`, true);
    // Restarting one more Pod while another is not Ready would take two down at once.
    const unready = unreadyPods(input, c, replicas, ord);
    if (unready.length > 0) return result(`upgrade waits: ${podList(unready)} not Ready; ${name} restarts once every other Pod is Ready`, true);
    const s = prepare(input, c, pod, settings);
    if (!s.ok) return result(s.reason, true, s.action, s.event);
    return result(`upgrading ${name}`, true, apply(replicas, ord), s.event ?? {
      type: 'Normal',
      reason: 'UpgradeStep',
      message: `restarting ${name} with the new revision ${update}`,
      pod: name,
    });
  }
  return result('every Pod is at the new revision; waiting for the StatefulSet status', true, partition !== replicas ? apply(replicas, replicas) : undefined);
}

/** Is a Pod that already runs the new revision healthy enough to go on to the next one? */
function checkUpgraded(input: PlanInput, c: ComponentState, pod: Pod, settings: ComponentSettings): Step {
  const name = pod.metadata.name!;
  if (!isReady(pod)) return wait(`waiting for upgraded Pod ${name} to be Ready`);
  const minReady = settings.minReadySeconds ?? 0;
  if (!isAvailable(pod, minReady, input.now)) return wait(`waiting for upgraded Pod ${name} to have been Ready for ${minReady}s (min-ready-seconds)`);
  if (isMsService(c.kind)) return checkUpgradedMs(input, c.kind, pod);
  if (c.kind === 'pd') {
    const pd = pdOf(input);
    if (typeof pd === 'string') return wait(pd);
    const member = memberOfPod(pd.members, name);
    if (!member?.healthy) return wait(`waiting for PD member ${name} to be healthy`);
    // PD v8.5.2+ says when a member has loaded its regions (older PD answers 404: ready).
    const ready = input.probes?.pdReady?.[name];
    if (!ready) return wait(`checking whether PD member ${member.name} is ready (/pd/api/v2/ready)`);
    if (!ready.ok) return wait(`waiting for PD member ${member.name} to be ready: ${ready.detail}`);
    return OK;
  }
  if (c.kind === 'tikv' || c.kind === 'tiflash') {
    const pd = pdStoresOf(input);
    if (typeof pd === 'string') return wait(pd);
    const store = storeOfPod(pd.stores, input.cluster.name, c.kind, name);
    if (!store) return wait(`waiting for the store of ${name} to register with PD`);
    if (store.state !== 'Up') return wait(`waiting for store ${store.id} (${name}) to be Up, it is ${store.state}`);
    if (c.kind === 'tiflash') {
      if (!tiflashStatusChecked(c.sts)) return OK;
      const status = input.probes?.tiflashStatus?.[name];
      if (!status) return wait(`checking the TiFlash store status of ${name} (/tiflash/store-status)`);
      return status.ok ? OK : wait(`waiting for TiFlash ${name} to serve: ${status.detail}`);
    }
    if (pd.evicting.has(store.id) && ownsEviction(input, store.id) && !userEvicting(pod)) {
      return {
        ok: false,
        reason: `store ${store.id} (${name}) is upgraded: removing its evict-leader scheduler`,
        action: { type: 'evict-end', pod: name, storeId: store.id, remove: true },
        event: { type: 'Normal', reason: 'EvictLeaderEnd', message: `removing the evict-leader scheduler of store ${store.id}`, pod: name },
      };
    }
    const endAt = toMillis(pod.metadata.annotations?.[EVICT_END_ANNOTATION]);
    if (endAt !== undefined) {
      const up = pd.stores.filter((s) => s.state === 'Up' && s.labels.engine !== 'tiflash');
      const share = up.reduce((n, s) => n + s.leaderCount, 0) / Math.max(1, up.length);
      const timeout = parseDuration(settings.waitLeaderTransferBackTimeout) ?? 400_000;
      if (share >= LEADERS_BACK_MIN_SHARE && store.leaderCount < (2 * share) / 3 && input.now < endAt + timeout) {
        return wait(`waiting for region leaders to come back to store ${store.id} (${name}): ${store.leaderCount} of about ${Math.round(share)}`);
      }
    }
    return OK;
  }
  return OK;
}

/** TiFlash serves `/tiflash/store-status` from v5.1.2; the operator checks it from that version on (`tiflash_upgrader.go`). */
export const tiflashStatusChecked = (sts: StatefulSet): boolean => versionAtLeast(imageTag(sts, 'tiflash'), 'v5.1.2') === true;

/**
 * The Pods whose servers the controller asks before planning: every Ready Pod at the update
 * revision of an upgrading PD (its `/pd/api/v2/ready`) or TiFlash (its `/tiflash/store-status`), and
 * every TiKV Pod of an upgrading TiKV whose leaders are being evicted for its restart (its `/metrics`).
 */
export function probesWanted(components: readonly ComponentState[]): { pdReady: string[]; tiflashStatus: string[]; tikvLeaders: string[] } {
  const out = { pdReady: [] as string[], tiflashStatus: [] as string[], tikvLeaders: [] as string[] };
  for (const c of components) {
    out.tikvLeaders.push(...requests(c).filter((r) => r.deletePod).map((r) => r.pod.metadata.name!));
    if (!isRolling(c.sts) || !isUpgrading(c.sts, c.pods)) continue;
    const update = c.sts.status?.updateRevision;
    if (c.kind === 'tikv') {
      const evicting = c.pods.filter((p) => podRevision(p) !== update && !isTerminating(p) && p.metadata.annotations?.[EVICT_BEGIN_ANNOTATION] !== undefined);
      out.tikvLeaders.push(...evicting.map((p) => p.metadata.name!).filter((n) => !out.tikvLeaders.includes(n)));
      continue;
    }
    if (c.kind !== 'pd' && !(c.kind === 'tiflash' && tiflashStatusChecked(c.sts))) continue;
    const pods = c.pods.filter((p) => podRevision(p) === update && isReady(p)).map((p) => p.metadata.name!);
    (c.kind === 'pd' ? out.pdReady : out.tiflashStatus).push(...pods);
  }
  return out;
}

/** What must happen before a Pod may restart: PD leadership or a micro-service's primary moved away, TiKV leaders evicted, a TiCDC capture drained. */
function prepare(input: PlanInput, c: ComponentState, pod: Pod, settings: ComponentSettings): Step {
  const name = pod.metadata.name!;
  if (c.kind === 'pd') {
    const pd = pdOf(input);
    if (typeof pd === 'string') return wait(pd);
    const member = memberOfPod(pd.members, name);
    const others = pd.members.filter((m) => m !== member);
    if (member && others.length > 0 && others.filter((m) => m.healthy).length <= pd.members.length / 2) {
      return wait(`restarting ${name} now would leave PD without a healthy majority`);
    }
    if (settings.checkQuorumBeforeUpgrade === true) {
      // tidb-operator's IsPDStable: more healthy members than a majority plus one.
      const healthy = pd.members.filter((m) => m.healthy).length;
      const needed = Math.floor(pd.members.length / 2) + 2;
      if (healthy < needed) {
        return wait(`pd-check-quorum-before-upgrade: ${healthy} of ${pd.members.length} PD members are healthy; ${name} restarts once ${needed} are`);
      }
    }
    if (member && pd.leader === member.name) {
      const target = transferTarget(input, c, pd, name);
      if (target) {
        return {
          ok: false,
          reason: `moving PD leadership from ${member.name} to ${target} before restarting ${name}`,
          action: { type: 'transfer-leader', pod: name, from: member.name, to: target },
          event: { type: 'Normal', reason: 'PDLeaderTransfer', message: `transferring PD leadership from ${member.name} to ${target}`, pod: name },
        };
      }
    }
    return OK;
  }
  if (isMsService(c.kind)) return prepareMs(input, { ...c, kind: c.kind }, pod);
  if (c.kind === 'ticdc') return prepareCapture(input, c, pod, settings);
  if (c.kind === 'tikv') return prepareStore(input, c, pod, settings);
  return OK;
}

/**
 * A TiKV store loses its region leaders before its Pod restarts: the evict-leader scheduler moves
 * them, and the restart waits until both PD and the server's own `/metrics` count none (PD's count
 * follows region heartbeats, the server's gauge is refreshed every 10 s: neither alone is proof), or
 * until `evictLeaderTimeout`. Then log backup is asked to flush, unless the cluster opts out.
 */
function prepareStore(input: PlanInput, c: ComponentState, pod: Pod, settings: ComponentSettings): Step {
  const name = pod.metadata.name!;
  const pd = pdStoresOf(input);
  if (typeof pd === 'string') return wait(pd);
  if (settings.checkStoresUpBeforeUpgrade === true) {
    // tidb-operator's IsTiKVStable, asked before every TiKV restart.
    const down = pd.stores.find((s) => s.state !== 'Up' && s.state !== 'Tombstone');
    if (down) return wait(`tikv-check-all-stores-up-before-upgrade: store ${down.id} (${down.address}) is ${down.state}; ${name} restarts once every store is Up`);
  }
  const store = storeOfPod(pd.stores, input.cluster.name, 'tikv', name);
  if (!store) return OK;
  const peers = pd.stores.filter((s) => s !== store && s.state === 'Up' && s.labels.engine !== 'tiflash');
  if (peers.length === 0) return OK; // Nowhere to move leaders to.
  const begin = toMillis(pod.metadata.annotations?.[EVICT_BEGIN_ANNOTATION]);
  const metric = input.probes?.tikvLeaders?.[name];
  const left = Math.max(store.leaderCount, metric?.count ?? 0);
  const timeout = parseDuration(settings.evictLeaderTimeout) ?? 1500 * 60_000;
  // (Re)adds the scheduler: the first time, or when it went missing (a PD restart, a manual removal).
  // Before the timeout: a begin time left on a Pod by an upgrade taken back in Git must not cut the
  // next eviction short (a fresh scheduler writes a fresh begin time).
  if (begin === undefined || !pd.evicting.has(store.id)) {
    return {
      ok: false,
      reason: `evicting region leaders from store ${store.id} (${name})`,
      action: evictBegin(input, pd, name, store.id, EVICT_BEGIN_ANNOTATION, 'upgrade'),
      event: { type: 'Normal', reason: 'EvictLeaderBegin', message: `evicting region leaders from store ${store.id} before the restart`, pod: name },
    };
  }
  if (input.now >= begin + timeout && left > 0) {
    return {
      ok: true,
      event: {
        type: 'Warning',
        reason: 'EvictLeaderTimeout',
        message: `store ${store.id} still has ${left} region leaders after evictLeaderTimeout ${settings.evictLeaderTimeout ?? '1500m'}; restarting ${name} anyway`,
        pod: name,
      },
    };
  }
  if (store.leaderCount > 0) return wait(`waiting for region leaders to leave store ${store.id} (${name}): ${store.leaderCount} left`);
  if (!metric) return wait(`PD counts no leaders on store ${store.id}; reading ${name}'s own count from its /metrics`);
  if (metric.count !== undefined && metric.count > 0) {
    return wait(`PD counts no leaders on store ${store.id}, but ${name}'s /metrics still shows ${metric.count} (TiKV refreshes it every 10 s)`);
  }
  const flush = flushStep(pod, store.id, settings, c.sts.status?.updateRevision ?? '', 'the restart');
  if (flush) return flush;
  if (metric.count === undefined) {
    return {
      ok: true,
      event: {
        type: 'Warning',
        reason: 'LeaderCountUnverified',
        message: `could not read ${name}'s own leader count (${metric.detail}); restarting it on PD's count of 0`,
        pod: name,
      },
    };
  }
  return OK;
}

/**
 * Once a store has no leaders and its Pod is about to go: log backup asked to flush, unless the
 * cluster opts out or it was asked already. The mark names the revision it was for (the update
 * revision in an upgrade), so a Pod that stayed (an upgrade taken back in Git) flushes again before
 * the next one.
 */
function flushStep(pod: Pod, storeId: number, settings: ComponentSettings, revision: string, before: string): Step | undefined {
  if (settings.flushLogBackup === false || pod.metadata.annotations?.[LOG_BACKUP_FLUSHED_ANNOTATION] === revision) return undefined;
  const name = pod.metadata.name!;
  return act(`store ${storeId} (${name}) has no leaders: asking log backup to flush before ${before}`, { type: 'flush-log-backup', pod: name, storeId, revision });
}

/**
 * A TiCDC capture hands its tables over before its Pod restarts, within `gracefulShutdownTimeout`
 * from the first try (the operator's `tidb.pingcap.com/ticdc-graceful-shutdown-begin-time`); past
 * it, the Pod restarts anyway.
 */
function prepareCapture(input: PlanInput, c: ComponentState, pod: Pod, settings: ComponentSettings): Step {
  const name = pod.metadata.name!;
  if (pod.metadata.annotations?.[TICDC_DRAINED_ANNOTATION] !== undefined) return OK;
  const begin = toMillis(pod.metadata.annotations?.[TICDC_SHUTDOWN_BEGIN_ANNOTATION]);
  const timeout = parseDuration(settings.gracefulShutdownTimeout) ?? TICDC_DRAIN_TIMEOUT_MS;
  if (begin !== undefined && input.now >= begin + timeout) {
    return {
      ok: true,
      event: {
        type: 'Warning',
        reason: 'DrainTimeout',
        message: `${name} did not hand all its tables over within gracefulShutdownTimeout ${settings.gracefulShutdownTimeout ?? '10m'}; restarting it anyway`,
        pod: name,
      },
    };
  }
  const ordinal = ordinalOf(name, names.statefulSet(input.cluster.name, c.kind)) ?? 0;
  // The next Pod to restart is the next lower ordinal still at the old revision.
  const update = c.sts.status?.updateRevision;
  const next = [...podsByOrdinal(input.cluster.name, c.kind, c.pods).entries()]
    .filter(([ord, p]) => ord < ordinal && podRevision(p) !== update && !isTerminating(p))
    .sort(([a], [b]) => b - a)[0]?.[1].metadata.name;
  return act(`draining the TiCDC capture of ${name} before its restart`, { type: 'drain-capture', pod: name, next, targetVersion: imageTag(c.sts, 'ticdc') });
}

/** The TiDB Pod to ask for a DDL pause or resume: the lowest Ready ordinal, as the operator picks it. */
function tidbToAsk(input: PlanInput, c: ComponentState): string | undefined {
  return [...podsByOrdinal(input.cluster.name, c.kind, c.pods).entries()]
    .filter(([, p]) => isReady(p) && !isTerminating(p))
    .sort(([a], [b]) => a - b)[0]?.[1].metadata.name;
}

/**
 * Before a TiDB upgrade restarts its first Pod: DDL paused when the version pair needs it (and not
 * yet paused for this pair). A pause recorded for another pair is resumed first.
 */
function ddlPauseStep(input: PlanInput, c: ComponentState): Step {
  const update = c.sts.status?.updateRevision;
  const old = c.pods.find((p) => podRevision(p) !== update && !isTerminating(p));
  const source = old && podImageTag(old, 'tidb');
  const target = tagOf(c.sts.spec?.template?.spec?.containers?.find((x) => x.name === 'tidb')?.image);
  const record = input.ddlPause;
  const pod = tidbToAsk(input, c);
  if (record && source !== undefined && (record.source !== source || record.target !== target)) {
    if (!pod) return wait('waiting for a Ready TiDB Pod to resume DDL paused for an earlier upgrade');
    return act(`resuming DDL paused for the TiDB upgrade ${record.source} -> ${record.target}, which is no longer the one under way`, { type: 'ddl-resume', pod, stale: true });
  }
  if (record?.state === 'paused' || source === undefined || target === undefined) return OK;
  if (!record && classifySmoothUpgrade(source, target) !== 'switch') return OK;
  if (!pod) return wait(`waiting for a Ready TiDB Pod to pause DDL before the upgrade ${source} -> ${target}`);
  return act(`pausing DDL before the TiDB upgrade ${source} -> ${target}`, { type: 'ddl-pause', pod, source, target }, {
    type: 'Normal',
    reason: 'DDLPause',
    message: `pausing DDL for the TiDB upgrade ${source} -> ${target} (POST /upgrade/start on ${pod})`,
  });
}

/** After a TiDB upgrade: DDL resumed once every TiDB Pod is Ready (the operator's condition). */
function ddlResumeStep(input: PlanInput, c: ComponentState, replicas: number): Step {
  const record = input.ddlPause!;
  const unready = unreadyPods(input, c, replicas);
  if (unready.length > 0) return wait(`the TiDB upgrade is done; DDL stays paused until ${podList(unready)} Ready`);
  const pod = tidbToAsk(input, c);
  if (!pod) return wait('waiting for a Ready TiDB Pod to resume DDL');
  return act(`resuming DDL paused for the TiDB upgrade ${record.source} -> ${record.target}`, { type: 'ddl-resume', pod, stale: false }, {
    type: 'Normal',
    reason: 'DDLResume',
    message: `resuming DDL after the TiDB upgrade ${record.source} -> ${record.target} (POST /upgrade/finish on ${pod})`,
  });
}

/** Leader transfer target as the operator picks it: the highest healthy ordinal above, else the lowest below. */
function transferTarget(input: PlanInput, c: ComponentState, pd: PdState, pod: string): string | undefined {
  const sts = names.statefulSet(input.cluster.name, 'pd');
  const self = ordinalOf(pod, sts)!;
  const healthy = new Map<number, string>();
  for (const m of pd.members) {
    if (!m.healthy) continue;
    const ord = ordinalOf(m.name.split('.')[0], sts);
    if (ord !== undefined && ord !== self && ord < replicasOf(c.sts)) healthy.set(ord, m.name);
  }
  const above = [...healthy.keys()].filter((o) => o > self).sort((a, b) => b - a);
  const below = [...healthy.keys()].filter((o) => o < self).sort((a, b) => a - b);
  const ord = above[0] ?? below[0];
  if (ord !== undefined) return healthy.get(ord);
  // Peer members of another Kubernetes cluster (acrossK8s, heterogeneous).
  return pd.members.find((m) => m.healthy && !m.name.startsWith(`${pod}`) && ordinalOf(m.name.split('.')[0], sts) === undefined)?.name;
}

/**
 * The controller's own eviction records of this component, once nothing needs them: the component
 * is neither upgrading nor scaling (the caller's condition). Schedulers anyone else added are never
 * recorded, so never removed.
 */
function leftoverEvictions(input: PlanInput, c: ComponentState): number[] {
  const sts = names.statefulSet(input.cluster.name, c.kind);
  // A request still standing keeps its scheduler; it goes once the Pod no longer asks.
  const asking = new Set(requests(c).map((r) => r.pod.metadata.name));
  return Object.entries(input.evictions ?? {})
    .filter(([, r]) => ordinalOf(r.pod, sts) !== undefined && !(r.for === 'request' && asking.has(r.pod)))
    .map(([id]) => Number(id));
}

/** TiKV Pods that ask for leader eviction with a value the operator knows, not terminating. */
function requests(c: ComponentState): { pod: Pod; deletePod: boolean }[] {
  if (c.kind !== 'tikv') return [];
  return c.pods
    .filter((p) => !isTerminating(p))
    .map((p) => ({ pod: p, value: p.metadata.annotations?.[EVICT_REQUEST_ANNOTATION] }))
    .filter((r) => r.value === 'none' || r.value === 'delete-pod')
    .map((r) => ({ pod: r.pod, deletePod: r.value === 'delete-pod' }));
}

/**
 * tidb-operator's Pod-level leader eviction (`pkg/controller/tidbcluster/pod_control.go`), taken on
 * while TiKV is idle: a request past its expiration time is removed; otherwise, with every store Up,
 * the store's leaders are evicted (a scheduler the controller records as the request's), and with
 * `delete-pod` the Pod is deleted once PD and the server count no leaders, after a log backup flush.
 * The scheduler is removed once the Pod no longer asks (the re-created Pod does not carry the request).
 */
function evictRequestStep(input: PlanInput, c: ComponentState): Step | undefined {
  const standing = requests(c);
  if (standing.length === 0) return undefined;
  const settings = settingsOf(c.sts);
  for (const { pod, deletePod } of standing) {
    const name = pod.metadata.name!;
    const expiry = toMillis(pod.metadata.annotations?.[EVICT_REQUEST_EXPIRY_ANNOTATION]);
    if (expiry !== undefined && input.now >= expiry) {
      return act(`the leader eviction asked for on ${name} expired: removing the request`, {
        type: 'clear-marks',
        marks: [{ pod: name, keys: [EVICT_REQUEST_ANNOTATION, EVICT_REQUEST_EXPIRY_ANNOTATION] }],
      });
    }
    const pd = pdStoresOf(input);
    if (typeof pd === 'string') return wait(pd);
    const store = storeOfPod(pd.stores, input.cluster.name, 'tikv', name);
    if (!store) continue;
    if (!pd.evicting.has(store.id)) {
      // As the operator does before it adds the scheduler: every store must be Up.
      const down = pd.stores.find((s) => s.state !== 'Up' && s.state !== 'Tombstone');
      if (down) return wait(`leader eviction asked for on ${name} waits: store ${down.id} is ${down.state}`);
      return act(`evicting region leaders from store ${store.id} (${name}), as its ${EVICT_REQUEST_ANNOTATION} annotation asks`, evictBegin(input, pd, name, store.id, undefined, 'request'), {
        type: 'Normal',
        reason: 'EvictLeaderBegin',
        message: `evicting region leaders from store ${store.id}, as the Pod's ${EVICT_REQUEST_ANNOTATION} annotation asks`,
        pod: name,
      });
    }
    if (!deletePod) continue;
    const metric = input.probes?.tikvLeaders?.[name];
    if (store.leaderCount > 0) return wait(`waiting for region leaders to leave store ${store.id} (${name}) before deleting the Pod: ${store.leaderCount} left`);
    if (metric?.count === undefined) return wait(`PD counts no leaders on store ${store.id}; reading ${name}'s own count before deleting the Pod${metric ? ` (${metric.detail})` : ''}`);
    if (metric.count > 0) return wait(`PD counts no leaders on store ${store.id}, but ${name}'s /metrics still shows ${metric.count}`);
    const flush = flushStep(pod, store.id, settings, podRevision(pod) ?? '', 'deleting the Pod');
    if (flush) return flush;
    return act(`deleting ${name}, whose store ${store.id} has no leaders, as its ${EVICT_REQUEST_ANNOTATION}: delete-pod annotation asks`, { type: 'delete-pod', pod: name, uid: pod.metadata.uid, storeId: store.id }, {
      type: 'Normal',
      reason: 'EvictLeaderDeletePod',
      message: `store ${store.id} has no leaders: deleting the Pod, as its ${EVICT_REQUEST_ANNOTATION}: delete-pod annotation asks`,
      pod: name,
    });
  }
  return undefined;
}

/**
 * The Pod annotations an upgrade or scale-in step writes and reads back. Left on a Pod that did not
 * restart (the operation was taken back in Git), a begin time would cut the next operation's
 * timeout short and a done-mark would skip its step; once the component is idle they go.
 */
const OPERATION_MARKS = [
  EVICT_BEGIN_ANNOTATION,
  EVICT_END_ANNOTATION,
  SCALE_IN_TIME_ANNOTATION,
  TICDC_SHUTDOWN_BEGIN_ANNOTATION,
  TICDC_DRAINED_ANNOTATION,
  LOG_BACKUP_FLUSHED_ANNOTATION,
];

function leftoverMarks(c: ComponentState): { pod: string; keys: string[] }[] {
  // A Pod that asks to be deleted keeps its flush mark until it is.
  const deleting = new Set(requests(c).filter((r) => r.deletePod).map((r) => r.pod.metadata.name));
  return c.pods
    .filter((p) => !isTerminating(p))
    .map((p) => ({
      pod: p.metadata.name!,
      keys: OPERATION_MARKS.filter((k) => p.metadata.annotations?.[k] !== undefined && !(k === LOG_BACKUP_FLUSHED_ANNOTATION && deleting.has(p.metadata.name))),
    }))
    .filter((m) => m.keys.length > 0);
}

const userEvicting = (pod: Pod): boolean => USER_EVICT_ANNOTATIONS.some((k) => pod.metadata.annotations?.[k] !== undefined);
