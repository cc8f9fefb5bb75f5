/**
 * The read-only view of the cluster the planner decides from, built once per pass from the informer
 * caches, PD and the servers' own answers, with the records the status ConfigMap keeps. Plain data:
 * the planner needs neither a cluster nor a client to be exercised.
 */
import type { ComponentKind } from '../../tidbcluster/names';
import type { ProbeResult } from '../clients/http';
import type { MsMember, PdMember, PdStore } from '../clients/pd';
import type { ClusterInfo } from '../model/cluster';
import type { Pod, Pvc, StatefulSet } from '../model/objects';
import type { VolumeSizes } from '../model/volume-sizes';
import type { DdlPauseRecord } from '../records/ddl-pause';
import type { EvictionRecord } from '../records/evictions';
import type { FailoverState } from '../records/failover';
import type { ReplaceRecord } from '../records/replacements';

export interface PdState {
  readonly members: readonly PdMember[];
  readonly leader: string | undefined;
  /** Up, Disconnected, Down and Offline stores. */
  readonly stores: readonly PdStore[];
  /** Store ids with an evict-leader scheduler. */
  readonly evicting: ReadonlySet<number>;
  /** Tombstone stores; read only while a store may be taken out (`PdReads.storeRemovals`, plan/probes.ts). */
  readonly tombstones?: readonly PdStore[];
  /** PD's `replication.max-replicas`; read only while a store may be taken out (`PdReads.storeRemovals`). */
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
export type MsState =
  | {
      readonly members: readonly MsMember[];
      readonly primary: string;
      /**
       * TSO only: the service addresses in TSO's default keyspace group (`[]` before PD gave it
       * members), or why they could not be read. @default not read
       */
      readonly group?: readonly string[] | { readonly error: string; readonly notBootstrapped: boolean };
    }
  | {
      readonly error: string;
      /**
       * PD v7.6 to v8.1 answers its registry only once TiKV bootstrapped the cluster (500
       * ErrNotBootstrapped, server/apiv2/handlers/micro_service.go `BootstrapChecker`, gone in v8.2.0).
       * @default false
       */
      readonly notBootstrapped?: boolean;
    };

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
  /** Each running TiDB Pod with the serving readiness gate: whether its `/status` answers 200. */
  readonly tidbStatus?: Readonly<Record<string, ProbeResult>>;
}

/** A TiKV server's own leader count; `count` is undefined when it could not be read (`detail` says why). */
export interface LeaderProbe {
  readonly count?: number;
  readonly detail: string;
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
  /** The replacements Git asked for, by Pod name (`plan/replace.ts`). @default none */
  readonly replacements?: Readonly<Record<string, ReplaceRecord>>;
  /** The volume sizes Git asks for (the `<cluster>-volume-sizes` ConfigMap). @default none */
  readonly volumeSizes?: VolumeSizes;
  /** The DDL pause this controller asked TiDB for in a TiDB upgrade (see plan/upgrade-tidb.ts). @default none */
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
