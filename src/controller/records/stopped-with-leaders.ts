/**
 * The TiKV Pods the controller let stop while their store still had region leaders: the preStop wait
 * reached its end (the grace period less the server's own stop time) or the leader count stopped
 * dropping. Discovery adds them as it answers the hook; the status document lists them (newest
 * first) under `stoppedWithLeaders`. Kept in memory only: the `StoppedWithLeaders` Warning Event on
 * the Pod is what outlives a restart of the controller.
 */

/** One Pod let go with leaders. */
export interface StoppedWithLeaders {
  /** The Pod's name. */
  readonly pod: string;
  /** Its store's id in PD. */
  readonly store: number;
  /** The region leaders the store still had when the Pod was let go. */
  readonly leaders: number;
  /** `deadline`: the Pod's wait was over; `stalled`: the count had not dropped for the stall window. */
  readonly why: 'deadline' | 'stalled';
  /** How long the Pod waited, in seconds. */
  readonly waitedSeconds: number;
  /** When it was let go (RFC 3339). */
  readonly at: string;
  /** What happened, in a sentence (the Event's message). */
  readonly message: string;
}

/** How many are listed; older ones drop off. */
export const STOPPED_WITH_LEADERS_KEPT = 10;

export class StoppedWithLeadersLog {
  private entries: readonly StoppedWithLeaders[] = [];

  add(entry: StoppedWithLeaders): void {
    this.entries = [entry, ...this.entries].slice(0, STOPPED_WITH_LEADERS_KEPT);
  }

  /** Newest first. */
  list(): readonly StoppedWithLeaders[] {
    return this.entries;
  }
}

/** The Event's and the status line's text. */
export function stoppedWithLeadersMessage(e: Omit<StoppedWithLeaders, 'at' | 'message'>, stallSeconds: number): string {
  const because =
    e.why === 'stalled'
      ? `the count had not dropped for ${stallSeconds}s`
      : `its wait was over (the grace period less the server's stop time); a longer spec.tikv.terminationGracePeriodSeconds gives PD more time`;
  return `${e.pod} stopped with ${e.leaders} region leaders still on store ${e.store} after waiting ${e.waitedSeconds}s: ${because}; clients of those regions wait for a new leader to be elected`;
}
