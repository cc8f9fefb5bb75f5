/**
 * Kubernetes objects kept beside the clusters (a Secret, a NetworkPolicy, an Ingress, a
 * ServiceMonitor...) pass through a render unchanged, so one Argo CD Application or Flux
 * Kustomization can hold them with the cluster. What the API server would refuse is refused here:
 * an object of a built-in kind is validated strictly against the target version's schema, and one
 * that takes the place of a rendered object, or of one made at run time, is refused.
 */
import { kubeSchema } from '../base/kube-schemas';
import { BACKUP_LABEL, LOG_COMMANDS, logCommandKey, MONITORING_ENV, names, OPERATION_KEY, type MonitoringPublishInfo } from '../tidbcluster/names';
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

/**
 * The scope of custom resources often kept beside a cluster, whose CRDs are seldom among the inputs:
 * the Prometheus Operator's (whose PodMonitors a cluster renders) and cert-manager's (its certificates).
 */
const KNOWN_CUSTOM_SCOPES: Readonly<Record<string, 'Namespaced' | 'Cluster'>> = {
  ...Object.fromEntries(['Prometheus', 'PrometheusAgent', 'Alertmanager', 'AlertmanagerConfig', 'ThanosRuler', 'ServiceMonitor', 'PodMonitor', 'Probe', 'PrometheusRule', 'ScrapeConfig'].map((k) => [`monitoring.coreos.com/${k}`, 'Namespaced'])),
  'cert-manager.io/Certificate': 'Namespaced', 'cert-manager.io/CertificateRequest': 'Namespaced', 'cert-manager.io/Issuer': 'Namespaced', 'cert-manager.io/ClusterIssuer': 'Cluster',
  'acme.cert-manager.io/Order': 'Namespaced', 'acme.cert-manager.io/Challenge': 'Namespaced',
};

/** `group/Kind` -> scope, from the CustomResourceDefinitions among the inputs. */
function crdScopes(docs: readonly LoadedDocument<Record<string, unknown>>[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const { value } of docs) {
    if (value.kind !== 'CustomResourceDefinition' || groupOf(String(value.apiVersion)) !== 'apiextensions.k8s.io') continue;
    const spec = (value.spec ?? {}) as { group?: unknown; scope?: unknown; names?: { kind?: unknown } };
    if (typeof spec.group === 'string' && typeof spec.names?.kind === 'string' && typeof spec.scope === 'string') out.set(`${spec.group}/${spec.names.kind}`, spec.scope);
  }
  return out;
}

const groupOf = (apiVersion: string): string => (apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.lastIndexOf('/')) : '');

/**
 * Checks the objects and gives each namespaced one without a namespace the render's (`namespace`), as
 * the cluster's own objects get it. A custom resource's scope is its CRD's (among the inputs) or one
 * the render knows; one without a namespace whose scope is neither is refused: where it lands, and
 * what it might replace there, cannot be told. Custom resources are not validated: their schema is
 * their CRD's.
 */
