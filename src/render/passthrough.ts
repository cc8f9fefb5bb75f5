/**
 * Kubernetes objects kept beside the clusters (a Secret, a NetworkPolicy, an Ingress, a
 * ServiceMonitor...) pass through a render unchanged, so one Argo CD Application or Flux
 * Kustomization can hold them with the cluster. What the API server would refuse is refused here:
 * an object of a built-in kind is validated strictly against the target version's schema, and one
 * that takes the place of a rendered object, or of one made at run time, is refused.
 */
import { kubeSchema } from '../base/kube-schemas';
import { passThroughFindings } from './passthrough-rules';
import { groupOf, placeOf, type ReservedNames } from './reserved-names';
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
  '/Namespace',
  '/Node',
  '/PersistentVolume',
  '/ComponentStatus',
  'rbac.authorization.k8s.io/ClusterRole',
  'rbac.authorization.k8s.io/ClusterRoleBinding',
  'storage.k8s.io/StorageClass',
  'storage.k8s.io/CSIDriver',
  'storage.k8s.io/CSINode',
  'storage.k8s.io/VolumeAttachment',
  'storage.k8s.io/VolumeAttributesClass',
  'scheduling.k8s.io/PriorityClass',
  'node.k8s.io/RuntimeClass',
  'networking.k8s.io/IngressClass',
  'networking.k8s.io/IPAddress',
  'networking.k8s.io/ServiceCIDR',
  'admissionregistration.k8s.io/ValidatingWebhookConfiguration',
  'admissionregistration.k8s.io/MutatingWebhookConfiguration',
  'admissionregistration.k8s.io/ValidatingAdmissionPolicy',
  'admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding',
  'admissionregistration.k8s.io/MutatingAdmissionPolicy',
  'admissionregistration.k8s.io/MutatingAdmissionPolicyBinding',
  'apiextensions.k8s.io/CustomResourceDefinition',
  'apiregistration.k8s.io/APIService',
  'certificates.k8s.io/CertificateSigningRequest',
  'certificates.k8s.io/ClusterTrustBundle',
  'flowcontrol.apiserver.k8s.io/FlowSchema',
  'flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration',
  'resource.k8s.io/DeviceClass',
  'resource.k8s.io/ResourceSlice',
  'resource.k8s.io/DeviceTaintRule',
  'storagemigration.k8s.io/StorageVersionMigration',
  'internal.apiserver.k8s.io/StorageVersion',
]);

/** What the project does with tidb-operator's other kinds: they need its CRDs and controller. */
const OPERATOR_KINDS: Readonly<Record<string, string>> = {
  CompactBackup: 'CompactBackup (compacting the log backup) is not carried out',
};

/**
 * The scope of custom resources often kept beside a cluster, whose CRDs are seldom among the inputs:
 * the Prometheus Operator's (whose PodMonitors a cluster renders) and cert-manager's (its certificates).
 */
const KNOWN_CUSTOM_SCOPES: Readonly<Record<string, 'Namespaced' | 'Cluster'>> = {
  ...Object.fromEntries(
    [
      'Prometheus',
      'PrometheusAgent',
      'Alertmanager',
      'AlertmanagerConfig',
      'ThanosRuler',
      'ServiceMonitor',
      'PodMonitor',
      'Probe',
      'PrometheusRule',
      'ScrapeConfig',
    ].map((k) => [`monitoring.coreos.com/${k}`, 'Namespaced']),
  ),
  'cert-manager.io/Certificate': 'Namespaced',
  'cert-manager.io/CertificateRequest': 'Namespaced',
  'cert-manager.io/Issuer': 'Namespaced',
  'cert-manager.io/ClusterIssuer': 'Cluster',
  'acme.cert-manager.io/Order': 'Namespaced',
  'acme.cert-manager.io/Challenge': 'Namespaced',
};

/** `group/Kind` -> scope, from the CustomResourceDefinitions among the inputs. */
function crdScopes(docs: readonly LoadedDocument<Record<string, unknown>>[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const { value } of docs) {
    if (value.kind !== 'CustomResourceDefinition' || groupOf(String(value.apiVersion)) !== 'apiextensions.k8s.io') continue;
    const spec = (value.spec ?? {}) as { group?: unknown; scope?: unknown; names?: { kind?: unknown } };
    if (typeof spec.group === 'string' && typeof spec.names?.kind === 'string' && typeof spec.scope === 'string')
      out.set(`${spec.group}/${spec.names.kind}`, spec.scope);
  }
  return out;
}

/**
 * Checks the objects and gives each namespaced one without a namespace the render's (`namespace`), as
 * the cluster's own objects get it. A custom resource's scope is its CRD's (among the inputs) or one
 * the render knows; one without a namespace whose scope is neither is refused: where it lands, and
 * what it might replace there, cannot be told. Custom resources are not validated: their schema is
 * their CRD's.
 */
