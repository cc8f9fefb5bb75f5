/**
 * What the planner's parts share: the snapshot it decides from, the actions it may ask for, and
 * the lookups every part needs (a Pod's PD member, store and volumes). Pure, like the planner.
 */
import { ANNOTATION, names, type ComponentKind } from '../../tidbcluster/names';
import { isReady, ordinalOf, type ClusterInfo, type ComponentSettings, type Pod, type Pvc, type StatefulSet } from '../model/objects';
import type { DdlPauseRecord } from '../plan/upgrade-tidb';
import type { MsMember, PdMember, PdStore } from '../clients/pd';
import type { FailoverState, FailureRecord, ComponentFailover } from '../plan/failover';
import type { VolumeSizes } from '../plan/volumes';

/** PVC annotation (the operator's key): the claim's Pod was scaled in; the claim is kept until the ordinal comes back. */
export const DEFER_DELETING_ANNOTATION = 'tidb.pingcap.com/pvc-defer-deleting';
/** Pod annotation (the operator's key): when the safe scale-in of this Pod began. */
export const SCALE_IN_TIME_ANNOTATION = 'tidb.pingcap.com/scale-in-time';
/** Pod annotation (the operator's key): when a TiCDC capture began to hand its tables over. */
export const TICDC_SHUTDOWN_BEGIN_ANNOTATION = 'tidb.pingcap.com/ticdc-graceful-shutdown-begin-time';
/** Pod annotation: the TiCDC capture or Pump node of this Pod was retired (drained, offline) and may go. */
export const RETIRED_ANNOTATION = 'tidb-gitops.io/retired-at';
/** TiCDC's `gracefulShutdownTimeout` default (tidb-operator: 10m). */
export const TICDC_DRAIN_TIMEOUT_MS = 10 * 60_000;
/** Pod annotation: when the capture of this TiCDC Pod was drained for its restart in an upgrade. */
export const TICDC_DRAINED_ANNOTATION = 'tidb-gitops.io/ticdc-drained-at';
/** Pod annotation: the update revision for which log backup on this TiKV was asked to flush before its restart. */
export const LOG_BACKUP_FLUSHED_ANNOTATION = 'tidb-gitops.io/log-backup-flushed-for';

export interface PdState {
  readonly members: readonly PdMember[];
  readonly leader: string | undefined;
  /** Up, Disconnected, Down and Offline stores. */
  readonly stores: readonly PdStore[];
  /** Store ids with an evict-leader scheduler. */
  readonly evicting: ReadonlySet<number>;
  /** Tombstone stores; read only while a TiKV or TiFlash scale-in is under way. */
  readonly tombstones?: readonly PdStore[];
  /** PD's `replication.max-replicas`; read only while a TiKV scale-in is under way. */
  readonly maxReplicas?: number;
  /**
   * Why stores and schedulers could not be read, while members and the leader could (they are
   * separate PD endpoints). Undefined when they were read, and before TiKV bootstraps the cluster,
   * when PD simply has no stores (`bootstrapped` is then false).
   */
  readonly storesError?: string;
  /** False until the first TiKV store bootstraps the cluster; PD lists no stores and no schedulers before. @default true */
  readonly bootstrapped?: boolean;
  /** PD's registry of its micro-services (`tso`, `scheduling`), read when the cluster runs them. @default none */
  readonly ms?: Readonly<Partial<Record<'tso' | 'scheduling', MsState>>>;
}

/** A PD micro-service as PD sees it: its registered servers and its primary (`""` while none), or why it could not be read. */
export type MsState = { readonly members: readonly MsMember[]; readonly primary: string } | { readonly error: string };

/** What a probe of one Pod's server answered: `ok`, or what it said instead. */
export interface ProbeResult {
  readonly ok: boolean;
  readonly detail: string;
}

/**
 * Per-Pod checks the controller makes before the planner runs, for the Pods the planner will ask
 * about (see `probesWanted`): PD's `/pd/api/v2/ready` of each upgraded member, TiFlash's
 * `/tiflash/store-status` of each upgraded store. Absent means not probed.
 */
export interface Probes {
  readonly pdReady?: Readonly<Record<string, ProbeResult>>;
  readonly tiflashStatus?: Readonly<Record<string, ProbeResult>>;
  /** The leader count each TiKV being evicted for its restart reports in its own `/metrics`. */
  readonly tikvLeaders?: Readonly<Record<string, LeaderProbe>>;
}

/** A TiKV server's own leader count; `count` is undefined when it could not be read (`detail` says why). */
export interface LeaderProbe {
  readonly count?: number;
  readonly detail: string;
}

