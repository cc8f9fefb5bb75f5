/**
 * Risks of a change to the cluster's monitoring: turned off (the PodMonitors go, and pruning the
 * publishing Job removes the alert rules and dashboards it owns), or its rules and dashboards replaced
 * by another release's (a new Job publishes them; the old Job's go with it). Read from the rendered
 * PodMonitors and the publishing Job's `TIDB_GITOPS_MONITORING`.
 */
import { MONITORING_ENV, parseMonitoringPublishInfo, type MonitoringPublishInfo } from '../tidbcluster/contract';
import { kindOf, nameOf, type ClusterModel } from './model';
import { RISK, type Risk } from './report';

interface Monitoring {
  readonly monitors: number;
  readonly job?: { readonly name: string; readonly info?: MonitoringPublishInfo };
}

function monitoringOf(cluster: ClusterModel | undefined): Monitoring {
  let monitors = 0;
  let job: Monitoring['job'];
  for (const o of cluster?.objects.values() ?? []) {
    if (kindOf(o) === 'PodMonitor') monitors++;
    if (kindOf(o) !== 'Job') continue;
    const containers =
      (o as { spec?: { template?: { spec?: { containers?: { env?: { name?: string; value?: string }[] }[] } } } }).spec?.template?.spec
        ?.containers ?? [];
    const value = containers.flatMap((c) => c.env ?? []).find((e) => e.name === MONITORING_ENV)?.value;
    if (value === undefined) continue;
    try {
      job = { name: nameOf(o), info: parseMonitoringPublishInfo(value) };
    } catch {
      job = { name: nameOf(o) };
    }
  }
  return { monitors, ...(job && { job }) };
}

const published = (info: MonitoringPublishInfo | undefined) =>
  [info?.rules && 'alert rules', info?.dashboards && 'dashboards'].filter(Boolean).join(' and ') || 'nothing';

export function monitoringRisks(before: ClusterModel | undefined, after: ClusterModel): Risk[] {
  const was = monitoringOf(before);
  const now = monitoringOf(after);
  if (was.monitors > 0 && now.monitors === 0) {
    const what = was.job
      ? `; pruning the Job ${was.job.name} removes the ${published(was.job.info)} it published (they name it as their owner)`
      : '';
    return [
      {
        id: RISK.monitoring,
        component: 'monitoring',
        message: `Monitoring is turned off: the PodMonitors go, so Prometheus stops scraping the cluster${what}.`,
      },
    ];
  }
  if (!was.job || !now.job || was.job.name === now.job.name) {
    if (was.job && !now.job && now.monitors > 0) {
      return [
        {
          id: RISK.monitoring,
          component: 'monitoring',
          message: `The ${published(was.job.info)} go: pruning the Job ${was.job.name} removes what it published.`,
        },
      ];
    }
    return [];
  }
  const from = was.job.info?.image;
  const to = now.job.info?.image;
  const what = published(now.job.info);
  const release = from !== to && from && to ? `The ${what} of ${to} replace those of ${from}` : `The ${what} are published again`;
  return [
    {
      id: RISK.monitoring,
      component: 'monitoring',
      message: `${release}: the new Job ${now.job.name} publishes them, and what only the old Job ${was.job.name} published goes when it is pruned.`,
    },
  ];
}
