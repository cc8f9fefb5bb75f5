/**
 * The records of the one-shot Backups and Restores: each operation's Job as the controller created and
 * saw it, kept in the status ConfigMap for as long as the namespace lives. The record, not the Job, is
 * what makes an operation run once: a Job deleted by hand or by a TTL, a re-synced or re-created
 * ConfigMap, a document removed from Git and put back, a controller restart, none of them starts a run
 * an operation has had. A record that says an operation ran is never dropped; those of documents long
 * gone from Git are kept short. A restore's record is bound to the cluster instance it restored (PD's
 * cluster ID): it says nothing of a cluster made anew under the same name.
 */
import type { RunReport } from './backup-runs';
import { compareCodeUnits } from '../../base/order';

/**
 * Where an operation stands. `Waiting`: not started, and why (`reason`). `Running`: its Job is
 * created (or about to be: `uid` unset). `Lost`: its Job went away before it finished.
 */
export type OperationPhase = 'Waiting' | 'Running' | 'Complete' | 'Failed' | 'Lost';

export interface OperationRecord extends RunReport {
  /** The Job's name, also its ConfigMap's: `backup-<name>` or `restore-<name>`. */
  readonly job: string;
  readonly phase: OperationPhase;
  /**
   * The UID of the Job the controller created; unset while it is being created. A Job of that name
   * with another UID is not this run's. @default none
   */
  readonly uid?: string;
  /** The digest of the Job it was created from (`sha256:` of the ConfigMap's `job.json`). @default none (not started) */
  readonly template?: string;
  /**
   * The digest of what the operation does: its Job without the images, which follow the cluster's
   * version (see `operationDigests`). A change of it is announced. @default none (not started, or
   * recorded before it was kept: set from the document as it is when next seen)
   */
  readonly spec?: string;
  /**
   * PD's cluster ID of the cluster the Job was created against: a restore ran into that cluster
   * instance, not into one made anew since. @default none (not started, or recorded before it was kept)
   */
  readonly clusterId?: string;
  /**
   * A restore that ran into another instance of the cluster before, which is gone (its cluster ID):
   * this one runs into the cluster as it is now. @default none
   */
  readonly formerCluster?: string;
  /** When the controller created the Job (RFC 3339). @default none */
  readonly created?: string;
  /** Waiting: what it waits for. @default none */
  readonly reason?: string;
  /** The digest (`spec`) of its document's Job as changed after it ran (not run again). @default none */
  readonly changed?: string;
}

/**
 * How many records of operations no longer in Git are kept whole, newest first; older ones keep what
 * makes them run once: the name, the phase, when, and the cluster instance.
 */
export const FORMER_KEPT = 100;

const PHASES: readonly OperationPhase[] = ['Waiting', 'Running', 'Complete', 'Failed', 'Lost'];
const TEXT = [
  'uid',
  'template',
  'spec',
  'clusterId',
  'formerCluster',
  'created',
  'started',
  'finished',
  'storage',
  'backupTS',
  'size',
  'error',
  'reason',
  'changed',
] as const;

/** Whether an operation has run (or is running): it is never started again. */
export const hasRun = (r: OperationRecord | undefined): boolean => r !== undefined && r.phase !== 'Waiting';

/** Reads back the operation records (by Job name) from a status document written before. */
export function operationsOf(doc: unknown): Record<string, OperationRecord> {
  const list = (doc as { operations?: unknown } | undefined)?.operations;
  if (!Array.isArray(list)) return {};
  const out: Record<string, OperationRecord> = {};
  for (const r of list as Partial<OperationRecord>[]) {
    if (typeof r?.job !== 'string' || !PHASES.includes(r.phase as OperationPhase)) continue;
    const record: Record<string, string> = { job: r.job, phase: r.phase as string };
    for (const k of TEXT) if (typeof r[k] === 'string') record[k] = r[k] as string;
    out[r.job] = record as unknown as OperationRecord;
  }
  return out;
}

/** The records as the status document lists them, by name. */
export function listOperations(records: Readonly<Record<string, OperationRecord>>): OperationRecord[] {
  return Object.values(records).sort((a, b) => compareCodeUnits(a.job, b.job));
}

/**
 * The records worth keeping: every operation still in Git (`current`) whole, and every one that left
 * it and ran: the newest {@link FORMER_KEPT} whole, the others short ({@link shortRecord}). A record
 * that says an operation ran is never dropped, so that a document put back in Git after any number of
 * others never runs again. Only a `Waiting` record of a document gone from Git goes.
 */
export function keptOperations(
  records: Readonly<Record<string, OperationRecord>>,
  current: readonly string[],
): Record<string, OperationRecord> {
  const inGit = new Set(current);
  const all = Object.values(records);
  const former = all
    .filter((r) => !inGit.has(r.job) && hasRun(r))
    .sort((a, b) => compareCodeUnits(b.created ?? '', a.created ?? '') || compareCodeUnits(a.job, b.job))
    .map((r, i) => (i < FORMER_KEPT ? r : shortRecord(r)));
  return Object.fromEntries([...all.filter((r) => inGit.has(r.job)), ...former].map((r) => [r.job, r]));
}

/** What a record of an operation long gone from Git keeps: enough never to run it twice. */
export function shortRecord(r: OperationRecord): OperationRecord {
  return {
    job: r.job,
    phase: r.phase,
    ...(r.created !== undefined && { created: r.created }),
    ...(r.clusterId !== undefined && { clusterId: r.clusterId }),
  };
}

/** A restore into a cluster made anew: the one it restored before is gone. */
const anew = (r: OperationRecord): string =>
  r.formerCluster === undefined
    ? ''
    : `, into the cluster made anew (PD cluster ID ${r.clusterId ?? '?'}; it restored before into cluster ${r.formerCluster}, which is gone)`;

/** What a record says, in a line. */
export function messageOf(r: OperationRecord): string {
  const what = r.job.startsWith('restore-') ? 'restore' : 'backup';
  const again = r.changed !== undefined ? ' Its document changed since; it is not run again: give it a new name to run it again.' : '';
  switch (r.phase) {
    case 'Waiting':
      return `waiting: ${r.reason ?? 'not started'}`;
    case 'Running':
      return r.error ? `cannot start: ${r.error}` : `running${r.created ? ` since ${r.created}` : ''}${anew(r)}`;
    case 'Complete':
      return `${what === 'backup' ? 'backup written to' : 'restored from'} ${r.storage ?? '(no storage path reported)'}, BackupTS ${r.backupTS ?? '?'}, ${r.size ?? '?'} bytes, finished ${r.finished ?? '?'}${anew(r)}.${again}`;
    case 'Failed':
      return `${what} failed${r.storage ? ` (${r.storage})` : ''}: ${r.error ?? 'no reason given'}.${again}`;
    case 'Lost':
      return `${what} ended without an outcome: ${r.error ?? 'its Job is gone'}.${again}`;
  }
}
