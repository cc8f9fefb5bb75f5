/**
 * Reads the cluster's log backup (PITR) tasks from PD's etcd, at most once per resync period (30 s by
 * default; tidb-operator reads them once a minute), for a cluster with backup documents: where each
 * task stands goes into the status, and a restore does not start while one runs into the cluster.
 * A side task of the pass that only reads: the tasks after it take what it read.
 */
import { etcdRangePrefix } from '../clients/etcd';
import type { ClientTls } from '../clients/http';
import type { ClusterInfo } from '../model/cluster';
import { BR_STREAM_PREFIX, logBackupTasks, TASK_KEY_FOLDERS, type LogBackupView } from '../plan/log-backups';
import type { Logger } from '../runtime/log';
import type { SidePass, SideTask } from './side-task';

export interface LogBackupDeps {
  readonly cluster: ClusterInfo;
  /** PD's client URL: etcd answers on the same port. */
  readonly pd: { readonly baseUrl: string };
  readonly tls?: ClientTls;
  readonly log: Logger;
  /** The resync period: the tasks are read at most this often. */
  readonly options: { readonly resyncMs: number };
}

export class LogBackupReader implements SideTask {
  readonly name = 'log backup tasks';
  readonly readsOnly = true;
  private last?: { at: number; raw: { kvs: Awaited<ReturnType<typeof etcdRangePrefix>> } | { error: string } };
  /** What the last pass read. */
  private latest?: LogBackupView;

  /** `recorded`: whether records of log backups remain (of ones whose documents left Git too). */
  constructor(
    private readonly d: LogBackupDeps,
    private readonly recorded: () => boolean = () => false,
  ) {}

  /** The tasks as the last pass read them; undefined when not enabled. */
  current(): LogBackupView | undefined {
    return this.latest;
  }

  /** Reads the tasks for this pass (from PD once a resync period is over). */
  async run({ view }: SidePass): Promise<void> {
    this.latest = await this.read(view.now, this.recorded());
  }

  /** Whether this cluster's tasks are read at all: only with backup documents in Git, or records of log backups (`extra`). */
  enabled(extra = false): boolean {
    const c = this.d.cluster;
    return extra || (c.backupSchedules?.length ?? 0) > 0 || (c.operations?.length ?? 0) > 0 || (c.logBackups?.length ?? 0) > 0;
  }

  /** The next read goes to PD, whatever the period: a `br log` command just ended. */
  invalidate(): void {
    this.last = undefined;
  }

  /** The tasks, read again when the last read is a resync period old; undefined when not enabled. */
  async read(now: number, extra = false): Promise<LogBackupView | undefined> {
    if (!this.enabled(extra)) return undefined;
    if (!this.last || now - this.last.at >= this.d.options.resyncMs) {
      const target = new URL(this.d.pd.baseUrl).host;
      try {
        const folders = await Promise.all(TASK_KEY_FOLDERS.map((f) => etcdRangePrefix(target, `${BR_STREAM_PREFIX}${f}`, this.d.tls)));
        this.last = { at: now, raw: { kvs: folders.flat() } };
      } catch (err) {
        const error = (err as Error).message;
        if (!this.last || !('error' in this.last.raw) || this.last.raw.error !== error)
          this.d.log.warn('cannot read the log backup tasks from PD', { error });
        this.last = { at: now, raw: { error } };
      }
    }
    // The lag is now's: the tasks are worked out from what was read, each pass.
    const at = this.last.at;
    return 'error' in this.last.raw
      ? { error: this.last.raw.error, at }
      : { tasks: logBackupTasks(this.last.raw.kvs, now, { cluster: this.d.cluster.name }), at };
  }
}
