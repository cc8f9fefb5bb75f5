/**
 * The log backups declared in Git: which `br log` command, if any, brings each task to the state its
 * document asks for, from its record, its ConfigMap, its command Jobs and the tasks as PD's etcd holds
 * them. Pure.
 *
 * - One command at a time per log backup, and the task is read again after it ends before the next
 *   one is chosen: the tasks are read once per resync period, and a start must not follow a start.
 * - `running`: a task that is not there is started (`br log start`), a paused one resumed; one paused
 *   by an error is resumed too, at most once per {@link RETRY_MS}, since its document asks for it to
 *   run (tidb-operator leaves it paused and reports it). A pause without an error that the document
 *   did not ask for (by hand, or TiDB's advancer for checkpoint lag) is resumed once, as tidb-operator
 *   resumes a task its Backup says runs (pkg/backup/backup/backup_tracker.go `SyncLogBackupState`
 *   records the paused state, then v1alpha1 `ParseLogBackupSubcommand` turns log-start into
 *   log-resume); paused again before its checkpoint moved past where that resume left it, it is held:
 *   reported as a fault and not resumed again until the document asks for another state first (the
 *   advancer pauses a lagging task again at its next tick, so resuming it more would loop).
 *   `paused`: started if missing, then paused.
 *   `stopped`: stopped while it exists. A document that left Git asks for `stopped`, with the stop
 *   Job its ConfigMap last had.
 * - A task of the same name already there is taken over as it is: a cluster moved from tidb-operator
 *   keeps its task, which the operator named after its Backup (cmd/backup-manager/app/backup/backup.go,
 *   `--task-name=<Backup name>`).
 * - BR runs one log backup task per cluster (br/pkg/task/stream.go, `RunStreamStart`: any task under
 *   `/tidb/br-stream/info/` refuses a start), so a start waits while another task exists.
 * - A command that failed is tried again after {@link RETRY_MS}; a start or resume waits for the
 *   cluster to be ready (BR needs every TiKV); pause and stop act on PD alone and never wait.
 * - Once the task is where it should be, its log is truncated (`br log truncate --until`) up to the
 *   point its schedule's retention gives, or its document's `logTruncateUntil` (the later of the two),
 *   on the folder the task writes to, only forward.
 */
import { LOG_COMMANDS, logCommandJobName, logCommandKey, OPERATION_KEY, type LogCommand } from '../../tidbcluster/names';
import type { Job, Pod } from '../model/objects';
import type { LogCommandRun, LogTaskRecord, WantedState } from '../records/log-tasks';
import { runOutcome } from '../view/backup-runs';
import type { LogBackupTask, LogBackupView } from './log-backups';
import { podsOf } from './one-shot-runs';

/** How long after a failed command (or a resume of a task an error paused) the same command runs again. */
export const RETRY_MS = 5 * 60_000;

/** A log backup's ConfigMap, as rendered from its document. */
export interface LogBackupDoc {
  readonly task: string;
  readonly state: WantedState;
  /** `logTruncateUntil`, a TSO. @default none */
  readonly truncateUntil?: string;
  /** Each command's Job, JSON, by command. */
  readonly jobs: Partial<Record<LogCommand, string>>;
}

export interface LogTaskInput {
  /** The ConfigMap's name, `backup-<name>`. */
  readonly configMap: string;
  /** Whether its document is in Git (the cluster's controller settings name it). */
  readonly inGit: boolean;
  /** The ConfigMap's content; undefined while it is not there (or its document left Git). */
  readonly doc?: LogBackupDoc | { readonly problem: string };
  readonly record?: LogTaskRecord;
  /** This log backup's command Jobs (by its label) and their Pods. */
  readonly jobs: readonly Job[];
  readonly pods: readonly Pod[];
}

export interface LogTasksContext {
  /** The tasks as last read from PD (`at`: when), or why they could not be; undefined: not read. */
  readonly view?: LogBackupView;
  /** Why the cluster cannot take a start or resume now. @default none (ready) */
  readonly notReady?: string;
  /**
   * Up to where each log backup's log may go (a TSO), by ConfigMap: the oldest snapshot its schedule's
   * retention keeps; log before it can no longer be replayed on anything. @default none (no truncation)
   */
  readonly truncateUntil?: Readonly<Record<string, string>>;
  readonly now: number;
}

/** Where a log backup stands, for its ConfigMap's health annotations. */
export type LogTaskPhase = 'Waiting' | 'Running' | 'Complete' | 'Failed';

