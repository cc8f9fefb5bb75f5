/**
 * A cluster's monitoring where the Prometheus Operator's CRDs may be missing. Its PodMonitors are
 * objects of the operator's kinds, applied with the cluster; its PrometheusRule is written at run time
 * by the publishing Job; its dashboards are ConfigMaps, which need nothing. A GitOps tool refuses a
 * whole sync for one object of a kind the cluster does not serve (Argo CD's dry run, Flux's
 * server-side dry run), so a missing CRD must never reach the cluster's objects ("a guard rail never
 * blocks a sync"):
 *
 * - known not to be served (the render was told the target's APIs): what needs the CRDs is left out,
 *   with a warning, and the rest (the dashboards) is still rendered;
 * - not known: everything is rendered, and the PodMonitors go in a later Argo CD sync wave with Argo
 *   CD's dry run skipped while their CRD is missing, so that Argo CD applies the cluster first.
 *
 * Left out, not refused: an error would block the cluster's sync, which is the very thing to avoid.
 */
import { apiAvailability, type ApiAvailability } from '../tidbcluster/api-versions';
import { MONITORING_ANNOTATION } from '../tidbcluster/guard-rails';
import type { ResolvedCluster } from '../tidbcluster/resolve';
import type { ClusterMonitoring } from './types';

/** The Prometheus Operator's API group version, of PodMonitor and PrometheusRule. */
export const MONITORING_API = 'monitoring.coreos.com/v1';

/** Argo CD's annotations on an object of a kind the target may not serve. */
export const ARGOCD_SYNC_WAVE = 'argocd.argoproj.io/sync-wave';
export const ARGOCD_SYNC_OPTIONS = 'argocd.argoproj.io/sync-options';
/** After every object of the cluster, which are in Argo CD's default wave, 0. */
export const CRD_KINDS_SYNC_WAVE = '1';

/**
 * The annotations of a PodMonitor whose CRD the target may lack: a later sync wave, and no dry run
 * while the CRD is missing (Argo CD's SkipDryRunOnMissingResource), so that the cluster's objects are
 * applied first and a missing CRD fails only this wave.
 */
export function unknownCrdAnnotations(): Record<string, string> {
  return { [ARGOCD_SYNC_WAVE]: CRD_KINDS_SYNC_WAVE, [ARGOCD_SYNC_OPTIONS]: 'SkipDryRunOnMissingResource=true' };
}

/** Whether the target serves what the monitoring needs: the PodMonitor kind, the PrometheusRule kind. */
export function monitoringApis(cluster: Pick<ResolvedCluster, 'apiVersions'>): { podMonitors: ApiAvailability; rules: ApiAvailability } {
  return {
    podMonitors: apiAvailability(cluster.apiVersions, MONITORING_API, 'PodMonitor'),
    rules: apiAvailability(cluster.apiVersions, MONITORING_API, 'PrometheusRule'),
  };
}

/** The monitoring asked for, before it is fitted to the target. */
export type AskedMonitoring = Omit<ClusterMonitoring, 'podMonitors' | 'leftOut'>;

/** The monitoring asked for, less what needs a CRD the target is known not to serve, and what that was. */
export function fitToTarget(cluster: Pick<ResolvedCluster, 'apiVersions'>, asked: AskedMonitoring): ClusterMonitoring {
  const apis = monitoringApis(cluster);
  const dropRules = asked.rules && apis.rules === 'missing';
  const leftOut = [
    ...(apis.podMonitors === 'missing' ? ['its PodMonitors'] : []),
    ...(dropRules ? ['the PrometheusRule of its alert rules'] : []),
  ];
  return { ...asked, rules: asked.rules && !dropRules, podMonitors: apis.podMonitors, leftOut };
}

/**
 * The warning for a cluster whose monitoring was cut down to what the target serves, or undefined:
 * the cluster, what was left out, what still is published, and the two ways out.
 */
export function missingCrdWarning(cluster: Pick<ResolvedCluster, 'name' | 'namespace'>, monitoring: ClusterMonitoring): string | undefined {
  if (monitoring.leftOut.length === 0) return undefined;
  const id = cluster.namespace ? `${cluster.namespace}/${cluster.name}` : cluster.name;
  const still = monitoring.dashboards ? '; its Grafana dashboards are still published' : '';
  const off =
    monitoring.source === MONITORING_ANNOTATION
      ? `remove the ${MONITORING_ANNOTATION} annotation`
      : `remove ${monitoring.source} (or this cluster from its spec.clusters)`;
  return (
    `warning: cluster ${id} asks for monitoring (${monitoring.source}), but the target cluster does not serve ${MONITORING_API}, ` +
    `the Prometheus Operator's API (so say the API versions given: the apiVersions setting, or Argo CD's KUBE_API_VERSIONS). ` +
    `Left out, so that the cluster still syncs: ${monitoring.leftOut.join(' and ')}${still}. ` +
    `To fix it, install the Prometheus Operator's CRDs and render again, or turn monitoring off: ${off}`
  );
}
