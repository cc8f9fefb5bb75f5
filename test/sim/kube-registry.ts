/**
 * The write semantics of the simulated API server, between the HTTP layer and the store: create
 * (system metadata, defaults, admission, validation), replace and patch (optimistic concurrency, the
 * `/status` subresource split, no-op writes skipped, generation bumped on spec changes), apply
 * (client-side three-way and server-side), and delete (graceful for Pods, finalizers, garbage collection
 * of dependents).
 */
import { randomUUID } from 'node:crypto';
import { parse as parseYaml } from 'yaml';
import type { KubeObject } from './kube-api';
import { alreadyExists, badRequest, conflict, invalid, KubeApiError, notFound } from './kube-errors';
import { FieldOwnership } from './kube-fields';
import { pendingPodStatus, terminatingPodStatus } from './kube-kubelet';
import { jsonPatch, mergePatch, strategicMergePatch, threeWayMerge } from './kube-patch';
import { apiVersionOf, RESOURCE_TYPES, type ResourceType, typeByApiVersionKind, typeKey } from './kube-resources';
import {
  defaultStatefulSetSpec,
  dropStatefulSetDisabledFields,
  SIM_KUBE_MINOR,
  validateStatefulSet,
  validateStatefulSetUpdate,
} from './kube-statefulset';
import type { ObjectStore } from './kube-store';
import { clone, isObject, jsonEqual, randomSuffix, rfc3339 } from './kube-util';

/** Content types of the four PATCH flavours. */
export const PATCH_TYPES = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
} as const;

/** Reactions of the rest of the simulation to Pod writes. */
export interface RegistryListener {
  /** A Pod was created (stored Pending). */
  podCreated(pod: KubeObject): void;
  /** A Pod's deletion began (stored with deletionTimestamp, not Ready); `immediate` for grace period 0. */
  podDeleting(pod: KubeObject, immediate: boolean): void;
}

/** Options every write takes. */
export interface WriteOptions {
  /** `dryRun=All`: validate and answer, store nothing. */
  dryRun?: boolean;
  /** Who writes: the field manager that owns what the write sets. @default "unknown" */
  fieldManager?: string;
}

/** Options of replace and patch. */
export interface UpdateOptions extends WriteOptions {
  /** Write the `/status` subresource: only `.status` changes. */
  subresource?: 'status';
  /** Server-side apply: take over fields other managers own instead of failing with a conflict. */
  force?: boolean;
}

/** Options of DELETE (query parameters or a DeleteOptions body). */
export interface DeleteOptions extends WriteOptions {
  gracePeriodSeconds?: number;
  /** `Orphan` leaves dependents (dropping their ownerReference); anything else deletes them. */
  propagationPolicy?: string;
  preconditions?: { uid?: string; resourceVersion?: string };
}

const PODS = typeByApiVersionKind('v1', 'Pod')!;
const CLAIMS = typeByApiVersionKind('v1', 'PersistentVolumeClaim')!;

/**
 * The finalizer the StorageObjectInUseProtection admission plugin puts on every new claim, and the
 * pvc-protection controller removes once no Pod uses the claim (kubernetes v1.32
 * `pkg/volume/util/finalizer.go` PVCProtectionFinalizer).
 */
export const PVC_PROTECTION_FINALIZER = 'kubernetes.io/pvc-protection';

/** The field manager `kubectl apply` (client-side) writes as. */
export const CLIENT_SIDE_APPLY = 'kubectl-client-side-apply';

/** The API server's write paths over one store. */
export class Registry {
  /** Last manifest given to `applyManifest`, per object (kubectl keeps it in an annotation). */
  private readonly lastApplied = new Map<string, unknown>();
  /** Which field manager owns which field of each object (`metadata.managedFields`). */
  readonly fields = new FieldOwnership();
  private nextClusterIP = 10;

  /**
   * @param hostIP the simulated node's address, every Pod's `status.hostIP`.
   * @param kubeMinor the Kubernetes minor whose defaults and validation the server applies.
   */
  constructor(
    private readonly store: ObjectStore,
    private readonly hostIP: string,
    private readonly listener: RegistryListener,
    private readonly now: () => number = Date.now,
    private readonly kubeMinor = SIM_KUBE_MINOR,
  ) {}

