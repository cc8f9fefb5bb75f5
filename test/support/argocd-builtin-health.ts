/**
 * Argo CD's built-in StatefulSet health, ported to TypeScript to check the Lua fallback against:
 * getAppsv1StatefulSetHealth in gitops-engine's pkg/health/health_statefulset.go (argoproj/argo-cd
 * v3.5, gitops-engine/pkg/health/). Go reads the object into the typed StatefulSet first: missing
 * numbers are 0, missing strings "", and a missing spec.replicas, rollingUpdate or partition is a nil
 * pointer that skips the comparison needing it.
 */
import type { ArgoStatus, Obj } from './statefulset-health-cases';

export function builtinStatefulSetHealth(sts: Obj): { status: ArgoStatus; message: string } {
  const spec = sts.spec ?? {};
  const status = sts.status ?? {};
  const int = (v: unknown): number => (typeof v === 'number' ? v : 0);
  const replicas: number | undefined = typeof spec.replicas === 'number' ? spec.replicas : undefined;
  const observed = int(status.observedGeneration);
  const ready = int(status.readyReplicas);
  const updated = int(status.updatedReplicas);
  if (observed === 0 || int(sts.metadata?.generation) > observed)
    return { status: 'Progressing', message: 'Waiting for statefulset spec update to be observed...' };
  if (replicas !== undefined && ready < replicas)
    return { status: 'Progressing', message: `Waiting for ${replicas - ready} pods to be ready...` };
  const strategy = spec.updateStrategy ?? {};
  if (strategy.type === 'RollingUpdate' && strategy.rollingUpdate != null) {
    const partition: number | undefined =
      typeof strategy.rollingUpdate.partition === 'number' ? strategy.rollingUpdate.partition : undefined;
    if (replicas !== undefined && partition !== undefined && updated < replicas - partition) {
      return {
        status: 'Progressing',
        message: `Waiting for partitioned roll out to finish: ${updated} out of ${replicas - partition} new pods have been updated...`,
      };
    }
    return { status: 'Healthy', message: `partitioned roll out complete: ${updated} new pods have been updated...` };
  }
  if (strategy.type === 'OnDelete') return { status: 'Healthy', message: `statefulset has ${ready} ready pods` };
  const update = status.updateRevision ?? '';
  if (update !== (status.currentRevision ?? ''))
    return {
      status: 'Progressing',
      message: `waiting for statefulset rolling update to complete ${updated} pods at revision ${update}...`,
    };
  return {
    status: 'Healthy',
    message: `statefulset rolling update complete ${int(status.currentReplicas)} pods at revision ${status.currentRevision ?? ''}...`,
  };
}

/**
 * Argo CD's built-in CronJob health, restated to check the Lua fallback against: its
 * resource_customizations/batch/CronJob/health.lua (argoproj/argo-cd v3.5), whose times compare as
 * RFC 3339 text.
 */
export function builtinCronJobHealth(cj: Obj): { status: string; message: string } {
  if (cj.spec?.suspend === true) return { status: 'Suspended', message: 'CronJob is Suspended' };
  const status = cj.status;
  if (status === undefined || status === null) return { status: 'Progressing', message: 'Waiting for CronJob' };
  if (status.lastScheduleTime === undefined) return { status: 'Healthy', message: 'CronJob has not been scheduled yet' };
  if (status.lastSuccessfulTime === undefined)
    return { status: 'Healthy', message: 'The Cronjob never completed succesfully. It may not be healthy' };
  if ((status.active ?? []).length > 0)
    return { status: 'Healthy', message: 'The job is running. Its last execution may not have been successful' };
  if (status.lastSuccessfulTime < status.lastScheduleTime)
    return { status: 'Degraded', message: 'CronJob has not completed its last execution successfully' };
  return { status: 'Healthy', message: 'CronJob has completed its last execution successfully' };
}
