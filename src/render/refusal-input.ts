/**
 * Where in its TidbCluster a value refused on a rendered object comes from, so that the refusal names
 * the input to change, with its line: a monitoring label for a label the monitoring labels set, a
 * component's config for its ConfigMap, its annotations or labels for its Pod template's, the
 * component itself for the rest of its objects, and the cluster's name for what belongs to no
 * component; an object rendered from a document beside the cluster (a schedule's CronJob) is that
 * document's. The input checks catch single values first; what is left is a combination (a cluster's
 * and a component's annotations together, a config too large once rendered).
 */
import { parsePath } from '../base/path';
import { formatIssue, type SourceRef } from '../tidbcluster/errors';
import { MONITORING_LABELS_ANNOTATION } from '../tidbcluster/guard-rails';
import { COMPONENTS, names } from '../tidbcluster/names';
import type { Refusal } from './api-check';

/** The cluster a refused object was rendered from, as read. */
export interface RefusalSource {
  readonly source: SourceRef;
  /** @default none (no lines) */
  readonly line?: (path: string) => number | undefined;
  readonly resolved: { readonly name: string; readonly monitoring: { readonly labels: Readonly<Record<string, string>> } };
}

/** The refusal as an input error: `file: document N: <input path> (line L): the API server would refuse <Kind> <name> ...`. */
export function refusalIssue(r: Refusal, cluster: RefusalSource): string {
  const path = refusalInputPath(r, cluster.resolved);
  let line: number | undefined;
  // A field left out (a component without its own annotations) is pointed at by its parent.
  for (let p = path; line === undefined && p !== ''; p = p.includes('.') ? p.slice(0, p.lastIndexOf('.')) : '') line = cluster.line?.(p);
  return formatIssue({ path, line, message: refused(r) }, cluster.source);
}

/** The refusal of an object rendered from a document beside the cluster (a schedule's CronJob...), at that document. */
export function documentRefusalIssue(r: Refusal, doc: { readonly source: SourceRef; line(path: string): number | undefined }): string {
  return formatIssue({ path: 'metadata.name', line: doc.line('metadata.name'), message: refused(r) }, doc.source);
}

const refused = (r: Refusal): string =>
  `the API server would refuse the ${r.kind} ${r.name} rendered from it${r.field !== undefined ? `: ${r.field}` : ''}: ${r.problem}`;

/** The path in the TidbCluster that a refused field of a rendered object comes from. */
export function refusalInputPath(r: Refusal, cluster: RefusalSource['resolved']): string {
  const parts = parsePath(r.field ?? '');
  const label = parts.indexOf('labels');
  const key = label >= 0 ? parts[label + 1] : undefined;
  if (typeof key === 'string' && key in cluster.monitoring.labels)
    return `metadata.annotations[${JSON.stringify(MONITORING_LABELS_ANNOTATION)}]`;
  const base = componentPath(r.name, cluster.name);
  if (base === undefined) return 'metadata.name';
  if (r.kind === 'ConfigMap') return `${base}.config`;
  const template = parts.slice(0, 4).join('.');
  if (template === 'spec.template.metadata.annotations') return `${base}.annotations`;
  if (template === 'spec.template.metadata.labels') return `${base}.labels`;
  return base;
}

/** `spec.<component>` for an object named `<cluster>-<component>[-...]` (`spec.pdms` for a PD micro-service), else undefined. */
function componentPath(name: string, cluster: string): string | undefined {
  if (!name.startsWith(`${cluster}-`) || name === names.initializer(cluster)) return undefined;
  const rest = name.slice(cluster.length + 1);
  const component = [...COMPONENTS].sort((a, b) => b.length - a.length).find((c) => rest === c || rest.startsWith(`${c}-`));
  if (component === undefined) return undefined;
  return component === 'tso' || component === 'scheduling' ? 'spec.pdms' : `spec.${component}`;
}