  /** The stored object; 404 if missing. */
  get(rt: ResourceType, namespace: string, name: string): KubeObject {
    const obj = this.store.get(rt, namespace, name);
    if (!obj) throw notFound(rt.group, rt.resource, name);
    return obj;
  }

  /**
   * Creates an object: 409 if the name is taken. Fills uid, creationTimestamp, generation and (for
   * types with a status subresource) a fresh status, unless `keepStatus` (controllers creating objects
   * with a status they decide, such as bound claims).
   */
  create(rt: ResourceType, namespace: string, body: unknown, opts: WriteOptions & { keepStatus?: boolean } = {}): KubeObject {
    if (!isObject(body)) throw badRequest('the request body must be a JSON object');
    const obj = this.typed(rt, body);
    const meta = (obj.metadata ??= {} as KubeObject['metadata']);
    if (meta.namespace && meta.namespace !== namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    meta.namespace = namespace;
    if (!meta.name) {
      if (!meta.generateName) throw invalid(rt.kind, '', ['metadata.name: Required value: name or generateName is required']);
      meta.name = `${meta.generateName}${randomSuffix()}`;
    }
    if (this.store.get(rt, namespace, meta.name)) throw alreadyExists(rt.group, rt.resource, meta.name);
    for (const f of ['resourceVersion', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'managedFields', 'selfLink']) delete meta[f];
    meta.uid = randomUUID();
    meta.creationTimestamp = rfc3339(this.now());
    meta.generation = 1;
    if (rt === PODS) obj.status = pendingPodStatus(obj, this.hostIP, this.now());
    else if (rt.hasStatus && !opts.keepStatus) obj.status = {};
    this.defaultAndValidate(rt, obj);
    admit(rt, obj);
    if (opts.dryRun) return obj;
    const stored = this.store.put(rt, obj);
    this.fields.recordUpdate(objectKey(rt, namespace, meta.name), opts.fieldManager ?? 'unknown', undefined, stored);
    if (rt === PODS) this.listener.podCreated(stored);
    return stored;
  }

  /** PUT: replaces the object (or its status); 409 if `metadata.resourceVersion` is given and stale. */
  replace(rt: ResourceType, namespace: string, name: string, body: unknown, opts: UpdateOptions = {}): KubeObject {
    if (!isObject(body)) throw badRequest('the request body must be a JSON object');
    const old = this.get(rt, namespace, name);
    const next = this.typed(rt, body);
    const meta = (next.metadata ??= {} as KubeObject['metadata']);
    if (meta.name !== undefined && meta.name !== name) {
      throw badRequest(`the name of the object (${meta.name}) does not match the name on the URL (${name})`);
    }
    if (meta.namespace !== undefined && meta.namespace !== namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    if (meta.resourceVersion !== undefined && meta.resourceVersion !== '' && meta.resourceVersion !== old.metadata.resourceVersion) {
      throw conflict(rt.group, rt.resource, name);
    }
    return this.updated(rt, old, this.commit(rt, old, next, opts), opts);
  }

  /**
   * PATCH of any of the four content types. Server-side apply creates a missing object and needs a
   * field manager; the others answer 404 for a missing object. Returns whether the object was created.
   */
  patch(
    rt: ResourceType,
    namespace: string,
    name: string,
    contentType: string,
    rawBody: string,
    opts: UpdateOptions & { fieldManager?: string } = {},
  ): { object: KubeObject; created: boolean } {
    const type = contentType.split(';')[0].trim().toLowerCase();
    if (type === PATCH_TYPES.apply) return this.serverSideApply(rt, namespace, name, rawBody, opts);
    const patch = parseJson(rawBody);
    const old = this.get(rt, namespace, name);
    let next: unknown;
    switch (type) {
      case PATCH_TYPES.json:
        next = jsonPatch(old, patch);
        break;
      case PATCH_TYPES.merge:
        next = mergePatch(old, patch);
        break;
      case PATCH_TYPES.strategic:
        next = strategicMergePatch(old, patch);
        break;
      default:
        throw new KubeApiError(
          415,
          `the body of the request was in an unknown format - accepted media types include: ${Object.values(PATCH_TYPES).join(', ')}`,
        );
    }
    if (!isObject(next)) throw new KubeApiError(422, 'the patched object is not a JSON object', 'Invalid');
    this.checkPatchedIdentity(rt, old, next);
    return { object: this.updated(rt, old, this.commit(rt, old, next as KubeObject, opts), opts), created: false };
  }

  /** Records who changed what in an update that was stored (not one that removed the object). */
  private updated(rt: ResourceType, old: KubeObject, stored: KubeObject, opts: UpdateOptions): KubeObject {
    const [namespace, name] = [old.metadata.namespace!, old.metadata.name];
    if (!opts.dryRun && this.store.get(rt, namespace, name))
      this.fields.recordUpdate(objectKey(rt, namespace, name), opts.fieldManager ?? 'unknown', old, stored);
    return stored;
  }

  /**
   * DELETE. Pods begin graceful termination (the kubelet removes them later). Other objects go at once,
   * and their dependents (by ownerReference) are deleted too unless the policy is `Orphan`; but an
   * object with finalizers only gets marked as being deleted (see `markAsDeleting`) and stays until an
   * update empties its finalizers. Returns what the API server answers: the object still there (a
   * terminating Pod, an object held by finalizers), or a Success Status.
   */
  delete(rt: ResourceType, namespace: string, name: string, opts: DeleteOptions = {}): unknown {
    const old = this.get(rt, namespace, name);
    // DeleteOptions.preconditions, worded as the API server's storage layer words a failed one.
    const pre = opts.preconditions ?? {};
    if (pre.uid && pre.uid !== old.metadata.uid) {
      throw conflict(
        rt.group,
        rt.resource,
        name,
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${old.metadata.uid}`,
      );
    }
    if (pre.resourceVersion && pre.resourceVersion !== old.metadata.resourceVersion) {
      throw conflict(
        rt.group,
        rt.resource,
        name,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${old.metadata.resourceVersion}`,
      );
    }
    if (opts.dryRun) return old;
    if (rt === PODS) {
      const immediate = opts.gracePeriodSeconds === 0;
      if (old.metadata.deletionTimestamp) {
        if (immediate) this.listener.podDeleting(old, true);
        return old;
      }
      const next = clone(old) as KubeObject;
      next.metadata.deletionTimestamp = rfc3339(this.now());
      next.metadata.deletionGracePeriodSeconds = opts.gracePeriodSeconds ?? old.spec?.terminationGracePeriodSeconds ?? 30;
      next.status = terminatingPodStatus(old.status, this.now());
      const stored = this.store.put(rt, next);
      this.listener.podDeleting(stored, immediate);
      return stored;
    }
    if (hasFinalizers(old)) {
      const held = this.markAsDeleting(rt, old);
      // The garbage collector orphans the dependents of an object deleted with `Orphan` at once (through
      // its `orphan` finalizer, not modelled); any other policy collects them when the object goes.
      if (opts.propagationPolicy === 'Orphan') this.collectDependents(held, true);
      return held;
    }
    this.removeNow(rt, namespace, name, opts.propagationPolicy);
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      details: { name, group: rt.group, kind: rt.resource, uid: old.metadata.uid },
    };
  }

  /**
   * Ends a deletion that is due (a Pod's termination is over): removes the object, unless finalizers
   * hold it, which leaves it marked as being deleted with a grace period of 0 (so the update that
   * empties its finalizers removes it), as the final grace-0 DELETE of the kubelet does. Returns the
   * removed object's last state, or undefined if it stays.
   */
  finishDeletion(rt: ResourceType, namespace: string, name: string): KubeObject | undefined {
    const obj = this.store.get(rt, namespace, name);
    if (!obj) return undefined;
    if (hasFinalizers(obj)) {
      this.markAsDeleting(rt, obj);
      return undefined;
    }
    return this.removeNow(rt, namespace, name);
  }

  /**
   * Marks an object as being deleted, as `markAsDeleting` in kubernetes v1.32
   * `staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go` does for an object that
   * finalizers keep: deletionTimestamp now (an earlier one stays), deletionGracePeriodSeconds 0,
   * generation bumped on the first mark.
   */
  private markAsDeleting(rt: ResourceType, obj: KubeObject): KubeObject {
    const next = clone(obj) as KubeObject;
    const meta = next.metadata;
    if (!meta.deletionTimestamp && (meta.generation ?? 0) > 0) meta.generation += 1;
    meta.deletionTimestamp ??= rfc3339(this.now());
    meta.deletionGracePeriodSeconds = 0;
    return jsonEqual(next, obj) ? obj : this.store.put(rt, next);
  }

  /** Removes an object for good (the end of a Pod's termination, or a non-graceful delete). */
  removeNow(rt: ResourceType, namespace: string, name: string, propagationPolicy?: string): KubeObject | undefined {
    const removed = this.store.remove(rt, namespace, name);
    if (!removed) return undefined;
    const k = objectKey(rt, namespace, name);
    this.lastApplied.delete(k);
    this.fields.forget(k);
    this.collectDependents(removed, propagationPolicy === 'Orphan');
    return removed;
  }

  /**
   * `kubectl apply` (client-side) of a manifest: creates the object if absent; otherwise sets every
   * field the manifest gives and removes the fields the previously applied manifest gave but this one
   * does not, keeping fields nobody applied (a StatefulSet's `replicas` or `partition` set by a
   * controller, a Service's `clusterIP`...). Lists are replaced as a whole.
   */
  applyManifest(manifest: KubeObject): KubeObject {
    const rt = typeByApiVersionKind(manifest.apiVersion, manifest.kind);
    if (!rt) {
      const served = RESOURCE_TYPES.map((t) => `${apiVersionOf(t)} ${t.kind}`).join(', ');
      throw new Error(
        `cannot apply ${manifest.apiVersion} ${manifest.kind} "${manifest.metadata?.name}": not a served type (served: ${served})`,
      );
    }
    const namespace = manifest.metadata.namespace ?? 'default';
    const desired = clone(manifest);
    desired.metadata.namespace = namespace;
    const k = objectKey(rt, namespace, desired.metadata.name);
    const old = this.store.get(rt, namespace, desired.metadata.name);
    const opts = { fieldManager: CLIENT_SIDE_APPLY };
    const result = old
      ? this.updated(rt, old, this.commit(rt, old, threeWayMerge(this.lastApplied.get(k), desired, old)), opts)
      : this.create(rt, namespace, desired, opts);
    this.lastApplied.set(k, desired);
    return result;
  }

  /**
   * Commits a new state of an existing object: the one update path of API writes and controllers.
   * Status writes change only `.status`; other writes keep the stored status (for types with a status
   * subresource) and the system metadata. Bumps `generation` when anything outside metadata and status
   * changes; a write that changes nothing stores nothing and returns the stored object. A write that
   * empties the finalizers of an object being deleted (grace period 0 or none) removes it and returns
   * the written state.
   */
  commit(rt: ResourceType, old: KubeObject, next: KubeObject, opts: UpdateOptions = {}): KubeObject {
    let candidate: KubeObject;
    if (opts.subresource === 'status') {
      candidate = clone(old) as KubeObject;
      if (next.status === undefined) delete candidate.status;
      else candidate.status = clone(next.status);
    } else {
      candidate = this.typed(rt, next);
      const meta = (candidate.metadata ??= {} as KubeObject['metadata']);
      for (const f of [
        'name',
        'namespace',
        'uid',
        'creationTimestamp',
        'deletionTimestamp',
        'deletionGracePeriodSeconds',
        'generation',
      ] as const) {
        if (old.metadata[f] === undefined) delete meta[f];
        else meta[f] = old.metadata[f];
      }
      delete meta.managedFields;
      if (rt.hasStatus) {
        if (old.status === undefined) delete candidate.status;
        else candidate.status = clone(old.status);
      }
      this.defaultAndValidate(rt, candidate, old);
      if (!jsonEqual(specOf(old), specOf(candidate))) meta.generation = (old.metadata.generation ?? 0) + 1;
    }
    candidate.metadata.resourceVersion = old.metadata.resourceVersion;
    if (jsonEqual(candidate, old)) return old;
    if (opts.dryRun) return candidate;
    if (shouldDeleteDuringUpdate(candidate, old)) {
      this.removeNow(rt, old.metadata.namespace!, old.metadata.name);
      return candidate;
    }
    return this.store.put(rt, candidate);
  }

  private serverSideApply(
    rt: ResourceType,
    namespace: string,
    name: string,
    rawBody: string,
    opts: UpdateOptions & { fieldManager?: string },
  ): { object: KubeObject; created: boolean } {
    const manager = opts.fieldManager;
    if (!manager) throw badRequest('PATCH requests with apply content type must specify a fieldManager');
    const body = parseJsonOrYaml(rawBody);
    if (!isObject(body) || !body.apiVersion || !body.kind) {
      throw badRequest('apply patches must include apiVersion and kind');
    }
    if (body.metadata?.name !== undefined && body.metadata.name !== name) {
      throw badRequest(`the name of the object (${body.metadata.name}) does not match the name on the URL (${name})`);
    }
    const k = objectKey(rt, namespace, name);
    const old = this.store.get(rt, namespace, name);
    const applied = { ...body, metadata: { ...(body.metadata ?? {}), name } };
    const { next, commit } = this.fields.apply(k, manager, old, applied, opts.force === true, { name, group: rt.group, kind: rt.resource });
    let object: KubeObject;
    if (!old) {
      if (opts.subresource) throw notFound(rt.group, rt.resource, name);
      object = this.create(rt, namespace, next, opts);
    } else {
      this.checkPatchedIdentity(rt, old, next);
      object = this.commit(rt, old, next as KubeObject, opts);
    }
    // Apply owns exactly what it applied (a new object's defaulted fields stay unowned).
    if (!opts.dryRun && this.store.get(rt, namespace, name)) commit();
    return { object, created: !old };
  }

  /** A patch may not rename, move or re-type the object, and a resourceVersion it sets must be current. */
  private checkPatchedIdentity(rt: ResourceType, old: KubeObject, next: Record<string, any>): void {
    const meta = next.metadata ?? {};
    if (meta.name !== old.metadata.name)
      throw badRequest(`the name of the object (${meta.name}) does not match the name on the URL (${old.metadata.name})`);
    if (meta.namespace !== old.metadata.namespace)
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    if (meta.resourceVersion !== old.metadata.resourceVersion) throw conflict(rt.group, rt.resource, old.metadata.name);
  }

  /** A copy of `body` with the type's apiVersion and kind; 400 if it names another type. */
  private typed(rt: ResourceType, body: Record<string, any>): KubeObject {
    const apiVersion = apiVersionOf(rt);
    if ((body.kind !== undefined && body.kind !== rt.kind) || (body.apiVersion !== undefined && body.apiVersion !== apiVersion)) {
      throw badRequest(
        `the API version in the data (${body.apiVersion}) and kind (${body.kind}) do not match the request (${apiVersion} ${rt.kind})`,
      );
    }
    return { ...clone(body), apiVersion, kind: rt.kind } as KubeObject;
  }

  /** Type-specific defaulting and validation, in place; throws 422 on invalid objects. */
  private defaultAndValidate(rt: ResourceType, obj: KubeObject, old?: KubeObject): void {
    const added = old?.metadata.deletionTimestamp ? newFinalizers(obj, old) : [];
    if (added.length > 0) {
      // ValidateNoNewFinalizers, staging/src/k8s.io/apimachinery/pkg/api/validation/objectmeta.go
      const list = added.map((f) => JSON.stringify(f)).join(', ');
      throw invalid(qualifiedKind(rt), obj.metadata.name, [
        `metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{${list}}`,
      ]);
    }
    if (rt.kind === 'StatefulSet') {
      obj.spec = defaultStatefulSetSpec(obj.spec ?? {}, this.kubeMinor);
      dropStatefulSetDisabledFields(obj, old, this.kubeMinor);
      const problems = validateStatefulSet(obj);
      if (old) problems.push(...validateStatefulSetUpdate(old, obj, this.kubeMinor));
      if (problems.length > 0) throw invalid(qualifiedKind(rt), obj.metadata.name, problems);
    } else if (rt.kind === 'Service') {
      obj.spec = { ...(obj.spec ?? {}) };
      obj.spec.type ??= 'ClusterIP';
      if (obj.spec.type !== 'ExternalName' && !obj.spec.clusterIP) {
        obj.spec.clusterIP = old?.spec?.clusterIP ?? this.allocateClusterIP();
        obj.spec.clusterIPs = [obj.spec.clusterIP];
      }
    }
  }

  private allocateClusterIP(): string {
    const n = this.nextClusterIP++;
    return `10.96.${(n >> 8) & 255}.${n & 255}`;
  }

  /** Deletes (or, orphaning, releases) every object owned by `owner`. */
  private collectDependents(owner: KubeObject, orphan: boolean): void {
    const uid = owner.metadata.uid;
    for (const rt of RESOURCE_TYPES) {
      for (const dep of this.store.list(rt, owner.metadata.namespace)) {
        const refs: Array<{ uid: string }> = dep.metadata.ownerReferences ?? [];
        if (!refs.some((r) => r.uid === uid)) continue;
        try {
          if (orphan) {
            const next = clone(dep) as KubeObject;
            next.metadata.ownerReferences = refs.filter((r) => r.uid !== uid);
            if (next.metadata.ownerReferences.length === 0) delete next.metadata.ownerReferences;
            this.commit(rt, dep, next);
          } else {
            this.delete(rt, dep.metadata.namespace!, dep.metadata.name);
          }
        } catch {
          // The dependent changed or went meanwhile; nothing left to collect.
        }
      }
    }
  }
}

/**
 * Mutating admission on create. StorageObjectInUseProtection (kubernetes v1.32
 * `plugin/pkg/admission/storage/storageobjectinuseprotection/admission.go`, `admitPVC`, create only)
 * appends the pvc-protection finalizer to every new claim that lacks it.
 */
function admit(rt: ResourceType, obj: KubeObject): void {
  if (rt !== CLAIMS) return;
  const finalizers: string[] = obj.metadata.finalizers ?? [];
  if (!finalizers.includes(PVC_PROTECTION_FINALIZER)) obj.metadata.finalizers = [...finalizers, PVC_PROTECTION_FINALIZER];
}

function hasFinalizers(obj: KubeObject): boolean {
  return (obj.metadata.finalizers ?? []).length > 0;
}

/** The finalizers `next` has that `old` lacks, sorted (Go's `sets.String.List()`). */
function newFinalizers(next: KubeObject, old: KubeObject): string[] {
  const had = new Set<string>(old.metadata.finalizers ?? []);
  return [...new Set<string>(next.metadata.finalizers ?? [])].filter((f) => !had.has(f)).sort();
}

/**
 * Whether an update removes the object instead of storing it: `ShouldDeleteDuringUpdate` in kubernetes
 * v1.32 `staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go` (no finalizers left,
 * deletion requested, grace period 0 or none; a terminating Pod's grace period keeps it for the kubelet).
 */
function shouldDeleteDuringUpdate(next: KubeObject, old: KubeObject): boolean {
  if (hasFinalizers(next) || !old.metadata.deletionTimestamp) return false;
  return (old.metadata.deletionGracePeriodSeconds ?? 0) === 0;
}

/** `Kind.group` (just `Kind` for the core group), as Invalid errors name a type. */
function qualifiedKind(rt: ResourceType): string {
  return rt.group ? `${rt.kind}.${rt.group}` : rt.kind;
}

/** A key naming one object of one type. */
function objectKey(rt: ResourceType, namespace: string, name: string): string {
  return `${typeKey(rt)}/${namespace}/${name}`;
}

/** Everything but metadata and status: what `generation` tracks. */
function specOf(obj: KubeObject): Record<string, unknown> {
  const { metadata: _m, status: _s, ...rest } = obj;
  return rest;
}

/** Parses a JSON request body; 400 on malformed JSON. */
export function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch (e) {
    throw badRequest(`invalid JSON in request body: ${(e as Error).message}`);
  }
}

/** Parses an apply body, which may be JSON or YAML; 400 if it is neither. */
function parseJsonOrYaml(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    try {
      return parseYaml(raw);
    } catch (e) {
      throw badRequest(`invalid YAML in apply patch: ${(e as Error).message}`);
    }
  }
}
