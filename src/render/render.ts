import { ApiObject, App, Chart } from 'cdk8s';
import type { IConstruct } from 'constructs';
import { TidbClusterChart } from './chart';
import type { LoadedCluster, LoadedDocument } from '../tidbcluster/load';
import type { ResolvedCluster } from '../tidbcluster/resolve';
import { ApiRefusalError, type Refusal } from './api-check';
import { documentRefusalIssue, refusalIssue } from './refusal-input';
import { outputOrder, toYamlStream } from './output';
import type { ClusterOperations } from '../backup/link';
import { operationJobName } from '../backup/resolve';
import { clusterId } from '../load/clusters';

/** The input document a rendered object comes from: the cluster's own, or one beside it. */
export interface RenderedOrigin {
  readonly kind: 'TidbCluster' | 'Backup' | 'BackupSchedule' | 'Restore' | 'TidbInitializer' | 'TidbMonitor';
  readonly name: string;
}

/** A problem of a rendered object, with the document the object comes from. */
export interface RenderedRefusal extends Refusal {
  readonly origin: RenderedOrigin;
}

export interface RenderedCluster {
  /** `<name>.k8s.yaml`, or `<namespace>.<name>.k8s.yaml` for a namespaced cluster. */
  readonly fileName: string;
  readonly objects: Record<string, unknown>[];
  readonly yaml: string;
  /**
   * What the API server would refuse in `objects`, one line each (`<Kind> <name>: <field>: <why>`).
   * The input checks catch these first; a line here means a combination only the output shows.
   */
  readonly problems: readonly string[];
  /** The same problems, each with its object, field and the document it comes from. @default none */
  readonly refusals?: readonly RenderedRefusal[];
  /** The document each of `objects` (same index) comes from. */
  readonly origins: readonly RenderedOrigin[];
}

/**
 * Renders resolved clusters in memory; nothing is written. `operations[i]` are cluster i's backups and
 * schedules (`linkOperations`).
 */
export function renderClusters(clusters: readonly ResolvedCluster[], operations: readonly ClusterOperations[] = []): RenderedCluster[] {
  return clusters.map((resolved, i) => {
    // An App per cluster: clusters share nothing, and cdk8s walks every chart of an App when it
    // synthesizes one, which made rendering N clusters cost N².
    const chart = new TidbClusterChart(new App(), clusterId(resolved), { resolved, ...(operations[i] && { operations: operations[i] }) });
    const fileName = `${clusterId(resolved)}.k8s.yaml`;
    try {
      const built = chart.objectsAsBuilt();
      const origin = originsOf(chart, built, resolved.name, operations[i]);
      const objects = outputOrder(built);
      return { fileName, objects, yaml: toYamlStream(objects), problems: [], origins: objects.map((o) => origin.get(o)!) };
    } catch (e) {
      if (!(e instanceof ApiRefusalError)) throw e;
      // The construct under the cluster's that made a refused object tells its document (see originsOf).
      const { own, byId } = documentOrigins(resolved.name, operations[i]);
      const under = `${chart.cluster.node.path}/`;
      const origin = (c: string | undefined) => (c?.startsWith(under) && byId.get(c.slice(under.length).split('/')[0])) || own;
      return {
        fileName,
        objects: [],
        yaml: '',
        problems: e.problems,
        refusals: e.refusals.map((x) => ({ ...x, origin: origin(x.construct) })),
        origins: [],
      };
    }
  });
}

/**
 * The problems of rendered clusters as input errors, each at the path of the cluster it comes from
 * (`refusal-input.ts`): `file: document N: path (line L): the API server would refuse <Kind> <name> ...`.
 */
export function renderProblems(
  rendered: readonly RenderedCluster[],
  clusters: readonly LoadedCluster[],
  documents: readonly LoadedDocument<{ readonly kind: string; readonly name: string; readonly namespace?: string }>[] = [],
): string[] {
  return rendered.flatMap((r, i) => {
    if (!r.refusals) return r.problems.map((p) => `${clusters[i].source.file}: document ${clusters[i].source.document}: rendered ${p}`);
    const ns = clusters[i].resolved.namespace;
    return r.refusals.map((x) => {
      // An object rendered from a document beside the cluster is that document's to change.
      const doc =
        x.origin.kind === 'TidbCluster'
          ? undefined
          : documents.find((d) => d.value.kind === x.origin.kind && d.value.name === x.origin.name && (d.value.namespace ?? ns) === ns);
      return doc ? documentRefusalIssue(x, doc) : refusalIssue(x, clusters[i]);
    });
  });
}

/**
 * Which document each object of the chart comes from, by the construct that made it: the cluster's
 * construct holds one child per document beside it (`schedule-<name>`, the operation's Job name,
 * `initializer`, `monitoring`; see TidbCluster), and the rest is the cluster's own. A schedule's log
 * backup comes from its schedule. `built` is in the chart's construct order (`objectsAsBuilt`).
 */
function originsOf(
  chart: TidbClusterChart,
  built: readonly Record<string, unknown>[],
  cluster: string,
  ops: ClusterOperations | undefined,
): Map<Record<string, unknown>, RenderedOrigin> {
  const { own, byId } = documentOrigins(cluster, ops);
  const made = chart.node.findAll().filter((c) => c instanceof ApiObject && Chart.of(c) === chart);
  const top = (c: IConstruct): IConstruct => (c.node.scope === undefined || c.node.scope === chart.cluster ? c : top(c.node.scope));
  return new Map(built.map((o, i) => [o, (made.length === built.length && byId.get(top(made[i]).node.id)) || own]));
}

/** The cluster's own origin, and the document of each construct under the cluster's, by its id. */
function documentOrigins(cluster: string, ops: ClusterOperations | undefined): { own: RenderedOrigin; byId: Map<string, RenderedOrigin> } {
  const own: RenderedOrigin = { kind: 'TidbCluster', name: cluster };
  const byId = new Map<string, RenderedOrigin>();
  for (const s of ops?.schedules ?? []) byId.set(`schedule-${s.name}`, { kind: 'BackupSchedule', name: s.name });
  for (const op of [...(ops?.backups ?? []), ...(ops?.restores ?? [])]) {
    const schedule = ops?.schedules.find((s) => s.logBackup?.name === op.name && op.kind === 'Backup');
    byId.set(operationJobName(op), schedule ? { kind: 'BackupSchedule', name: schedule.name } : { kind: op.kind, name: op.name });
  }
  if (ops?.initializer) byId.set('initializer', { kind: 'TidbInitializer', name: ops.initializer.name });
  if (ops?.monitor) byId.set('monitoring', { kind: 'TidbMonitor', name: ops.monitor.name });
  return { own, byId };
}
