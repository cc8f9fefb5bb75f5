/**
 * Kubernetes access for the controller: informers for the cluster's StatefulSets, Pods and claims, and
 * the few writes the controller makes, each naming its field manager and retried on conflicts,
 * throttling and server errors. Requests go through `KubeRest`, which knows paths, not kinds.
 */
import { LABEL, LABEL_VALUE } from '../../tidbcluster/names';
import { CONTROLLER_ENV } from '../../tidbcluster/contract';
import type { ConfigMapMeta, PersistentVolume, Pod, Pvc, StatefulSet } from '../model/objects';
import type { LeaseRecord, LeaseStore } from '../runtime/leader';
import type { Logger } from '../runtime/log';
import { Informer } from './informer';
import { codeOf, describe, KubeError, RETRYABLE, retryAfterMs } from './kube-errors';
import { API, KubeRest, loadKubeTarget, namespacedPath, type RequestOptions } from './kube-rest';

type InformerName = 'statefulsets' | 'pods' | 'persistentvolumeclaims';
type AnyObject = StatefulSet | Pod | Pvc;

/** The field manager of every write the controller makes. */
export const FIELD_MANAGER = 'tidb-gitops-controller';

/** Content types of the patches the controller sends. */
export const MERGE_PATCH = 'application/merge-patch+json';
export const APPLY_PATCH = 'application/apply-patch+yaml';
export const STRATEGIC_MERGE_PATCH = 'application/strategic-merge-patch+json';

export interface EventTarget {
  readonly kind: 'Pod' | 'StatefulSet' | 'Job' | 'CronJob' | 'ConfigMap';
  readonly name: string;
  readonly uid?: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class KubeAccess implements LeaseStore {
  private readonly rest: KubeRest;
  /** The informer whose cache answers lookups, per resource. */
  private readonly informers = new Map<InformerName, Informer<AnyObject>>();
  private stopped = false;
  /** Called after every API request the controller makes itself (not the informers), for metrics. */
  onRequest: (verb: string, code: number) => void = () => {};

  constructor(
    readonly namespace: string,
    readonly cluster: string,
    private readonly log: Logger,
    kubeconfigPath?: string,
  ) {
    this.rest = new KubeRest(loadKubeTarget(kubeconfigPath));
  }

  /** Label selector of everything the cluster's components run. */
  get selector(): string {
    return `${LABEL.instance}=${this.cluster},${LABEL.managedBy}=${LABEL_VALUE.managedBy}`;
  }

  /**
   * Starts watching StatefulSets, Pods and claims (see `Informer`); `onChange` runs on every add,
   * update and delete. Resolves once each has answered its first list, either way.
   */
  async startInformers(onChange: (what: string) => void): Promise<void> {
    const paths: Record<InformerName, string> = {
      statefulsets: this.path(API.apps, 'statefulsets'),
      pods: this.path(API.core, 'pods'),
      // Claims made from a StatefulSet's templates carry its selector labels, so the same selector finds them.
      persistentvolumeclaims: this.path(API.core, 'persistentvolumeclaims'),
    };
    const started = (Object.keys(paths) as InformerName[]).map((name) => {
      const informer = new Informer<AnyObject>(this.rest, paths[name], this.selector, () => onChange(name), this.log, name);
      this.informers.set(name, informer);
      return informer.start();
    });
    await Promise.all(started);
  }

  /** Every informer has listed since its last failure and is watching. */
  synced(): boolean {
    return this.informers.size === 3 && [...this.informers.values()].every((i) => i.synced);
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
    return this.informers.get(name)?.list() ?? [];
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const i of this.informers.values()) i.stop();
    this.rest.close();
  }

  /** The path of a collection or object of the cluster's namespace: `path(API.core, 'pods', name)`. */
  path(group: string, resource: string, name?: string): string {
    return namespacedPath(group, this.namespace, resource, name);
  }

