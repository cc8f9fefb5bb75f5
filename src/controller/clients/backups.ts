/**
 * What the backup work reads and writes in Kubernetes beside the cluster's own objects: the Jobs of
 * the BackupSchedules' CronJobs and of the one-shot operations with their Pods (read afresh each pass:
 * runs change seldom, and no informer is paid for a cluster without backups), the operations'
 * ConfigMaps, the Secrets that hold a bucket's keys, and what the initializer reads: its passwords,
 * certificate and SQL.
 */
import type { Job, Pod } from '../model/objects';
import { FIELD_MANAGER, MERGE_PATCH, type KubeAccess } from './kube';
import { KubeError } from './kube-errors';
import { API } from './kube-rest';
import { readSecret } from './secrets';

interface List<T> {
  readonly items: T[];
}

interface ConfigMap {
  readonly metadata?: { name?: string; uid?: string; annotations?: Record<string, string> };
  readonly data?: Record<string, string>;
}

/** A bucket's keys, as tidb-operator reads them from the storage's Secret (`access_key`, `secret_key`). */
export interface BucketKeys {
  readonly accessKey: string;
  readonly secretKey: string;
}

/** A one-shot operation's ConfigMap, as the controller reads it. */
export interface OperationConfigMap {
  readonly name: string;
  readonly uid?: string;
  readonly annotations: Readonly<Record<string, string>>;
  readonly data: Readonly<Record<string, string>>;
}

export class BackupAccess {
  constructor(private readonly kube: Pick<KubeAccess, 'send' | 'path' | 'namespace' | 'event'>) {}

  /** Jobs and their Pods with these labels. */
  async listJobsAndPods(selector: string): Promise<{ jobs: Job[]; pods: Pod[] }> {
    const query = { labelSelector: selector };
    const [jobs, pods] = await Promise.all([
      this.kube.send<List<Job>>('list jobs', 'GET', this.kube.path(API.batch, 'jobs'), { query }),
      this.kube.send<List<Pod>>('list pods', 'GET', this.kube.path(API.core, 'pods'), { query }),
    ]);
    return { jobs: jobs.items, pods: pods.items };
  }

  /** ConfigMaps with these labels: name, UID, annotations and data. */
  async listConfigMaps(selector: string): Promise<OperationConfigMap[]> {
    const list = await this.kube.send<List<ConfigMap>>('list configmaps', 'GET', this.kube.path(API.core, 'configmaps'), {
      query: { labelSelector: selector },
    });
    return list.items.map((c) => ({
      name: c.metadata?.name ?? '',
      uid: c.metadata?.uid,
      annotations: c.metadata?.annotations ?? {},
      data: c.data ?? {},
    }));
  }

  /** Creates a Job (never retried: a create that may have landed is found by its name next pass). */
  async createJob(body: Record<string, unknown>): Promise<Job> {
    const name = (body.metadata as { name?: string })?.name;
    return this.kube.send<Job>(
      `create job ${name}`,
      'POST',
      this.kube.path(API.batch, 'jobs'),
      { body, query: { fieldManager: FIELD_MANAGER } },
      false,
    );
  }

  /** Sets (string) or removes (null) a ConfigMap's annotations with a merge patch. */
  async annotateConfigMap(name: string, annotations: Record<string, string | null>): Promise<void> {
    const opts = { body: { metadata: { annotations } }, contentType: MERGE_PATCH, query: { fieldManager: FIELD_MANAGER } };
    await this.kube.send(`annotate configmap ${name}`, 'PATCH', this.kube.path(API.core, 'configmaps', name), opts);
  }

  /** Sets (string) or removes (null) a CronJob's annotations with a merge patch; false when there is no such CronJob. */
  async annotateCronJob(name: string, annotations: Record<string, string | null>): Promise<boolean> {
    const opts = { body: { metadata: { annotations } }, contentType: MERGE_PATCH, query: { fieldManager: FIELD_MANAGER } };
    try {
      await this.kube.send(`annotate cronjob ${name}`, 'PATCH', this.kube.path(API.batch, 'cronjobs', name), opts);
      return true;
    } catch (err) {
      if (err instanceof KubeError && err.code === 404) return false;
      throw err;
    }
  }

  /** A Secret's data, decoded, or undefined when there is no such Secret. */
  async secretData(name: string): Promise<Record<string, Buffer> | undefined> {
    return (await readSecret(this.kube, name))?.data;
  }

  /** A ConfigMap's data, or undefined when there is no such ConfigMap. */
  async configMapData(name: string): Promise<Record<string, string> | undefined> {
    try {
      return (
        (await this.kube.send<ConfigMap>(`get configmap ${name}`, 'GET', this.kube.path(API.core, 'configmaps', name), {}, false)).data ??
        {}
      );
    } catch (err) {
      if (err instanceof KubeError && err.code === 404) return undefined;
      throw err;
    }
  }

  /** The keys in a storage's Secret; a Secret or key that is missing is an error saying which. */
  async bucketKeys(secretName: string): Promise<BucketKeys> {
    const data = await this.secretData(secretName);
    if (!data) throw new Error(`the Secret ${secretName} does not exist`);
    const key = (k: string) => {
      const v = data[k];
      if (!v || v.length === 0) throw new Error(`the Secret ${secretName} has no ${k}`);
      return v.toString('utf8');
    };
    return { accessKey: key('access_key'), secretKey: key('secret_key') };
  }
}
