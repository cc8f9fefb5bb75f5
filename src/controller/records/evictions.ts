/**
 * The eviction records: the evict-leader schedulers this controller added, kept so that it removes
 * its own when an operation is over and never an administrator's.
 */
/** An evict-leader scheduler this controller added (kept in the status ConfigMap, so it can tell its own from an administrator's). */
export interface EvictionRecord {
  readonly pod: string;
  /**
   * Why it was added: an upgrade or scale-in step, a Pod's `tidb.pingcap.com/evict-leader` request,
   * or a Pod someone else deletes (a node drain's eviction).
   */
  readonly for: 'upgrade' | 'scale-in' | 'request' | 'drain';
  /** When (RFC 3339). */
  readonly since: string;
}

/** Reads back the eviction records from a status document written before. */
export function evictionsOf(doc: unknown): Record<string, EvictionRecord> {
  const e = (doc as { evictions?: unknown } | undefined)?.evictions;
  if (typeof e !== 'object' || e === null || Array.isArray(e)) return {};
  const out: Record<string, EvictionRecord> = {};
  for (const [id, r] of Object.entries(e as Record<string, Partial<EvictionRecord>>)) {
    if (/^\d+$/.test(id) && typeof r?.pod === 'string')
      out[id] = {
        pod: r.pod,
        for: r.for === 'scale-in' || r.for === 'request' || r.for === 'drain' ? r.for : 'upgrade',
        since: String(r.since ?? ''),
      };
  }
  return out;
}