export interface LogTaskStep {
  readonly configMap: string;
  /** The record after this pass; undefined: dropped (stopped, and its document gone). */
  readonly record?: LogTaskRecord;
  /** Create this command's Job (the record, with the command `Running`, is written first). */
  readonly create?: { readonly command: LogCommand; readonly body: Record<string, unknown> };
  /** An Event to send. */
  readonly news?: { readonly type: 'Normal' | 'Warning'; readonly reason: string; readonly message: string };
  readonly phase: LogTaskPhase;
  readonly message: string;
}

const PAST: Record<LogCommand, string> = { start: 'Started', pause: 'Paused', resume: 'Resumed', stop: 'Stopped', truncate: 'Truncated' };
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** Each log backup's step this pass. Steps of different log backups are independent. */
export function planLogTasks(inputs: readonly LogTaskInput[], ctx: LogTasksContext): LogTaskStep[] {
  return inputs.map((i) => planLogTask(i, ctx)).filter((s): s is LogTaskStep => s !== undefined);
}

export function planLogTask(input: LogTaskInput, ctx: LogTasksContext): LogTaskStep | undefined {
  const before = input.record;
  if (!before && !input.inGit) return undefined;
  const doc = input.doc && 'task' in input.doc ? input.doc : undefined;
  let r: LogTaskRecord = before ?? {
    configMap: input.configMap,
    task: doc?.task ?? input.configMap.replace(/^backup-/, ''),
    want: 'running',
    inGit: true,
    runs: 0,
  };
  if (doc) r = { ...r, task: doc.task, want: doc.state, inGit: true, ...(doc.jobs.stop !== undefined && { stopJob: doc.jobs.stop }) };
  else if (!input.inGit) r = { ...r, want: 'stopped', inGit: false };
  const { reason: _reason, ...rest } = r;
  r = rest;
  // Another state asked for ends a hold: back at running, a pause is resumed once more.
  if (r.want !== 'running') r = withoutHold(r);
  const now = iso(ctx.now);
  const step = (phase: LogTaskPhase, message: string, extra: Partial<LogTaskStep> = {}): LogTaskStep => ({
    configMap: input.configMap,
    record: r,
    phase,
    message,
    ...extra,
  });
  const wait = (reason: string, phase: LogTaskPhase = 'Waiting'): LogTaskStep => {
    r = { ...r, reason };
    // Announced when it starts waiting; what it waits for may then change, in the record and on the ConfigMap.
    const news = before?.reason === undefined ? { type: 'Normal' as const, reason: 'LogBackupWaiting', message: reason } : undefined;
    return step(phase, `waiting: ${reason}`, news && { news });
  };

  // The command under way, followed to its end.
  const last = r.last;
  if (last?.phase === 'Running') {
    const live = input.jobs.find((j) => j.metadata.name === last.job);
    if (last.uid === undefined && !live) {
      // The record was written and the controller stopped before the Job was created: create it now.
      const body = jobBody(templateOf(last.command), last.job);
      if (body) return step('Running', `br log ${last.command} (${last.job})`, { create: { command: last.command, body } });
      r = { ...r, last: { ...last, phase: 'Lost', error: `its ${logCommandKey(last.command)} is gone`, seen: now } };
      return step('Failed', `br log ${last.command} could not run: its Job template is gone`);
    }
    if (!live || (last.uid !== undefined && live.metadata.uid !== last.uid)) {
      r = { ...r, last: { ...last, phase: 'Lost', error: 'its Job was deleted before it finished', seen: now } };
      return step('Failed', `br log ${last.command} ended without an outcome: its Job was deleted`, {
        news: {
          type: 'Warning',
          reason: 'LogBackupCommandLost',
          message: `br log ${last.command} (${last.job}): its Job was deleted before it finished`,
        },
      });
    }
    const outcome = runOutcome(live, podsOf(last.job, input.pods));
    // A truncate keeps its point through every pass that sees it running: it is what the log is
    // truncated to once the Job has succeeded.
    const seenRun: LogCommandRun = {
      command: last.command,
      job: last.job,
      created: last.created,
      uid: live.metadata.uid,
      phase: outcome.phase,
      ...outcome.details,
      ...(last.until !== undefined && { until: last.until }),
    };
    if (outcome.phase === 'Running') {
      r = { ...r, last: seenRun };
      const stuck = seenRun.error !== undefined && seenRun.error !== last.error;
      return step(
        'Running',
        `br log ${last.command} running (${last.job})${seenRun.error ? `: ${seenRun.error}` : ''}`,
        stuck
          ? { news: { type: 'Warning', reason: 'LogBackupStuck', message: `br log ${last.command} (${last.job}): ${seenRun.error}` } }
          : {},
      );
    }
    r = { ...r, last: { ...seenRun, seen: now } };
    if (outcome.phase === 'Complete') {
      // Where the log goes, as the start wrote it (a schedule's log backup has a folder per start), and how far it is truncated.
      if (last.command === 'start' && seenRun.storage) r = { ...r, storage: seenRun.storage };
      if (last.command === 'truncate' && last.until !== undefined) r = { ...r, truncatedUntil: last.until };
      const what =
        last.command === 'truncate'
          ? `br log truncate --until=${last.until ?? '?'} on ${r.storage ?? 'its storage'}`
          : `br log ${last.command} --task-name=${r.task}`;
      return step('Running', `br log ${last.command} done; reading the task again`, {
        news: { type: 'Normal', reason: `LogBackup${PAST[last.command]}`, message: `${what} succeeded (${last.job})` },
      });
    }
    return step('Failed', `br log ${last.command} failed: ${seenRun.error ?? 'no reason given'}`, {
      news: {
        type: 'Warning',
        reason: 'LogBackupCommandFailed',
        message: `br log ${last.command} --task-name=${r.task} failed (${last.job}): ${seenRun.error ?? 'no reason given'}`,
      },
    });
  }

  if (input.inGit && !doc)
    return wait(input.doc && 'problem' in input.doc ? input.doc.problem : `its ConfigMap ${input.configMap} is not there yet`);
  const view = ctx.view;
  if (!view) return wait('the log backup tasks have not been read from PD yet');
  if ('error' in view) return wait(`the log backup tasks cannot be read from PD: ${view.error}`);
  // Read after the second the command was seen ending in (the record keeps whole seconds): a read of
  // the same pass may come from before BR's last write.
  if (r.last?.seen !== undefined && view.at < Date.parse(r.last.seen) + 1000)
    return step('Running', `br log ${r.last.command} ended; reading the task again`);

  const task = view.tasks.find((t) => t.name === r.task);
  if (task?.storage && !r.storage) r = { ...r, storage: task.storage };
  let adopted: LogTaskStep['news'];
  // Found there before this controller ran any command for it (it may have waited for the cluster).
  if (task && r.runs === 0 && r.adopted === undefined) {
    r = { ...r, adopted: now };
    adopted = {
      type: 'Normal',
      reason: 'LogBackupAdopted',
      message: `the log backup task ${task.name} was already there (${task.state}, started at TS ${task.startTS}); it is kept, not started again`,
    };
  }
  const until = truncation(r, task, latest(ctx.truncateUntil?.[input.configMap], doc?.truncateUntil));
  const command = commandFor(r.want, task) ?? (until !== undefined && doc?.jobs.truncate !== undefined ? 'truncate' : undefined);
  if (task?.state === 'Running' && r.heldSince !== undefined) r = withoutHold(r);
  if (command === 'resume' && task?.state === 'Paused' && pausedAgain(r, task)) {
    const news =
      r.heldSince === undefined
        ? {
            type: 'Warning' as const,
            reason: task.pause?.lag ? 'LogBackupLagPaused' : 'LogBackupPausedAgain',
            message: heldMessage(r, task),
          }
        : undefined;
    r = { ...r, heldSince: r.heldSince ?? now, reason: heldMessage(r, task) };
    return step('Failed', heldMessage(r, task), news && { news });
  }
  if (!command) {
    if (r.want === 'stopped' && !r.inGit) return { configMap: input.configMap, phase: 'Complete', message: 'stopped' };
    const { phase, message } = synced(r, task);
    return step(phase, message, adopted && { news: adopted });
  }
  if (command === 'start') {
    const other = view.tasks.find((t) => t.name !== r.task);
    if (other)
      return wait(
        `the log backup task ${other.name} exists in this cluster; BR keeps one task per cluster: stop it, or name this document ${other.name} to take it over`,
      );
  }
  if ((command === 'start' || command === 'resume') && ctx.notReady !== undefined) return wait(`the cluster is not ready: ${ctx.notReady}`);
  // The same command failed (or an error pause was resumed) not long ago: not again yet.
  const prior = r.last;
  if (prior && prior.command === command && (prior.phase !== 'Complete' || task?.state === 'Error')) {
    const since = Date.parse(prior.seen ?? prior.created);
    if (ctx.now - since < RETRY_MS) {
      const why =
        prior.phase === 'Complete'
          ? `the task was paused by an error again after br log resume: ${task?.error ?? 'no error given'}`
          : `br log ${command} failed: ${prior.error ?? 'no reason given'}`;
      return wait(`${why}; tried again after ${iso(since + RETRY_MS)}`, 'Failed');
    }
  }
  const template = templateOf(command);
  if (template === undefined) return wait(`no ${logCommandKey(command)} to run br log ${command} with`, 'Failed');
  const runs = r.runs + 1;
  const name = templateName(template);
  const truncate = command === 'truncate' && until !== undefined && r.storage !== undefined ? { until, storage: r.storage } : undefined;
  const body = name !== undefined ? jobBody(template, logCommandJobName(name, runs), truncate) : undefined;
  if (!body) return wait(`its ${logCommandKey(command)} is not a Job`, 'Failed');
  const job = String((body.metadata as { name: string }).name);
  r = { ...r, runs, last: { command, job, phase: 'Running', created: now, ...(truncate && { until: truncate.until }) } };
  // Where a resume of a pause without an error leaves the task: paused again before it moves past this, it is held.
  if (command === 'resume' && task?.state === 'Paused') r = { ...r, resumedFrom: task.checkpointTS };
  const why = truncate
    ? `running br log truncate --until=${truncate.until} on ${truncate.storage} (${job})`
    : `running br log ${command} --task-name=${r.task} (${job})${task ? `: the task is ${task.state}` : ': the task is not there'}, the document asks for ${r.want}`;
  if (command === 'resume' && task?.pause?.lag) {
    const message = `${lagText(task)}; running br log resume once (${job}), as tidb-operator resumes a task its Backup says runs: paused again before its checkpoint moves on, it is left paused and reported`;
    return step('Running', `br log ${command} (${job})`, {
      create: { command, body },
      news: { type: 'Warning', reason: 'LogBackupLagPaused', message },
    });
  }
  return step('Running', `br log ${command} (${job})`, {
    create: { command, body },
    news: { type: 'Normal', reason: 'LogBackupCommand', message: why },
  });

  function templateOf(c: LogCommand): string | undefined {
    return c === 'stop' ? (doc?.jobs.stop ?? r.stopJob) : doc?.jobs[c];
  }
}

