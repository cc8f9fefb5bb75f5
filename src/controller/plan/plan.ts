/**
 * What the controller does next for each component, decided from a snapshot of the StatefulSets,
 * their Pods and PD. Pure: no clock (the time is an input), no I/O. The caller carries out at most one
 * action per component, then plans again from fresh state, so every step is safe to repeat after a
 * crash: the state that matters lives in the cluster (partition, Pod revisions, Pod and claim
 * annotations, PD members, stores and schedulers, failure records in the status ConfigMap), never only
 * in memory. A Pod someone else deletes has its leaders moved away first (`drain.ts`); then come
 * failover (`failover.ts`), scaling (`scale.ts`), what an idle component has left to do (`leftovers.ts`, `evict-requests.ts`, `volumes.ts`), then upgrading
 * (`upgrade.ts`, with each component's checks in `upgrade-<component>.ts`).
 */
import { ANNOTATION, names, type ComponentKind } from '../../tidbcluster/names';
import { desiredReplicas, desiredStrategy, isRolling, replicasOf, settingsOf } from '../model/settings';
import { hasRecords } from '../records/failover';
import { isUpgrading, liveStrategy, partitionOf, podList, statusCurrent, targetReplicas, unreadyPods } from '../view/lookups';
import type { ComponentState, PlanInput } from '../view/view';
import { SELF_ENDING_WAITS, waitOn, type Action, type Phase, type PlanEvent, type WaitOn } from './action';
import { evictRequestStep } from './evict-requests';
import { drainStep } from './drain';
import { failoverStep } from './failover';
import { replaceStep, replaceUnderWay } from './replace';
import { pdTransferRequestStep, tidbShutdownRequestStep } from './pod-requests';
import { leftoverEvictions, leftoverMarks } from './leftovers';
import { scaleStep } from './scale';
import { upgradeStep } from './upgrade';
import { ddlResumeStep } from './upgrade-tidb';
import { volumeStep } from './volumes';

/** A component's plan; `wait` and `storeId` say what it waits for when it waits. */
export interface ComponentPlan extends WaitOn {
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
  const holding = new Set(
    [...phases].filter(([k, p]) => p === 'Upgrading' || p === 'Scaling' || (p === 'Failover' && moving.has(k))).map(([k]) => k),
  );
  return input.components.map((c) => planComponent(input, c, phases, holding));
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

function planComponent(
  input: PlanInput,
  c: ComponentState,
  phases: Map<ComponentKind, Phase>,
  holding: ReadonlySet<ComponentKind>,
): ComponentPlan {
  const { sts } = c;
  const phase = phases.get(c.kind)!;
  const desired = desiredReplicas(sts);
  const settings = settingsOf(sts);
  const base = { kind: c.kind, phase, desired };
  const result = (reason: string, busy: boolean, action?: Action, event?: PlanEvent, on?: WaitOn): ComponentPlan => ({
    ...base,
    reason,
    busy,
    action,
    event,
    ...waitOn(on),
  });

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

  // A Pod that is being deleted by someone else has seconds left: its leaders move before anything else.
  const drain = drainStep(input, c);
  if (drain && !drain.ok) return result(drain.reason, true, drain.action, drain.event, drain);

  // A replacement Git asks for comes first: a member gone for good may be what holds the rest. One
  // that cannot start yet holds nothing (failover may be what makes it possible): it is noted.
  const replace = replaceStep(input, c, settings);
  if (replace && !replace.ok && (replace.action || replaceUnderWay(input, c.kind)))
    return result(replace.reason, true, replace.action, replace.event, replace);
  const held = replace && !replace.ok ? replace : undefined;

  // Failover first, then scaling, then upgrading, in the operator's order.
  const failover = failoverStep(input, c, settings, desired);
  if (failover?.action) return result(failover.reason, true, failover.action, failover.event);
  const note = [failover?.reason, held?.reason]
    .filter((r) => r !== undefined)
    .map((r) => `; ${r}`)
    .join('');
  const noted = (reason: string, busy: boolean, action?: Action, event?: PlanEvent, on?: WaitOn) =>
    result(`${reason}${note}`, busy || held !== undefined, action, event ?? failover?.event ?? held?.event, waitOf(on, failover, held));

  const target = targetReplicas(input, c)!;
  const upgrading = rolling && isUpgrading(sts, c.pods);
  if (target !== replicas) {
    const s = scaleStep(input, c, settings, replicas, target, partition, upgrading);
    return noted(s.reason, true, s.action, s.event, s);
  }
  if (!upgrading) {
    if (rolling && partition !== replicas) return noted(`holding partition at ${replicas}`, false, apply(replicas, replicas));
    if (c.kind === 'tidb' && input.ddlPause) {
      const resume = ddlResumeStep(input, c, replicas);
      if (!resume.ok) return result(resume.reason, true, resume.action, resume.event, resume);
    }
    const cleanup = leftoverEvictions(input, c);
    if (cleanup.length > 0)
      return result('removing the evict-leader schedulers the controller added, now that no operation needs them', true, {
        type: 'evict-cleanup',
        storeIds: cleanup,
      });
    const marks = leftoverMarks(c);
    if (marks.length > 0)
      return result(`clearing the operation marks left on ${marks.map((m) => m.pod).join(', ')}, now that no operation needs them`, true, {
        type: 'clear-marks',
        marks,
      });
    if (c.kind === 'tikv') {
      const request = evictRequestStep(input, c);
      if (request && !request.ok) return result(request.reason, true, request.action, request.event, request);
    }
    const podRequest = pdTransferRequestStep(input, c) ?? tidbShutdownRequestStep(c, phases);
    if (podRequest && !podRequest.ok) return result(podRequest.reason, true, podRequest.action, podRequest.event, podRequest);
    const volumes = volumeStep(input, c, replicas);
    if (volumes) return noted(volumes.reason, !volumes.refused, volumes.action, volumes.event);
    if (held)
      return result(
        `${held.reason}${failover ? `; ${failover.reason}` : ''}`,
        true,
        undefined,
        held.event ?? failover?.event,
        waitOf(held, failover),
      );
    const unready = unreadyPods(input, c, replicas);
    const idle = rolling ? 'up to date' : 'updateStrategy OnDelete: Pods update when deleted';
    return noted(unready.length > 0 ? `${idle}; ${podList(unready)} not Ready` : idle, failover?.waiting === true);
  }
  const u = upgradeStep(input, c, settings, replicas, partition!, phases, holding);
  return result(u.reason, true, u.action, u.event, u);
}

/**
 * What a reason made of parts (the step's own, then failover's and a held replacement's notes) waits
 * for: a part's wait that ends by itself makes the whole one end by itself (the reason then changes),
 * else the first part's wait that has a code.
 */
function waitOf(...parts: (WaitOn | undefined)[]): WaitOn {
  const coded = parts.filter((p): p is WaitOn => p?.wait !== undefined);
  return waitOn(coded.find((p) => SELF_ENDING_WAITS.includes(p.wait!)) ?? coded[0]);
}
