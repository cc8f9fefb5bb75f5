/**
 * One budget for every store of one PD. A TidbCluster with `spec.cluster` joins another's PD: its
 * TiKV (and TiFlash) stores hold replicas of the same regions as the other's, so a budget per
 * cluster would let a drain take one store of each at once, two replicas of one region. Among the
 * clusters of a render, the budget of the first cluster of the PD that has one (the PD's own cluster
 * first, then those joining it, in input order) counts the Pods of all of them in its namespace (its
 * selector takes their `app.kubernetes.io/instance` values); the others render none.
 *
 * A PodDisruptionBudget selects Pods of its own namespace only, and the render holds only its
 * inputs: a cluster that joins a PD in another namespace, or one this render does not hold, cannot
 * be counted with it, and keeps a budget of its own, with a warning that says so.
 *
 * Pure: reads the loaded clusters, returns them with their budgets moved, and the messages.
 */
import { formatIssue, type SpecIssue } from './errors';
import { DISRUPTION_BUDGETS_ANNOTATION, type DisruptionBudget } from './guard-rails';
import { checkBudgetQuorum, maxReplicas } from './budget-quorum';
import type { LoadedCluster } from './load';
import type { ResolvedCluster } from './resolve';

/** The components whose stores hold replicas of the PD's regions. */
const STORE_KINDS = ['tikv', 'tiflash'] as const;
const ANNOTATION_PATH = `metadata.annotations["${DISRUPTION_BUDGETS_ANNOTATION}"]`;

export interface BudgetGroups {
  readonly clusters: LoadedCluster[];
  /** `file: document N: path (line L): message`, one per problem. */
  readonly errors: string[];
  /** `file: document N: path (line L): warning: ...`. */
  readonly warnings: string[];
}

const pdOf = (c: ResolvedCluster): string =>
  c.joinCluster ? `${c.joinCluster.namespace ?? ''}/${c.joinCluster.name}` : `${c.namespace ?? ''}/${c.name}`;
const describe = (c: ResolvedCluster): string => `${c.name}${c.namespace ? ` (namespace ${c.namespace})` : ''}`;

/** Moves the store budgets of clusters that share a PD onto one, and says where that cannot be. */
export function groupStoreBudgets(loaded: readonly LoadedCluster[]): BudgetGroups {
  const errors: string[] = [];
  const warnings: string[] = [];
  const budgets = loaded.map((l) => ({ ...l.resolved.disruptionBudgets }) as Record<string, DisruptionBudget | undefined>);
  const at = (i: number, issue: SpecIssue, into: string[], warning = false) =>
    into.push(
      formatIssue(
        { ...issue, line: loaded[i].line?.(issue.path), ...(warning && { message: `warning: ${issue.message}` }) },
        loaded[i].source,
      ),
    );
  const byPd = new Map<string, number[]>();
  loaded.forEach((l, i) => byPd.set(pdOf(l.resolved), [...(byPd.get(pdOf(l.resolved)) ?? []), i]));
  for (const [pd, members] of byPd) {
    const owner = members.find((i) => !loaded[i].resolved.joinCluster && loaded[i].resolved.pd);
    // The PD's own cluster first, then the clusters that join it, in input order.
    const ordered = owner === undefined ? members : [owner, ...members.filter((i) => i !== owner)];
    for (const kind of STORE_KINDS) {
      const withStores = ordered.filter((i) => loaded[i].resolved[kind]);
      const holder = withStores.find((i) => budgets[i][kind]);
      if (holder === undefined) continue;
      const sameNamespace = (i: number) => loaded[i].resolved.namespace === loaded[holder].resolved.namespace;
      const covered = withStores.filter(sameNamespace);
      // A cluster without spec.pd that joins no other (its PD runs outside any TidbCluster) has its own
      // warning where PD is looked for; only one that joins another's PD is told this render lacks it.
      if (owner === undefined && loaded[holder].resolved.joinCluster)
        at(holder, { path: 'spec.cluster', message: unheldMessage(loaded[holder].resolved, kind, pd) }, warnings, true);
      for (const i of withStores.filter((i) => !sameNamespace(i) && budgets[i][kind])) {
        at(i, { path: 'spec.cluster', message: otherNamespaceMessage(loaded[i].resolved, loaded[holder].resolved, kind) }, warnings, true);
      }
      if (covered.length < 2) continue;
      const budget = budgets[holder][kind]!;
      budgets[holder][kind] = { ...budget, instances: covered.map((i) => loaded[i].resolved.instance) };
      for (const i of covered.filter((i) => i !== holder)) {
        const annotation = loaded[i].resolved.annotations[DISRUPTION_BUDGETS_ANNOTATION];
        if (annotation !== undefined && new RegExp(`(^|,)\\s*${kind}\\s*=`).test(annotation)) {
          at(
            i,
            {
              path: ANNOTATION_PATH,
              message: `${kind}: this cluster's ${kind} Pods are counted by the budget ${loaded[holder].resolved.name}-${kind} of ${describe(loaded[holder].resolved)}, since their stores share one PD; set the budget there`,
            },
            errors,
          );
        }
        delete budgets[i][kind];
      }
      // The one budget counts every store it covers: quorum as for one cluster of all of them.
      const stores = covered.reduce((n, i) => n + (loaded[i].resolved[kind]?.replicas ?? 0), 0);
      if (kind === 'tikv' && stores !== loaded[holder].resolved.tikv?.replicas) {
        const issues: SpecIssue[] = [];
        const ownerPd = owner === undefined ? undefined : loaded[owner].resolved.pd;
        checkBudgetQuorum({ budgets: { tikv: budget }, tikvReplicas: stores, maxReplicas: maxReplicas(ownerPd?.config) }, issues, []);
        for (const issue of issues)
          at(holder, { ...issue, message: `${issue.message} (counting the ${stores} TiKV stores of every cluster of this PD)` }, errors);
      }
    }
  }
  const clusters = loaded.map((l, i) => ({ ...l, resolved: { ...l.resolved, disruptionBudgets: budgets[i] } }));
  return { clusters, errors, warnings };
}

function unheldMessage(c: ResolvedCluster, kind: string, pd: string): string {
  const [ns, name] = pd.split('/');
  return (
    `the ${kind} stores of this cluster join the PD of ${name}${ns ? ` (namespace ${ns})` : ''}, which this render does not hold: ` +
    `its budget ${c.name}-${kind} counts only the stores of the clusters rendered here, and a budget rendered elsewhere counts the others, so a drain may take one store of each at once, two replicas of one region; ` +
    'render the clusters of one PD together (in the same inputs and namespace), so that one budget counts every store'
  );
}

function otherNamespaceMessage(c: ResolvedCluster, holder: ResolvedCluster, kind: string): string {
  return (
    `the ${kind} stores of this cluster share one PD with ${describe(holder)}, in another namespace, and a PodDisruptionBudget selects Pods of its own namespace only: ` +
    `its budget ${c.name}-${kind} and ${holder.name}-${kind} each count their own stores, so a drain may take one store of each at once, two replicas of one region; ` +
    'run the clusters of one PD in one namespace to have one budget count every store'
  );
}
