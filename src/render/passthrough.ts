/**
 * Kubernetes objects kept beside the clusters (a Secret, a NetworkPolicy, an Ingress, a
 * ServiceMonitor...) pass through a render unchanged, so one Argo CD Application or Flux
 * Kustomization can hold them with the cluster. What the API server would refuse is refused here:
 * an object of a built-in kind is validated strictly against the target version's schema, and one
 * that takes a rendered object's place is refused.
 */
import { kubeSchema } from '../base/kube-schemas';
import { formatIssue, type SourceRef, type SpecIssue } from '../tidbcluster/errors';
import type { LoadedDocument } from '../tidbcluster/load';
import { NEWEST_KUBE_MINOR, OLDEST_KUBE_MINOR } from '../tidbcluster/kube-version';

const MINORS = Array.from({ length: NEWEST_KUBE_MINOR - OLDEST_KUBE_MINOR + 1 }, (_, i) => OLDEST_KUBE_MINOR + i);

/** An object that passes through, where it came from. */
export interface PassedObject {
  readonly object: Record<string, unknown>;
  readonly source: SourceRef;
  /** The line of a path in its document. */
  line(path: string): number | undefined;
}

export interface PassThrough {
  readonly objects: PassedObject[];
  /** `file: document N: path (line L): message`, one per problem. */
  readonly errors: string[];
}

/** The file `render -o DIR` writes them to: no cluster's file can be named so (names have no `_`). */
export const PASSTHROUGH_FILE = '_passthrough.k8s.yaml';

/**
 * The built-in kinds that are not namespaced (a namespace is never added to them). Every other
 * built-in kind is namespaced.
 */
const CLUSTER_SCOPED = new Set([
  '/Namespace', '/Node', '/PersistentVolume', '/ComponentStatus',
  'rbac.authorization.k8s.io/ClusterRole', 'rbac.authorization.k8s.io/ClusterRoleBinding',
  'storage.k8s.io/StorageClass', 'storage.k8s.io/CSIDriver', 'storage.k8s.io/CSINode', 'storage.k8s.io/VolumeAttachment', 'storage.k8s.io/VolumeAttributesClass',
  'scheduling.k8s.io/PriorityClass', 'node.k8s.io/RuntimeClass',
  'networking.k8s.io/IngressClass', 'networking.k8s.io/IPAddress', 'networking.k8s.io/ServiceCIDR',
  'admissionregistration.k8s.io/ValidatingWebhookConfiguration', 'admissionregistration.k8s.io/MutatingWebhookConfiguration',
  'admissionregistration.k8s.io/ValidatingAdmissionPolicy', 'admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding',
  'admissionregistration.k8s.io/MutatingAdmissionPolicy', 'admissionregistration.k8s.io/MutatingAdmissionPolicyBinding',
  'apiextensions.k8s.io/CustomResourceDefinition', 'apiregistration.k8s.io/APIService',
  'certificates.k8s.io/CertificateSigningRequest', 'certificates.k8s.io/ClusterTrustBundle',
  'flowcontrol.apiserver.k8s.io/FlowSchema', 'flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration',
  'resource.k8s.io/DeviceClass', 'resource.k8s.io/ResourceSlice', 'resource.k8s.io/DeviceTaintRule',
  'storagemigration.k8s.io/StorageVersionMigration', 'internal.apiserver.k8s.io/StorageVersion',
]);

/** What the project does with tidb-operator's other kinds: they need its CRDs and controller. */
const OPERATOR_KINDS: Readonly<Record<string, string>> = {
  CompactBackup: 'CompactBackup (compacting the log backup) is not carried out',
};

const groupOf = (apiVersion: string): string => (apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.lastIndexOf('/')) : '');

/**
 * Checks the objects and gives each built-in namespaced one without a namespace the render's
 * (`namespace`), as the cluster's own objects get it. Custom resources pass as written: their scope
 * and schema are their CRD's, which the render does not have.
 */
