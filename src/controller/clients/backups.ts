/**
 * What the backup work reads from Kubernetes beside the cluster's own objects: the Jobs of the
 * BackupSchedules' CronJobs with their Pods (read afresh each pass: runs change seldom, and no
 * informer is paid for a cluster without schedules), and the Secrets that hold a bucket's keys.
 */
import { BatchV1Api, CoreV1Api } from '@kubernetes/client-node';
import type { Job, Pod } from '../model/objects';
import { KubeError, type KubeAccess } from './kube';

/** A bucket's keys, as tidb-operator reads them from the storage's Secret (`access_key`, `secret_key`). */
export interface BucketKeys {
  readonly accessKey: string;
  readonly secretKey: string;
}

export class BackupAccess {
  private readonly batch: BatchV1Api;
  private readonly core: CoreV1Api;

  constructor(private readonly kube: Pick<KubeAccess, 'apiClient' | 'call' | 'namespace' | 'event'>) {
    this.batch = kube.apiClient(BatchV1Api);
    this.core = kube.apiClient(CoreV1Api);
  }

  /** Jobs and their Pods with these labels. */
  async listJobsAndPods(selector: string): Promise<{ jobs: Job[]; pods: Pod[] }> {
    const namespace = this.kube.namespace;
    const [jobs, pods] = await Promise.all([
      this.kube.call('list jobs', () => this.batch.listNamespacedJob({ namespace, labelSelector: selector })),
      this.kube.call('list pods', () => this.core.listNamespacedPod({ namespace, labelSelector: selector })),
    ]);
    return { jobs: jobs.items as Job[], pods: pods.items as Pod[] };
  }

  /** The keys in a storage's Secret; a Secret or key that is missing is an error saying which. */
  async bucketKeys(secretName: string): Promise<BucketKeys> {
    let data: Record<string, string> | undefined;
    try {
      data = (await this.kube.call(`get secret ${secretName}`, () => this.core.readNamespacedSecret({ name: secretName, namespace: this.kube.namespace }), false)).data;
    } catch (err) {
      if (err instanceof KubeError && err.code === 404) throw new Error(`the Secret ${secretName} does not exist`);
      throw err;
    }
    const key = (k: string) => {
      const v = data?.[k];
      if (!v) throw new Error(`the Secret ${secretName} has no ${k}`);
      return Buffer.from(v, 'base64').toString('utf8');
    };
    return { accessKey: key('access_key'), secretKey: key('secret_key') };
  }
}
