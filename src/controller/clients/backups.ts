/**
 * What the backup work reads and writes in Kubernetes beside the cluster's own objects: the Jobs of
 * the BackupSchedules' CronJobs and of the one-shot operations with their Pods (read afresh each pass:
 * runs change seldom, and no informer is paid for a cluster without backups), the operations'
 * ConfigMaps, the Secrets that hold a bucket's keys, and what the initializer reads: its passwords,
 * certificate and SQL.
 */
import { BatchV1Api, CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { Job, Pod } from '../model/objects';
import { FIELD_MANAGER, KubeError, type KubeAccess } from './kube';

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

  /** ConfigMaps with these labels: name, UID, annotations and data. */
  async listConfigMaps(selector: string): Promise<OperationConfigMap[]> {
    const list = await this.kube.call('list configmaps', () => this.core.listNamespacedConfigMap({ namespace: this.kube.namespace, labelSelector: selector }));
    return list.items.map((c) => ({ name: c.metadata?.name ?? '', uid: c.metadata?.uid, annotations: c.metadata?.annotations ?? {}, data: c.data ?? {} }));
  }

  /** Creates a Job (never retried: a create that may have landed is found by its name next pass). */
  async createJob(body: Record<string, unknown>): Promise<Job> {
    return (await this.kube.call(`create job ${(body.metadata as { name?: string })?.name}`, () => this.batch.createNamespacedJob({ namespace: this.kube.namespace, body: body as never, fieldManager: FIELD_MANAGER }), false)) as Job;
  }

  /** Sets (string) or removes (null) a ConfigMap's annotations with a merge patch. */
  async annotateConfigMap(name: string, annotations: Record<string, string | null>): Promise<void> {
    await this.kube.call(`annotate configmap ${name}`, () =>
      this.core.patchNamespacedConfigMap({ name, namespace: this.kube.namespace, body: { metadata: { annotations } }, fieldManager: FIELD_MANAGER }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch)),
    );
  }

  /** A Secret's data, decoded, or undefined when there is no such Secret. */
  async secretData(name: string): Promise<Record<string, Buffer> | undefined> {
    try {
      const data = (await this.kube.call(`get secret ${name}`, () => this.core.readNamespacedSecret({ name, namespace: this.kube.namespace }), false)).data ?? {};
      return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64')]));
    } catch (err) {
      if (err instanceof KubeError && err.code === 404) return undefined;
      throw err;
    }
  }

  /** A ConfigMap's data, or undefined when there is no such ConfigMap. */
  async configMapData(name: string): Promise<Record<string, string> | undefined> {
    try {
      return (await this.kube.call(`get configmap ${name}`, () => this.core.readNamespacedConfigMap({ name, namespace: this.kube.namespace }), false)).data ?? {};
    } catch (err) {
      if (err instanceof KubeError && err.code === 404) return undefined;
      throw err;
    }
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
