/**
 * A BackupSchedule as a CronJob `backup-<schedule>`: the Kubernetes CronJob controller starts each
 * run on time, never two at once (`concurrencyPolicy: Forbid`, which holds across any restart since
 * the CronJob controller reads the running Jobs from the API), and none while the schedule is paused
 * (`suspend`). Each run is one BR snapshot backup into its own folder, under the schedule's own folder
 * in the storage prefix (src/render/scripts/br.ts says how it is named).
 */
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { backupArgs, storageUrlTemplate } from '../backup/br-args';
import type { ResolvedSchedule } from '../backup/resolve';
import { BACKUP_LABEL, JOB_NAME_LABEL, LABEL, names } from '../tidbcluster/names';
import type { ResolvedCluster } from '../tidbcluster/resolve';
import { brPodTemplate } from './br-pod';
import { namespaced } from './component';
import { scheduledBackupScript } from './scripts/br';
import { refuseAtSynthesis } from './checked';

export interface BackupScheduleProps {
  readonly cluster: ResolvedCluster;
  readonly schedule: ResolvedSchedule;
}

/** The CronJob of one BackupSchedule. */
export class BackupScheduleCronJob extends Construct {
  /** CronJob `backup-<schedule>`. */
  readonly cronJob: ApiObject;

  constructor(scope: Construct, id: string, props: BackupScheduleProps) {
    super(scope, id);
    refuseAtSynthesis(this, props.cluster.kubeMinor);
    const { cluster, schedule } = props;
    const labels = {
      ...schedule.labels,
      [LABEL.name]: 'backup-schedule',
      [LABEL.managedBy]: BACKUP_LABEL.managedBy,
      [LABEL.instance]: cluster.instance,
      [LABEL.component]: 'backup',
      [BACKUP_LABEL.schedule]: schedule.name,
    };
    const job = schedule.backup;
    const template = brPodTemplate({
      cluster,
      job,
      container: 'backup',
      labels,
      script: scheduledBackupScript(),
      args: backupArgs(job, { name: cluster.name, tls: cluster.tlsCluster }, '@STORAGE@'),
      env: [
        { name: 'JOB_NAME', valueFrom: { fieldRef: { fieldPath: `metadata.labels['${JOB_NAME_LABEL}']` } } },
        { name: 'BR_CLUSTER', value: cluster.name },
        { name: 'JOB_UID', valueFrom: { fieldRef: { fieldPath: "metadata.labels['batch.kubernetes.io/controller-uid']" } } },
        { name: 'BR_STORAGE', value: storageUrlTemplate(job.storage, `${schedule.name}/{run}`) },
      ],
    });
    this.cronJob = new ApiObject(this, 'cronjob', {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: namespaced(cluster, names.backupSchedule(schedule.name), labels),
      spec: {
        schedule: schedule.schedule,
        // The operator's schedule runs on its own clock, UTC in its image; a CronJob would take the
        // controller manager's.
        timeZone: 'Etc/UTC',
        concurrencyPolicy: 'Forbid',
        suspend: schedule.pause,
        successfulJobsHistoryLimit: 3,
        failedJobsHistoryLimit: 3,
        jobTemplate: {
          metadata: { labels },
          spec: {
            // A retry would write into the folder the failed run left, which BR refuses; the next run
            // makes a new backup (tidb-operator's backup Job has no retries either).
            backoffLimit: 0,
            template,
          },
        },
      },
    });
  }
}
