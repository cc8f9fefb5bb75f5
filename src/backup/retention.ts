/**
 * A BackupSchedule's retention: how many runs or how long to keep them (`maxBackups`,
 * `maxReservedTime`), and what the controller needs to remove the expired ones from their storage.
 */
import type { SpecIssue } from '../tidbcluster/errors';
import type { CleanPolicy } from '../tidbcluster/contract';
import type { ResolvedStorage } from './storage';
import type { BackupSchedule } from './types';

/** How many of a schedule's good backups to keep: exactly one of the two. */
export interface Retention {
  /** Keep this many successful backups, the newest. @default none */
  readonly maxBackups?: number;
  /** Keep the successful backups that started within this many seconds. @default none */
  readonly maxReservedSeconds?: number;
  /** What happens to an expired run's data (`spec.backupTemplate.cleanPolicy`). @default 'Retain' */
  readonly cleanPolicy: CleanPolicy;
}

/**
 * What stops the controller removing expired runs from the storage at `at`: the credentials it
 * reads, as tidb-operator's backup jobs read them (an S3 Secret's keys, a GCS service account key, an
 * Azure SAS token or account key), where the storage names none; local volumes, which it cannot reach.
 */
export function removalIssue(storage: ResolvedStorage, cleanPolicy: CleanPolicy, at: string): SpecIssue | undefined {
  const required = `required with cleanPolicy ${cleanPolicy}`;
  switch (storage.provider) {
    case 's3':
      return storage.secretName
        ? undefined
        : { path: `${at}.s3.secretName`, message: `${required}: the controller removes expired backups from the bucket with these keys` };
    case 'gcs':
      return storage.secretName
        ? undefined
        : {
            path: `${at}.gcs.secretName`,
            message: `${required}: the controller removes expired backups from the bucket with the service account key in this Secret's credentials`,
          };
    case 'azblob':
      if (storage.spec.sasToken) {
        return storage.spec.storageAccount || storage.secretName
          ? undefined
          : {
              path: `${at}.azblob.storageAccount`,
              message: `${required} and a sasToken: the account the controller removes expired backups from (or a secretName whose Secret holds AZURE_STORAGE_ACCOUNT)`,
            };
      }
      return storage.secretName
        ? undefined
        : {
            path: `${at}.azblob.secretName`,
            message: `${required}: the controller removes expired backups from the container with this Secret's AZURE_STORAGE_KEY (and AZURE_STORAGE_ACCOUNT unless storageAccount is given), or with a sasToken`,
          };
    case 'local':
      return {
        path: 'spec.backupTemplate.cleanPolicy',
        message: `removing expired backups (cleanPolicy ${cleanPolicy}) from local storage is not carried out yet: only from S3, GCS and Azure Blob storage; with Retain, expired runs leave the records and their data stays`,
      };
  }
}

/**
 * `maxBackups` or `maxReservedTime` (a Go duration, as tidb-operator parses it with
 * `time.ParseDuration`: `72h`, `30m`; `d` is not a unit there).
 */
export function retentionOf(s: BackupSchedule['spec'], issues: SpecIssue[]): Omit<Retention, 'cleanPolicy'> | undefined {
  const { maxBackups, maxReservedTime } = s;
  if (maxBackups !== undefined && maxReservedTime !== undefined) {
    issues.push({
      path: 'spec.maxReservedTime',
      message: 'give one of maxBackups and maxReservedTime (tidb-operator would use maxReservedTime and ignore maxBackups)',
    });
    return undefined;
  }
  if (maxBackups !== undefined) {
    if (!Number.isInteger(maxBackups) || maxBackups < 1) {
      issues.push({
        path: 'spec.maxBackups',
        message: `expected a whole number of backups to keep, at least 1, got ${JSON.stringify(maxBackups)}`,
      });
      return undefined;
    }
    return { maxBackups };
  }
  if (maxReservedTime !== undefined) {
    const seconds = goDurationSeconds(maxReservedTime);
    if (seconds === undefined || seconds <= 0) {
      issues.push({
        path: 'spec.maxReservedTime',
        message: `expected a duration such as 72h or 90m (Go's units: h, m, s), got ${JSON.stringify(maxReservedTime)}`,
      });
      return undefined;
    }
    return { maxReservedSeconds: seconds };
  }
  return undefined;
}

/** Seconds of a Go duration (`1h30m`, `45s`, `1.5h`), or undefined when it is not one. */
function goDurationSeconds(text: string): number | undefined {
  const UNITS: Record<string, number> = { ns: 1e-9, us: 1e-6, µs: 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 };
  if (!/^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/.test(text)) return undefined;
  let total = 0;
  for (const m of text.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g)) total += Number(m[1]) * UNITS[m[2]];
  return total;
}