export function passThrough(docs: readonly LoadedDocument<Record<string, unknown>>[], options: { readonly namespace?: string; readonly kubeMinor: number }): PassThrough {
  const objects: PassedObject[] = [];
  const errors: string[] = [];
  if (docs.length === 0) return { objects, errors };
  const schema = kubeSchema(options.kubeMinor);
  for (const doc of docs) {
    const obj = doc.value;
    const apiVersion = String(obj.apiVersion);
    const kind = String(obj.kind);
    const group = groupOf(apiVersion);
    const issues: SpecIssue[] = [];
    const at = (path: string, message: string) => issues.push({ path, line: doc.line(path), message });
    if (group === 'pingcap.com') {
      at('kind', `${OPERATOR_KINDS[kind] ?? `a ${kind} needs tidb-operator's CRD and controller, which tidb-gitops does not run`}; tidb-gitops reads TidbCluster, Backup, BackupSchedule, Restore, TidbInitializer and TidbMonitor`);
    } else if (schema.knows(apiVersion, kind)) {
      for (const e of schema.validate(obj)) at(e.path || 'kind', e.message);
    } else if (isBuiltInGroup(group)) {
      const serving = MINORS.filter((m) => kubeSchema(m).knows(apiVersion, kind));
      at('apiVersion', `Kubernetes 1.${options.kubeMinor} does not serve ${apiVersion} ${kind}${serving.length > 0 ? ` (1.${serving[0]} and later do: render for it with --kube-version)` : ''}`);
    }
    const meta = (obj.metadata ?? {}) as Record<string, unknown>;
    if (typeof meta.name !== 'string' || meta.name === '') {
      at('metadata.name', meta.generateName !== undefined ? 'required: generateName makes a new object at every apply, and Argo CD and Flux apply by name' : 'required');
    } else if (/[/%]/.test(meta.name) || meta.name === '.' || meta.name === '..' || meta.name.length > 253) {
      // What every kind refuses (apimachinery's path segment rule); each kind checks more itself.
      at('metadata.name', `${JSON.stringify(meta.name)} cannot name an object: no '/' or '%', not '.' or '..', at most 253 characters`);
    }
    if (issues.length > 0) {
      errors.push(...issues.map((i) => formatIssue(i, doc.source)));
      continue;
    }
    const namespaced = schema.knows(apiVersion, kind) && !CLUSTER_SCOPED.has(`${group}/${kind}`);
    const object = namespaced && meta.namespace === undefined && options.namespace !== undefined ? { ...obj, metadata: { ...meta, namespace: options.namespace } } : obj;
    objects.push({ object, source: doc.source, line: doc.line });
  }
  return { objects, errors };
}

/** The groups Kubernetes itself serves: the core group, names without a dot, and `*.k8s.io`. */
function isBuiltInGroup(group: string): boolean {
  return group === '' || !group.includes('.') || group.endsWith('.k8s.io');
}

/** `Kind/namespace/name`, how objects collide. */
export const objectKey = (o: Record<string, unknown>): string => {
  const meta = (o.metadata ?? {}) as Record<string, unknown>;
  return `${String(o.kind)}/${String(meta.namespace ?? '')}/${String(meta.name ?? '')}`;
};

/**
 * An object that takes the place of one a cluster renders, or of another passed-through one: both
 * would be applied under one name, and the last would win. One message each, naming both places.
 */
export function collisions(rendered: readonly { readonly objects: readonly Record<string, unknown>[]; readonly from: string }[], passed: readonly PassedObject[]): string[] {
  const owners = new Map<string, string>();
  for (const r of rendered) for (const o of r.objects) owners.set(objectKey(o), r.from);
  const out: string[] = [];
  for (const p of passed) {
    const key = objectKey(p.object);
    const meta = p.object.metadata as Record<string, unknown>;
    const ns = meta.namespace !== undefined ? ` in namespace ${String(meta.namespace)}` : '';
    const what = `${String(p.object.kind)} ${String(meta.name)}${ns}`;
    const first = owners.get(key);
    if (first !== undefined) out.push(formatIssue({ path: 'metadata.name', line: p.line('metadata.name'), message: `${what} is also ${first}; rename one of them` }, p.source));
    else owners.set(key, `in ${p.source.file}: document ${p.source.document}`);
  }
  return out;
}
