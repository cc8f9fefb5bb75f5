/**
 * What the API server refuses in a Kubernetes object kept beside the clusters, beyond its JSON schema:
 * the rules its validation applies to the common built-in kinds (names per kind, labels, annotations,
 * ConfigMap and Secret keys, Ingress hosts, claim sizes, PriorityClass values, selectors, and the Pod
 * templates of workloads, whose Pods the API server refuses only when a controller creates them, so an
 * apply syncs green and no Pod ever starts). The rules are the ones rendered objects and TidbClusters
 * meet (`api-check.ts`, `tidbcluster/api-rules.ts`, `tidbcluster/pod-rules.ts`); this module only
 * says where each applies in an object. Facts from k8s.io/kubernetes `pkg/apis/*\/validation`.
 */
import { objectFindings, podTemplatePath } from './api-check';
import {
  configMapKeyProblem,
  ingressHostProblem,
  isObject,
  objectNameProblem,
  priorityClassProblems,
  secretSizeProblem,
} from '../tidbcluster/api-rules';
import { joinKey } from '../tidbcluster/crd-schema';
import {
  affinityFindings,
  attach,
  claimSizeProblem,
  classNameProblem,
  containerSecurityContextFindings,
  dnsFindings,
  envFindings,
  envFromFindings,
  labelSelectorFindings,
  podSecurityContextFindings,
  pullPolicyProblem,
  resourceFindings,
  tolerationFindings,
  topologySpreadFindings,
  type Finding,
} from '../tidbcluster/pod-rules';

type Obj = Record<string, unknown>;

/**
 * The kinds whose name rule is known here (a DNS label for a Service and a Namespace, a path segment
 * for RBAC objects, a DNS subdomain for the others). Any other kind meets only the rule every kind
 * has, in `passthrough.ts`.
 */
const NAMED_KINDS = new Set([
  'ConfigMap',
  'Secret',
  'Service',
  'Namespace',
  'ServiceAccount',
  'PersistentVolumeClaim',
  'PersistentVolume',
  'Pod',
  'Endpoints',
  'LimitRange',
  'ResourceQuota',
  'Deployment',
  'StatefulSet',
  'DaemonSet',
  'ReplicaSet',
  'Job',
  'CronJob',
  'Ingress',
  'IngressClass',
  'NetworkPolicy',
  'PriorityClass',
  'PodDisruptionBudget',
  'StorageClass',
  'HorizontalPodAutoscaler',
  'Lease',
  'Role',
  'RoleBinding',
  'ClusterRole',
  'ClusterRoleBinding',
]);
/** Workloads whose selector must take their own Pod template (a Job's is made for it). */
const SELECTING = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet']);

const asObj = (v: unknown): Obj => (isObject(v) ? v : {});
const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const get = (o: unknown, path: string): unknown => path.split('.').reduce<unknown>((v, k) => asObj(v)[k], o);

/**
 * Every problem the API server would find in `obj` (a built-in kind, valid against its schema), as
 * `[path in the object, why]`, each once.
 */