/** An evict-leader scheduler this controller added (kept in the status ConfigMap, so it can tell its own from an administrator's). */
export interface EvictionRecord {
  readonly pod: string;
  /** Why it was added: an upgrade or scale-in step, or a Pod's `tidb.pingcap.com/evict-leader` request. */
  readonly for: 'upgrade' | 'scale-in' | 'request';
  /** When (RFC 3339). */
  readonly since: string;
}

export interface ComponentState {
  readonly kind: ComponentKind;
  readonly sts: StatefulSet;
  readonly pods: readonly Pod[];
}

/** Settings of the controller process (flags), not of the cluster. */
export interface PlanOptions {
  /** Failover at all (`--auto-failover`). @default true */
  readonly autoFailover: boolean;
  /** How long a member, store or Pod must be unhealthy before failover, per component. @default 5m each */
  readonly failoverPeriodMs: Readonly<Partial<Record<ComponentKind, number>>>;
  /** The resync period: a TiKV Pod whose store never registers is removed 5 periods after its creation. @default 30s */
  readonly resyncMs: number;
  /** The UID a component's first failure record of a failover gets (the caller makes one per pass). */
  readonly newFailoverUid: string;
}

export const DEFAULT_FAILOVER_PERIOD_MS = 5 * 60_000;

export const DEFAULT_PLAN_OPTIONS: PlanOptions = { autoFailover: true, failoverPeriodMs: {}, resyncMs: 30_000, newFailoverUid: '' };

export interface PlanInput {
  readonly cluster: ClusterInfo;
  /** Components present, in reconcile order. */
  readonly components: readonly ComponentState[];
  /** PD's view, an error text when PD could not be read, or undefined when not needed. */
  readonly pd: PdState | { readonly error: string } | undefined;
  readonly now: number;
  /** The cluster's PersistentVolumeClaims. @default [] */
  readonly volumes?: readonly Pvc[];
  /** Failure records and health history, as last written to the status ConfigMap. @default none */
  readonly failover?: FailoverState;
  /** @default DEFAULT_PLAN_OPTIONS */
  readonly options?: PlanOptions;
  /** Results of the per-Pod probes. @default none */
  readonly probes?: Probes;
  /** The evict-leader schedulers this controller added, by store id. @default none */
  readonly evictions?: Readonly<Record<string, EvictionRecord>>;
  /** The volume sizes Git asks for (the `<cluster>-volume-sizes` ConfigMap). @default none */
  readonly volumeSizes?: VolumeSizes;
  /** The DDL pause this controller asked TiDB for in a TiDB upgrade (see smooth-upgrade.ts). @default none */
  readonly ddlPause?: DdlPauseRecord;
  /** Claims the API server refused to grow, by component, with the sizes asked for then. @default none */
  readonly volumeRefusals?: Readonly<Record<string, VolumeRefusal>>;
}

/** The API server's answer when asked to grow a component's claims (no expansion in its StorageClass...). */
export interface VolumeRefusal {
  readonly message: string;
  /** The component's sizes (JSON) that were refused: a new size in Git is tried again. */
  readonly sizes: string;
}

export interface VolumeRef {
  readonly name: string;
  readonly uid: string;
}

