/**
 * What the parts of the PD simulator share: the records a scenario test reads afterwards (violations
 * and logs) and one owner of every timer, so that closing the simulator stops all of its activity.
 */

/** A PD pod stopped while its member was the PD leader (the controller should transfer first). */
export interface StopWhileLeader {
  pod: string;
  time: number;
}

/** A TiKV pod stopped while its store still held region leaders (eviction should come first). */
export interface StopWithLeaders {
  pod: string;
  storeId: number;
  leaderCount: number;
  time: number;
}

/** A PD leader transfer that took effect. */
export interface LeaderTransfer {
  from: string;
  to: string;
  time: number;
}

/**
 * A store added to or removed from the evict-leader scheduler, and who asked: the API request
 * (`"POST /pd/api/v1/schedulers"`, `"DELETE /pd/api/v1/schedulers/evict-leader-scheduler-4"`) or
 * `"pd-ctl"` for `PdSim.addEvictLeaderScheduler` (an administrator's change).
 */
export interface SchedulerChange {
  op: 'add' | 'remove';
  storeId: number;
  /** Always `evict-leader-scheduler`, the merged scheduler of PD v3.1+. */
  scheduler: string;
  by: string;
  time: number;
}

/** One answered API request (requests dropped or refused at the connection are not listed). */
export interface RequestRecord {
  method: string;
  path: string;
  status: number;
  time: number;
  /** The member that answered (whose HTTP server the request reached; it may have forwarded it to the leader). */
  member?: string;
  /** Where the request came in: `service` (`PdSim.url`), `member` (a member's own listener), `tiflash` (a TiFlash status port). */
  via?: 'service' | 'member' | 'tiflash';
}

/** A process that could not start or had to exit: failed join, removed member, tombstoned store... */
export interface ProcessFailure {
  pod: string;
  reason: string;
  time: number;
}

/** The records, kept as plain arrays the tests read directly. */
export class SimRecords {
  readonly stopsWhileLeader: StopWhileLeader[] = [];
  readonly stopsWithLeaders: StopWithLeaders[] = [];
  /** One line per PD pod that bootstrapped a second cluster. */
  readonly splitBrain: string[] = [];
  readonly transfers: LeaderTransfer[] = [];
  readonly schedulerLog: SchedulerChange[] = [];
  readonly requests: RequestRecord[] = [];
  readonly processFailures: ProcessFailure[] = [];

  processFailure(pod: string, reason: string): void {
    this.processFailures.push({ pod, reason, time: Date.now() });
  }
}

/**
 * Owns the simulator's timers. Timers are unref'd so a test that forgets `close()` does not hold the
 * process open; after `close()` nothing new is scheduled and callbacks already queued do not run.
 */
export class Timers {
  private readonly pending = new Set<NodeJS.Timeout>();
  private isClosed = false;

  get closed(): boolean {
    return this.isClosed;
  }

  after(ms: number, fn: () => void): NodeJS.Timeout | undefined {
    if (this.isClosed) return undefined;
    const timer = setTimeout(() => {
      this.pending.delete(timer);
      if (!this.isClosed) fn();
    }, ms);
    timer.unref();
    this.pending.add(timer);
    return timer;
  }

  every(ms: number, fn: () => void): NodeJS.Timeout | undefined {
    if (this.isClosed) return undefined;
    const timer = setInterval(() => {
      if (!this.isClosed) fn();
    }, ms);
    timer.unref();
    this.pending.add(timer);
    return timer;
  }

  cancel(timer: NodeJS.Timeout | undefined): void {
    if (timer === undefined) return;
    clearTimeout(timer);
    this.pending.delete(timer);
  }

  close(): void {
    this.isClosed = true;
    for (const timer of this.pending) clearTimeout(timer);
    this.pending.clear();
  }
}

/**
 * Resolves once `pred` holds, polling every 5 ms; rejects after `timeoutMs` with `message` and what
 * `describe` says of the simulator's state. Every simulator's `waitFor`.
 */
export async function pollUntil(pred: () => boolean, timeoutMs: number, message: string, describe: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() >= deadline) throw new Error(`waitFor: ${message} not reached within ${timeoutMs}ms\n${describe()}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Options without their undefined entries, so that spreading them keeps the defaults. */
export function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * Which requests an injected failure hits: a predicate (of the method, the path with its query, and
 * the Pod whose server was asked, where there is one), a RegExp tested on `"<METHOD> <path?query>"`,
 * or a string contained in that text (`'POST /pd/api/v1/schedulers'`, `'/stores'`).
 */
export type RequestMatch = string | RegExp | ((method: string, path: string, pod: string) => boolean);

export interface InjectedFailure {
  readonly match: RequestMatch;
  readonly status: number;
  readonly message: string;
  remaining: number;
}

/** The failures a test asked a simulator to inject, each for its next `times` matching requests. */
export class FaultInjector {
  private readonly failures: InjectedFailure[] = [];

  add(match: RequestMatch, status: number, times: number, message: string): void {
    this.failures.push({ match, status, message, remaining: times });
  }

  /** The failure this request hits, if any (counted as used). */
  take(method: string, path: string, pod = ''): InjectedFailure | undefined {
    const text = `${method} ${path}`;
    const found = this.failures.find(
      (f) =>
        f.remaining > 0 &&
        (typeof f.match === 'function'
          ? f.match(method, path, pod)
          : typeof f.match === 'string'
            ? text.includes(f.match)
            : f.match.test(text)),
    );
    if (found !== undefined) found.remaining--;
    return found;
  }
}
