/**
 * Leader election on a coordination.k8s.io Lease, so that two controller replicas never act at once.
 * The rules are client-go's: a Lease is free when its holder is empty or when it has not changed for
 * its duration, as measured by this process's own clock from the moment it saw the change (no clock
 * comparison across machines); writes are optimistic (resourceVersion), so two candidates cannot both
 * win; a leader that cannot renew within the renew deadline steps down.
 */
import type { Logger } from './log';

export interface LeaseRecord {
  readonly holder: string;
  readonly durationSeconds: number;
  readonly acquireTime?: string;
  readonly renewTime?: string;
  readonly transitions: number;
  readonly resourceVersion: string;
}

export interface LeaseStore {
  getLease(name: string): Promise<LeaseRecord | undefined>;
  /** Creates (no resourceVersion) or replaces the Lease; rejects on a conflict. Returns the new resourceVersion. */
  writeLease(name: string, lease: Omit<LeaseRecord, 'resourceVersion'>, resourceVersion?: string): Promise<string>;
}

export interface ElectionTiming {
  /** How long a Lease stays valid without renewal. @default 15000 */
  readonly leaseMs: number;
  /** How often the leader renews and a candidate retries. @default 5000 */
  readonly renewMs: number;
  /** A leader that has not renewed for this long steps down. @default 10000 */
  readonly renewDeadlineMs: number;
}

export const DEFAULT_TIMING: ElectionTiming = { leaseMs: 15_000, renewMs: 5_000, renewDeadlineMs: 10_000 };

const microTime = (ms: number): string => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

export class LeaderElector {
  private leading = false;
  private lastRenew = 0;
  private observed?: { rv: string; at: number; record: LeaseRecord };
  private timer?: NodeJS.Timeout;
  private stopped = false;
  /** The round in progress, which `stop` lets finish so its write cannot overtake the release. */
  private inflight?: Promise<void>;

  constructor(
    private readonly store: LeaseStore,
    private readonly name: string,
    readonly identity: string,
    private readonly timing: ElectionTiming,
    private readonly log: Logger,
    private readonly onChange: (leading: boolean) => void,
  ) {}

  get isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    this.run();
  }

  private run(): void {
    this.inflight = this.tick().finally(() => (this.inflight = undefined));
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => this.run(), this.timing.renewMs);
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    try {
      const won = await this.tryAcquireOrRenew(Date.now());
      if (won) this.lastRenew = Date.now();
      if (won !== this.leading && (won || Date.now() - this.lastRenew > this.timing.renewDeadlineMs)) this.set(won);
    } catch (err) {
      this.log.warn('lease request failed', { lease: this.name, error: (err as Error).message });
      if (this.leading && Date.now() - this.lastRenew > this.timing.renewDeadlineMs) this.set(false);
    }
    this.schedule();
  }

  private set(leading: boolean): void {
    this.leading = leading;
    this.log.info(leading ? 'became leader' : 'lost leadership', { lease: this.name, identity: this.identity });
    this.onChange(leading);
  }

  /** One round: true when this process holds the Lease afterwards. */
  private async tryAcquireOrRenew(now: number): Promise<boolean> {
    const durationSeconds = Math.max(1, Math.round(this.timing.leaseMs / 1000));
    // A leader renews on the version it wrote last: one request per renewal, a conflict means a re-read.
    if (this.leading && this.observed) {
      const mine = this.observed.record;
      try {
        const rv = await this.store.writeLease(
          this.name,
          {
            holder: this.identity,
            durationSeconds,
            acquireTime: mine.acquireTime,
            renewTime: microTime(now),
            transitions: mine.transitions,
          },
          this.observed.rv,
        );
        this.observed = { rv, at: now, record: { ...mine, resourceVersion: rv } };
        return true;
      } catch (err) {
        if ((err as { code?: number }).code !== 409) throw err;
      }
    }
    const current = await this.store.getLease(this.name);
    if (!current) {
      const rv = await this.store.writeLease(this.name, {
        holder: this.identity,
        durationSeconds,
        acquireTime: microTime(now),
        renewTime: microTime(now),
        transitions: 0,
      });
      this.observed = {
        rv,
        at: now,
        record: { holder: this.identity, durationSeconds, acquireTime: microTime(now), transitions: 0, resourceVersion: rv },
      };
      return true;
    }
    if (this.observed?.rv !== current.resourceVersion) this.observed = { rv: current.resourceVersion, at: now, record: current };
    const held = current.holder !== '' && current.holder !== this.identity;
    if (held && now < this.observed.at + current.durationSeconds * 1000) return false;
    const mine = current.holder === this.identity;
    try {
      const rv = await this.store.writeLease(
        this.name,
        {
          holder: this.identity,
          durationSeconds,
          acquireTime: mine ? current.acquireTime : microTime(now),
          renewTime: microTime(now),
          transitions: mine ? current.transitions : current.transitions + 1,
        },
        current.resourceVersion,
      );
      const acquireTime = mine ? current.acquireTime : microTime(now);
      this.observed = {
        rv,
        at: now,
        record: {
          ...current,
          holder: this.identity,
          acquireTime,
          transitions: mine ? current.transitions : current.transitions + 1,
          resourceVersion: rv,
        },
      };
      return true;
    } catch (err) {
      if ((err as { code?: number }).code === 409) return false;
      throw err;
    }
  }

  /** Stops campaigning; a leader hands the Lease back so a successor need not wait for it to expire. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.inflight;
    if (!this.leading || !this.observed) return;
    this.leading = false;
    try {
      await this.store.writeLease(
        this.name,
        { holder: '', durationSeconds: 1, renewTime: microTime(Date.now()), transitions: this.observed.record.transitions },
        this.observed.rv,
      );
      this.log.info('released the lease', { lease: this.name });
    } catch (err) {
      this.log.warn('could not release the lease', { lease: this.name, error: (err as Error).message });
    }
  }
}
