/**
 * Serialising rendered objects: one YAML stream per cluster, in a stable order (by kind, in the order
 * Helm installs kinds, then in construct order: discovery first, then the components), scripts and TOML
 * as `|` blocks.
 */
import { emitYaml } from '../base/yaml/emit';

/** What a Pod needs exists before the workload that starts it (Helm's install order). */
const KIND_ORDER = [
  'NetworkPolicy',
  'PodDisruptionBudget',
  'ServiceAccount',
  'ConfigMap',
  'ClusterRole',
  'ClusterRoleBinding',
  'Role',
  'RoleBinding',
  'Service',
  'Deployment',
  'StatefulSet',
];

function kindRank(kind: unknown): number {
  const i = KIND_ORDER.indexOf(String(kind));
  return i < 0 ? KIND_ORDER.length : i;
}

/** A chart's objects in output order (the sort is stable: construct order within a kind). */
export function outputOrder(objects: readonly Record<string, unknown>[]): Record<string, unknown>[] {
  return objects
    .map((o, i) => ({ o, i }))
    .sort((a, b) => kindRank(a.o.kind) - kindRank(b.o.kind) || a.i - b.i)
    .map(({ o }) => o);
}

/** A multi-document YAML stream (`---` before every document). */
export function toYamlStream(objects: readonly unknown[]): string {
  return objects.map((o) => `---\n${emitYaml(o)}`).join('');
}
