/**
 * The one-shot Backups and Restores: what each needs this pass, from its record, its ConfigMap, its Job
 * and the cluster. Pure. An operation starts at most once: its record says `Running` before its Job is
 * created, so that a restart finds it, and a Job that goes away after it was created is `Lost`, never
 * created again. Operations of a cluster run one at a time, and only while the cluster is ready.
 */
import { BACKUP_LABEL } from '../../tidbcluster/names';
import type { Job, Pod } from '../model/objects';
import type { ComponentState, PdState } from '../view/view';
import type { ComponentPlan } from './plan';
import type { OperationRecord } from '../records/operations';
import { JOB_NAME_LABEL, runOutcome } from './backup-runs';

/** What the controller saw of one operation this pass. */
export interface OperationInput {
  /** The Job's name (and its ConfigMap's). */
  readonly job: string;
  /** The ConfigMap's `job.json` and its digest, or undefined while the ConfigMap is not there. */
  readonly template?: { readonly json: string; readonly digest: string };
  readonly record?: OperationRecord;
  /** The Job of that name, if there is one. */
  readonly live?: Job;
  /** Its Pods. */
  readonly pods: readonly Pod[];
}

export interface OperationStep {
  /** The record after this pass. */
  readonly record: OperationRecord;
  /** Create the Job from the template (the record, `Running` without a UID, is written first). */
  readonly create?: true;
  /** What is news for an Event: started, finished, stuck, waiting (first), or changed after it ran. */
  readonly news?: 'started' | 'finished' | 'stuck' | 'waiting' | 'changed';
}

export interface OperationsInput {
  readonly operations: readonly OperationInput[];
  /** Why the cluster cannot take a backup or a restore now, or undefined when it can. */
  readonly notReady?: string;
  /** A scheduled backup running now (its Job's name), during which no restore starts. @default none */
  readonly scheduledRun?: string;
  /**
   * Why no restore starts because of log backup: a task runs into the cluster (a restore would be
   * logged as new writes), or the tasks cannot be read. @default none
   */
  readonly logBackup?: string;
  readonly now: number;
}

/** Each operation's next step, in order: at most one starts, and none while another runs. */
export function planOperations(input: OperationsInput): OperationStep[] {
  const steps: OperationStep[] = [];
  let busy = input.operations.find((o) => o.record?.phase === 'Running')?.job;
  for (const op of input.operations) {
    const step = stepOf(op, input, busy);
    if (step.record.phase === 'Running') busy ??= op.job;
    steps.push(step);
  }
  return steps;
}

function stepOf(op: OperationInput, input: OperationsInput, busy: string | undefined): OperationStep {
  const r = op.record;
  const live = op.live && ownJob(op.live, op.job) ? op.live : undefined;
  if (r && r.phase !== 'Waiting' && r.phase !== 'Running') {
    // Over: never again. A document changed since says so, once per change.
    const changed = op.template && r.template && op.template.digest !== r.template ? op.template.digest : undefined;
    if (changed === undefined || changed === r.changed) return { record: r };
    return { record: { ...r, changed }, news: 'changed' };
  }
  if (r?.phase === 'Running') {
    if (r.uid === undefined) {
      // The record was written and the controller stopped before it saw its Job: adopt it, or create it.
      if (live) return observe(op, { ...r, uid: live.metadata.uid }, live);
      return { record: r, create: true };
    }
    if (live && live.metadata.uid === r.uid) return observe(op, r, live);
    return { record: { ...r, phase: 'Lost', error: 'its Job was deleted before it finished; it is not run again' }, news: 'finished' };
  }
  // Not started. A Job of ours already there (the records were lost): adopt it rather than run twice.
  if (live) return observe(op, { job: op.job, phase: 'Running', uid: live.metadata.uid, ...(op.template && { template: op.template.digest }) }, live);
  // Announced when it starts waiting; what it waits for then changes as the cluster comes up, in the
  // record and on the ConfigMap.
  const wait = (reason: string): OperationStep => ({ record: { job: op.job, phase: 'Waiting', reason }, ...(r === undefined && { news: 'waiting' as const }) });
  if (op.live) return wait(`a Job named ${op.job} exists that this operation did not create; delete it or rename the document`);
  if (!op.template) return wait(`its ConfigMap ${op.job} is not there yet`);
  if (busy !== undefined) return wait(`${busy} is running; operations of a cluster run one at a time`);
  if (input.notReady !== undefined) return wait(`the cluster is not ready: ${input.notReady}`);
  if (op.job.startsWith('restore-') && input.scheduledRun) return wait(`the scheduled backup ${input.scheduledRun} is running`);
  if (op.job.startsWith('restore-') && input.logBackup) return wait(input.logBackup);
  const created = new Date(input.now).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return { record: { job: op.job, phase: 'Running', template: op.template.digest, created }, create: true, news: 'started' };
}

/** The record of a run whose Job is there, after looking at it and its Pods. */
function observe(op: OperationInput, r: OperationRecord, job: Job): OperationStep {
  const o = runOutcome(job, op.pods);
  const record: OperationRecord = { ...stripOutcome(r), phase: o.phase, ...o.details };
  if (o.phase !== 'Running') return { record, news: 'finished' };
  if (o.details.error !== undefined && o.details.error !== r.error) return { record, news: 'stuck' };
  return { record };
}

function stripOutcome(r: OperationRecord): OperationRecord {
  const { started: _s, finished: _f, storage: _st, backupTS: _b, size: _z, error: _e, reason: _r, ...rest } = r;
  return rest;
}

/**
 * Why the cluster cannot take a backup or restore now, or undefined when it can: every component
 * rolled out (no upgrade, scale or failover under way) with all its Pods ready, and PD answering with
 * every store Up. BR needs the whole cluster: a restore into a cluster still starting fails halfway.
 */
export function clusterNotReady(components: readonly ComponentState[], plans: readonly ComponentPlan[], pd: PdState | { readonly error: string } | undefined): string | undefined {
  if (components.length === 0) return 'no component is running yet';
  for (const p of plans) {
    if (p.phase !== 'Normal') return `${p.kind} is in ${p.phase} (${p.reason})`;
  }
  for (const c of components) {
    const want = plans.find((p) => p.kind === c.kind)?.desired ?? c.sts.spec?.replicas ?? 1;
    const ready = c.sts.status?.readyReplicas ?? 0;
    if (ready < want) return `${ready} of ${want} ${c.kind} Pods are ready`;
  }
  if (pd && 'error' in pd) return `PD cannot be read: ${pd.error}`;
  if (pd?.storesError) return `PD's stores cannot be read: ${pd.storesError}`;
  const down = pd?.stores.filter((s) => s.state !== 'Up') ?? [];
  if (down.length > 0) return `store ${down[0].id} (${down[0].address}) is ${down[0].state}`;
  return undefined;
}

/** A Job this operation's: its name, and the label the rendered template gives it. */
function ownJob(job: Job, name: string): boolean {
  return job.metadata.name === name && job.metadata.labels?.[BACKUP_LABEL.operation] === name;
}

/** The Pods of a Job, by the label the Job controller puts on them. */
export function podsOf(job: string, pods: readonly Pod[]): Pod[] {
  return pods.filter((p) => p.metadata.labels?.[JOB_NAME_LABEL] === job);
}
