/**
 * Kubernetes access for the controller, through @kubernetes/client-node: informers for the cluster's
 * StatefulSets and Pods, and the few writes the controller makes, each naming its field manager and
 * retried on conflicts, throttling and server errors. The only module that loads the client library.
 */
import {
  AppsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  KubeConfig,
  makeInformer,
  PatchStrategy,
  setHeaderOptions,
  type ApiType,
  type Configuration,
  type Informer,
  type ObjectCache,
  type V1PersistentVolumeClaim,
  type V1Pod,
  type V1StatefulSet,
} from '@kubernetes/client-node';
import { CONTROLLER_ENV, LABEL, LABEL_VALUE } from '../../tidbcluster/names';
import type { ConfigMapMeta, Pod, Pvc, StatefulSet } from '../model/objects';
import type { LeaseRecord, LeaseStore } from '../runtime/leader';
import type { Logger } from '../runtime/log';

type InformerName = 'statefulsets' | 'pods' | 'persistentvolumeclaims';
type AnyObject = V1StatefulSet | V1Pod | V1PersistentVolumeClaim;

/** The field manager of every write the controller makes. */
export const FIELD_MANAGER = 'tidb-gitops-controller';


export interface EventTarget {
  readonly kind: 'Pod' | 'StatefulSet' | 'Job' | 'CronJob' | 'ConfigMap';
  readonly name: string;
  readonly uid?: string;
}

/** Kubernetes answered with an HTTP status the caller has to handle (e.g. 409 on a Lease). */
export class KubeError extends Error {
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message);
  }
}

const RETRYABLE = (code: number): boolean => code === 409 || code === 429 || code >= 500 || code === 0;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));


export class KubeAccess implements LeaseStore {
  private readonly kc = new KubeConfig();
  private readonly apps: AppsV1Api;
  private readonly core: CoreV1Api;
  private readonly coordination: CoordinationV1Api;
  /** The informer whose cache answers lookups, per resource (replaced by a fresh one after a failure). */
  private readonly informers = new Map<InformerName, Informer<AnyObject> & ObjectCache<AnyObject>>();
  private readonly syncedSet = new Set<string>();
  private stopped = false;
  /** Called after every API request the controller makes itself (not the informers), for metrics. */
  onRequest: (verb: string, code: number) => void = () => {};

  constructor(
    readonly namespace: string,
    readonly cluster: string,
    private readonly log: Logger,
    kubeconfigPath?: string,
  ) {
    if (kubeconfigPath) this.kc.loadFromFile(kubeconfigPath);
    else this.kc.loadFromDefault();
    this.apps = this.kc.makeApiClient(AppsV1Api);
    this.core = this.kc.makeApiClient(CoreV1Api);
    this.coordination = this.kc.makeApiClient(CoordinationV1Api);
  }

  /** Label selector of everything the cluster's components run. */
  get selector(): string {
    return `${LABEL.instance}=${this.cluster},${LABEL.managedBy}=${LABEL_VALUE.managedBy}`;
  }

