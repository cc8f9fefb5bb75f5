/**
 * A de-duplicating work queue: a key waits in the queue at most once, a key being processed is never
 * processed twice at the same time, and one added meanwhile runs again right after. Delayed adds
 * (requeue after N ms, backoff after failures) keep only the earliest due time.
 */
export class WorkQueue {
  private readonly queued = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private readonly failures = new Map<string, number>();
  private wake?: () => void;
  private closed = false;

  constructor(
    private readonly baseBackoffMs = 200,
    private readonly maxBackoffMs = 30_000,
  ) {}

  add(key: string): void {
    if (this.closed) return;
    if (this.processing.has(key)) {
      this.dirty.add(key);
      return;
    }
    this.queued.add(key);
    this.wake?.();
  }

  /** Adds the key after `ms`, unless an earlier add for it is already pending. */
  addAfter(key: string, ms: number): void {
    if (this.closed) return;
    const at = Date.now() + ms;
    const pending = this.timers.get(key);
    if (pending && pending.at <= at) return;
    if (pending) clearTimeout(pending.timer);
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, ms);
    timer.unref();
    this.timers.set(key, { at, timer });
  }

  /** Requeues with exponential backoff after a failure. */
  addRateLimited(key: string): void {
    const n = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, n);
    this.addAfter(key, Math.min(this.baseBackoffMs * 2 ** (n - 1), this.maxBackoffMs));
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  get length(): number {
    return this.queued.size;
  }

  /** The next key, or undefined once the queue is shut down. */
  async get(): Promise<string | undefined> {
    while (!this.closed) {
      const next = this.queued.values().next();
      if (!next.done) {
        this.queued.delete(next.value);
        this.processing.add(next.value);
        return next.value;
      }
      await new Promise<void>((r) => (this.wake = r));
      this.wake = undefined;
    }
    return undefined;
  }

  done(key: string): void {
    this.processing.delete(key);
    if (this.dirty.delete(key)) this.add(key);
  }

  shutDown(): void {
    this.closed = true;
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.wake?.();
  }
}
