/**
 * A PodDisruptionBudget kept beside a cluster whose selector takes Pods a rendered budget covers
 * too. The Eviction API refuses to evict a Pod that more than one budget selects: it answers
 * 500 "This pod has more than one PodDisruptionBudget, which the eviction subresource does not
 * support" (kubernetes `pkg/registry/core/pod/storage/eviction.go`), and `kubectl drain`, a cluster
 * autoscaler or a node upgrade retries it for ever. So such a budget is refused, naming both.
 */
import { formatIssue } from '../tidbcluster/errors';
import { LABEL } from '../tidbcluster/names';
import { objectKey, type PassedObject } from './passthrough';

type Obj = Record<string, unknown>;
type Selector = {
  readonly matchLabels?: Record<string, string>;
  readonly matchExpressions?: readonly { key: string; operator: string; values?: string[] }[];
};

const meta = (o: Obj): Obj => (o.metadata ?? {}) as Obj;
const spec = (o: Obj): Obj => (o.spec ?? {}) as Obj;

/**
 * Whether a `policy/v1` budget's selector takes Pods with these labels: a null selector takes none,
 * an empty one every Pod of its namespace (policy/v1's reading; v1beta1's differed).
 */
export function selects(selector: Selector | null | undefined, labels: Readonly<Record<string, string>>): boolean {
  if (selector === undefined || selector === null) return false;
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(labels, e.key);
    const inValues = has && (e.values ?? []).includes(labels[e.key]);
    const ok =
      e.operator === 'In'
        ? inValues
        : e.operator === 'NotIn'
          ? !inValues
          : e.operator === 'Exists'
            ? has
            : e.operator === 'DoesNotExist'
              ? !has
              : false;
    if (!ok) return false;
  }
  return true;
}

/** Objects without a namespace land in whichever one they are applied to: they may meet any. */
const mayShareNamespace = (a: Obj, b: Obj): boolean =>
  meta(a).namespace === undefined || meta(b).namespace === undefined || meta(a).namespace === meta(b).namespace;

/** The Pod labels of each workload rendered beside a budget. */
function podTemplates(objects: readonly Obj[]): { readonly workload: Obj; readonly labels: Record<string, string> }[] {
  return objects
    .filter((o) => o.kind === 'StatefulSet' || o.kind === 'Deployment')
    .map((workload) => ({ workload, labels: (meta((spec(workload).template ?? {}) as Obj).labels ?? {}) as Record<string, string> }));
}

/**
 * One message per kept PodDisruptionBudget and rendered budget whose Pods it also selects, at the kept
 * one's `spec.selector` line.
 */
export function budgetOverlaps(
  rendered: readonly { readonly objects: readonly Obj[]; readonly from: string }[],
  passed: readonly PassedObject[],
): string[] {
  const out: string[] = [];
  const kept = passed.filter((p) => p.object.kind === 'PodDisruptionBudget');
  if (kept.length === 0) return out;
  for (const r of rendered) {
    const pods = podTemplates(r.objects);
    for (const budget of r.objects.filter((o) => o.kind === 'PodDisruptionBudget')) {
      const covered = pods.filter((p) => mayShareNamespace(p.workload, budget) && selects(spec(budget).selector as Selector, p.labels));
      for (const p of kept) {
        if (objectKey(p.object) === objectKey(budget) || !mayShareNamespace(p.object, budget)) continue;
        const both = covered.filter((c) => selects(spec(p.object).selector as Selector, c.labels));
        if (both.length === 0) continue;
        const ns = meta(p.object).namespace !== undefined ? ` in namespace ${String(meta(p.object).namespace)}` : '';
        const workloads = both.map((c) => `${String(c.workload.kind)} ${String(meta(c.workload).name)}`).join(', ');
        const component = ((meta(budget).labels ?? {}) as Record<string, string>)[LABEL.component] ?? 'the component';
        out.push(
          formatIssue(
            {
              path: 'spec.selector',
              line: p.line('spec.selector'),
              message:
                `PodDisruptionBudget ${String(meta(p.object).name)}${ns} selects the Pods of ${workloads}, which PodDisruptionBudget ${String(meta(budget).name)} (${r.from}) covers too: ` +
                'the Eviction API refuses to evict a Pod that two budgets select (HTTP 500, "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support"), ' +
                `so every drain of a Node running one of them stalls; delete this budget, or keep it and turn the rendered one off with tidb-gitops.io/disruption-budgets: "${component}=none"`,
            },
            p.source,
          ),
        );
      }
    }
  }
  return out;
}
