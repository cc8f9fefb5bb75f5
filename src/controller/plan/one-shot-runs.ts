/**
 * The one-shot Backups and Restores: what each needs this pass, from its record, its ConfigMap, its Job
 * and the cluster. Pure. A one-shot run starts at most once: its record says `Running` before its Job is
 * created, so that a restart finds it, and a Job that goes away after it was created is `Lost`, never
 * created again. The one-shot runs of a cluster go one at a time, and only while the cluster is ready.
 *
 * A restore is bound to the cluster instance it ran into, by PD's cluster ID (which a cluster keeps
 * for as long as its PD data lives, and which a cluster made anew under the same name does not
 * have): in a cluster made anew it has not run, and runs, once BR is sure to find the cluster as a
 * restore needs it (see `restoreBlocked`).
 */
import { createHash } from 'node:crypto';
import { ANNOTATION, BACKUP_LABEL, JOB_NAME_LABEL } from '../../tidbcluster/names';
import type { Job, Pod } from '../model/objects';
import type { ComponentState, PdState } from '../view/view';
import type { ComponentPlan } from './plan';
import type { OperationRecord } from '../records/operations';
import { runOutcome } from '../view/backup-runs';

/** A one-shot run's Job as its ConfigMap holds it, and its digests. */
export interface OneShotTemplate {
  /** The ConfigMap's `job.json`. */
  readonly json: string;
  /** `sha256:` of the JSON as it is. */
  readonly digest: string;
  /** `sha256:` of what the run does: the Job without its images ({@link oneShotDigests}). */
  readonly spec: string;
}

/** What the controller saw of one one-shot run this pass. */
export interface OneShotInput {
  /** The Job's name (and its ConfigMap's). */
  readonly job: string;
  /** The ConfigMap's Job and its digests, or undefined while the ConfigMap is not there. */
  readonly template?: OneShotTemplate;
  readonly record?: OperationRecord;
  /** The Job of that name, if there is one. */
  readonly live?: Job;
  /** Its Pods. */
  readonly pods: readonly Pod[];
  /**
   * Why this restore may not start on the cluster as it is (tables it would write into exist), or
   * undefined when it may. @default none
   */
  readonly blocked?: string;
}

/** What one one-shot run needs this pass. */
export interface OneShotStep {
  /** The record after this pass. */
  readonly record: OperationRecord;
  /** Create the Job from the template (the record, `Running` without a UID, is written first). */
  readonly create?: true;
  /** What is news for an Event: started, finished, stuck, waiting (first), or changed after it ran. */
  readonly news?: 'started' | 'finished' | 'stuck' | 'waiting' | 'changed';
}

/** What the one-shot runs are planned from. */
export interface OneShotRunsInput {
  /** Each one-shot run of the cluster: those in Git, and those still followed to their end. */
  readonly operations: readonly OneShotInput[];
  /** Why the cluster cannot take a backup or a restore now, or undefined when it can. */
  readonly notReady?: string;
  /**
   * PD's cluster ID, the instance of the cluster the runs go against; undefined while it cannot
   * be read (no run starts, and no record is taken for another instance's). @default none
   */
  readonly clusterId?: string;
  /** A scheduled backup running now (its Job's name), during which no restore starts. @default none */
  readonly scheduledRun?: string;
  /**
   * Why no restore starts because of log backup: a task runs into the cluster (a restore would be
   * logged as new writes), or the tasks cannot be read. @default none
   */
  readonly logBackup?: string;
  readonly now: number;
}

/**
 * The digests of a one-shot run's Job: of the JSON as it is, and of what the run does, which
 * leaves out the containers' images: they follow the cluster's version (BR must match TiKV), so a
 * cluster upgrade changes them without changing what is backed up or restored, from or to where.
 */
export function oneShotDigests(json: string): Pick<OneShotTemplate, 'digest' | 'spec'> {
  const sha = (text: string) => `sha256:${createHash('sha256').update(text).digest('hex')}`;
  let spec: string;
  try {
    spec = sha(JSON.stringify(withoutImages(JSON.parse(json))));
  } catch {
    spec = sha(json);
  }
  return { digest: sha(json), spec };
}

function withoutImages(job: unknown): unknown {
  const pod = (job as { spec?: { template?: { spec?: Record<string, unknown> } } })?.spec?.template?.spec;
  if (!pod) return job;
  const strip = (list: unknown) =>
    Array.isArray(list) ? list.map((c) => (typeof c === 'object' && c !== null ? { ...c, image: undefined } : c)) : list;
  const j = job as { spec: { template: Record<string, unknown> } };
  return {
    ...j,
    spec: {
      ...j.spec,
      template: { ...j.spec.template, spec: { ...pod, containers: strip(pod.containers), initContainers: strip(pod.initContainers) } },
    },
  };
}

/** Each one-shot run's next step, in order: at most one starts, and none while another runs. */
export function planOneShotRuns(input: OneShotRunsInput): OneShotStep[] {
  const steps: OneShotStep[] = [];
  let busy = input.operations.find((o) => o.record?.phase === 'Running')?.job;
  for (const op of input.operations) {
    const step = stepOf(op, input, busy);
    if (step.record.phase === 'Running') busy ??= op.job;
    steps.push(step);
  }
  return steps;
}

const isRestore = (job: string): boolean => job.startsWith('restore-');