/**
 * The TSO to truncate the log to, or undefined: only on a task that runs or is paused (its storage is
 * known, and it still writes there), beyond where it was truncated, and not past its checkpoint (the
 * log up to `until` must be complete, or no point after the snapshot could be restored to).
 */
function truncation(r: LogTaskRecord, task: LogBackupTask | undefined, until: string | undefined): string | undefined {
  if (until === undefined || !/^\d+$/.test(until) || !task || r.storage === undefined || r.want === 'stopped') return undefined;
  if (
    BigInt(until) <= BigInt(r.truncatedUntil ?? '0') ||
    BigInt(until) <= BigInt(task.startTS) ||
    BigInt(until) > BigInt(task.checkpointTS)
  )
    return undefined;
  return until;
}

/**
 * Whether the task, paused without an error, was paused again after the controller resumed it and
 * before its checkpoint moved past where that resume found it.
 */
function pausedAgain(r: LogTaskRecord, task: LogBackupTask): boolean {
  if (r.resumedFrom === undefined || r.last?.command !== 'resume' || r.last.phase !== 'Complete') return false;
  return BigInt(task.checkpointTS) <= BigInt(r.resumedFrom);
}

function withoutHold(r: LogTaskRecord): LogTaskRecord {
  const { resumedFrom: _from, heldSince: _since, ...rest } = r;
  return rest;
}

