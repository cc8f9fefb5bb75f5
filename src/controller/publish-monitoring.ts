/**
 * `tidb-gitops publish-monitoring`: the container of a cluster's monitoring Job. Reads the rule files
 * and dashboards its init container copied from PingCAP's `tidb-monitor-initializer` image, and applies
 * the cluster's PrometheusRule and dashboard ConfigMaps (server-side apply), each owned by the Job, so
 * that Kubernetes removes them with it. Runs once per release; running it again changes nothing.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { publish, PUBLISH_FIELD_MANAGER, type AssetFile } from '../monitoring/publish';
import { MONITORING_API } from '../monitoring/crds';
import { JOB_NAME_LABEL } from '../tidbcluster/names';
import {
  CONTROLLER_ENV,
  MONITORING_ENV,
  MONITORING_JOB_ENV,
  parseMonitoringPublishInfo,
  type MonitoringPublishInfo,
} from '../tidbcluster/contract';
import { APPLY_PATCH } from './clients/kube';
import { describe } from './clients/kube-errors';
import { API, KubeRest, loadKubeTarget, namespacedPath } from './clients/kube-rest';

const USAGE = `Usage: tidb-gitops publish-monitoring [--kubeconfig FILE]

Publishes a cluster's alert rules (a PrometheusRule) and Grafana dashboards (ConfigMaps) from the
files of PingCAP's tidb-monitor-initializer image. Run by the cluster's rendered monitoring Job, which
sets ${MONITORING_ENV}, ${MONITORING_JOB_ENV} and ${CONTROLLER_ENV.podNamespace}.
`;

interface Io {
  readonly env: NodeJS.ProcessEnv;
  readonly out: (line: string) => void;
}

function readInfo(env: NodeJS.ProcessEnv): MonitoringPublishInfo {
  const text = env[MONITORING_ENV];
  if (!text) throw new Error(`${MONITORING_ENV} is not set`);
  return parseMonitoringPublishInfo(text);
}

/** The image's files: every rule file and dashboard in the assets folder. */
export function readAssets(dir: string): AssetFile[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.rules.yml') || name.endsWith('.json'))
    .sort()
    .map((name) => ({ name, text: readFileSync(join(dir, name), 'utf8') }));
}

/** Whether the API server serves PrometheusRules (discovery, which every authenticated account may read). */
async function servesPrometheusRules(rest: KubeRest): Promise<boolean> {
  try {
    const list = await rest.request<{ resources?: { name?: string }[] }>('GET', `/${API.monitoring}`);
    return (list.resources ?? []).some((r) => r.name === 'prometheusrules');
  } catch (err) {
    if ((err as { code?: number }).code === 404) return false;
    throw err;
  }
}

export async function publishMonitoring(
  args: readonly string[],
  io: Io = { env: process.env, out: (l) => process.stdout.write(`${l}\n`) },
): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    io.out(USAGE);
    return 0;
  }
  const at = args.indexOf('--kubeconfig');
  const kubeconfig = at >= 0 ? args[at + 1] : undefined;
  let rest: KubeRest | undefined;
  try {
    const info = readInfo(io.env);
    const namespace = io.env[CONTROLLER_ENV.podNamespace];
    const jobName = io.env[MONITORING_JOB_ENV];
    if (!namespace) throw new Error(`${CONTROLLER_ENV.podNamespace} is not set`);
    if (!jobName) throw new Error(`${MONITORING_JOB_ENV} is not set (the Job's Pod label ${JOB_NAME_LABEL})`);
    const files = readAssets(info.assets);
    if (files.length === 0)
      throw new Error(`no rule file or dashboard in ${info.assets}: is ${info.image} a tidb-monitor-initializer image?`);
    rest = new KubeRest(loadKubeTarget(kubeconfig));
    const job = await rest.request<{ metadata?: { uid?: string } }>('GET', namespacedPath(API.batch, namespace, 'jobs', jobName));
    const uid = job.metadata?.uid;
    if (!uid) throw new Error(`Job ${jobName} has no uid`);
    const out = publish(files, info, namespace, { name: jobName, uid });
    for (const s of out.skipped) io.out(`skipped ${s}`);
    const apply = (path: string, body: unknown) =>
      rest!.request('PATCH', path, { body, contentType: APPLY_PATCH, query: { fieldManager: PUBLISH_FIELD_MANAGER, force: true } });
    for (const cm of out.dashboards) {
      const name = (cm.metadata as { name: string }).name;
      await apply(namespacedPath(API.core, namespace, 'configmaps', name), cm);
      io.out(`applied ConfigMap ${name}`);
    }
    if (out.rules) {
      const name = (out.rules.metadata as { name: string }).name;
      const groups = (out.rules.spec as { groups: { rules: unknown[] }[] }).groups;
      if (await servesPrometheusRules(rest)) {
        await apply(namespacedPath(API.monitoring, namespace, 'prometheusrules', name), out.rules);
        io.out(`applied PrometheusRule ${name} (${groups.length} groups, ${groups.reduce((n, g) => n + g.rules.length, 0)} rules)`);
      } else {
        // Not a failure: the dashboards are published, and a failed Job would only retry in vain.
        io.out(
          `skipped PrometheusRule ${name}: the cluster does not serve ${MONITORING_API} prometheusrules (the Prometheus Operator's CRDs are not installed); ` +
            `install them, then delete Job ${jobName} so that it is applied and runs again, or turn the alert rules off`,
        );
      }
    }
    io.out(`published the monitoring of ${namespace}/${info.cluster} from ${info.image}`);
    return 0;
  } catch (err) {
    const e = err as { code?: number; body?: unknown };
    const hint =
      e.code === 404 && String(e.body ?? '').includes('prometheusrules')
        ? ' (is Prometheus Operator, with its PrometheusRule CRD, installed?)'
        : '';
    io.out(`tidb-gitops publish-monitoring: ${describe(err)}${hint}`);
    return 1;
  } finally {
    rest?.close();
  }
}
