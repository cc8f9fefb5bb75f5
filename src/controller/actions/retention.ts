/**
 * Letting an expired backup go, as retention decided it (plan/retention.ts): released, its data kept
 * where the record says (`BackupReleased`, recorded `Released`), or its folder removed from the bucket
 * (`BackupDeleted`, recorded `Deleted` once the folder is gone); and the Warning when a removal fails
 * (`BackupRetentionFailed`). The Events go on the schedule's CronJob.
 */
import type { BackupRetentionInfo } from '../../tidbcluster/contract';
import { names } from '../../tidbcluster/names';
import type { BackupAccess } from '../clients/backups';
import { openBackupStorage } from '../clients/backup-storage';
import type { KubeAccess } from '../clients/kube';
import type { Expired } from '../plan/retention';
import type { StatusRecords } from '../records/store';
import type { Logger } from '../runtime/log';

/** What letting a backup go uses. */
export interface RetentionDeps {
  readonly kube: Pick<KubeAccess, 'event'>;
  /** The buckets' Secrets, for the object storage. */
  readonly access: BackupAccess;
  readonly records: StatusRecords;
  readonly log: Logger;
}

/** Records the run `Released` and says so: its data stays where its record says. */
export async function releaseExpired(
  d: RetentionDeps,
  schedule: string,
  policy: BackupRetentionInfo,
  expired: Extract<Expired, { action: 'release' }>,
  now: number,
): Promise<void> {
  const { run } = expired;
  await d.records.setBackupRuns({ ...d.records.backupRuns, [run.job]: { ...run, phase: 'Released', deleted: iso(now) } });
  d.log.info('released an expired backup, its data kept', {
    schedule,
    job: run.job,
    storage: run.storage,
    ...(expired.kept && { why: expired.kept }),
  });
  const what = run.phase === 'Complete' ? 'expired backup' : `${run.phase.toLowerCase()} run`;
  const where = run.storage ?? '(no storage path reported)';
  const kept = expired.kept
    ? `its data stays at ${where}, though cleanPolicy ${policy.cleanPolicy} removes data: ${expired.kept}`
    : `cleanPolicy ${policy.cleanPolicy ?? 'Retain'} keeps its data at ${where}`;
  await d.kube.event(
    { kind: 'CronJob', name: names.backupSchedule(schedule) },
    'Normal',
    'BackupReleased',
    `let the ${what} ${run.job} go (${keptBy(policy)}); ${kept}`,
    now,
  );
}

/**
 * Removes the run's folder from the bucket, records the run `Deleted` and says so. Throws when any of
 * it fails; the next pass tries again.
 */
export async function deleteExpired(
  d: RetentionDeps,
  schedule: string,
  policy: BackupRetentionInfo,
  expired: Extract<Expired, { action: 'delete' }>,
  now: number,
): Promise<void> {
  const { run } = expired;
  const storage = await openBackupStorage(policy, d.access);
  const keys = await storage.list(expired.folder);
  await storage.delete(keys);
  // What is gone is recorded before anything else is removed: a restart never forgets it.
  await d.records.setBackupRuns({ ...d.records.backupRuns, [run.job]: { ...run, phase: 'Deleted', deleted: iso(now) } });
  d.log.info('removed an expired backup', { schedule, job: run.job, storage: run.storage, objects: keys.length });
  await d.kube.event(
    { kind: 'CronJob', name: names.backupSchedule(schedule) },
    'Normal',
    'BackupDeleted',
    `removed the ${run.phase === 'Complete' ? 'expired backup' : `${run.phase.toLowerCase()} run's partial backup`} ${run.storage} (${run.job}): ${keptBy(policy)}, cleanPolicy ${policy.cleanPolicy}`,
    now,
  );
}

/** The Warning that the schedule's expired backups cannot be removed: `why`. */
export async function retentionFailed(d: Pick<RetentionDeps, 'kube'>, schedule: string, why: string, now: number): Promise<void> {
  await d.kube.event(
    { kind: 'CronJob', name: names.backupSchedule(schedule) },
    'Warning',
    'BackupRetentionFailed',
    `could not remove the expired backups of schedule ${schedule}: ${why}`,
    now,
  );
}

const iso = (now: number): string => new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z');

function keptBy(policy: BackupRetentionInfo): string {
  return policy.maxBackups !== undefined ? `maxBackups is ${policy.maxBackups}` : `maxReservedTime is ${policy.maxReservedSeconds}s`;
}
