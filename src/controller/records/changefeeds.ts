/**
 * The records of the TiCDC changefeeds the controller manages, kept in the status ConfigMap: which are
 * its own (created or adopted from a `Changefeed`), what Git asked of each when it last applied it (so
 * that a change in Git, or a rotated credential, is seen), whether it paused one to update it, and the
 * deletionPolicy Git last gave it. Never a credential: only the Secret's version.
 */

/** What Git asked of a changefeed when the controller last applied it. */
export interface AppliedChangefeed {
  /** The sink URI, without credentials. */
  readonly sinkUri: string;
  /** Where the credentials come from (canonical JSON of the Secret and keys). @default none */
  readonly credentials?: string;
  /** `<uid>/<resourceVersion>` of the credentials' Secret. @default none */
  readonly secretVersion?: string;
  /** @default none */
  readonly targetTs?: string;
  /** The replica config, canonical JSON. @default none */
  readonly replicaConfig?: string;
}

/** One changefeed the controller manages, by id. */
export interface ChangefeedRecord {
  /** The document's name. */
  readonly document: string;
  /** What is done with it once its document leaves Git. */
  readonly deletionPolicy: 'Retain' | 'Delete';
  /** What Git asked when it was last applied. @default none (adopted, never applied) */
  readonly applied?: AppliedChangefeed;
  /** The controller paused it to update it: it resumes it once updated. @default false */
  readonly pausedForUpdate?: boolean;
  /** Its document left Git with `Retain`: left in TiCDC, no longer changed. @default false */
  readonly retained?: boolean;
}

const text = (v: unknown): v is string => typeof v === 'string';

function appliedFrom(v: unknown): AppliedChangefeed | undefined {
  const a = v as Partial<AppliedChangefeed> | undefined;
  if (!a || !text(a.sinkUri)) return undefined;
  return {
    sinkUri: a.sinkUri,
    ...(text(a.credentials) && { credentials: a.credentials }),
    ...(text(a.secretVersion) && { secretVersion: a.secretVersion }),
    ...(text(a.targetTs) && { targetTs: a.targetTs }),
    ...(text(a.replicaConfig) && { replicaConfig: a.replicaConfig }),
  };
}

/** Reads back the records from a status document written before (`changefeedRecords`). */
export function changefeedsOf(doc: unknown): Record<string, ChangefeedRecord> {
  const out: Record<string, ChangefeedRecord> = {};
  const all = (doc as { changefeedRecords?: Record<string, Partial<ChangefeedRecord>> } | undefined)?.changefeedRecords;
  if (!all || typeof all !== 'object') return out;
  for (const [id, r] of Object.entries(all)) {
    if (!text(r?.document) || (r.deletionPolicy !== 'Retain' && r.deletionPolicy !== 'Delete')) continue;
    const applied = appliedFrom(r.applied);
    out[id] = {
      document: r.document,
      deletionPolicy: r.deletionPolicy,
      ...(applied && { applied }),
      ...(r.pausedForUpdate === true && { pausedForUpdate: true }),
      ...(r.retained === true && { retained: true }),
    };
  }
  return out;
}
