/**
 * Risks of a change that restarts Pods: what stops being served while they restart, and what the
 * order of the controller's work means for a change that does several things at once.
 *
 * - A component with one replica that restarts is down until its Pod is back: a rolling restart has
 *   no other Pod to serve meanwhile.
 * - Every TiKV restarting, one store at a time, with no more stores than PD keeps copies of each
 *   region (`replication.max-replicas`): while a store is down no other store can take its copies, so
 *   regions run one copy short for the whole rollout, and one more failure loses a majority.
 * - A change that both scales and restarts: the controller scales first, and holds the restarts of the
 *   components that wait for the scaled one (`tidbcluster/restart-order.ts`) until the scaling is done.
 */
import type { ComponentKind } from '../tidbcluster/names';
import { BLOCKED_BY } from '../tidbcluster/restart-order';
import { componentTitle, type ClusterModel } from './model';
import { RISK, type ComponentDiff, type Risk } from './report';

/** What stops while a component's only Pod restarts. */
const DOWN_WITH_IT: Readonly<Record<string, string>> = {
  pd: 'the whole cluster: without PD no transaction gets a timestamp and no request finds its region, so every query fails',
  tso: 'every transaction: TSO gives out the timestamps',
  scheduling: "PD's scheduling: no region is balanced, split or repaired",
  tikv: 'all data: every region has its copies on that store alone',
  tiflash: 'the TiFlash replicas: queries that read them fail or fall back to TiKV',
  tidb: 'every SQL connection: clients are disconnected and cannot connect',
  tiproxy: 'every connection through TiProxy',
  ticdc: 'every changefeed: replication stops and its lag grows',
  pump: 'binlog: writes wait for Pump (or fail, with binlog ignore-error off)',
};

/** The risks of the Pod restarts a change causes; `maxReplicas` is PD's `replication.max-replicas` after it. */
export function downtimeRisks(
  before: ClusterModel | undefined,
  after: ClusterModel,
  components: readonly ComponentDiff[],
  maxReplicas: number | undefined,
): Risk[] {
  const out: Risk[] = [];
  const restarting = components.filter((d) => d.restart !== undefined);
  for (const d of restarting) {
    const replicas = after.components.get(d.component)?.replicas ?? 1;
    // The controller's own Deployment holds no data and serves no query: its restart is said where it is shown.
    if (replicas === 1 && DOWN_WITH_IT[d.component] !== undefined) {
      out.push({
        id: RISK.singleReplicaRestart,
        component: d.component,
        message: `${componentTitle(d.component)} has one replica: its restart takes down ${DOWN_WITH_IT[d.component]}, until the new Pod is up. Run more replicas to restart without downtime.`,
      });
    }
  }
  const tikv = restarting.find((d) => d.component === 'tikv');
  const stores = after.components.get('tikv')?.replicas;
  const max = maxReplicas;
  if (tikv && stores !== undefined && stores > 1 && max !== undefined && stores < max + 1) {
    out.push({
      id: RISK.tikvNoSpareStore,
      component: 'tikv',
      message:
        `every TiKV store restarts, one at a time, with ${stores} stores and replication.max-replicas ${max}: no store is spare to take a restarting store's copies, ` +
        `so regions run one copy short while each store restarts, and one more failure meanwhile loses a majority. Run at least ${max + 1} stores to keep every copy through a rollout.`,
    });
  }
  const scaling = components.filter(
    (d) => d.replicas?.from !== undefined && d.replicas.to !== undefined && d.replicas.from !== d.replicas.to,
  );
  if (before && scaling.length > 0 && restarting.length > 0) {
    const held = restarting.filter((d) =>
      scaling.some((s) => s.component === d.component || BLOCKED_BY[d.component as ComponentKind]?.includes(s.component as ComponentKind)),
    );
    const what = (ds: readonly ComponentDiff[]) => ds.map((d) => componentTitle(d.component)).join(', ');
    out.push({
      id: RISK.scaleAndRestart,
      message:
        `one change scales ${scaling.map((d) => `${componentTitle(d.component)} ${d.replicas!.from} -> ${d.replicas!.to}`).join(', ')} and restarts ${what(restarting)}: ` +
        `the controller scales first${held.length > 0 ? `, and ${what(held)} restart${held.length === 1 ? 's' : ''} only once the scaling is done` : ''}; ` +
        'a scaling that cannot finish holds the restarts. Two pull requests are easier to review and to watch.',
    });
  }
  return out;
}
