import { App } from 'cdk8s';
import { TidbClusterChart } from './chart';
import type { LoadedCluster } from '../tidbcluster/load';
import type { ResolvedCluster } from '../tidbcluster/resolve';
import { ApiRefusalError } from './api-check';
import { outputOrder, toYamlStream } from './output';
import type { ClusterOperations } from '../backup/link';

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
}

/** Chart id and file stem of a cluster: unique per namespace and name (names cannot contain dots). */
export function clusterId(c: Pick<ResolvedCluster, 'name' | 'namespace'>): string {
  return c.namespace ? `${c.namespace}.${c.name}` : c.name;
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
      const objects = outputOrder(chart.objectsAsBuilt());
      return { fileName, objects, yaml: toYamlStream(objects), problems: [] };
    } catch (e) {
      if (!(e instanceof ApiRefusalError)) throw e;
      return { fileName, objects: [], yaml: '', problems: e.problems };
    }
  });
}

/** The problems of rendered clusters as input errors: `file: document N: rendered <Kind> <name>: ...`. */
export function renderProblems(rendered: readonly RenderedCluster[], clusters: readonly LoadedCluster[]): string[] {
  return rendered.flatMap((r, i) => r.problems.map((p) => `${clusters[i].source.file}: document ${clusters[i].source.document}: rendered ${p}`));
}

/** One message per cluster defined twice (same namespace and name), naming both places. */
export function duplicateMessages(clusters: readonly LoadedCluster[]): string[] {
  const seen = new Map<string, LoadedCluster>();
  const out: string[] = [];
  for (const c of clusters) {
    const id = clusterId(c.resolved);
    const first = seen.get(id);
    if (first) {
      const where = (s: LoadedCluster) => `${s.source.file}: document ${s.source.document}`;
      out.push(`${where(c)}: metadata.name: duplicate cluster ${JSON.stringify(id)}, also defined at ${where(first)}`);
    } else {
      seen.set(id, c);
    }
  }
  // A cluster without a namespace lands in whichever namespace its objects are applied to
  // (`kubectl apply -n`, Argo CD's destination): where a namesake has one, the two may be one.
  const namespaced = new Map<string, LoadedCluster>();
  for (const c of clusters) if (c.resolved.namespace && !namespaced.has(c.resolved.name)) namespaced.set(c.resolved.name, c);
  for (const c of clusters) {
    const other = namespaced.get(c.resolved.name);
    if (c.resolved.namespace || !other) continue;
    const where = (s: LoadedCluster) => `${s.source.file}: document ${s.source.document}`;
    out.push(
      `${where(c)}: metadata.namespace: cluster ${JSON.stringify(c.resolved.name)} has no namespace, and one of the same name is in ${JSON.stringify(other.resolved.namespace)} (${where(other)}): ` +
        'applied there, the two would be one; give this one a namespace (metadata.namespace, or -n)',
    );
  }
  return out;
}
