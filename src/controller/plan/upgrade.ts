/**
 * The rolling upgrade of a component, as tidb-operator's upgraders step it: one Pod at a time from
 * the highest ordinal, by lowering the partition the controller holds, each Pod only once the one
 * before it runs the new revision and passes its component's checks, and no Pod while another is not
 * Ready. What a component checks before a Pod restarts and after (PD leadership, TiKV leaders, a
 * TiCDC capture's tables...) is in its own module, `upgrade-<component>.ts`.
 */
import { FORCE_UPGRADE_ANNOTATION, names, type ComponentKind } from '../../tidbcluster/names';
import { isAvailable, isReady, isTerminating, podRevision, type Pod } from '../model/objects';
import type { ComponentSettings } from '../../tidbcluster/contract';
import { podList, podsByOrdinal, statusCurrent, unreadyPods } from '../view/lookups';
import type { ComponentState, PlanInput } from '../view/view';
import { BLOCKED_BY } from '../../tidbcluster/restart-order';
import { OK, wait, type Action, type Phase, type PlanEvent, type Step, type UpgradeChecks, waitOn, type WaitOn } from './action';
import { msUpgrade } from './pdms';
import { pdUpgrade } from './upgrade-pd';
import { ticdcUpgrade } from './upgrade-ticdc';
import { tidbUpgrade } from './upgrade-tidb';
import { tiflashUpgrade } from './upgrade-tiflash';
import { tikvUpgrade } from './upgrade-tikv';

/** Each component's own checks; a component without an entry restarts once the Pod before it is Ready. */
const CHECKS: Readonly<Partial<Record<ComponentKind, UpgradeChecks>>> = {
  pd: pdUpgrade,
  tso: msUpgrade,
  scheduling: msUpgrade,
  tikv: tikvUpgrade,
  tiflash: tiflashUpgrade,
  tidb: tidbUpgrade,
  ticdc: ticdcUpgrade,
};

/** What the upgrade does now: an action, or what it waits for. An upgrade under way is always busy. */
export interface UpgradeStep extends WaitOn {
  readonly reason: string;
  readonly action?: Action;
  readonly event?: PlanEvent;
}

/**
 * The next step of the upgrade of a component whose Pods are not all at its update revision,
 * `partition` being the one it has now. `phases` and `holding` are every component's phase and the
 * components that hold back the ones that wait for them.
 */
export function upgradeStep(
  input: PlanInput,
  c: ComponentState,
  settings: ComponentSettings,
  replicas: number,
  partition: number,
  phases: ReadonlyMap<ComponentKind, Phase>,
  holding: ReadonlySet<ComponentKind>,
): UpgradeStep {
  const { sts } = c;
  const apply = (p: number): Action => ({ type: 'apply', replicas, partition: p });
  const step = (reason: string, action?: Action, event?: PlanEvent, on?: WaitOn): UpgradeStep => ({ reason, action, event, ...waitOn(on) });
  if (!statusCurrent(sts)) return step('waiting for the StatefulSet controller to observe the new spec');

  const phase = phases.get(c.kind);
  const self = phase === 'Scaling' || (phase === 'Failover' && holding.has(c.kind)) ? [c.kind] : [];
  const blockers = [...self, ...BLOCKED_BY[c.kind].filter((k) => holding.has(k))];
  if (blockers.length > 0) return step(`upgrade waits until ${blockers.map((k) => `${k} (${phases.get(k)})`).join(', ')} is done`);

  const force = settings.forceUpgrade === true || sts.metadata.annotations?.[FORCE_UPGRADE_ANNOTATION] === 'true';
  if (force) {
    if (partition === 0) return step('force-upgrade: the StatefulSet rolls every Pod without checks');
    return step('force-upgrade: partition 0, no health checks', apply(0), {
      type: 'Warning',
      reason: 'ForceUpgrade',
      message: `${names.statefulSet(input.cluster.name, c.kind)}: force-upgrade set, every Pod restarts without health checks`,
    });
  }

  const update = sts.status!.updateRevision!;
  const pods = podsByOrdinal(input.cluster.name, c.kind, c.pods);
  const checks = CHECKS[c.kind] ?? {};

  const begun = checks.begin?.(input, c) ?? OK;
  if (!begun.ok) return step(begun.reason, begun.action, begun.event, begun);

  // A stepped Pod is back at the new revision: raise the partition again, so that a template arriving
  // from Git in the middle of the upgrade restarts nothing until the controller steps again.
  if (partition < replicas) {
    let allStepped = pods.has(partition);
    for (let ord = partition; ord < replicas && allStepped; ord++) {
      const p = pods.get(ord);
      allStepped = p !== undefined && !isTerminating(p) && podRevision(p) === update;
    }
    if (allStepped) return step(`Pods from ordinal ${partition} are updated; holding partition at ${replicas}`, apply(replicas));
  }

  for (let ord = replicas - 1; ord >= 0; ord--) {
    const pod = pods.get(ord);
    const name = names.pod(input.cluster.name, c.kind, ord);
    if (!pod || isTerminating(pod)) return step(`waiting for Pod ${name} to be recreated`);
    if (podRevision(pod) === update) {
      const s = upgraded(input, c, pod, settings, checks);
      if (!s.ok) return step(s.reason, s.action, s.event, s);
      continue;
    }
    if (partition <= ord) return step(`waiting for Pod ${name} to restart at the new revision`);
    // Restarting one more Pod while another is not Ready would take two down at once.
    const unready = unreadyPods(input, c, replicas, ord);
    if (unready.length > 0) return step(`upgrade waits: ${podList(unready)} not Ready; ${name} restarts once every other Pod is Ready`);
    const s = checks.prepare?.(input, c, pod, settings) ?? OK;
    if (!s.ok) return step(s.reason, s.action, s.event, s);
    return step(
      `upgrading ${name}`,
      apply(ord),
      s.event ?? {
        type: 'Normal',
        reason: 'UpgradeStep',
        message: `restarting ${name} with the new revision ${update}`,
        pod: name,
      },
    );
  }
  return step('every Pod is at the new revision; waiting for the StatefulSet status', partition !== replicas ? apply(replicas) : undefined);
}

/** Is a Pod that already runs the new revision healthy enough to go on to the next one? */
function upgraded(input: PlanInput, c: ComponentState, pod: Pod, settings: ComponentSettings, checks: UpgradeChecks): Step {
  const name = pod.metadata.name!;
  if (!isReady(pod)) return wait(`waiting for upgraded Pod ${name} to be Ready`, undefined, 'upgraded-pod-not-ready');
  const minReady = settings.minReadySeconds ?? 0;
  if (!isAvailable(pod, minReady, input.now))
    return wait(`waiting for upgraded Pod ${name} to have been Ready for ${minReady}s (min-ready-seconds)`, undefined, 'min-ready-seconds');
  return checks.upgraded?.(input, c, pod, settings) ?? OK;
}
