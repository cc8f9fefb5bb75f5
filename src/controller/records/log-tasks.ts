/**
 * The records of the log backups declared in Git: for each, the task, the state it is to be kept in,
 * the `br log` command Jobs the controller ran for it, and the Job that stops it, kept so that a task
 * whose document left Git is still stopped. Kept in the status ConfigMap until the task is stopped
 * and its document gone.
 */
import { LOG_COMMANDS, type LogCommand } from '../../tidbcluster/names';
import type { RunReport } from './backup-runs';
import { compareCodeUnits } from '../../base/order';

/** The state a task is to be kept in (`stopped` too once its document left Git). */
export type WantedState = 'running' | 'paused' | 'stopped';

/** One `br log` command Job: `Running` from before it is created until it ends, `Lost` when it went away. */
export interface LogCommandRun extends RunReport {
  readonly command: LogCommand;
  readonly job: string;
  readonly phase: 'Running' | 'Complete' | 'Failed' | 'Lost';
  /** The Job's UID; unset while it is being created. @default none */
  readonly uid?: string;
  /** When the controller created it (RFC 3339). */
  readonly created: string;
  /** When the controller saw it end (RFC 3339); the task is read again after that before the next command. @default none */
  readonly seen?: string;
  /** A truncate's `--until`. @default none */
  readonly until?: string;
}

export interface LogTaskRecord {
  /** The log backup's ConfigMap: `backup-<name>`. */
  readonly configMap: string;
  /** BR's task name: the document's name. */
  readonly task: string;
  readonly want: WantedState;
  /** Whether the document is in Git (its ConfigMap in the cluster's controller settings). */
  readonly inGit: boolean;
  /** The stop Job, as the ConfigMap last had it (JSON). @default none (not seen yet) */
  readonly stopJob?: string;
  /** How many command Jobs were created: each is named `<template name>-<n>`. */
  readonly runs: number;
  /** The last command Job. @default none */
  readonly last?: LogCommandRun;
  /** When the controller found the task already there and took it over (RFC 3339). @default none */
  readonly adopted?: string;
  /** Why no command runs although the task is not in its state. @default none */
  readonly reason?: string;
  /** Where the task writes its log (BR's storage URL), as its start reported it or PD holds it. @default none (not known yet) */
  readonly storage?: string;
  /** Up to where the log was truncated (a TSO). @default none */
  readonly truncatedUntil?: string;
  /**
   * The checkpoint TS the task had when the controller last resumed it from a pause without an error:
   * paused again at or before it, the task is held. Cleared when the document asks for another state.
   * @default none
   */
  readonly resumedFrom?: string;
  /** Since when (RFC 3339) the controller leaves a task paused again after its resume, and reports it. @default none (not held) */
  readonly heldSince?: string;
}

const STATES: readonly WantedState[] = ['running', 'paused', 'stopped'];
const RUN_PHASES: readonly LogCommandRun['phase'][] = ['Running', 'Complete', 'Failed', 'Lost'];
const RUN_TEXT = ['uid', 'created', 'seen', 'started', 'finished', 'storage', 'backupTS', 'size', 'error', 'until'] as const;

/** Reads back the records (by ConfigMap name) from a status document written before. */
export function logTasksOf(doc: unknown): Record<string, LogTaskRecord> {
  const list = (doc as { logBackupTasks?: unknown } | undefined)?.logBackupTasks;
  if (!Array.isArray(list)) return {};
  const out: Record<string, LogTaskRecord> = {};
  for (const r of list as Record<string, unknown>[]) {
    if (typeof r?.configMap !== 'string' || typeof r.task !== 'string' || !STATES.includes(r.want as WantedState)) continue;
    const last = runOf(r.last);
    out[r.configMap] = {
      configMap: r.configMap,
      task: r.task,
      want: r.want as WantedState,
      inGit: r.inGit !== false,
      runs: typeof r.runs === 'number' && Number.isInteger(r.runs) && r.runs >= 0 ? r.runs : 0,
      ...(typeof r.stopJob === 'string' && { stopJob: r.stopJob }),
      ...(last && { last }),
      ...(typeof r.adopted === 'string' && { adopted: r.adopted }),
      ...(typeof r.reason === 'string' && { reason: r.reason }),
      ...(typeof r.storage === 'string' && { storage: r.storage }),
      ...(typeof r.truncatedUntil === 'string' && /^\d+$/.test(r.truncatedUntil) && { truncatedUntil: r.truncatedUntil }),
      ...(typeof r.resumedFrom === 'string' && /^\d+$/.test(r.resumedFrom) && { resumedFrom: r.resumedFrom }),
      ...(typeof r.heldSince === 'string' && { heldSince: r.heldSince }),
    };
  }
  return out;
}

function runOf(v: unknown): LogCommandRun | undefined {
  const r = v as Record<string, unknown> | undefined;
  if (
    typeof r?.job !== 'string' ||
    typeof r.created !== 'string' ||
    !LOG_COMMANDS.includes(r.command as LogCommand) ||
    !RUN_PHASES.includes(r.phase as LogCommandRun['phase'])
  )
    return undefined;
  const out: Record<string, string> = { command: r.command as string, job: r.job, phase: r.phase as string };
  for (const k of RUN_TEXT) if (typeof r[k] === 'string') out[k] = r[k] as string;
  return out as unknown as LogCommandRun;
}

/** The records as the status document lists them, by ConfigMap name. */
export function listLogTasks(records: Readonly<Record<string, LogTaskRecord>>): LogTaskRecord[] {
  return Object.values(records).sort((a, b) => compareCodeUnits(a.configMap, b.configMap));
}
