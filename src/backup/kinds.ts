/**
 * Backup, BackupSchedule and Restore as document kinds the input reader takes beside TidbClusters:
 * each checked against its CRD (unknown fields with a did-you-mean), its names, what this project does
 * not carry out, and its storage, every problem at once.
 */
import { validateSchema, type CompactSchema } from '../tidbcluster/crd-schema';
import { unsafeTextIssues } from '../tidbcluster/check';
import type { SpecIssue } from '../tidbcluster/errors';
import type { DocumentKind } from '../tidbcluster/load';
import { DNS1123_LABEL } from '../base/patterns';
import { podLabelFindings } from '../tidbcluster/job-pod-input';
import { attach } from '../tidbcluster/pod-rules';
import backupSchema from './generated/backup.schema.json';
import scheduleSchema from './generated/backupschedule.schema.json';
import restoreSchema from './generated/restore.schema.json';
import { resolveBackup, resolveRestore, resolveSchedule, type OperationOptions, type ResolvedOperation } from './resolve';
import { backupRefusals, restoreRefusals, scheduleRefusals } from './support';
import { BACKUP_KIND, RESTORE_KIND, SCHEDULE_KIND, type Backup, type BackupSchedule, type Restore } from './types';

const SCHEMAS: Record<string, CompactSchema> = {
  [BACKUP_KIND]: backupSchema,
  [SCHEDULE_KIND]: scheduleSchema,
  [RESTORE_KIND]: restoreSchema,
};

/**
 * The longest name of each kind: its object names must fit. A Backup's Job is `backup-<name>`, a
 * Restore's `restore-<name>`, and the Job name is a label value on its Pods (at most 63); a schedule's
 * CronJob is `backup-<name>` and a CronJob name may have at most 52 characters (the Jobs it creates
 * add 11).
 */
const MAX_NAME: Readonly<Record<string, number>> = {
  [BACKUP_KIND]: 63 - 'backup-'.length,
  [SCHEDULE_KIND]: 52 - 'backup-'.length,
  [RESTORE_KIND]: 63 - 'restore-'.length,
};

/** The readers of the three kinds, for `parseDocuments`. */
export function operationKinds(options: OperationOptions = {}): DocumentKind<ResolvedOperation>[] {
  return [
    kind(
      BACKUP_KIND,
      (doc) => resolveBackup(doc as unknown as Backup, options),
      (spec) => [...backupRefusals(spec, 'spec')],
    ),
    kind(
      SCHEDULE_KIND,
      (doc) => resolveSchedule(doc as unknown as BackupSchedule, options),
      (spec) => [
        ...scheduleRefusals(spec, 'spec'),
        ...(isObject(spec.backupTemplate) ? backupRefusals(spec.backupTemplate, 'spec.backupTemplate') : []),
        ...(isObject(spec.logBackupTemplate) ? backupRefusals(spec.logBackupTemplate, 'spec.logBackupTemplate') : []),
      ],
    ),
    kind(
      RESTORE_KIND,
      (doc) => resolveRestore(doc as unknown as Restore, options),
      (spec) => restoreRefusals(spec, 'spec'),
    ),
  ];
}

type Resolver = (doc: Record<string, unknown>) => { value?: ResolvedOperation; issues: SpecIssue[] };

function kind(name: string, resolve: Resolver, refusals: (spec: Record<string, unknown>) => SpecIssue[]): DocumentKind<ResolvedOperation> {
  return {
    kind: name,
    group: 'pingcap.com',
    check(doc) {
      const unsafe = unsafeTextIssues(doc, name);
      if (unsafe.length > 0) return unsafe;
      const issues: SpecIssue[] = [...validateSchema(SCHEMAS[name], doc), ...metadataIssues(doc.metadata, name)];
      // Resolution reads the spec's shape; a document the schema refuses stops at the schema's words.
      const labels = labelIssues(doc.metadata);
      if (issues.length > 0 || !isObject(doc.spec)) return [...issues, ...labels];
      const reported = new Set(issues.map((i) => i.path));
      issues.push(...refusals(doc.spec).filter((i) => !reported.has(i.path)));
      issues.push(...resolve(doc).issues);
      return [...issues, ...labels];
    },
    read(doc) {
      const { value } = resolve(doc);
      if (!value) throw new Error(`${name}: read() of a document check() refused`);
      return value;
    },
  };
}

function metadataIssues(metadata: unknown, kindName: string): SpecIssue[] {
  if (!isObject(metadata)) return [{ path: 'metadata', message: `required field is missing: a ${kindName} needs metadata.name` }];
  const { name, namespace } = metadata;
  const issues: SpecIssue[] = [];
  const max = MAX_NAME[kindName];
  if (typeof name !== 'string') issues.push({ path: 'metadata.name', message: 'required field is missing' });
  else if (!DNS1123_LABEL.test(name))
    issues.push({
      path: 'metadata.name',
      message: `invalid name ${JSON.stringify(name)}: expected lowercase letters, digits and '-' (it becomes part of a Job's name)`,
    });
  else if (name.length > max)
    issues.push({
      path: 'metadata.name',
      message: `name too long (${name.length} characters): at most ${max}, so that its Job's name fits Kubernetes limits`,
    });
  if (namespace !== undefined && (typeof namespace !== 'string' || !DNS1123_LABEL.test(namespace) || namespace.length > 63)) {
    issues.push({
      path: 'metadata.namespace',
      message: `invalid namespace ${JSON.stringify(namespace)}: expected a DNS label (lowercase letters, digits and '-')`,
    });
  }
  return issues;
}

/** The document's labels go onto its Jobs and their Pods: they are held to the rules of a Job's Pod labels. */
function labelIssues(metadata: unknown): SpecIssue[] {
  if (!isObject(metadata)) return [];
  return podLabelFindings(metadata.labels).map(([rel, message]) => ({ path: attach('metadata.labels', rel), message }));
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