function stepOf(op: OneShotInput, input: OneShotRunsInput, busy: string | undefined): OneShotStep {
  const live = op.live && ownJob(op.live, op.job) ? op.live : undefined;
  const r = elsewhere(op, input) ? undefined : op.record;
  const former = r === undefined && op.record ? (op.record.clusterId ?? op.record.formerCluster) : op.record?.formerCluster;
  if (r && r.phase !== 'Waiting' && r.phase !== 'Running') return overStep(r, op.template);
  if (r?.phase === 'Running') {
    if (r.uid === undefined) {
      // The record was written and the controller stopped before it saw its Job: adopt it, or create it.
      if (live) return observe(op, { ...r, uid: live.metadata.uid }, live);
      return { record: r, create: true };
    }
    if (live && live.metadata.uid === r.uid) return observe(op, r, live);
    return { record: { ...r, phase: 'Lost', error: 'its Job was deleted before it finished; it is not run again' }, news: 'finished' };
  }
  // Announced when it starts waiting; what it waits for then changes as the cluster comes up, in the
  // record and on the ConfigMap.
  const announced = op.record !== undefined && (r !== undefined || op.record.formerCluster !== undefined);
  const wait = (reason: string): OneShotStep => ({
    record: { job: op.job, phase: 'Waiting', reason, ...(former !== undefined && { formerCluster: former }) },
    ...(!announced && { news: 'waiting' as const }),
  });
  // Not started. A Job of ours already there (the records were lost): adopted rather than run twice,
  // unless it is a restore's into another instance of the cluster, which waits to be deleted: the
  // controller deletes no Job, and a new one takes its name.
  const liveCluster = live?.metadata.annotations?.[ANNOTATION.operationCluster];
  const leftover = live && isRestore(op.job) ? leftoverOf(liveCluster, former, input.clusterId) : undefined;
  if (leftover !== undefined) {
    const step = wait(
      `the Job ${op.job} of the restore into the cluster as it was before (PD cluster ID ${leftover}) is still there; delete it (kubectl delete job ${op.job}) and the restore runs into this cluster`,
    );
    return { ...step, record: { ...step.record, formerCluster: former ?? leftover } };
  }
  if (live) {
    const adopted: OperationRecord = {
      job: op.job,
      phase: 'Running',
      uid: live.metadata.uid,
      ...(op.template && { template: op.template.digest, spec: op.template.spec }),
      ...(liveCluster !== undefined && { clusterId: liveCluster }),
    };
    return observe(op, adopted, live);
  }
  if (op.live) return wait(`a Job named ${op.job} exists that this operation did not create; delete it or rename the document`);
  if (!op.template) return wait(`its ConfigMap ${op.job} is not there yet`);
  if (busy !== undefined) return wait(`${busy} is running; operations of a cluster run one at a time`);
  if (input.notReady !== undefined) return wait(`the cluster is not ready: ${input.notReady}`);
  if (input.clusterId === undefined) return wait("PD's cluster ID cannot be read, to bind the run to this instance of the cluster");
  if (isRestore(op.job) && input.scheduledRun) return wait(`the scheduled backup ${input.scheduledRun} is running`);
  if (isRestore(op.job) && input.logBackup) return wait(input.logBackup);
  if (isRestore(op.job) && op.blocked !== undefined) return wait(op.blocked);
  const created = new Date(input.now).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const record: OperationRecord = {
    job: op.job,
    phase: 'Running',
    template: op.template.digest,
    spec: op.template.spec,
    created,
    clusterId: input.clusterId,
    ...(former !== undefined && { formerCluster: former }),
  };
  return { record, create: true, news: 'started' };
}

/**
 * The cluster ID of the instance a restore's Job ran against, when not this one: its annotation says
 * another; or, for a Job created before the annotation, the record says the restore ran into another
 * instance (`former`).
 */
function leftoverOf(liveCluster: string | undefined, former: string | undefined, clusterId: string | undefined): string | undefined {
  if (liveCluster !== undefined) return clusterId !== undefined && liveCluster !== clusterId ? liveCluster : undefined;
  return former;
}

/**
 * Whether the run's record is of another instance of the cluster: a restore that ran, or ran
 * into, a cluster whose PD had another cluster ID. Such a record says nothing of this cluster. A
 * record without a cluster ID (written before they were kept) is taken for this cluster's.
 */
function elsewhere(op: OneShotInput, input: OneShotRunsInput): boolean {
  const r = op.record;
  if (!r || !isRestore(op.job) || r.phase === 'Waiting' || r.phase === 'Running') return false;
  return r.clusterId !== undefined && input.clusterId !== undefined && r.clusterId !== input.clusterId;
}

/**
 * A one-shot run that is over is never run again. A change of what its document does is announced once
 * per change; a new image alone (a cluster upgrade) is no change. A record kept before the `spec`
 * digest takes the document's as it is now, quietly: any change before was announced then.
 */
function overStep(r: OperationRecord, template: OneShotTemplate | undefined): OneShotStep {
  if (!template) return { record: r };
  if (r.spec === undefined) return { record: { ...r, spec: template.spec, ...(r.changed !== undefined && { changed: template.spec }) } };
  if (template.spec === r.spec || template.spec === r.changed) return { record: r };
  return { record: { ...r, changed: template.spec }, news: 'changed' };
}

/** The record of a run whose Job is there, after looking at it and its Pods. */
function observe(op: OneShotInput, r: OperationRecord, job: Job): OneShotStep {
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
export function clusterNotReady(
  components: readonly ComponentState[],
  plans: readonly ComponentPlan[],
  pd: PdState | { readonly error: string } | undefined,
): string | undefined {
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

/** A Job of this one-shot run: its name, and the label the rendered template gives it. */
function ownJob(job: Job, name: string): boolean {
  return job.metadata.name === name && job.metadata.labels?.[BACKUP_LABEL.operation] === name;
}

/** The Pods of a Job, by the label the Job controller puts on them. */
export function podsOf(job: string, pods: readonly Pod[]): Pod[] {
  return pods.filter((p) => p.metadata.labels?.[JOB_NAME_LABEL] === job);
}