  /**
   * Starts watching StatefulSets, Pods and claims; `onChange` runs on every add, update and delete.
   * A watch that fails is replaced by a new informer that lists afresh (with backoff while it keeps
   * failing, as it does for a few seconds after an API server restart, whose RBAC caches answer 403):
   * the client library's own restart resumes from the old resourceVersion without a list, and a failed
   * restart of it is never tried again. Until the new one has listed the resource counts as not synced,
   * and the old cache answers lookups.
   */
  async startInformers(onChange: (what: string) => void): Promise<void> {
    const ns = this.namespace;
    const selector = this.selector;
    const resources: { name: InformerName; path: string; list: () => Promise<any> }[] = [
      { name: 'statefulsets', path: `/apis/apps/v1/namespaces/${ns}/statefulsets`, list: () => this.apps.listNamespacedStatefulSet({ namespace: ns, labelSelector: selector }) },
      { name: 'pods', path: `/api/v1/namespaces/${ns}/pods`, list: () => this.core.listNamespacedPod({ namespace: ns, labelSelector: selector }) },
      // Claims made from a StatefulSet's templates carry its selector labels, so the same selector finds them.
      { name: 'persistentvolumeclaims', path: `/api/v1/namespaces/${ns}/persistentvolumeclaims`, list: () => this.core.listNamespacedPersistentVolumeClaim({ namespace: ns, labelSelector: selector }) },
    ];
    const run = (r: (typeof resources)[number], retryMs: number): Promise<void> => {
      let failed = false;
      let listed = false;
      // The cache holds a list's items as soon as the list call resolves: that is when a resource is synced.
      const informer = makeInformer<AnyObject>(
        this.kc,
        r.path,
        () =>
          r.list().then((out) => {
            setImmediate(() => {
              if (failed || this.stopped) return;
              listed = true;
              this.informers.set(r.name, informer);
              this.syncedSet.add(r.name);
              onChange(r.name);
            });
            return out;
          }),
        selector,
      );
      const fail = (err: unknown) => {
        if (failed || this.stopped) return;
        failed = true;
        this.syncedSet.delete(r.name);
        void informer.stop().catch(() => {});
        // Back off while it keeps failing; one that had listed starts again at 1 s.
        const delay = listed ? 1000 : retryMs;
        this.log.warn('watch failed; listing again', { resource: r.name, error: describe(err), inMs: delay });
        setTimeout(() => {
          if (!this.stopped) void run(r, Math.min(delay * 2, 30_000));
        }, delay);
      };
      informer.on('change', () => onChange(r.name));
      informer.on('error', fail);
      if (!this.informers.has(r.name)) this.informers.set(r.name, informer);
      return informer.start().catch(fail);
    };
    await Promise.all(resources.map((r) => run(r, 1000)));
  }

  /** Every informer has listed at least once and is watching. */
  synced(): boolean {
    return this.syncedSet.size === 3;
  }

  volumes(): Pvc[] {
    return this.cached('persistentvolumeclaims') as Pvc[];
  }

  statefulSets(): StatefulSet[] {
    return this.cached('statefulsets') as StatefulSet[];
  }

  pods(): Pod[] {
    return this.cached('pods') as Pod[];
  }