  /** Sends one request through `call`: retried when `retry`, as `call` says. */
  send<T = any>(verb: string, method: string, path: string, opts?: RequestOptions, retry = true): Promise<T> {
    return this.call(verb, () => this.rest.request<T>(method, path, opts), retry);
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
   * Sets replicas and the update strategy in one write: `RollingUpdate` with the partition, or
   * `OnDelete` (undefined partition), which lets the partition go. The fields travel together (the API
   * refuses a partition under OnDelete, and a RollingUpdate without one rolls every Pod).
   *
   * `RollingUpdate` is a server-side apply of the two fields; a field left out of an apply is released
   * by the controller's field manager. `OnDelete` is a merge patch that removes `rollingUpdate` whole:
   * the StatefulSet's creator owns what the API server defaulted at create (`rollingUpdate.partition`,
   * and from Kubernetes 1.37 `rollingUpdate.maxUnavailable`), so an apply that leaves `rollingUpdate`
   * out would keep those, and the API refuses any `rollingUpdate` under OnDelete.
   */
  async applyStatefulSet(name: string, replicas: number, partition: number | undefined): Promise<void> {
    const path = this.path(API.apps, 'statefulsets', name);
    if (partition === undefined) {
      const body = { spec: { replicas, updateStrategy: { type: 'OnDelete', rollingUpdate: null } } };
      await this.send(`apply statefulset ${name}`, 'PATCH', path, {
        body,
        contentType: MERGE_PATCH,
        query: { fieldManager: FIELD_MANAGER },
      });
      return;
    }
    const body = {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name, namespace: this.namespace },
      spec: { replicas, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition } } },
    };
    await this.send(`apply statefulset ${name}`, 'PATCH', path, {
      body,
      contentType: APPLY_PATCH,
      query: { fieldManager: FIELD_MANAGER, force: true },
    });
  }

  /** Sets (string) or removes (null) StatefulSet annotations with a merge patch. */
  async annotateStatefulSet(name: string, annotations: Record<string, string | null>): Promise<void> {
    await this.send(`annotate statefulset ${name}`, 'PATCH', this.path(API.apps, 'statefulsets', name), {
      body: { metadata: { annotations } },
      contentType: MERGE_PATCH,
      query: { fieldManager: FIELD_MANAGER },
    });
  }

  /** Sets (string) or removes (null) Pod annotations with a merge patch. */
  async annotatePod(name: string, annotations: Record<string, string | null>): Promise<void> {
    await this.send(`annotate pod ${name}`, 'PATCH', this.path(API.core, 'pods', name), {
      body: { metadata: { annotations } },
      contentType: MERGE_PATCH,
      query: { fieldManager: FIELD_MANAGER },
    });
  }

  /**
   * Asks for a larger claim. The uid in the patch is a precondition: a claim re-created meanwhile is
   * left alone (409).
   */
  async resizeVolume(name: string, uid: string, size: string): Promise<void> {
    const body = { metadata: { uid }, spec: { resources: { requests: { storage: size } } } };
    await this.send(
      `resize pvc ${name}`,
      'PATCH',
      this.path(API.core, 'persistentvolumeclaims', name),
      { body, contentType: MERGE_PATCH, query: { fieldManager: FIELD_MANAGER } },
      false,
    );
  }

  /** A StatefulSet as plain JSON (as the API server sends it), or undefined when it does not exist. */
  async readStatefulSet(name: string): Promise<any | undefined> {
    try {
      return await this.send(`get statefulset ${name}`, 'GET', this.path(API.apps, 'statefulsets', name));
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
      await this.send(`delete statefulset ${name}`, 'DELETE', this.path(API.apps, 'statefulsets', name), { body }, false);
    } catch (err) {
      if (err instanceof KubeError && (err.code === 404 || err.code === 409)) return;
      throw err;
    }
  }

  /** Creates a StatefulSet from plain JSON; its uid, or undefined when one of that name exists already. */
  async createStatefulSet(object: any): Promise<string | undefined> {
    try {
      const out = await this.send(
        `create statefulset ${object.metadata.name}`,
        'POST',
        this.path(API.apps, 'statefulsets'),
        { body: object, query: { fieldManager: FIELD_MANAGER } },
        false,
      );
      return out?.metadata?.uid;
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
    await this.send(
      `patch statefulset ${name}`,
      'PATCH',
      this.path(API.apps, 'statefulsets', name),
      { body: { metadata: { uid, managedFields } }, contentType: MERGE_PATCH },
      false,
    );
  }

  /** Sets PVC annotations with a merge patch. */
  async annotateVolume(name: string, annotations: Record<string, string>): Promise<void> {
    await this.send(`annotate pvc ${name}`, 'PATCH', this.path(API.core, 'persistentvolumeclaims', name), {
      body: { metadata: { annotations } },
      contentType: MERGE_PATCH,
      query: { fieldManager: FIELD_MANAGER },
    });
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
      const resource = kind === 'pod' ? 'pods' : 'persistentvolumeclaims';
      await this.send(`delete ${kind} ${name}`, 'DELETE', this.path(API.core, resource, name), { body }, false);
    } catch (err) {
      if (err instanceof KubeError && (err.code === 404 || (err.code === 409 && uid))) return;
      throw err;
    }
  }

  /** The cluster's ConfigMaps (metadata only is used), by the components' selector. */
  async listConfigMaps(): Promise<ConfigMapMeta[]> {
    const list = await this.send<{ items: ConfigMapMeta[] }>('list configmaps', 'GET', this.path(API.core, 'configmaps'), {
      query: { labelSelector: this.selector },
    });
    return list.items;
  }

  /**
   * Deletes a ConfigMap only if it still is the object of that UID and resourceVersion: one that Git
   * re-applied or re-created meanwhile is left alone. Gone, or changed, counts as done.
   */
  async deleteConfigMap(name: string, uid: string | undefined, resourceVersion: string | undefined): Promise<boolean> {
    try {
      const body = { preconditions: { uid, resourceVersion } };
      await this.send(`delete configmap ${name}`, 'DELETE', this.path(API.core, 'configmaps', name), { body }, false);
      return true;
    } catch (err) {
      if (err instanceof KubeError && (err.code === 404 || err.code === 409)) return false;
      throw err;
    }
  }

  /** Creates or updates a ConfigMap's data by server-side apply. */
  async applyConfigMap(name: string, labels: Record<string, string>, data: Record<string, string>): Promise<void> {
    const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: this.namespace, labels }, data };
    await this.send(`apply configmap ${name}`, 'PATCH', this.path(API.core, 'configmaps', name), {
      body,
      contentType: APPLY_PATCH,
      query: { fieldManager: FIELD_MANAGER, force: true },
    });
  }

  /** A ConfigMap's data, or undefined when it does not exist. */
  async getConfigMapData(name: string): Promise<Record<string, string> | undefined> {
    try {
      const cm = await this.send<{ data?: Record<string, string> }>(
        `get configmap ${name}`,
        'GET',
        this.path(API.core, 'configmaps', name),
      );
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
      const node = await this.send<{ metadata?: { labels?: Record<string, string> } }>(
        `get node ${name}`,
        'GET',
        `/${API.core}/nodes/${encodeURIComponent(name)}`,
      );
      return node.metadata?.labels ?? {};
    } catch (err) {
      if (err instanceof KubeError && err.code === 404) return undefined;
      throw err;
    }
  }

  /**
   * A PersistentVolume, or undefined when it is gone. Needs the rendered ClusterRole (`get` on
   * persistentvolumes, `tidb-gitops.io/pv-reclaim-policy`); a 403 throws.
   */
  async persistentVolume(name: string): Promise<PersistentVolume | undefined> {
    try {
      return await this.send<PersistentVolume>(`get pv ${name}`, 'GET', `/${API.core}/persistentvolumes/${encodeURIComponent(name)}`);
    } catch (err) {
      if (err instanceof KubeError && err.code === 404) return undefined;
      throw err;
    }
  }

  /** Sets a PV's `spec.persistentVolumeReclaimPolicy` (a merge patch of that one field); a 403 throws. */
  async patchReclaimPolicy(name: string, policy: string): Promise<void> {
    const body = { spec: { persistentVolumeReclaimPolicy: policy } };
    await this.send(`patch pv ${name}`, 'PATCH', `/${API.core}/persistentvolumes/${encodeURIComponent(name)}`, {
      body,
      contentType: MERGE_PATCH,
      query: { fieldManager: FIELD_MANAGER },
    });
  }

  /**
   * Sets one condition in a Pod's status (the readiness gate's): a strategic merge patch of
   * `status.conditions`, whose merge key is `type`, so kubelet's own conditions stay. The Pod's UID
   * is a precondition: a successor of the same name is never given its predecessor's condition.
   */
  async patchPodCondition(
    name: string,
    uid: string,
    condition: { type: string; status: string; reason: string; message: string },
    now: number,
  ): Promise<void> {
    const body = {
      metadata: { uid },
      status: {
        conditions: [{ ...condition, lastProbeTime: null, lastTransitionTime: new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z') }],
      },
    };
    await this.send(`patch pod ${name} status`, 'PATCH', `${this.path(API.core, 'pods')}/${encodeURIComponent(name)}/status`, {
      body,
      contentType: STRATEGIC_MERGE_PATCH,
      query: { fieldManager: FIELD_MANAGER },
    });
  }

  /** Records a Kubernetes Event on an object of the cluster; failures are logged, never fatal. */
  async event(target: EventTarget, type: 'Normal' | 'Warning', reason: string, message: string, now: number): Promise<void> {
    const time = new Date(now).toISOString();
    const suffix = `${now.toString(16)}${Math.floor(Math.random() * 0x10000).toString(16)}`;
    try {
      await this.send('create event', 'POST', this.path(API.core, 'events'), {
        query: { fieldManager: FIELD_MANAGER },
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
      });
    } catch (err) {
      this.log.warn('could not record an event', { reason, error: describe(err) });
    }
  }

  async getLease(name: string): Promise<LeaseRecord | undefined> {
    try {
      const l = await this.send('get lease', 'GET', this.path(API.coordination, 'leases', name), {}, false);
      return {
        holder: l.spec?.holderIdentity ?? '',
        durationSeconds: l.spec?.leaseDurationSeconds ?? 0,
        acquireTime: l.spec?.acquireTime,
        renewTime: l.spec?.renewTime,
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
        acquireTime: lease.acquireTime,
        renewTime: lease.renewTime,
        leaseTransitions: lease.transitions,
      },
    };
    const out = resourceVersion
      ? await this.send(
          'update lease',
          'PUT',
          this.path(API.coordination, 'leases', name),
          { body, query: { fieldManager: FIELD_MANAGER } },
          false,
        )
      : await this.send(
          'create lease',
          'POST',
          this.path(API.coordination, 'leases'),
          { body, query: { fieldManager: FIELD_MANAGER } },
          false,
        );
    return out.metadata?.resourceVersion ?? '';
  }
}