export type Action =
  /** Server-side apply of the two fields the controller owns (partition absent for OnDelete). */
  | { readonly type: 'apply'; readonly replicas: number; readonly partition: number | undefined }
  | { readonly type: 'transfer-leader'; readonly pod: string; readonly from: string; readonly to: string }
  /**
   * Move a PD micro-service's primary off `pod` before it restarts: ask the primary (at its service
   * address `primary`) to hand over to the server named `to` ("": any other one it may hand over to).
   */
  | { readonly type: 'transfer-primary'; readonly service: 'tso' | 'scheduling'; readonly pod: string; readonly primary: string; readonly to: string }
  /**
   * Add the evict-leader scheduler for the Pod's store and note the time on the Pod (`annotation`,
   * once). `record`: the store had no scheduler, so this one is the controller's own: it is recorded
   * (before PD is asked) and removed when the operation is over.
   */
  | { readonly type: 'evict-begin'; readonly pod: string; readonly storeId: number; readonly annotation?: string; readonly record?: EvictionRecord }
  /**
   * Delete a TiKV Pod whose `tidb.pingcap.com/evict-leader: delete-pod` request is met (its store has no
   * leaders); `uid` is a precondition, so a Pod re-created meanwhile is left alone.
   */
  | { readonly type: 'delete-pod'; readonly pod: string; readonly uid?: string; readonly storeId: number }
  /** Note on the upgraded Pod that its eviction is over; remove the scheduler when it is the controller's own (`remove`). */
  | { readonly type: 'evict-end'; readonly pod: string; readonly storeId: number; readonly remove: boolean }
  /** Remove the controller's own evict-leader schedulers once no upgrade or scale-in needs them, and forget their records. */
  | { readonly type: 'evict-cleanup'; readonly storeIds: readonly number[] }
  /** Delete claims marked for deferred deletion before their ordinal is created again. */
  | { readonly type: 'delete-volumes'; readonly pod: string; readonly volumes: readonly VolumeRef[] }
  /** Mark the claims of a Pod being scaled in for deferred deletion. */
  | { readonly type: 'mark-volumes'; readonly pod: string; readonly volumes: readonly string[] }
  | { readonly type: 'delete-member'; readonly pod: string; readonly member: string }
  /** Take a store offline in PD (`DELETE /pd/api/v1/store/{id}`); PD moves its regions away. */
  | { readonly type: 'delete-store'; readonly pod: string; readonly storeId: number }
  /**
   * One step of retiring a TiCDC capture or Pump node; the Pod is annotated once it is done.
   * `unregisteredIsDone`: the Pod never joined (not Ready, older than 5 resync periods), so a node
   * missing from Pump's list counts as gone.
   */
  | { readonly type: 'retire'; readonly pod: string; readonly how: 'ticdc' | 'pump'; readonly unregisteredIsDone?: true }
  /**
   * Before a TiCDC Pod restarts in an upgrade: resign its capture's ownership and move its tables away,
   * then take ownership from `next` (the Pod that restarts after it), as tidb-operator's
   * `ticdc_upgrader.go` does; skipped when the capture's version cannot hand over to `targetVersion`.
   * The Pod is annotated once done.
   */
  | { readonly type: 'drain-capture'; readonly pod: string; readonly next?: string; readonly targetVersion?: string }
  /**
   * Before a TiKV Pod without leaders restarts in an upgrade: ask its log backup tasks to flush
   * (tidb-operator `tikv_upgrader.go` `triggerForceFlush`); the Pod is annotated with `revision`
   * (the update revision it restarts to) once asked, whatever the answer.
   */
  | { readonly type: 'flush-log-backup'; readonly pod: string; readonly storeId: number; readonly revision: string }
  /**
   * Pause DDL for a TiDB upgrade from `source` to `target` (`POST /upgrade/start` on `pod`), recorded in
   * the status first.
   */
  | { readonly type: 'ddl-pause'; readonly pod: string; readonly source: string; readonly target: string }
  /** Resume DDL (`POST /upgrade/finish` on `pod`) and forget the record: the upgrade is over, or the record is stale. */
  | { readonly type: 'ddl-resume'; readonly pod: string; readonly stale: boolean }
  /** Remove the marks an operation that is over left on Pods that did not restart (an upgrade or scale-in taken back). */
  | { readonly type: 'clear-marks'; readonly marks: readonly { readonly pod: string; readonly keys: readonly string[] }[] }
  /** Replace the component's failure records (undefined clears them); written to the status at once. */
  | { readonly type: 'failover-set'; readonly failover: ComponentFailover | undefined }
  /** PD failover: delete the failed member, its Pod and its claims, then mark the record done. */
  | { readonly type: 'failover-delete'; readonly key: string; readonly record: FailureRecord }
  /** Grow the claims to the size Git asks for (`spec.resources.requests.storage`). */
  | { readonly type: 'resize-volumes'; readonly volumes: readonly (VolumeRef & { readonly size: string })[] }
  /**
   * Re-create the StatefulSet with these claim template sizes: saved to the status ConfigMap, deleted
   * with its Pods orphaned, created again with the same replicas and partition.
   */
  | { readonly type: 'recreate'; readonly sizes: Readonly<Record<string, string>> };

export interface PlanEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
  /** The Pod the event is about; the StatefulSet when absent. */
  readonly pod?: string;
}

/** One part's answer: `ok` lets the planner go on; otherwise what to do or wait for. */
export type Step = { ok: true; event?: PlanEvent } | { ok: false; reason: string; action?: Action; event?: PlanEvent };
export const OK: Step = { ok: true };
export const wait = (reason: string, event?: PlanEvent): Step => ({ ok: false, reason, event });
export const act = (reason: string, action: Action, event?: PlanEvent): Step => ({ ok: false, reason, action, event });

/** Parses the settings annotation; a bad one counts as none (the renderer always writes valid JSON). */
export function settingsOf(sts: StatefulSet): ComponentSettings {
  const text = sts.metadata.annotations?.[ANNOTATION.settings];
  if (!text) return {};
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as ComponentSettings) : {};
  } catch {
    return {};
  }
}