export function passThrough(docs: readonly LoadedDocument<Record<string, unknown>>[], options: { readonly namespace?: string; readonly kubeMinor: number }): PassThrough {
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
    const custom = group !== 'pingcap.com' && !schema.knows(apiVersion, kind) && !isBuiltInGroup(group);
    const customScope = custom ? customScopes.get(`${group}/${kind}`) ?? KNOWN_CUSTOM_SCOPES[`${group}/${kind}`] : undefined;
    if (custom && customScope === undefined && meta.namespace === undefined) {
      at('metadata', `namespace required: whether ${apiVersion} ${kind} is namespaced is its CustomResourceDefinition's, which is not among the inputs; give metadata.namespace, or put the CustomResourceDefinition beside it`);
    }
    if (issues.length > 0) {
      errors.push(...issues.map((i) => formatIssue(i, doc.source)));
      continue;
    }
    const namespaced = custom ? customScope === 'Namespaced' : schema.knows(apiVersion, kind) && !CLUSTER_SCOPED.has(`${group}/${kind}`);
    const object = namespaced && meta.namespace === undefined && options.namespace !== undefined ? { ...obj, metadata: { ...meta, namespace: options.namespace } } : obj;
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

/** The objects one cluster renders, the cluster, and where it comes from (`rendered from FILE: document N`). */
export interface RenderedSet {
  readonly objects: readonly Record<string, unknown>[];
  readonly from: string;
  readonly cluster: { readonly name: string; readonly namespace?: string };
}

/** A name taken in a namespace ('' when the object names none), by a rendered object or one made at run time. */
interface Taken {
  readonly group: string;
  readonly kind: string;
  readonly namespace: string;
  /** The name, or a pattern of the names made at run time. */
  readonly name: string | RegExp;
  /** What takes it, for the message: `PodDisruptionBudget x in namespace y, rendered from FILE: document N`. */
  readonly by: string;
  /** The object is another passed-through one (so either may be renamed). */
  readonly passed?: true;
}

const metaOf = (o: Record<string, unknown>) => (o.metadata ?? {}) as { name?: unknown; namespace?: unknown; labels?: Record<string, string> };
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The objects made at run time for a cluster, which Git never holds: the controller's state
 * ConfigMap and Lease, the Jobs it creates from a Backup's or Restore's ConfigMap, the Pods of the
 * rendered StatefulSets and the Jobs of the rendered CronJobs (Kubernetes names them `<sts>-<ordinal>`
 * and `<cronjob>-<minutes>`), and what the monitoring Job publishes. Not the claims of the
 * StatefulSets: a claim made ahead of its Pod (to bind a chosen volume) is how Kubernetes is used.
 */
export function runTimeObjects(set: RenderedSet): Taken[] {
  const { name: c } = set.cluster;
  const ns = set.cluster.namespace ?? '';
  const inNs = (n: string) => (n !== '' ? ` in namespace ${n}` : '');
  const controller = `the controller of cluster ${c} (Deployment ${names.discovery(c)}, ${set.from})`;
  const out: Taken[] = [
    { group: '', kind: 'ConfigMap', namespace: ns, name: names.status(c), by: `ConfigMap ${names.status(c)}${inNs(ns)}, where ${controller} keeps its state at run time` },
    { group: 'coordination.k8s.io', kind: 'Lease', namespace: ns, name: names.lease(c), by: `Lease ${names.lease(c)}${inNs(ns)}, which ${controller} holds at run time` },
  ];
  for (const o of set.objects) {
    const meta = metaOf(o);
    const name = String(meta.name);
    const on = String(meta.namespace ?? '');
    if (o.kind === 'ConfigMap' && meta.labels?.[BACKUP_LABEL.operation] !== undefined) {
      const data = (o.data ?? {}) as Record<string, string>;
      const job = templateName(data[OPERATION_KEY.job]);
      if (job !== undefined) out.push({ group: 'batch', kind: 'Job', namespace: on, name: job, by: `Job ${job}${inNs(on)}, which ${controller} creates at run time from ConfigMap ${name}` });
      for (const command of LOG_COMMANDS) {
        const template = templateName(data[logCommandKey(command)]);
        if (template !== undefined) out.push({ group: 'batch', kind: 'Job', namespace: on, name: new RegExp(`^${escape(template)}-[0-9]+$`), by: `Job ${template}-<n>${inNs(on)}, which ${controller} creates at run time from ConfigMap ${name}` });
      }
    } else if (o.kind === 'StatefulSet') {
      out.push({ group: '', kind: 'Pod', namespace: on, name: new RegExp(`^${escape(name)}-[0-9]+$`), by: `Pod ${name}-<ordinal>${inNs(on)}, which Kubernetes creates at run time for StatefulSet ${name} (${set.from})` });
    } else if (o.kind === 'CronJob') {
      out.push({ group: 'batch', kind: 'Job', namespace: on, name: new RegExp(`^${escape(name)}-[0-9]+$`), by: `Job ${name}-<minutes>${inNs(on)}, which Kubernetes creates at run time for CronJob ${name} (${set.from})` });
    } else if (o.kind === 'Job') {
      const info = publishInfo(o);
      const job = `which the monitoring Job ${name} (${set.from}) publishes at run time`;
      if (info?.rules) out.push({ group: 'monitoring.coreos.com', kind: 'PrometheusRule', namespace: on, name: names.alertRules(c), by: `PrometheusRule ${names.alertRules(c)}${inNs(on)}, ${job}` });
      if (info?.dashboards) out.push({ group: '', kind: 'ConfigMap', namespace: on, name: new RegExp(`^${escape(names.dashboard(c, ''))}`), by: `ConfigMap ${names.dashboard(c, '<name>')}${inNs(on)}, a dashboard ${job}` });
    }
  }
  return out;
}

function templateName(json: string | undefined): string | undefined {
  if (json === undefined) return undefined;
  try {
    const name = (JSON.parse(json) as { metadata?: { name?: unknown } }).metadata?.name;
    return typeof name === 'string' ? name : undefined;
  } catch {
    return undefined;
  }
}

function publishInfo(job: Record<string, unknown>): MonitoringPublishInfo | undefined {
  const containers = ((job.spec as { template?: { spec?: { containers?: { env?: { name: string; value?: string }[] }[] } } } | undefined)?.template?.spec?.containers) ?? [];
  const value = containers.flatMap((c) => c.env ?? []).find((e) => e.name === MONITORING_ENV)?.value;
  if (value === undefined) return undefined;
  try {
    return JSON.parse(value) as MonitoringPublishInfo;
  } catch {
    return undefined;
  }
}

/**
 * Whether two objects land on one name. An object that names no namespace lands in the one it is
 * applied to (`-n`, Argo CD's destination, Flux's `targetNamespace`), which can be any: it is counted
 * as landing in every namespace, so one beside a cluster in `tidb` lands on that cluster's objects.
 */
const sameNamespace = (a: string, b: string): boolean => a === b || a === '' || b === '';

/**
 * Each passed-through object that lands on the name of an object a cluster renders, of one made for
 * it at run time, or of another passed-through one: applied together, the last one silently wins
 * (and the controller or Kubernetes overwrites or refuses what Git keeps). One message each, naming
 * both places.
 */
export function collisions(rendered: readonly RenderedSet[], passed: readonly PassedObject[]): string[] {
  const taken: Taken[] = [];
  for (const r of rendered) {
    for (const o of r.objects) {
      const meta = metaOf(o);
      const namespace = String(meta.namespace ?? '');
      taken.push({ group: groupOf(String(o.apiVersion)), kind: String(o.kind), namespace, name: String(meta.name), by: `${String(o.kind)} ${String(meta.name)}${namespace !== '' ? ` in namespace ${namespace}` : ''}, ${r.from}` });
    }
    taken.push(...runTimeObjects(r));
  }
  const out: string[] = [];
  for (const p of passed) {
    const meta = metaOf(p.object);
    const group = groupOf(String(p.object.apiVersion));
    const kind = String(p.object.kind);
    const name = String(meta.name);
    const namespace = String(meta.namespace ?? '');
    const first = taken.find((t) => t.group === group && t.kind === kind && (typeof t.name === 'string' ? t.name === name : t.name.test(name)) && sameNamespace(t.namespace, namespace));
    const what = `${kind} ${name}${namespace !== '' ? ` in namespace ${namespace}` : ' (no namespace: it lands in the one it is applied to)'}`;
    if (first !== undefined) out.push(formatIssue({ path: 'metadata.name', line: p.line('metadata.name'), message: `${what} takes the place of ${first.by}; ${first.passed ? 'rename one of them' : 'rename it'}` }, p.source));
    else taken.push({ group, kind, namespace, name, by: `${kind} ${name}${namespace !== '' ? ` in namespace ${namespace}` : ''} in ${p.source.file}: document ${p.source.document}`, passed: true });
  }
  return out;
}
