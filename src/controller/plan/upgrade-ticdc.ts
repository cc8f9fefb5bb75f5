/**
 * TiCDC in an upgrade, as tidb-operator's `ticdc_upgrader.go` steps it: a capture hands its tables
 * over, and the next Pod's capture takes ownership, before its Pod restarts.
 */
import { names } from '../../tidbcluster/names';
import { TICDC_DRAINED_ANNOTATION, TICDC_SHUTDOWN_BEGIN_ANNOTATION } from '../model/annotations';
import { isTerminating, ordinalOf, podRevision, type Pod } from '../model/objects';
import type { ComponentSettings } from '../../tidbcluster/contract';
import { imageTag, parseDuration, toMillis } from '../model/values';
import { podsByOrdinal } from '../view/lookups';
import type { ComponentState, PlanInput } from '../view/view';
import { act, OK, type Step, type UpgradeChecks } from './action';

/** TiCDC's `gracefulShutdownTimeout` default (tidb-operator: 10m). */
const TICDC_DRAIN_TIMEOUT_MS = 10 * 60_000;

/**
 * Past `gracefulShutdownTimeout` from the first try to drain a capture (the operator's
 * `tidb.pingcap.com/ticdc-graceful-shutdown-begin-time`), the Pod goes on (`then` says how) with a
 * warning; undefined while there is time left.
 */
export function drainTimedOut(input: PlanInput, pod: Pod, settings: ComponentSettings, then: string): Step | undefined {
  const begin = toMillis(pod.metadata.annotations?.[TICDC_SHUTDOWN_BEGIN_ANNOTATION]);
  const timeout = parseDuration(settings.gracefulShutdownTimeout) ?? TICDC_DRAIN_TIMEOUT_MS;
  if (begin === undefined || input.now < begin + timeout) return undefined;
  const name = pod.metadata.name!;
  return {
    ok: true,
    event: {
      type: 'Warning',
      reason: 'DrainTimeout',
      message: `${name} did not hand all its tables over within gracefulShutdownTimeout ${settings.gracefulShutdownTimeout ?? '10m'}; ${then}`,
      pod: name,
    },
  };
}

/**
 * A TiCDC capture hands its tables over before its Pod restarts, within `gracefulShutdownTimeout`
 * from the first try (the operator's `tidb.pingcap.com/ticdc-graceful-shutdown-begin-time`); past
 * it, the Pod restarts anyway.
 */
function prepareCapture(input: PlanInput, c: ComponentState, pod: Pod, settings: ComponentSettings): Step {
  const name = pod.metadata.name!;
  if (pod.metadata.annotations?.[TICDC_DRAINED_ANNOTATION] !== undefined) return OK;
  const late = drainTimedOut(input, pod, settings, 'restarting it anyway');
  if (late) return late;
  const ordinal = ordinalOf(name, names.statefulSet(input.cluster.name, c.kind)) ?? 0;
  // The next Pod to restart is the next lower ordinal still at the old revision.
  const update = c.sts.status?.updateRevision;
  const next = [...podsByOrdinal(input.cluster.name, c.kind, c.pods).entries()]
    .filter(([ord, p]) => ord < ordinal && podRevision(p) !== update && !isTerminating(p))
    .sort(([a], [b]) => b - a)[0]?.[1].metadata.name;
  return act(`draining the TiCDC capture of ${name} before its restart`, {
    type: 'drain-capture',
    pod: name,
    next,
    targetVersion: imageTag(c.sts, 'ticdc'),
  });
}

export const ticdcUpgrade: UpgradeChecks = { prepare: prepareCapture };
