import { App } from 'cdk8s';
import { TidbClusterChart } from '../chart';
import type { ResolvedCluster } from '../spec/resolve';
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
  const app = new App();
  return clusters.map((resolved) => {
    const chart = new TidbClusterChart(app, clusterId(resolved), { resolved });
    const objects = chartObjects(chart);
    return { fileName: `${clusterId(resolved)}.k8s.yaml`, objects, yaml: toYamlStream(objects) };
  });
}
