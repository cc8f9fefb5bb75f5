import { App } from 'cdk8s';
import { TidbClusterChart } from './chart';
import type { LoadedCluster } from '../tidbcluster/load';
import type { ResolvedCluster } from '../tidbcluster/resolve';
import { ApiRefusalError } from './api-check';
import { outputOrder, toYamlStream } from './output';
import type { ClusterOperations } from '../backup/link';
import { clusterId } from '../load/clusters';

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
