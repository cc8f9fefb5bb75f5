/**
 * The work beside the plan that each pass does after the plan's actions, in one shape: topology
 * labels, the PVs' reclaim policy, the log backups' tasks read from PD, the schedules' runs and their
 * retention, the one-shot Backups and Restores, the initializer, the SQL accounts and the log backup
 * commands. The reconciler runs them in its list's order, each only while this replica may act,
 * unless it only reads.
 */
import type { Pod } from '../model/objects';
import type { LogBackupView } from '../plan/log-backups';
import type { PassView } from './observe';

/** What a side task is given of the pass. */
export interface SidePass {
  /** What the pass observed. */
  readonly view: PassView;
  /**
   * Why the cluster cannot take a backup or a restore now (`clusterNotReady`, plan/one-shot-runs.ts),
   * or undefined when it can.
   */
  readonly notReady: string | undefined;
  /** TiDB's Pods as observed. */
  readonly tidbPods: readonly Pod[];
  /** The log backup tasks as last read: this pass's for the tasks after the one that reads them. */
  readonly logBackups: () => LogBackupView | undefined;
}

/** One piece of the work beside the plan. */
export interface SideTask {
  /** What it does, in a word or two. */
  readonly name: string;
  /**
   * Whether it only reads: it then runs on every pass. One that writes runs only while this replica
   * may act.
   */
  readonly readsOnly: boolean;
  /** Its work for this pass; failures it can wait out are logged and tried again on the next pass. */
  run(pass: SidePass): Promise<void>;
}
