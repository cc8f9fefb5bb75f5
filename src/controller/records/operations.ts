/**
 * The records of the one-shot Backups and Restores: each operation's Job as the controller created and
 * saw it, kept in the status ConfigMap for as long as the namespace lives. The record, not the Job, is
 * what makes an operation run once: a Job deleted by hand or by a TTL, a re-synced or re-created
 * ConfigMap, a document removed from Git and put back, a controller restart, none of them starts a run
 * an operation has had.
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
  /** When the controller created the Job (RFC 3339). @default none */
  readonly created?: string;
  /** Waiting: what it waits for. @default none */
  readonly reason?: string;
  /** The digest of its document's Job as changed after it ran (not run again). @default none */
  readonly changed?: string;
}

/** How many records of operations no longer in Git are kept, newest first. */
export const FORMER_KEPT = 100;

const PHASES: readonly OperationPhase[] = ['Waiting', 'Running', 'Complete', 'Failed', 'Lost'];
const TEXT = ['uid', 'template', 'created', 'started', 'finished', 'storage', 'backupTS', 'size', 'error', 'reason', 'changed'] as const;

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
 * The records worth keeping: every operation still in Git (`current`), and the newest
 * {@link FORMER_KEPT} of those that left it and ran. A record that says an operation ran is never
 * dropped while its document is in Git.
 */
export function keptOperations(records: Readonly<Record<string, OperationRecord>>, current: readonly string[]): Record<string, OperationRecord> {
  const inGit = new Set(current);
  const all = Object.values(records);
  const former = all
    .filter((r) => !inGit.has(r.job) && hasRun(r))
    .sort((a, b) => compareCodeUnits(b.created ?? '', a.created ?? '') || compareCodeUnits(a.job, b.job))
    .slice(0, FORMER_KEPT);
  return Object.fromEntries([...all.filter((r) => inGit.has(r.job)), ...former].map((r) => [r.job, r]));
}

/** What a record says, in a line. */
export function messageOf(r: OperationRecord): string {
  const what = r.job.startsWith('restore-') ? 'restore' : 'backup';
  const again = r.changed !== undefined ? ' Its document changed since; it is not run again: give it a new name to run it again.' : '';
  switch (r.phase) {
    case 'Waiting':
      return `waiting: ${r.reason ?? 'not started'}`;
    case 'Running':
      return r.error ? `cannot start: ${r.error}` : `running${r.created ? ` since ${r.created}` : ''}`;
    case 'Complete':
      return `${what === 'backup' ? 'backup written to' : 'restored from'} ${r.storage ?? '(no storage path reported)'}, BackupTS ${r.backupTS ?? '?'}, ${r.size ?? '?'} bytes, finished ${r.finished ?? '?'}.${again}`;
    case 'Failed':
      return `${what} failed${r.storage ? ` (${r.storage})` : ''}: ${r.error ?? 'no reason given'}.${again}`;
    case 'Lost':
      return `${what} ended without an outcome: ${r.error ?? 'its Job is gone'}.${again}`;
  }
}
