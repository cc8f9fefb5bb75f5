/**
 * The status document of the `<cluster>-status` ConfigMap: what the controller sees and does, per
 * component, as JSON under the key `status.json`, for people (`kubectl get cm <cluster>-status -o
 * jsonpath=...`) and tools, with the records it keeps there (records/store.ts writes it).
 */
import type { ComponentKind } from '../../tidbcluster/names';
import { isReady, podRevision, type Pod } from '../model/objects';
import { isMsService, podOfMsMember } from '../plan/pdms';
import type { ComponentPlan } from '../plan/plan';
import type { StuckReport } from '../plan/stuck';
import { sortRuns } from '../records/backup-runs';
import { listOperations } from '../records/operations';
import { listLogTasks } from '../records/log-tasks';
import type { LogBackupView } from '../plan/log-backups';
import type { EvictionRecord } from '../records/evictions';
import type { FailoverState } from '../records/failover';
import type { LastOperation } from '../records/last-operations';
import type { StatusRecords } from '../records/store';
import type { StoppedWithLeaders } from '../records/stopped-with-leaders';
import { memberOfPod, podsByOrdinal, storeOfPod, storesOf } from '../view/lookups';
import type { ComponentState, PdState } from '../view/view';
import type { TopologyStatus } from './topology';
import type { ReclaimPolicyStatus } from './reclaim-policy';
import type { SqlAccountsStatus } from './sql-accounts';
import type { ChangefeedsStatus } from './changefeeds';
import type { ResourceGroupsStatus } from './resource-groups';
import type { OnlineConfigStatus } from './online-config';

export interface ComponentStatus {
  readonly phase: string;
  readonly desiredReplicas: number | null;
  readonly replicas: number;
  readonly readyReplicas: number;
  readonly partition: number | null;
  readonly currentRevision: string | null;
  readonly updateRevision: string | null;
  /** What the controller does or waits for now. */
  readonly reason: string;
  readonly pods: { name: string; ready: boolean; revision: string | null }[];
  readonly members?: { name: string; pod: string | null; health: boolean; leader: boolean }[];
  /** A PD micro-service's servers as PD's registry lists them, and which one is the primary. */
  readonly servers?: { name: string; pod: string | null; serviceAddr: string; primary: boolean }[];
  /** Why PD's registry of a micro-service could not be read. @default none */
  readonly serversError?: string;
  readonly stores?: {
    id: number;
    pod: string | null;
    state: string;
    leaderCount: number;
    regionCount: number;
    evictingLeaders: boolean;
    /** The store's labels in PD (topology labels, TiFlash's engine). */
    labels: Readonly<Record<string, string>>;
  }[];
  readonly lastOperation: LastOperation | null;
  /** The operation has waited on `reason` since `since` (RFC 3339); `hint` is the way out. @default none */
  readonly stuck?: { readonly since: string; readonly hint: string };
}

export interface ClusterStatus {
  readonly cluster: string;
  /** Whether PD answered; `bootstrapped: false` until TiKV bootstraps it; `storesError` when stores could not be read. */
  readonly pd: {
    readonly reachable: boolean;
    readonly error?: string;
    readonly bootstrapped?: false;
    readonly storesError?: string;
  } | null;
  readonly components: Partial<Record<ComponentKind, ComponentStatus>>;
  /**
   * Failure records per component (each one an extra replica) and since when members, stores and
   * Pods are seen unhealthy. The controller reads this back when it starts.
   */
  readonly failover: FailoverState;
  /** The evict-leader schedulers this controller added, by store id; read back when it starts. */
  readonly evictions: Readonly<Record<string, EvictionRecord>>;
  /** Topology labels (PD's location-labels, TiDB server labels); only for a cluster that reads Nodes. */
  readonly topology?: TopologyStatus;
  /** `spec.pvReclaimPolicy` on the claims' PVs; only for a cluster that may patch PVs. */
  readonly volumes?: ReclaimPolicyStatus;
}

/** The status document of a pass (JSON text), with the records the store keeps. */
export function statusDocument(
  cluster: string,
  components: readonly ComponentState[],
  plans: readonly ComponentPlan[],
  pd: PdState | { error: string } | undefined,
  records: StatusRecords,
  topology: TopologyStatus | undefined,
  logBackups?: LogBackupView,
  stuck?: ReadonlyMap<ComponentKind, StuckReport>,
  volumes?: ReclaimPolicyStatus,
  stoppedWithLeaders: readonly StoppedWithLeaders[] = [],
  sqlAccounts?: SqlAccountsStatus,
  resourceGroups?: ResourceGroupsStatus,
  changefeeds?: ChangefeedsStatus,
  onlineConfig?: OnlineConfigStatus,
): string {
  const status = buildStatus(cluster, components, plans, pd, records.lastOperations, records.failover, records.evictions, stuck);
  // The records are cut to what they keep where they are written (reconcile/backup-runs.ts).
  const runs = sortRuns(records.backupRuns);
  const operations = listOperations(records.operations);
  const logBackupTasks = listLogTasks(records.logTasks);
  const doc = {
    ...status,
    ...(records.ddlPause && { smoothUpgrade: records.ddlPause }),
    ...(Object.keys(records.replacements).length > 0 && { replacements: records.replacements }),
    ...(topology && { topology }),
    ...(volumes && { volumes }),
    // TiKV Pods let stop with region leaders on their store (discovery's preStop answer), newest first.
    ...(stoppedWithLeaders.length > 0 && { stoppedWithLeaders }),
    ...(runs.length > 0 && { backupRuns: runs }),
    ...(operations.length > 0 && { operations }),
    ...(records.initializer && { initializer: records.initializer }),
    ...(sqlAccounts && { sqlAccounts }),
    // The accounts the controller manages, read back when it starts (records/sql-accounts.ts).
    ...(Object.keys(records.sqlAccounts).length > 0 && { sqlAccountRecords: records.sqlAccounts }),
    ...(resourceGroups && { resourceGroups }),
    // The groups the controller manages, read back when it starts (records/resource-groups.ts).
    ...(Object.keys(records.resourceGroups).length > 0 && { resourceGroupRecords: records.resourceGroups }),
    ...(changefeeds && { changefeeds }),
    // The changefeeds the controller manages, read back when it starts (records/changefeeds.ts).
    ...(Object.keys(records.changefeeds).length > 0 && { changefeedRecords: records.changefeeds }),
    ...(onlineConfig && Object.keys(onlineConfig).length > 0 && { onlineConfig }),
    // What was applied online, read back when the controller starts (records/online-config.ts).
    ...(Object.keys(records.onlineConfig).length > 0 && { onlineConfigRecords: records.onlineConfig }),
    ...(logBackupTasks.length > 0 && { logBackupTasks }),
    ...(logBackups && ('error' in logBackups ? { logBackupsError: logBackups.error } : { logBackups: logBackups.tasks })),
  };
  return JSON.stringify(doc, null, 2);
}