/** Who paused the task and when, as `br log status` tells it. */
function pausedBy(task: LogBackupTask): string {
  const p = task.pause;
  if (!p) return 'paused';
  return `paused (${p.severity}${p.host ? ` by ${p.host}` : ''}${p.time ? ` at ${p.time}` : ''}${p.message ? `: ${p.message}` : ''})`;
}

/** A pause TiDB's advancer made for checkpoint lag, in the user's words. */
function lagText(task: LogBackupTask): string {
  const p = task.pause!;
  return `TiDB's log backup advancer paused the task ${task.name}${p.host ? ` from ${p.host}` : ''}${p.time ? ` at ${p.time}` : ''}: its checkpoint TS ${task.checkpointTS} (${task.checkpointTime}) lags ${task.lagSeconds} s behind, past the advancer's limit (tidb_advancer_check_point_lag_limit, 48h by default)`;
}

function heldMessage(r: LogTaskRecord, task: LogBackupTask): string {
  const what = task.pause?.lag
    ? lagText(task)
    : `the log backup task ${task.name} is ${pausedBy(task)}, checkpoint TS ${task.checkpointTS} (${task.checkpointTime}, ${task.lagSeconds} s behind)`;
  return `${what}; it was paused again after br log resume (${r.last?.job ?? 'the last resume'}) before its checkpoint moved past TS ${r.resumedFrom}, so it is not resumed again: find why its checkpoint does not advance (br log status, TiKV's log backup errors), then set the document's logSubcommand to log-pause and back to resume it once more, or stop it and start a new log backup after a snapshot backup`;
}