  private cached(name: InformerName): unknown[] {
    return [...(this.informers.get(name)?.list(this.namespace) ?? [])];
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.informers.values()].map((i) => i.stop()));
  }

  /** A client of another API group, for the modules beside this one (clients/backups.ts). */
  apiClient<T extends ApiType>(api: new (config: Configuration) => T): T {
    return this.kc.makeApiClient(api);
  }

  /** Runs a request, retrying what Kubernetes says may succeed later (409, 429, 5xx, no answer). */
  async call<T>(verb: string, fn: () => Promise<T>, retry = true): Promise<T> {
    let delay = 100;
    for (let attempt = 1; ; attempt++) {
      try {
        const out = await fn();
        this.onRequest(verb, 200);
        return out;
      } catch (err) {
        const code = codeOf(err);
        this.onRequest(verb, code);
        if (!retry || !RETRYABLE(code) || attempt >= 6 || this.stopped) throw new KubeError(`${verb}: ${describe(err)}`, code);
        const after = retryAfterMs(err);
        this.log.debug('retrying Kubernetes request', { verb, code, attempt });
        await sleep(after ?? delay);
        delay = Math.min(delay * 2, 5000);
      }
    }
  }

  /**
   * Sets replicas and the update strategy by server-side apply: `RollingUpdate` with the partition,
   * or `OnDelete` (undefined partition), which lets the partition go. The fields travel together in
   * every write: a field left out of an apply is released by the controller's field manager, and the
   * strategy and its partition must change in one request (the API refuses a partition under
   * OnDelete, and a RollingUpdate without one rolls every Pod).
   */
  async applyStatefulSet(name: string, replicas: number, partition: number | undefined): Promise<void> {
    const body = {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name, namespace: this.namespace },
      spec: {
        replicas,
        updateStrategy: partition === undefined ? { type: 'OnDelete' } : { type: 'RollingUpdate', rollingUpdate: { partition } },
      },
    };
    await this.call(`apply statefulset ${name}`, () =>
      this.apps.patchNamespacedStatefulSet(
        { name, namespace: this.namespace, body, fieldManager: FIELD_MANAGER, force: true },
        setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
      ),
    );
  }

  /** Sets (string) or removes (null) StatefulSet annotations with a merge patch. */
  async annotateStatefulSet(name: string, annotations: Record<string, string | null>): Promise<void> {
    await this.call(`annotate statefulset ${name}`, () =>
      this.apps.patchNamespacedStatefulSet(
        { name, namespace: this.namespace, body: { metadata: { annotations } }, fieldManager: FIELD_MANAGER },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    );
  }

  /** Sets (string) or removes (null) Pod annotations with a merge patch. */
  async annotatePod(name: string, annotations: Record<string, string | null>): Promise<void> {
    await this.call(`annotate pod ${name}`, () =>
      this.core.patchNamespacedPod(
        { name, namespace: this.namespace, body: { metadata: { annotations } }, fieldManager: FIELD_MANAGER },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    );
  }

  /**
   * Asks for a larger claim. The uid in the patch is a precondition: a claim re-created meanwhile is
   * left alone (409).
   */
  async resizeVolume(name: string, uid: string, size: string): Promise<void> {
    const body = { metadata: { uid }, spec: { resources: { requests: { storage: size } } } };
    await this.call(`resize pvc ${name}`, () =>
      this.core.patchNamespacedPersistentVolumeClaim(
        { name, namespace: this.namespace, body, fieldManager: FIELD_MANAGER },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    false);
  }

  /** A StatefulSet as plain JSON (as the API server sends it), or undefined when it does not exist. */
  async readStatefulSet(name: string): Promise<any | undefined> {
    try {
      const sts = await this.call(`get statefulset ${name}`, () => this.apps.readNamespacedStatefulSet({ name, namespace: this.namespace }));
      return JSON.parse(JSON.stringify(sts));
    } catch (err) {
      if (err instanceof KubeError && err.code === 404) return undefined;
      throw err;
    }
  }

  /**
   * Deletes a StatefulSet and nothing else: `propagationPolicy: Orphan` leaves its Pods and revisions
   * running, ownerless, for the next StatefulSet of that name to adopt. Only the object of that uid;
   * gone or replaced counts as done.
   */
  async deleteStatefulSetOrphan(name: string, uid: string): Promise<void> {
    const body = { propagationPolicy: 'Orphan', preconditions: { uid } };
    try {
      await this.call(`delete statefulset ${name}`, () => this.apps.deleteNamespacedStatefulSet({ name, namespace: this.namespace, body }), false);
    } catch (err) {
      if (err instanceof KubeError && (err.code === 404 || err.code === 409)) return;
      throw err;
    }
  }

  /** Creates a StatefulSet from plain JSON; its uid, or undefined when one of that name exists already. */
  async createStatefulSet(object: any): Promise<string | undefined> {
    try {
      const out = await this.call(`create statefulset ${object.metadata.name}`, () =>
        this.apps.createNamespacedStatefulSet({ namespace: this.namespace, body: object, fieldManager: FIELD_MANAGER }),
      false);
      return out.metadata?.uid;
    } catch (err) {
      if (err instanceof KubeError && err.code === 409) return undefined;
      throw err;
    }
  }

  /**
   * Gives a re-created StatefulSet its predecessor's field owners (Git's applier, the controller), so
   * that the next apply from Git finds the fields it owned still its own.
   */
  async setManagedFields(name: string, uid: string, managedFields: unknown[]): Promise<void> {
    await this.call(`patch statefulset ${name}`, () =>
      this.apps.patchNamespacedStatefulSet(
        { name, namespace: this.namespace, body: { metadata: { uid, managedFields } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    false);
  }

  /** Sets PVC annotations with a merge patch. */
  async annotateVolume(name: string, annotations: Record<string, string>): Promise<void> {
    await this.call(`annotate pvc ${name}`, () =>
      this.core.patchNamespacedPersistentVolumeClaim(
        { name, namespace: this.namespace, body: { metadata: { annotations } }, fieldManager: FIELD_MANAGER },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    );
  }

  /**
   * Deletes a Pod or claim, only if it still is the object of that UID: a successor with the same
   * name is left alone. Gone, or replaced, counts as done.
   */
  /**
   * Deletes a Pod or claim if it is still the one with `uid` (any, without one). `gracePeriodSeconds`
   * 0 removes a Pod at once, also one whose node is gone and whose kubelet will never confirm it.
   */
  async deleteIfSame(kind: 'pod' | 'pvc', name: string, uid: string | undefined, gracePeriodSeconds?: number): Promise<void> {
    const body = { ...(uid && { preconditions: { uid } }), ...(gracePeriodSeconds !== undefined && { gracePeriodSeconds }) };
    try {
      const args = { name, namespace: this.namespace, body };
      if (kind === 'pod') await this.call(`delete pod ${name}`, () => this.core.deleteNamespacedPod(args), false);
      else await this.call(`delete pvc ${name}`, () => this.core.deleteNamespacedPersistentVolumeClaim(args), false);
    } catch (err) {
      if (err instanceof KubeError && (err.code === 404 || (err.code === 409 && uid))) return;
      throw err;
    }
  }

  /** The cluster's ConfigMaps (metadata only is used), by the components' selector. */
  async listConfigMaps(): Promise<ConfigMapMeta[]> {
    const list = await this.call('list configmaps', () => this.core.listNamespacedConfigMap({ namespace: this.namespace, labelSelector: this.selector }));
    return list.items as unknown as ConfigMapMeta[];
  }

  /**
   * Deletes a ConfigMap only if it still is the object of that UID and resourceVersion: one that Git
   * re-applied or re-created meanwhile is left alone. Gone, or changed, counts as done.
   */
  async deleteConfigMap(name: string, uid: string | undefined, resourceVersion: string | undefined): Promise<boolean> {
    try {
      const body = { preconditions: { uid, resourceVersion } };
      await this.call(`delete configmap ${name}`, () => this.core.deleteNamespacedConfigMap({ name, namespace: this.namespace, body }), false);
      return true;
    } catch (err) {
      if (err instanceof KubeError && (err.code === 404 || err.code === 409)) return false;
      throw err;
    }
  }

  /** Creates or updates a ConfigMap's data by server-side apply. */
  async applyConfigMap(name: string, labels: Record<string, string>, data: Record<string, string>): Promise<void> {
    const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: this.namespace, labels }, data };
    await this.call(`apply configmap ${name}`, () =>
      this.core.patchNamespacedConfigMap(
        { name, namespace: this.namespace, body, fieldManager: FIELD_MANAGER, force: true },
        setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
      ),
    );
  }

  /** A ConfigMap's data, or undefined when it does not exist. */
  async getConfigMapData(name: string): Promise<Record<string, string> | undefined> {
    try {
      const cm = await this.call(`get configmap ${name}`, () => this.core.readNamespacedConfigMap({ name, namespace: this.namespace }));
      return cm.data ?? {};
    } catch (err) {
      if (err instanceof KubeError && err.code === 404) return undefined;
      throw err;
    }
  }

  /**
   * A Node's labels (topology labels), or undefined when the Node is gone. Needs the rendered
   * ClusterRole (`get` on nodes); a 403 throws.
   */
  async nodeLabels(name: string): Promise<Record<string, string> | undefined> {
    try {
      const node = await this.call(`get node ${name}`, () => this.core.readNode({ name }));
      return node.metadata?.labels ?? {};
    } catch (err) {
      if (err instanceof KubeError && err.code === 404) return undefined;
      throw err;
    }
  }

  /** Records a Kubernetes Event on an object of the cluster; failures are logged, never fatal. */
  async event(target: EventTarget, type: 'Normal' | 'Warning', reason: string, message: string, now: number): Promise<void> {
    const time = new Date(now);
    const suffix = `${now.toString(16)}${Math.floor(Math.random() * 0x10000).toString(16)}`;
    try {
      await this.call(
        'create event',
        () =>
          this.core.createNamespacedEvent({
            namespace: this.namespace,
            body: {
              metadata: { name: `${target.name}.${suffix}`, namespace: this.namespace },
              involvedObject: {
                apiVersion: { Pod: 'v1', StatefulSet: 'apps/v1', Job: 'batch/v1', CronJob: 'batch/v1', ConfigMap: 'v1' }[target.kind],
                kind: target.kind,
                name: target.name,
                namespace: this.namespace,
                uid: target.uid,
              },
              type,
              reason,
              message,
              count: 1,
              firstTimestamp: time,
              lastTimestamp: time,
              source: { component: FIELD_MANAGER },
              reportingComponent: FIELD_MANAGER,
              reportingInstance: process.env[CONTROLLER_ENV.podName] ?? FIELD_MANAGER,
            },
            fieldManager: FIELD_MANAGER,
          }),
        true,
      );
    } catch (err) {
      this.log.warn('could not record an event', { reason, error: describe(err) });
    }
  }

  async getLease(name: string): Promise<LeaseRecord | undefined> {
    try {
      const l = await this.call('get lease', () => this.coordination.readNamespacedLease({ name, namespace: this.namespace }), false);
      return {
        holder: l.spec?.holderIdentity ?? '',
        durationSeconds: l.spec?.leaseDurationSeconds ?? 0,
        acquireTime: l.spec?.acquireTime as unknown as string | undefined,
        renewTime: l.spec?.renewTime as unknown as string | undefined,
        transitions: l.spec?.leaseTransitions ?? 0,
        resourceVersion: l.metadata?.resourceVersion ?? '',
      };
    } catch (err) {
      if (err instanceof KubeError && err.code === 404) return undefined;
      throw err;
    }
  }

  /**
   * Creates the Lease (no `resourceVersion`) or replaces it (optimistic: a 409 means someone else
   * wrote it first, and is not retried). Returns the new resourceVersion.
   */
  async writeLease(name: string, lease: Omit<LeaseRecord, 'resourceVersion'>, resourceVersion?: string): Promise<string> {
    const body = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name, namespace: this.namespace, ...(resourceVersion ? { resourceVersion } : {}) },
      spec: {
        holderIdentity: lease.holder,
        leaseDurationSeconds: lease.durationSeconds,
        acquireTime: lease.acquireTime as unknown as Date,
        renewTime: lease.renewTime as unknown as Date,
        leaseTransitions: lease.transitions,
      },
    };
    const out = resourceVersion
      ? await this.call('update lease', () => this.coordination.replaceNamespacedLease({ name, namespace: this.namespace, body, fieldManager: FIELD_MANAGER }), false)
      : await this.call('create lease', () => this.coordination.createNamespacedLease({ namespace: this.namespace, body, fieldManager: FIELD_MANAGER }), false);
    return out.metadata?.resourceVersion ?? '';
  }
}

function codeOf(err: unknown): number {
  const e = err as { code?: unknown; statusCode?: unknown };
  if (typeof e?.code === 'number') return e.code;
  if (typeof e?.statusCode === 'number') return e.statusCode;
  return 0;
}

function retryAfterMs(err: unknown): number | undefined {
  const h = (err as { headers?: Record<string, string> })?.headers;
  const v = h?.['retry-after'] ?? h?.['Retry-After'];
  return v !== undefined && /^\d+$/.test(v) ? Number(v) * 1000 : undefined;
}

export function describe(err: unknown): string {
  if (err instanceof Error) {
    const body = (err as { body?: unknown }).body;
    const msg = typeof body === 'string' ? safeStatusMessage(body) : (body as { message?: string } | undefined)?.message;
    const code = codeOf(err);
    return msg ? `HTTP ${code}: ${msg}` : err.message.split('\n')[0];
  }
  return String(err);
}

function safeStatusMessage(body: string): string | undefined {
  try {
    return (JSON.parse(body) as { message?: string }).message;
  } catch {
    return body.slice(0, 200) || undefined;
  }
}
