/**
 * The planner's vocabulary: the actions it may ask for (one per component per pass, carried out by
 * `actions/`), the events it announces, and the answer each part of it gives (`Step`).
 */
import type { Pod } from '../model/objects';
import type { ComponentSettings } from '../../tidbcluster/contract';
import type { EvictionRecord } from '../records/evictions';
import type { ComponentFailover, FailureRecord } from '../records/failover';
import type { ReplaceRecord } from '../records/replacements';
import { ownsEviction } from '../view/lookups';
import type { ComponentState, PdState, PlanInput } from '../view/view';

/** Where a component is: the operation under way, if any. */
export type Phase = 'Normal' | 'Upgrading' | 'Scaling' | 'Failover';

/** A claim, by name and uid (the uid a precondition of every write, so a claim re-created meanwhile is left alone). */
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
  /**
   * Move a micro-service's primary to the server named `to` (`''`: the server picks). `exact`: never
   * let the server pick instead, where its pick could be a server that cannot lead (TSO before v8.4.0).
   */
  | {
      readonly type: 'transfer-primary';
      readonly service: 'tso' | 'scheduling';
      readonly pod: string;
      readonly primary: string;
      readonly to: string;
      readonly exact?: true;
    }
  /**
   * Add the evict-leader scheduler for the Pod's store and note the time on the Pod (`annotation`,
   * once). `record`: the store had no scheduler, so this one is the controller's own: it is recorded
   * (before PD is asked) and removed when the operation is over.
   */
  | {
      readonly type: 'evict-begin';
      readonly pod: string;
      readonly storeId: number;
      readonly annotation?: string;
      readonly record?: EvictionRecord;
    }
  /**
   * Delete a Pod whose request is met: a TiKV `tidb.pingcap.com/evict-leader: delete-pod` (its store has no
   * leaders), a PD `tidb.pingcap.com/pd-transfer-leader: delete-pod` (it does not lead), a TiDB
   * `tidb.pingcap.com/tidb-graceful-shutdown: delete-pod`; `uid` is a precondition, so a Pod
   * re-created meanwhile is left alone.
   */
  | { readonly type: 'delete-pod'; readonly pod: string; readonly uid?: string; readonly storeId?: number }
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
  /** Set (undefined: forget) the replacement record of a Pod; written to the status at once. */
  | { readonly type: 'replace-set'; readonly pod: string; readonly record: ReplaceRecord | undefined }
  /**
   * A replacement whose store is Tombstone or member deleted: delete the PD member (when it is one),
   * the Pod's claims, then the Pod without a grace period (its node may be gone, and it serves
   * nothing any more), each only if it is still the one recorded.
   */
  | { readonly type: 'replace-delete'; readonly pod: string; readonly record: ReplaceRecord }
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

/**
 * What a wait is for, by code: the status and the stuck hints (`stuck.ts`) switch on it, the reason
 * is for people to read.
 * - `upgraded-pod-not-ready`: a Pod at the new revision is not Ready.
 * - `min-ready-seconds`: an upgraded Pod is Ready, not yet for `minReadySeconds`.
 * - `failover-period`: something is unhealthy; failover comes once the failover period has passed.
 * - `join-grace`: a Pod whose store never registered is removed once the join grace has passed.
 * - `store-offline-moving`: a store being scaled in is Offline while PD moves its regions away.
 * - `too-few-up-stores`: a TiKV scale-in would leave fewer Up stores than `replication.max-replicas`.
 * - `store-not-up`: an upgraded store is registered with PD but not Up.
 * - `pd-unreadable`: PD's view (members, stores, its micro-services' registry) could not be read.
 */
export type WaitCode =
  | 'upgraded-pod-not-ready'
  | 'min-ready-seconds'
  | 'failover-period'
  | 'join-grace'
  | 'store-offline-moving'
  | 'too-few-up-stores'
  | 'store-not-up'
  | 'pd-unreadable';

/** Waits that end by themselves at a time they name: no operation waiting on one is stuck. */
export const SELF_ENDING_WAITS: readonly WaitCode[] = ['min-ready-seconds', 'failover-period', 'join-grace'];

/** What a wait is for, as a step, a component's plan and the stuck hints carry it. */
export interface WaitOn {
  /** The wait's code. @default none (a wait no hint and no status tells apart) */
  readonly wait?: WaitCode;
  /** The store the wait is about (the Offline store of `store-offline-moving`). @default none */
  readonly storeId?: number;
}

/** One part's answer: `ok` lets the planner go on; otherwise what to do or wait for. */
export type Step = { ok: true; event?: PlanEvent } | ({ ok: false; reason: string; action?: Action; event?: PlanEvent } & WaitOn);

/** The wait a step (or a plan) carries, alone, to pass on. */
export const waitOn = (on: WaitOn | undefined): WaitOn => ({
  ...(on?.wait !== undefined && { wait: on.wait }),
  ...(on?.storeId !== undefined && { storeId: on.storeId }),
});

export const OK: Step = { ok: true };
export const wait = (reason: string, event?: PlanEvent, code?: WaitCode, storeId?: number): Step => ({
  ok: false,
  reason,
  event,
  ...waitOn({ wait: code, storeId }),
});
/** A wait on PD's view that could not be read (`pdOf`, `pdStoresOf`, `msOf` say why). */
export const waitPd = (why: string): Step => wait(why, undefined, 'pd-unreadable');
export const act = (reason: string, action: Action, event?: PlanEvent): Step => ({ ok: false, reason, action, event });

/**
 * Adds a store's evict-leader scheduler, recorded as the controller's own when the store had none. One
 * already there that is not recorded (an administrator's, added with pd-ctl) stays unrecorded, so the
 * controller never removes it; one already recorded keeps its record.
 */
export function evictBegin(
  input: PlanInput,
  pd: PdState,
  pod: string,
  storeId: number,
  annotation: string | undefined,
  why: EvictionRecord['for'],
): Action {
  const isNew = !pd.evicting.has(storeId) && !ownsEviction(input, storeId);
  return {
    type: 'evict-begin',
    pod,
    storeId,
    ...(annotation !== undefined && { annotation }),
    ...(isNew && { record: { pod, for: why, since: new Date(input.now).toISOString() } }),
  };
}

/**
 * What a component's upgrade checks (`upgrade-<component>.ts`), beside what every component checks
 * (the Pod before is Ready and, with `minReadySeconds`, has been for long enough).
 */
export interface UpgradeChecks {
  /** On every pass of the upgrade, before any Pod is stepped (TiDB pauses DDL). @default none */
  readonly begin?: (input: PlanInput, c: ComponentState) => Step;
  /** Before a Pod restarts: what must happen first (PD leadership moved, TiKV leaders evicted...). @default none */
  readonly prepare?: (input: PlanInput, c: ComponentState, pod: Pod, settings: ComponentSettings) => Step;
  /** Once a Pod runs the new revision and is Ready: whether the upgrade may go on to the next one. @default none */
  readonly upgraded?: (input: PlanInput, c: ComponentState, pod: Pod, settings: ComponentSettings) => Step;
}