export function desiredReplicas(sts: StatefulSet): number | undefined {
  const text = sts.metadata.annotations?.[ANNOTATION.replicas];
  return text !== undefined && /^\d+$/.test(text) ? Number(text) : undefined;
}

export const replicasOf = (sts: StatefulSet): number => sts.spec?.replicas ?? 1;

/** Pods of a StatefulSet by ordinal (Pods of other shapes are ignored). */
export function podsByOrdinal(cluster: string, kind: ComponentKind, pods: readonly Pod[]): Map<number, Pod> {
  const out = new Map<number, Pod>();
  for (const p of pods) {
    const ord = ordinalOf(p.metadata.name ?? '', names.statefulSet(cluster, kind));
    if (ord !== undefined) out.set(ord, p);
  }
  return out;
}

/** The PD member that runs in a Pod: named after the Pod, or after its FQDN (acrossK8s, clusterDomain). */
export const memberOfPod = (members: readonly PdMember[], pod: string): PdMember | undefined =>
  members.find((m) => m.name === pod || m.name.startsWith(`${pod}.`));

/** The store a TiKV or TiFlash Pod serves, matched on its advertised address. */
export function storeOfPod(stores: readonly PdStore[], cluster: string, kind: ComponentKind, pod: string): PdStore | undefined {
  const prefix = `${pod}.${cluster}-${kind}-peer.`;
  return stores.find((s) => s.address.startsWith(prefix) && s.state !== 'Tombstone');
}

/** Stores of this cluster's component (addresses under its peer Service). */
export const storesOf = (stores: readonly PdStore[], cluster: string, kind: ComponentKind): PdStore[] =>
  stores.filter((s) => s.address.includes(`.${cluster}-${kind}-peer.`));

/** The claims a Pod has, or will have: `<template>-<pod>` for each claim template of its StatefulSet. */
export function volumesOfPod(volumes: readonly Pvc[], sts: StatefulSet, pod: string): Pvc[] {
  const wanted = new Set((sts.spec?.volumeClaimTemplates ?? []).map((t) => `${t.metadata?.name}-${pod}`));
  return volumes.filter((v) => wanted.has(v.metadata.name ?? ''));
}

/** PD's view of its members and leader, or why it is not known. */
export function pdOf(input: PlanInput): PdState | string {
  if (input.pd === undefined) return 'PD state was not read';
  if ('error' in input.pd) return `PD API unavailable: ${input.pd.error}`;
  return input.pd;
}

/** PD's view for decisions about stores: as `pdOf`, and also unknown when stores could not be read. */
export function pdStoresOf(input: PlanInput): PdState | string {
  const pd = pdOf(input);
  if (typeof pd === 'string') return pd;
  return pd.storesError === undefined ? pd : `PD stores unavailable: ${pd.storesError}`;
}

/** Whether the evict-leader scheduler of a store is one this controller added. */
export const ownsEviction = (input: PlanInput, storeId: number): boolean => input.evictions?.[String(storeId)] !== undefined;

/** Pods of the component at ordinals below `replicas`, other than `except`, that are not Ready (missing ones count). */
export function unreadyPods(input: PlanInput, c: ComponentState, replicas: number, except?: number): string[] {
  const pods = podsByOrdinal(input.cluster.name, c.kind, c.pods);
  const out: string[] = [];
  for (let ord = 0; ord < replicas; ord++) {
    if (ord === except) continue;
    const pod = pods.get(ord);
    if (!pod || !isReady(pod)) out.push(names.pod(input.cluster.name, c.kind, ord));
  }
  return out;
}

/** "Pod a is" / "Pods a, b are", for reasons. */
export const podList = (pods: readonly string[]): string => (pods.length === 1 ? `Pod ${pods[0]} is` : `Pods ${pods.join(', ')} are`);

/**
 * Adds a store's evict-leader scheduler, recorded as the controller's own when the store had none. One
 * already there that is not recorded (an administrator's, added with pd-ctl) stays unrecorded, so the
 * controller never removes it; one already recorded keeps its record.
 */
export function evictBegin(input: PlanInput, pd: PdState, pod: string, storeId: number, annotation: string | undefined, why: EvictionRecord['for']): Action {
  const isNew = !pd.evicting.has(storeId) && !ownsEviction(input, storeId);
  return {
    type: 'evict-begin',
    pod,
    storeId,
    ...(annotation !== undefined && { annotation }),
    ...(isNew && { record: { pod, for: why, since: new Date(input.now).toISOString() } }),
  };
}
