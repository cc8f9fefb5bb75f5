import { App } from 'cdk8s';
import { TidbClusterChart } from '../chart';
import type { LoadedCluster } from '../tidbcluster/load';
import type { ResolvedCluster } from '../tidbcluster/resolve';
import { chartObjects, toYamlStream } from './output';

export interface RenderedCluster {
  /** `<name>.k8s.yaml`, or `<namespace>.<name>.k8s.yaml` for a namespaced cluster. */
  readonly fileName: string;
  readonly objects: Record<string, unknown>[];
  readonly yaml: string;
}

/** Chart id and file stem of a cluster: unique per namespace and name (names cannot contain dots). */
export function clusterId(c: Pick<ResolvedCluster, 'name' | 'namespace'>): string {
  return c.namespace ? `${c.namespace}.${c.name}` : c.name;
}

/** Renders resolved clusters in memory; nothing is written. */
export function renderClusters(clusters: readonly ResolvedCluster[]): RenderedCluster[] {
  return clusters.map((resolved) => {
    // An App per cluster: clusters share nothing, and cdk8s walks every chart of an App when it
    // synthesizes one, which made rendering N clusters cost N².
    const chart = new TidbClusterChart(new App(), clusterId(resolved), { resolved });
    const objects = chartObjects(chart);
    return { fileName: `${clusterId(resolved)}.k8s.yaml`, objects, yaml: toYamlStream(objects) };
  });
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
  return out;
}
