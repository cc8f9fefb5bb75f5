/**
 * `tidb-gitops status [CLUSTER] [-n NS]`, also `kubectl tidb-gitops status` (the `kubectl-tidb_gitops`
 * plugin binary): where a cluster stands, read from the API server with the user's kubeconfig. It
 * reads, never writes: the controller's `<cluster>-status` ConfigMap, the StatefulSets, the
 * controller's Deployment and the namespace's Warning Events (`get` and `list` on those are enough).
 * Loaded in a bundle of its own, so `render` never pays for the Kubernetes client.
 */
import { API, KubeHttpError, KubeRest, loadKubeTarget, namespacedPath, type KubeTarget } from '../controller/clients/kube-rest';
import { LABEL, LABEL_VALUE, names } from '../tidbcluster/names';
import { DNS1123_LABEL } from '../base/patterns';
import { statusReport, statusText, type StatusDocument, type StatusReport } from './status-report';

export const STATUS_USAGE = `Usage: tidb-gitops status [CLUSTER] [options]
       kubectl tidb-gitops status [CLUSTER] [options]

Where a cluster stands, read from the API server with your kubeconfig: each
component's phase, readiness and version, the PD leader, the stores, what the
controller does or waits for (and what is stuck), the last backups, the log
backups' checkpoint lag, the initializer, and the last hour's Warning Events.
Without CLUSTER, every cluster of the namespace.

Options:
  -n, --namespace NS   The cluster's namespace (default: the kubeconfig
                       context's, else default).
      --kubeconfig FILE
                       The kubeconfig (default: $KUBECONFIG, then
                       ~/.kube/config); its current context is used.
  -o, --output FORMAT  text (default) or json. With CLUSTER, json prints the
                       cluster's report; without, {"clusters": [...]}.
  -h, --help           Show this help.

Exit status: 0 all is well, 1 the cluster cannot be read, 2 usage error,
3 something is stuck or failing (listed under Problems).
`;

/** What `status` is asked. */
export interface StatusOptions {
  /** @default every cluster of the namespace */
  readonly cluster?: string;
  /** @default the kubeconfig context's namespace, else `default` */
  readonly namespace?: string;
  /** @default `$KUBECONFIG`, then `~/.kube/config` */
  readonly kubeconfig?: string;
  /** @default 'text' */
  readonly output: 'text' | 'json';
  readonly help?: boolean;
}

/** The exit status of a report: 3 when something is stuck or failing. */
export const STATUS_PROBLEMS = 3;

/** Returns the options, or what is wrong with the arguments. */
export function parseStatusArgs(args: readonly string[]): StatusOptions | string {
  let cluster: string | undefined;
  let namespace: string | undefined;
  let kubeconfig: string | undefined;
  let output: 'text' | 'json' = 'text';
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const [flag, inline] =
      arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = (): string | undefined => inline ?? args[++i];
    switch (flag) {
      case '-h':
      case '--help':
        return { output, help: true };
      case '-n':
      case '--namespace': {
        const v = value();
        if (!v) return `${flag} needs a namespace`;
        if (!DNS1123_LABEL.test(v)) return `${flag}: ${JSON.stringify(v)} is not a namespace name (lowercase letters, digits and -)`;
        namespace = v;
        break;
      }
      case '--kubeconfig': {
        const v = value();
        if (!v) return '--kubeconfig needs a file';
        kubeconfig = v;
        break;
      }
      case '-o':
      case '--output': {
        const v = value();
        if (v !== 'text' && v !== 'json') return `${flag} takes text or json, got ${JSON.stringify(v ?? '')}`;
        output = v;
        break;
      }
      default:
        if (arg.startsWith('-')) return `unknown option ${arg}`;
        if (cluster !== undefined) return `one cluster at a time: ${JSON.stringify(cluster)} and ${JSON.stringify(arg)} given`;
        cluster = arg;
    }
  }
  return { cluster, namespace, kubeconfig, output };
}

/** Where `status` writes. */
export interface StatusIo {
  readonly stdout: (s: string) => void;
  readonly stderr: (s: string) => void;
  readonly env?: NodeJS.ProcessEnv;
}