export function passThrough(
  docs: readonly LoadedDocument<Record<string, unknown>>[],
  options: { readonly namespace?: string; readonly kubeMinor: number },
): PassThrough {
  const objects: PassedObject[] = [];
  const errors: string[] = [];
  if (docs.length === 0) return { objects, errors };
  const schema = kubeSchema(options.kubeMinor);
  const customScopes = crdScopes(docs);
  for (const doc of docs) {
    const obj = doc.value;
    const apiVersion = String(obj.apiVersion);
    const kind = String(obj.kind);
    const group = groupOf(apiVersion);
    const issues: SpecIssue[] = [];
    const at = (path: string, message: string) => issues.push({ path, line: doc.line(path), message });
    if (group === 'pingcap.com') {
      at(
        'kind',
        `${OPERATOR_KINDS[kind] ?? `a ${kind} needs tidb-operator's CRD and controller, which tidb-gitops does not run`}; tidb-gitops reads TidbCluster, Backup, BackupSchedule, Restore, TidbInitializer and TidbMonitor`,
      );
    } else if (schema.knows(apiVersion, kind)) {
      const schemaErrors = schema.validate(obj);
      for (const e of schemaErrors) at(e.path || 'kind', e.message);
      if (schemaErrors.length === 0) for (const [path, message] of passThroughFindings(obj, options.kubeMinor)) at(path, message);
    } else if (isBuiltInGroup(group)) {
      const serving = MINORS.filter((m) => kubeSchema(m).knows(apiVersion, kind));
      at(
        'apiVersion',
        `Kubernetes 1.${options.kubeMinor} does not serve ${apiVersion} ${kind}${serving.length > 0 ? ` (1.${serving[0]} and later do: render for it with --kube-version)` : ''}`,
      );
    }
    const meta = (obj.metadata ?? {}) as Record<string, unknown>;
    if (typeof meta.name !== 'string' || meta.name === '') {
      at(
        'metadata.name',
        meta.generateName !== undefined
          ? 'required: generateName makes a new object at every apply, and Argo CD and Flux apply by name'
          : 'required',
      );
    } else if (
      !issues.some((i) => i.path === 'metadata.name') &&
      (/[/%]/.test(meta.name) || meta.name === '.' || meta.name === '..' || meta.name.length > 253)
    ) {
      // What every kind refuses (apimachinery's path segment rule); each kind checks more itself.
      at('metadata.name', `${JSON.stringify(meta.name)} cannot name an object: no '/' or '%', not '.' or '..', at most 253 characters`);
    }
    const custom = group !== 'pingcap.com' && !schema.knows(apiVersion, kind) && !isBuiltInGroup(group);
    const customScope = custom ? (customScopes.get(`${group}/${kind}`) ?? KNOWN_CUSTOM_SCOPES[`${group}/${kind}`]) : undefined;
    if (custom && customScope === undefined && meta.namespace === undefined) {
      at(
        'metadata',
        `namespace required: whether ${apiVersion} ${kind} is namespaced is its CustomResourceDefinition's, which is not among the inputs; give metadata.namespace, or put the CustomResourceDefinition beside it`,
      );
    }
    if (issues.length > 0) {
      errors.push(...issues.map((i) => formatIssue(i, doc.source)));
      continue;
    }
    const namespaced = custom ? customScope === 'Namespaced' : schema.knows(apiVersion, kind) && !CLUSTER_SCOPED.has(`${group}/${kind}`);
    const object =
      namespaced && meta.namespace === undefined && options.namespace !== undefined
        ? { ...obj, metadata: { ...meta, namespace: options.namespace } }
        : obj;
    objects.push({ object, source: doc.source, line: doc.line });
  }
  return { objects, errors };
}

/** The groups Kubernetes itself serves: the core group, names without a dot, and `*.k8s.io`. */
function isBuiltInGroup(group: string): boolean {
  return group === '' || !group.includes('.') || group.endsWith('.k8s.io');
}

/** `Kind/namespace/name`, an object's identity in messages and maps. */
export const objectKey = (o: Record<string, unknown>): string => {
  const meta = (o.metadata ?? {}) as Record<string, unknown>;
  return `${String(o.kind)}/${String(meta.namespace ?? '')}/${String(meta.name ?? '')}`;
};

/**
 * Each passed-through object that lands on the name of an object a cluster or a document beside it
 * renders, of one made for them at run time (`taken`, from `reserveNames`), or of another
 * passed-through one (which it then takes too):
 * applied together, the last one silently wins (and the controller or Kubernetes overwrites or refuses
 * what Git keeps). One message each, naming both places.
 */
export function collisions(taken: ReservedNames, passed: readonly PassedObject[]): string[] {
  const out: string[] = [];
  for (const p of passed) {
    const meta = (p.object.metadata ?? {}) as { name?: unknown; namespace?: unknown };
    const group = groupOf(String(p.object.apiVersion));
    const kind = String(p.object.kind);
    const name = String(meta.name);
    const namespace = String(meta.namespace ?? '');
    const first = taken.find({ group, kind, namespace, name });
    const what = `${kind} ${name}${namespace !== '' ? ` in namespace ${namespace}` : ' (no namespace: it lands in the one it is applied to)'}`;
    if (first !== undefined) {
      out.push(
        formatIssue(
          {
            path: 'metadata.name',
            line: p.line('metadata.name'),
            message: `${what} takes the place of ${first.by()}; ${first.passed ? 'rename one of them' : 'rename it'}`,
          },
          p.source,
        ),
      );
      continue;
    }
    const shown = () => `${kind} ${name}${namespace !== '' ? ` in namespace ${namespace}` : ''}`;
    const input = { kind, name, source: p.source, line: p.line };
    taken.add({
      group,
      kind,
      namespace,
      name,
      input,
      shown,
      by: () => `${shown()} in ${p.source.file}: document ${p.source.document}`,
      claim: () => `which ${kind} ${name} at ${placeOf(input)} is too`,
      passed: true,
    });
  }
  return out;
}