function buildStatus(
  cluster: string,
  components: readonly ComponentState[],
  plans: readonly ComponentPlan[],
  pd: PdState | { error: string } | undefined,
  lastOps: ReadonlyMap<ComponentKind, LastOperation>,
  failover: FailoverState = { components: {}, unhealthySince: {} },
  evictions: Readonly<Record<string, EvictionRecord>> = {},
  stuck: ReadonlyMap<ComponentKind, StuckReport> = new Map(),
): ClusterStatus {
  const out: Partial<Record<ComponentKind, ComponentStatus>> = {};
  const pdState = pd && !('error' in pd) ? pd : undefined;
  const storeState = pdState?.storesError === undefined ? pdState : undefined;
  for (const c of components) {
    const p = plans.find((x) => x.kind === c.kind)!;
    const byOrd = [...podsByOrdinal(cluster, c.kind, c.pods).entries()].sort(([a], [b]) => a - b).map(([, pod]) => pod);
    const podNames = byOrd.map((x) => x.metadata.name!);
    const s: ComponentStatus = {
      phase: p.phase,
      desiredReplicas: p.desired ?? null,
      replicas: c.sts.spec?.replicas ?? 1,
      readyReplicas: c.sts.status?.readyReplicas ?? 0,
      partition: c.sts.spec?.updateStrategy?.type === 'OnDelete' ? null : (c.sts.spec?.updateStrategy?.rollingUpdate?.partition ?? 0),
      currentRevision: c.sts.status?.currentRevision ?? null,
      updateRevision: c.sts.status?.updateRevision ?? null,
      reason: p.reason,
      pods: byOrd.map((pod: Pod) => ({ name: pod.metadata.name!, ready: isReady(pod), revision: podRevision(pod) ?? null })),
      lastOperation: lastOps.get(c.kind) ?? null,
      ...(stuck.has(c.kind) && { stuck: { since: new Date(stuck.get(c.kind)!.since).toISOString(), hint: stuck.get(c.kind)!.hint } }),
      ...(c.kind === 'pd' && pdState
        ? {
            members: pdState.members.map((m) => ({
              name: m.name,
              pod: podNames.find((n) => memberOfPod([m], n)) ?? null,
              health: m.healthy,
              leader: pdState.leader === m.name,
            })),
          }
        : {}),
      ...msStatus(c.kind, pdState, podNames),
      ...((c.kind === 'tikv' || c.kind === 'tiflash') && storeState
        ? {
            stores: storesOf(storeState.stores, cluster, c.kind).map((st) => ({
              id: st.id,
              pod: podNames.find((n) => storeOfPod([st], cluster, c.kind, n)) ?? null,
              state: st.state,
              leaderCount: st.leaderCount,
              regionCount: st.regionCount,
              evictingLeaders: storeState.evicting.has(st.id),
              labels: st.labels,
            })),
          }
        : {}),
    };
    out[c.kind] = s;
  }
  return {
    cluster,
    pd:
      pd === undefined
        ? null
        : 'error' in pd
          ? { reachable: false, error: pd.error }
          : {
              reachable: true,
              ...(pd.bootstrapped === false && { bootstrapped: false }),
              ...(pd.storesError !== undefined && { storesError: pd.storesError }),
            },
    components: out,
    failover,
    evictions,
  };
}

/** A micro-service's servers in the status: name, Pod, address, and which one is the primary. */
function msStatus(
  kind: ComponentKind,
  pd: PdState | undefined,
  podNames: readonly string[],
): Pick<ComponentStatus, 'servers' | 'serversError'> {
  if (!isMsService(kind)) return {};
  const ms = pd?.ms?.[kind];
  if (!ms) return {};
  if ('error' in ms)
    return {
      serversError: ms.notBootstrapped ? `PD lists its ${kind} servers once TiKV has bootstrapped the cluster (${ms.error})` : ms.error,
    };
  return {
    servers: ms.members.map((m) => {
      const pod = podOfMsMember(m);
      return {
        name: m.name,
        pod: pod !== undefined && podNames.includes(pod) ? pod : null,
        serviceAddr: m.serviceAddr,
        primary: m.serviceAddr === ms.primary,
      };
    }),
  };
}