/** The later of two TSOs, either of which may be missing. */
function latest(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined || !/^\d+$/.test(a)) return b;
  if (b === undefined || !/^\d+$/.test(b)) return a;
  return BigInt(a) >= BigInt(b) ? a : b;
}

/** The command that moves the task toward `want`, or undefined when it is there. */
function commandFor(want: WantedState, task: LogBackupTask | undefined): LogCommand | undefined {
  switch (want) {
    case 'running':
      return !task ? 'start' : task.state === 'Running' ? undefined : 'resume';
    case 'paused':
      return !task ? 'start' : task.state === 'Running' ? 'pause' : undefined;
    case 'stopped':
      return task ? 'stop' : undefined;
  }
}

function synced(r: LogTaskRecord, task: LogBackupTask | undefined): { phase: LogTaskPhase; message: string } {
  if (!task) return { phase: 'Complete', message: `the log backup task ${r.task} is stopped` };
  const where = `checkpoint TS ${task.checkpointTS} (${task.checkpointTime}, ${task.lagSeconds} s behind)${task.storage ? `, into ${task.storage}` : ''}`;
  if (task.state === 'Error')
    return { phase: 'Failed', message: `the log backup task ${r.task} is paused by an error: ${task.error ?? 'no error given'}; ${where}` };
  if (task.state === 'Paused' && task.pause?.lag)
    return {
      phase: 'Complete',
      message: `${lagText(task)}; the document asks for it paused${task.storage ? `; into ${task.storage}` : ''}`,
    };
  return { phase: 'Complete', message: `the log backup task ${r.task} is ${task.state === 'Running' ? 'running' : 'paused'}, ${where}` };
}

function templateName(json: string): string | undefined {
  try {
    const name = (JSON.parse(json) as { metadata?: { name?: unknown } }).metadata?.name;
    return typeof name === 'string' ? name : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The Job to create from a template, named `name`; undefined when the template is not a Job. A
 * truncate's gets its point (`@UNTIL@` in its arguments) and the task's storage (`BR_STORAGE`).
 */
function jobBody(
  json: string | undefined,
  name: string,
  truncate?: { until: string; storage: string },
): Record<string, unknown> | undefined {
  if (json === undefined) return undefined;
  try {
    const body = JSON.parse(json) as Record<string, unknown> & {
      spec?: { template?: { spec?: { containers?: { args?: string[]; env?: { name: string; value?: string }[] }[] } } };
    };
    if (body.kind !== 'Job' || typeof body.metadata !== 'object' || body.metadata === null) return undefined;
    if (truncate) {
      const c = body.spec?.template?.spec?.containers?.[0];
      if (!c?.args?.includes('--until=@UNTIL@')) return undefined;
      c.args = c.args.map((a) => (a === '--until=@UNTIL@' ? `--until=${truncate.until}` : a));
      c.env = (c.env ?? []).map((e) => (e.name === 'BR_STORAGE' ? { name: 'BR_STORAGE', value: truncate.storage } : e));
    }
    return { ...body, metadata: { ...(body.metadata as Record<string, unknown>), name } };
  } catch {
    return undefined;
  }
}

/** A log backup's ConfigMap data read back: its task, state and command Jobs, or what is wrong with it. */
export function logBackupDocOf(data: Readonly<Record<string, string>>): LogBackupDoc | { problem: string } {
  try {
    const spec = JSON.parse(data[OPERATION_KEY.logTask] ?? '') as { task?: unknown; state?: unknown; truncateUntil?: unknown };
    if (typeof spec.task !== 'string' || !['running', 'paused', 'stopped'].includes(spec.state as string))
      throw new Error('no task or state');
    const jobs: Partial<Record<LogCommand, string>> = {};
    for (const c of LOG_COMMANDS) if (data[logCommandKey(c)] !== undefined) jobs[c] = data[logCommandKey(c)];
    const until = typeof spec.truncateUntil === 'string' && /^\d+$/.test(spec.truncateUntil) ? { truncateUntil: spec.truncateUntil } : {};
    return { task: spec.task, state: spec.state as WantedState, jobs, ...until };
  } catch (err) {
    return { problem: `its ${OPERATION_KEY.logTask} is not a task and a state: ${(err as Error).message}` };
  }
}
