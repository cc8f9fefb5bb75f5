/**
 * The records of the config applied online (reconcile/online-config.ts), kept in the status
 * ConfigMap under `onlineConfigRecords`: per component (`pd`, `tikv`), each key applied to its running
 * servers without a restart, the value and when, and the members that reported it. A key that leaves
 * the config stays recorded while a member that has not restarted since may still hold it.
 */
/** A value as it is sent online: what both servers' JSON bodies take for one key. */
export type SentValue = string | number | boolean;

/** One key applied online: the value and when (epoch ms). */
export interface AppliedKey {
  readonly value: SentValue;
  readonly at: number;
}

/** What was applied online to one component. */
export interface OnlineConfigRecord {
  /** Per dotted key: the value and when it was applied (epoch ms). */
  readonly keys: Readonly<Record<string, AppliedKey>>;
  /** The members that reported the applied values after a send (those of earlier passes kept). */
  readonly members: readonly string[];
  /** When the last application was made, RFC 3339. */
  readonly time: string;
}

export type OnlineConfigComponent = 'pd' | 'tikv';
export const ONLINE_CONFIG_COMPONENTS: readonly OnlineConfigComponent[] = ['pd', 'tikv'];

const isSent = (v: unknown): v is SentValue =>
  typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));

/** Reads back the records from a status document written before; malformed entries are left out. */
export function onlineConfigOf(doc: unknown): Partial<Record<OnlineConfigComponent, OnlineConfigRecord>> {
  const out: Partial<Record<OnlineConfigComponent, OnlineConfigRecord>> = {};
  const all = (doc as { onlineConfigRecords?: Record<string, Partial<OnlineConfigRecord>> } | undefined)?.onlineConfigRecords;
  if (!all || typeof all !== 'object') return out;
  for (const component of ONLINE_CONFIG_COMPONENTS) {
    const r = all[component];
    if (!r || typeof r !== 'object' || typeof r.time !== 'string' || typeof r.keys !== 'object' || r.keys === null) continue;
    const keys: Record<string, AppliedKey> = {};
    for (const [key, a] of Object.entries(r.keys as Record<string, Partial<AppliedKey>>)) {
      if (a && isSent(a.value) && typeof a.at === 'number' && Number.isFinite(a.at)) keys[key] = { value: a.value, at: a.at };
    }
    const members = Array.isArray(r.members) ? r.members.filter((m): m is string => typeof m === 'string') : [];
    out[component] = { keys, members, time: r.time };
  }
  return out;
}
