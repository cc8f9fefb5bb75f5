/**
 * Objects as the API server returns them (`kubectl get ... -o yaml`), compared with what applying the
 * rendered manifests would make of them.
 *
 * A live object carries what the server adds: `status`, `metadata.uid`, `resourceVersion`,
 * `managedFields`, owner references, and every default the API server filled in. Applying rendered
 * manifests onto it (client-side `kubectl apply` or server-side apply, as Argo CD and Flux do) keeps
 * what the manifest does not mention: maps merge key by key, lists of named things (containers, env,
 * volumes, ports...) merge item by item, other lists are replaced whole. So the report compares the
 * live object with "live + manifest" rather than with the manifest alone: a default the server filled
 * in is no change, a field the manifest sets differently is.
 */
import { kindOf, metadataOf, objectKey, type KubeObject } from './model';
import { isPlainObject } from './values';

/** Metadata only the server writes; none of it is part of what applying changes. */
const SERVER_METADATA = [
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'managedFields',
  'selfLink',
  'deletionGracePeriodSeconds',
];
/** Annotations clients and controllers write about the object rather than in it. */
const BOOKKEEPING_ANNOTATIONS = ['kubectl.kubernetes.io/last-applied-configuration', 'deployment.kubernetes.io/revision'];

/** An owner reference as the report needs it. */
export interface Owner {
  readonly kind: string;
  readonly name: string;
  readonly controller: boolean;
}

/** Whether `o` came from the API server rather than from a manifest. */
export function isLive(o: KubeObject): boolean {
  const m = metadataOf(o);
  return typeof m.uid === 'string' || typeof m.resourceVersion === 'string' || Array.isArray(m.managedFields);
}

/** The items of a `kind: List` (or `<Kind>List`) as kubectl prints it; undefined for anything else. */
export function listItems(doc: Record<string, unknown>): unknown[] | undefined {
  if (typeof doc.kind !== 'string' || !doc.kind.endsWith('List') || !Array.isArray(doc.items)) return undefined;
  return doc.items;
}

/**
 * A live object without what only the server writes (top-level `status`, server metadata, bookkeeping
 * annotations, owner references), and its owners, which the report names as a risk of their own.
 */
export function withoutServerFields(o: KubeObject): { object: KubeObject; owners: Owner[] } {
  const { status: _status, ...rest } = o;
  const metadata: Record<string, unknown> = { ...metadataOf(o) };
  for (const key of SERVER_METADATA) delete metadata[key];
  const owners = (Array.isArray(metadata.ownerReferences) ? metadata.ownerReferences : []).filter(isPlainObject).map((r) => ({
    kind: String(r.kind ?? ''),
    name: String(r.name ?? ''),
    controller: r.controller === true,
  }));
  delete metadata.ownerReferences;
  if (isPlainObject(metadata.annotations)) {
    const annotations = { ...metadata.annotations };
    for (const key of BOOKKEEPING_ANNOTATIONS) delete annotations[key];
    if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
    else delete metadata.annotations;
  }
  return { object: { ...rest, metadata }, owners };
}

/**
 * The key that identifies the items of a list field when applying merges it (the Kubernetes API's
 * patch merge keys); lists not named here are replaced whole.
 */
function mergeKey(field: string, kind: string, parent: readonly string[]): string | undefined {
  switch (field) {
    case 'containers':
    case 'initContainers':
    case 'ephemeralContainers':
    case 'env':
    case 'volumes':
    case 'imagePullSecrets':
    case 'resourceClaims':
      return 'name';
    case 'volumeMounts':
      return 'mountPath';
    case 'volumeDevices':
      return 'devicePath';
    case 'hostAliases':
      return 'ip';
    case 'topologySpreadConstraints':
      return 'topologyKey';
    case 'resizePolicy':
      return 'resourceName';
    case 'ports':
      // A Service's ports merge by port, a container's by containerPort.
      return kind === 'Service' && parent.length === 1 && parent[0] === 'spec' ? 'port' : 'containerPort';
    default:
      return undefined;
  }
}

/** Fields applied as one value even though they are maps: Kubernetes refuses to change them anyway. */
function isAtomic(kind: string, path: readonly string[]): boolean {
  return (kind === 'StatefulSet' || kind === 'Deployment') && path.length === 2 && path[0] === 'spec' && path[1] === 'selector';
}

/** `desired` applied onto `live`: what the object becomes when the manifest is applied. */
export function applied(live: KubeObject, desired: KubeObject): KubeObject {
  return mergeValue(live, desired, kindOf(desired), []) as KubeObject;
}

function mergeValue(live: unknown, desired: unknown, kind: string, path: readonly string[]): unknown {
  if (isAtomic(kind, path)) return desired;
  if (isPlainObject(live) && isPlainObject(desired)) {
    const out: Record<string, unknown> = { ...live };
    for (const [key, value] of Object.entries(desired)) {
      out[key] = key in live ? mergeField(live[key], value, key, kind, path) : value;
    }
    return out;
  }
  return desired;
}

function mergeField(live: unknown, desired: unknown, field: string, kind: string, path: readonly string[]): unknown {
  const at = [...path, field];
  if (!Array.isArray(live) || !Array.isArray(desired)) return mergeValue(live, desired, kind, at);
  const key = mergeKey(field, kind, path);
  if (key === undefined || !desired.every((item) => isPlainObject(item) && key in item)) return desired;
  const byKey = new Map(live.filter(isPlainObject).map((item) => [JSON.stringify(item[key]), item]));
  const used = new Set<string>();
  const merged = desired.map((item) => {
    const id = JSON.stringify((item as Record<string, unknown>)[key]);
    used.add(id);
    const before = byKey.get(id);
    return before ? mergeValue(before, item, kind, at) : item;
  });
  // Items only the live object has stay, after the manifest's (as kubectl apply and server-side apply keep them).
  const kept = live.filter((item) => !(isPlainObject(item) && used.has(JSON.stringify(item[key]))));
  return [...merged, ...kept];
}

/**
 * For each object of `after` that `before` holds live: the object applying it would leave. Objects
 * the live side lacks are created as they are.
 */
export function appliedOnto(before: readonly KubeObject[], after: readonly KubeObject[], live: ReadonlySet<string>): KubeObject[] {
  const byKey = new Map(before.map((o) => [objectKey(o), o]));
  return after.map((o) => {
    const key = objectKey(o);
    const current = byKey.get(key);
    return current && live.has(key) ? applied(current, o) : o;
  });
}
