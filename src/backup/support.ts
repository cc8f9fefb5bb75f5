/**
 * Valid CRD fields of Backup, BackupSchedule and Restore that this project does not carry out. Each is
 * refused with its path and the reason, never dropped: a backup that silently ignores a setting is
 * worse than one that does not render.
 */
import type { SpecIssue } from '../tidbcluster/errors';

/** [field, why it is refused, the value that asks for nothing and is accepted (the CRD's default)] */
type Refusal = readonly [string, string, unknown?];

const DUMPLING = 'Dumpling (logical) backups are not carried out: use BR (the default)';
const VOLUME_SNAPSHOT = 'volume-snapshot backups and restores (EBS snapshots across Kubernetes clusters) are not carried out';
const NOT_YET = 'is not carried out yet';

/** Refused in the spec of a Backup and in a schedule's `backupTemplate` and `logBackupTemplate`. */
const BACKUP_FIELDS: readonly Refusal[] = [
  ['dumpling', DUMPLING],
  ['from', DUMPLING],
  ['storageClassName', `${DUMPLING}; BR writes to the storage directly and needs no volume`],
  ['storageSize', `${DUMPLING}; BR writes to the storage directly and needs no volume`],
  ['volumeAttributesClassName', `${DUMPLING}; BR writes to the storage directly and needs no volume`],
  ['tikvGCLifeTime', `${DUMPLING}; BR keeps its own GC safepoint while it runs`],
  ['federalVolumeBackupPhase', VOLUME_SNAPSHOT],
  ['volumeBackupInitJobMaxActiveSeconds', VOLUME_SNAPSHOT, 600],
  ['resumeGcSchedule', VOLUME_SNAPSHOT, false],
  ['calcSizeLevel', `${VOLUME_SNAPSHOT}; BR reports a snapshot backup's size itself`, 'all'],
  ['useKMS', 'decrypting the storage credentials with AWS KMS is not carried out: give them in `secretName` or use an IAM role', false],
  ['cleanOption', `${NOT_YET}: data is removed by BackupSchedule retention, in one listing and batched deletes`],
  ['backoffRetryPolicy', `${NOT_YET}: a failed backup is reported and the next scheduled run makes a new one`],
  ['br.onLine', "is a restore setting (BR's `--online`); a backup has no such flag"],
];

/** Refused in the spec of a Restore. */
const RESTORE_FIELDS: readonly Refusal[] = [
  ['to', DUMPLING],
  ['storageClassName', `${DUMPLING}; BR reads the storage directly and needs no volume`],
  ['storageSize', `${DUMPLING}; BR reads the storage directly and needs no volume`],
  ['volumeAttributesClassName', `${DUMPLING}; BR reads the storage directly and needs no volume`],
  ['tikvGCLifeTime', DUMPLING],
  ['federalVolumeRestorePhase', VOLUME_SNAPSHOT],
  ['volumeAZ', VOLUME_SNAPSHOT],
  ['warmup', VOLUME_SNAPSHOT],
  ['warmupImage', VOLUME_SNAPSHOT],
  ['warmupStrategy', VOLUME_SNAPSHOT, 'hybrid'],
  ['tolerateSingleTiKVOutage', VOLUME_SNAPSHOT, false],
  ['useKMS', 'decrypting the storage credentials with AWS KMS is not carried out: give them in `secretName` or use an IAM role', false],
  ['replicationConfig', 'restoring from a compacted log backup (CompactBackup) is not carried out'],
  ['prune', `${NOT_YET}: a failed restore leaves its checkpoint for BR to resume from`],
  ['br.timeAgo', "is a backup setting (BR's `--timeago`); a restore has no such flag"],
  ['logRestoreStartTs', `${NOT_YET}: a point-in-time restore replays the log from its snapshot backup`],
];

/** Refused in the spec of a BackupSchedule (its templates are checked as Backups). */
const SCHEDULE_FIELDS: readonly Refusal[] = [
  ['compactBackupTemplate', 'CompactBackup (compacting the log backup) is not carried out'],
  ['compactInterval', 'CompactBackup (compacting the log backup) is not carried out'],
  ['minCompactStartTs', 'CompactBackup (compacting the log backup) is not carried out'],
  ['storageClassName', `${DUMPLING}; BR writes to the storage directly and needs no volume`],
  ['storageSize', `${DUMPLING}; BR writes to the storage directly and needs no volume`],
  ['volumeAttributesClassName', `${DUMPLING}; BR writes to the storage directly and needs no volume`],
];

/** The refused fields set in a Backup's spec (or a template of one), `at` being its path. */
export function backupRefusals(spec: Record<string, unknown>, at: string): SpecIssue[] {
  return refusals(spec, at, BACKUP_FIELDS);
}

export function restoreRefusals(spec: Record<string, unknown>, at: string): SpecIssue[] {
  return refusals(spec, at, RESTORE_FIELDS);
}

export function scheduleRefusals(spec: Record<string, unknown>, at: string): SpecIssue[] {
  return refusals(spec, at, SCHEDULE_FIELDS);
}

function refusals(spec: Record<string, unknown>, at: string, fields: readonly Refusal[]): SpecIssue[] {
  const issues: SpecIssue[] = [];
  for (const [field, why, harmless] of fields) {
    const value = field.split('.').reduce<unknown>((v, k) => (isObject(v) ? v[k] : undefined), spec);
    if (value === undefined || value === null || (harmless !== undefined && value === harmless)) continue;
    issues.push({ path: `${at}.${field}`, message: `not supported: ${why}` });
  }
  return issues;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