/** Runs `status`; resolves with the exit status. */
export async function statusMain(
  args: readonly string[],
  io: StatusIo,
  deps: { readonly target?: KubeTarget; readonly now?: () => number } = {},
): Promise<number> {
  const opts = parseStatusArgs(args);
  if (typeof opts === 'string') {
    io.stderr(`tidb-gitops status: ${opts}\n\n${STATUS_USAGE}`);
    return 2;
  }
  if (opts.help) {
    io.stdout(STATUS_USAGE);
    return 0;
  }
  let target: KubeTarget;
  try {
    target = deps.target ?? loadKubeTarget(opts.kubeconfig, io.env ?? process.env);
  } catch (e) {
    io.stderr(`tidb-gitops status: ${(e as Error).message}\n`);
    return 1;
  }
  const kube = new KubeRest(target);
  const namespace = opts.namespace ?? target.namespace ?? 'default';
  const now = deps.now ?? Date.now;
  try {
    const clusters = opts.cluster !== undefined ? [opts.cluster] : await clustersOf(kube, namespace);
    if (clusters.length === 0) {
      io.stderr(
        `tidb-gitops status: no cluster run by tidb-gitops in namespace ${namespace} (no <cluster>-discovery Deployment); name one, or give -n\n`,
      );
      return 1;
    }
    const reports: StatusReport[] = [];
    for (const cluster of clusters) {
      const report = await readReport(kube, namespace, cluster, now());
      if (!report) {
        io.stderr(
          `tidb-gitops status: no cluster ${cluster} in namespace ${namespace}: no ${names.discovery(cluster)} Deployment, StatefulSet or ${names.status(cluster)} ConfigMap\n`,
        );
        return 1;
      }
      reports.push(report);
    }
    if (opts.output === 'json') io.stdout(`${JSON.stringify(opts.cluster !== undefined ? reports[0] : { clusters: reports }, null, 2)}\n`);
    else io.stdout(reports.map((r) => statusText(r, now())).join('\n'));
    return reports.some((r) => r.problems.length > 0) ? STATUS_PROBLEMS : 0;
  } catch (e) {
    io.stderr(`tidb-gitops status: ${readError(e, namespace)}\n`);
    return 1;
  }
}

/** The clusters of a namespace: those whose controller Deployment the renderer made. */
async function clustersOf(kube: KubeRest, namespace: string): Promise<string[]> {
  const selector = `${LABEL.component}=discovery,${LABEL.managedBy}=${LABEL_VALUE.managedBy}`;
  const list = await kube.request<{ items?: { metadata: { name: string } }[] }>('GET', namespacedPath(API.apps, namespace, 'deployments'), {
    query: { labelSelector: selector },
  });
  return (list.items ?? [])
    .map((d) => d.metadata.name)
    .filter((n) => n.endsWith('-discovery'))
    .map((n) => n.slice(0, -'-discovery'.length))
    .sort();
}

/** Reads one cluster's objects; undefined when it has none. */
async function readReport(kube: KubeRest, namespace: string, cluster: string, now: number): Promise<StatusReport | undefined> {
  const get = async (group: string, resource: string, name: string) => {
    try {
      return await kube.request('GET', namespacedPath(group, namespace, resource, name));
    } catch (e) {
      if (e instanceof KubeHttpError && e.code === 404) return undefined;
      throw e;
    }
  };
  const [statusCm, controller, stsList, events] = await Promise.all([
    get(API.core, 'configmaps', names.status(cluster)),
    get(API.apps, 'deployments', names.discovery(cluster)),
    kube.request('GET', namespacedPath(API.apps, namespace, 'statefulsets'), {
      query: { labelSelector: `${LABEL.managedBy}=${LABEL_VALUE.managedBy}` },
    }),
    kube.request('GET', namespacedPath(API.core, namespace, 'events'), { query: { fieldSelector: 'type=Warning' } }),
  ]);
  const statefulSets = ((stsList?.items ?? []) as Record<string, any>[]).filter((s) =>
    String(s.metadata?.name ?? '').startsWith(`${cluster}-`),
  );
  if (!statusCm && !controller && statefulSets.length === 0) return undefined;
  return statusReport({ cluster, namespace, doc: statusDocOf(statusCm), statefulSets, controller, events: events?.items ?? [], now });
}

/** `status.json` of the status ConfigMap; undefined when missing or not JSON. */
function statusDocOf(cm: Record<string, any> | undefined): StatusDocument | undefined {
  const text = cm?.data?.['status.json'];
  if (typeof text !== 'string') return undefined;
  try {
    const doc = JSON.parse(text) as unknown;
    return typeof doc === 'object' && doc !== null ? (doc as StatusDocument) : undefined;
  } catch {
    return undefined;
  }
}

/** A failed read in words: what was refused, and what to do. */
function readError(e: unknown, namespace: string): string {
  if (e instanceof KubeHttpError) {
    if (e.code === 401) return `the API server does not accept your credentials (HTTP 401): ${e.message}`;
    if (e.code === 403)
      return `your account may not read namespace ${namespace} (HTTP 403): ${e.message}; status needs get and list on configmaps, deployments, statefulsets and events`;
    return `the API server refused: ${e.message}`;
  }
  return `cannot reach the API server: ${(e as Error).message}`;
}
