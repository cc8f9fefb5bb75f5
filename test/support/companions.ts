/**
 * A cluster with the documents beside it (Backups, schedules, Restores, a TidbInitializer), rendered
 * as the CLI renders them and checked against the schema of the real API server's version, for the
 * real-API suites' worlds.
 */
import { stringify } from 'yaml';
import { loadInputs } from '../../src/backup/companions';
import { linkOperations } from '../../src/backup/link';
import { renderClusters } from '../../src/render/render';
import { assertValidK8sObjects } from './k8s-schema';

type Obj = Record<string, any>;

export function renderWith(...documents: Obj[]) {
  return (cluster: Obj): Obj[] => {
    const loaded = loadInputs([cluster, ...documents].map((d) => stringify(d)).join('---\n'), 'in.yaml');
    const linked = linkOperations(loaded.clusters, loaded.documents);
    const errors = [...loaded.errors.map((e) => e.message), ...linked.errors];
    if (errors.length > 0) throw new Error(errors.join('\n'));
    const objects = renderClusters(
      loaded.clusters.map((c) => c.resolved),
      linked.operations,
    ).flatMap((r) => r.objects);
    assertValidK8sObjects(objects, '1.32');
    return objects;
  };
}
