/**
 * `tidb-gitops.io/replace`: Pods of PD, TiKV or TiFlash to replace once, named in Git. A member whose
 * volume died with its node is removed safely (its store taken offline until PD reports it
 * Tombstone, or its PD member deleted), then its Pod and claims are deleted, and the same ordinal
 * comes back on a fresh volume. The controller carries it out (`controller/plan/replace.ts`); the
 * renderer checks the names and hands each component its own in its settings.
 */
import { names, type ComponentKind } from './names';
import type { SpecIssue } from './errors';

export const REPLACE_ANNOTATION = 'tidb-gitops.io/replace';

/** The components whose Pods can be replaced: those that keep data a Pod's volume holds. */
export const REPLACEABLE = ['pd', 'tikv', 'tiflash'] as const;
export type Replaceable = (typeof REPLACEABLE)[number];

/**
 * Reads the annotation: Pod names separated by commas, each `<cluster>-<pd|tikv|tiflash>-<ordinal>`
 * of a component the cluster runs, within its replicas. The names, by component, in ordinal order.
 */
export function replaceRequests(
  annotations: Readonly<Record<string, string>>,
  cluster: string,
  replicas: Readonly<Partial<Record<ComponentKind, number>>>,
  issues: SpecIssue[],
): Partial<Record<Replaceable, string[]>> {
  const text = annotations[REPLACE_ANNOTATION];
  if (text === undefined) return {};
  const path = `metadata.annotations["${REPLACE_ANNOTATION}"]`;
  const out: Partial<Record<Replaceable, string[]>> = {};
  for (const raw of text.split(',')) {
    const pod = raw.trim();
    if (pod === '') continue;
    const kind = REPLACEABLE.find((k) => pod.startsWith(`${names.statefulSet(cluster, k)}-`));
    const ordinal = kind === undefined ? undefined : pod.slice(names.statefulSet(cluster, kind).length + 1);
    const count = kind === undefined ? undefined : replicas[kind];
    if (kind === undefined || ordinal === undefined || !/^(0|[1-9]\d*)$/.test(ordinal)) {
      issues.push({
        path,
        message: `expected Pods of PD, TiKV or TiFlash such as ${names.pod(cluster, 'tikv', 1)}, separated by commas, got ${JSON.stringify(pod)}`,
      });
    } else if (count === undefined) {
      issues.push({ path, message: `${pod}: the cluster runs no ${kind}` });
    } else if (Number(ordinal) >= count) {
      issues.push({
        path,
        message: `${pod}: ${kind} has ${count} replica${count === 1 ? '' : 's'} (ordinals 0 to ${count - 1}), so there is no such Pod to replace`,
      });
    } else if (out[kind]?.includes(pod)) {
      issues.push({ path, message: `${pod} is named twice` });
    } else {
      (out[kind] ??= []).push(pod);
    }
  }
  for (const list of Object.values(out))
    list.sort((a, b) => Number(a.slice(a.lastIndexOf('-') + 1)) - Number(b.slice(b.lastIndexOf('-') + 1)));
  return out;
}
