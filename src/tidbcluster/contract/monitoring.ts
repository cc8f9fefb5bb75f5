/**
 * What the Job publishing a cluster's alert rules and dashboards is told: its environment variables,
 * and the JSON the renderer writes into one of them and `tidb-gitops publish-monitoring` reads back.
 */
import { stableJson } from '../../base/stable-json';
import type { ComponentKind } from '../names';

/** The environment variable of the publishing Job holding {@link MonitoringPublishInfo} as JSON. */
export const MONITORING_ENV = 'TIDB_GITOPS_MONITORING';
/** The environment variable of the publishing Job holding the Job's own name. */
export const MONITORING_JOB_ENV = 'TIDB_GITOPS_JOB';

/** What the Job publishing a cluster's alert rules and dashboards is told. */
export interface MonitoringPublishInfo {
  /** The cluster's name (the namespace is the Pod's). */
  readonly cluster: string;
  /** The initializer image the rules and dashboards come from (recorded on what is published). */
  readonly image: string;
  /** The cluster's components: a rule file or dashboard of a component it does not run is left out. */
  readonly components: readonly ComponentKind[];
  /** Publish the alert rules as a PrometheusRule. */
  readonly rules: boolean;
  /** Publish the dashboards as ConfigMaps for Grafana's sidecar. */
  readonly dashboards: boolean;
  /** Labels for everything published. */
  readonly labels: Readonly<Record<string, string>>;
  /** Where the init container copied the image's files. */
  readonly assets: string;
}

/** The value of {@link MONITORING_ENV}: keys sorted, no whitespace. */
export const encodeMonitoringPublishInfo = (info: MonitoringPublishInfo): string => stableJson(info);

/** Reads the value of {@link MONITORING_ENV}; JSON without a cluster, components and assets is refused. */
export function parseMonitoringPublishInfo(text: string): MonitoringPublishInfo {
  const info = JSON.parse(text) as MonitoringPublishInfo;
  if (typeof info.cluster !== 'string' || !Array.isArray(info.components) || typeof info.assets !== 'string')
    throw new Error(`${MONITORING_ENV} is not what the renderer writes`);
  return info;
}