export function passThroughFindings(obj: Obj, kubeMinor: number): Finding[] {
  const kind = String(obj.kind);
  const meta = asObj(obj.metadata);
  // A name that is missing is `passthrough.ts`'s to report.
  const named = NAMED_KINDS.has(kind) && typeof meta.name === 'string' && meta.name !== '';
  const out: Finding[] = objectFindings(obj, kubeMinor).filter(([path]) => path !== 'metadata.name' || named);
  const add = (path: string, problem: string | undefined) => {
    if (problem) out.push([path, problem]);
  };
  const spec = asObj(obj.spec);
  switch (kind) {
    case 'Secret': {
      const data = asObj(obj.data);
      const stringData = asObj(obj.stringData);
      for (const k of Object.keys(data)) add(joinKey('data', k), configMapKeyProblem(k, 'Secret'));
      for (const k of Object.keys(stringData)) add(joinKey('stringData', k), configMapKeyProblem(k, 'Secret'));
      add('data', secretSizeProblem(data, stringData));
      break;
    }
    case 'Ingress':
      asList(spec.rules).forEach((r, i) => {
        const host = asObj(r).host;
        if (host !== undefined && host !== '') add(`spec.rules[${i}].host`, ingressHostProblem(host));
      });
      asList(spec.tls).forEach((t, i) =>
        asList(asObj(t).hosts).forEach((h, j) => add(`spec.tls[${i}].hosts[${j}]`, ingressHostProblem(h))),
      );
      break;
    case 'PersistentVolumeClaim':
      add('spec.resources.requests.storage', claimSizeProblem(get(spec, 'resources.requests.storage')));
      add('spec.storageClassName', classNameProblem(spec.storageClassName, 'StorageClass'));
      break;
    case 'PriorityClass':
      for (const [path, problem] of priorityClassProblems(meta.name, obj.value)) add(path, problem);
      break;
    case 'NetworkPolicy':
      out.push(...labelSelectorFindings(spec.podSelector, 'spec.podSelector'));
      for (const [rules, peers] of [
        ['ingress', 'from'],
        ['egress', 'to'],
      ]) {
        asList(spec[rules]).forEach((r, i) =>
          asList(asObj(r)[peers]).forEach((p, j) => {
            for (const sel of ['podSelector', 'namespaceSelector'])
              out.push(...labelSelectorFindings(asObj(p)[sel], `spec.${rules}[${i}].${peers}[${j}].${sel}`));
          }),
        );
      }
      break;
    case 'PodDisruptionBudget':
      out.push(...labelSelectorFindings(spec.selector, 'spec.selector'));
      break;
    case 'RoleBinding':
    case 'ClusterRoleBinding':
      add('roleRef.name', objectNameProblem(String(asObj(obj.roleRef).kind ?? 'Role'), asObj(obj.roleRef).name));
      asList(obj.subjects).forEach((s, i) => {
        if (asObj(s).kind === 'ServiceAccount') add(`subjects[${i}].name`, objectNameProblem('ServiceAccount', asObj(s).name));
      });
      break;
    case 'Pod':
      out.push(...podSpecFindings(spec, 'spec'));
      break;
    default:
  }
  const template = podTemplatePath(kind);
  if (template !== undefined) out.push(...workloadFindings(obj, kind, template));
  // A workload's matchLabels are checked as labels and as a selector: one message each.
  const seen = new Set<string>();
  return out.filter(([path, problem]) => {
    const key = `${path}\0${problem}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** A workload's selector, and its Pod template: what its Pods would be refused for. */
function workloadFindings(obj: Obj, kind: string, template: string): Finding[] {
  const out: Finding[] = [];
  const selectorPath = template === 'spec.template' ? 'spec.selector' : undefined;
  const selector = selectorPath && get(obj, selectorPath);
  if (selectorPath && selector !== undefined) out.push(...labelSelectorFindings(selector, selectorPath));
  const podLabels = asObj(get(obj, `${template}.metadata.labels`));
  if (SELECTING.has(kind) && isObject(selector) && !selects(selector, podLabels)) {
    out.push([
      `${template}.metadata.labels`,
      `the Pod template's labels do not match spec.selector, so the ${kind} would not own its own Pods; give the template the labels the selector asks for`,
    ]);
  }
  const spec = asObj(get(obj, `${template}.spec`));
  const restart = spec.restartPolicy;
  if (kind === 'Job' || kind === 'CronJob') {
    if (restart !== 'OnFailure' && restart !== 'Never')
      out.push([
        `${template}.spec.restartPolicy`,
        `a Job's Pods need restartPolicy OnFailure or Never${restart === undefined ? ' (it defaults to Always, which a Job refuses)' : `, got ${JSON.stringify(restart)}`}`,
      ]);
  } else if (restart !== undefined && restart !== 'Always') {
    out.push([
      `${template}.spec.restartPolicy`,
      `a ${kind}'s Pods run until deleted: restartPolicy must be Always (or left out), got ${JSON.stringify(restart)}`,
    ]);
  }
  out.push(...podSpecFindings(spec, `${template}.spec`));
  return out;
}

/** Whether a label selector takes Pods with `labels`. */
function selects(selector: Obj, labels: Obj): boolean {
  const byLabels = Object.entries(asObj(selector.matchLabels)).every(([k, v]) => labels[k] === v);
  return (
    byLabels &&
    asList(selector.matchExpressions).every((e) => {
      const { key, operator, values } = asObj(e);
      const has = typeof key === 'string' && key in labels;
      const among = has && asList(values).includes(labels[key as string]);
      return operator === 'In'
        ? among
        : operator === 'NotIn'
          ? !among
          : operator === 'Exists'
            ? has
            : operator === 'DoesNotExist'
              ? !has
              : true;
    })
  );
}

/** A Pod spec's fields that the API server checks beyond the schema (names and ports are `api-check.ts`'s). */
function podSpecFindings(spec: Obj, path: string): Finding[] {
  const out: Finding[] = [];
  const below = (base: string, findings: Finding[]) => {
    for (const [rel, problem] of findings) out.push([attach(base, rel), problem]);
  };
  below(`${path}.tolerations`, tolerationFindings(spec.tolerations));
  below(`${path}.affinity`, affinityFindings(spec.affinity));
  below(`${path}.securityContext`, podSecurityContextFindings(spec.securityContext));
  below(`${path}.topologySpreadConstraints`, topologySpreadFindings(spec.topologySpreadConstraints));
  below(path, dnsFindings(spec.dnsPolicy, spec.dnsConfig));
  const priority = classNameProblem(spec.priorityClassName, 'PriorityClass');
  if (priority) out.push([`${path}.priorityClassName`, priority]);
  for (const list of ['initContainers', 'containers']) {
    asList(spec[list]).forEach((c, i) => {
      const ctr = asObj(c);
      const at = `${path}.${list}[${i}]`;
      const resources = asObj(ctr.resources);
      below(`${at}.resources`, resourceFindings(resources.requests, resources.limits));
      below(`${at}.env`, envFindings(ctr.env));
      below(`${at}.envFrom`, envFromFindings(ctr.envFrom));
      below(`${at}.securityContext`, containerSecurityContextFindings(ctr.securityContext));
      const pull = pullPolicyProblem(ctr.imagePullPolicy);
      if (pull) out.push([`${at}.imagePullPolicy`, pull]);
    });
  }
  return out;
}
