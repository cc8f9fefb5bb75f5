/**
 * Where the API server's rules meet a TidbCluster as written: every place a value would reach an object
 * the API server refuses, found with its path (and so its line) before anything is rendered. The rules
 * themselves are pure functions in `api-rules.ts` (names, labels, ports, images) and `pod-rules.ts`
 * (Pod, container, claim and Service fields).
 */
import {
  annotationProblems,
  dnsLabelProblem,
  envNameProblem,
  imageProblem,
  isObject,
  labelProblems,
  portNameProblem,
  portProblem,
  serviceTypeProblem,
  targetPortProblem,
} from './api-rules';
import { joinKey } from './crd-schema';
import type { SpecIssue } from './errors';
import {
  affinityFindings,
  attach,
  claimSizeProblem,
  classNameProblem,
  containerSecurityContextFindings,
  dnsFindings,
  envFindings,
  envFromFindings,
  podSecurityContextFindings,
  pullPolicyProblem,
  resourceFindings,
  tolerationFindings,
  topologySpreadFindings,
  type Finding,
} from './pod-rules';

const LABEL_MAPS = new Set(['labels', 'matchLabels', 'nodeSelector']);
const CONTAINER_LISTS = new Set(['initContainers', 'additionalContainers']);
const NO_SPACE = new Set(['baseImage', 'version']);

/**
 * Every place of a TidbCluster where a value would reach an object the API server refuses: label and
 * annotation maps, environment variable names, images, container names and ports, Service types and
 * ports. The walk is generic (by field name), so the same field is checked wherever the CRD allows it.
 */
export function apiIssues(doc: unknown, kubeMinor: number): SpecIssue[] {
  const issues: SpecIssue[] = [];
  if (!isObject(doc)) return issues;
  if (isObject(doc.metadata)) walk(doc.metadata, 'metadata', kubeMinor, issues);
  if (isObject(doc.spec)) walk(doc.spec, 'spec', kubeMinor, issues);
  return issues;
}

/** Fields checked as a whole, by their key, wherever the CRD has them. */
const FIELD_RULES = new Map<string, (value: unknown) => Finding[]>(
  Object.entries({
    tolerations: tolerationFindings,
    env: envFindings,
    envFrom: envFromFindings,
    affinity: affinityFindings,
    podSecurityContext: podSecurityContextFindings,
    securityContext: containerSecurityContextFindings,
    topologySpreadConstraints: topologySpreadFindings,
    imagePullPolicy: (v: unknown) => one(pullPolicyProblem(v)),
    storageClassName: (v: unknown) => one(classNameProblem(v, 'StorageClass')),
    priorityClassName: (v: unknown) => one(classNameProblem(v, 'PriorityClass')),
    storageSize: (v: unknown) => one(claimSizeProblem(v)),
  }),
);
const one = (problem: string | undefined): Finding[] => (problem ? [['', problem]] : []);
/** Container resources: `storage` is no container resource there, unlike a component's requests. */
const CONTAINER_RESOURCES = /(initContainers|additionalContainers)\[\d+\]\.resources$/;
/** Claims, whose `resources` only size a volume (TiFlash's storageClaims checks its own). */
const CLAIM_RESOURCES = /\.storageClaims\[\d+\]\.resources$/;

/** Rules on fields that only mean something together: requests with limits, dnsPolicy with dnsConfig. */
function nodeIssues(node: Record<string, unknown>, path: string, issues: SpecIssue[]): void {
  const add = (findings: Finding[]) => {
    for (const [rel, message] of findings) issues.push({ path: attach(path, rel), message });
  };
  if ((isObject(node.requests) || isObject(node.limits)) && !CLAIM_RESOURCES.test(path)) {
    const container = CONTAINER_RESOURCES.test(path);
    add(resourceFindings(node.requests, node.limits, container ? [] : ['storage']));
    const size = container || !isObject(node.requests) ? undefined : claimSizeProblem(node.requests.storage);
    if (size) issues.push({ path: attach(path, 'requests.storage'), message: size });
  }
  if (node.dnsPolicy !== undefined || node.dnsConfig !== undefined) add(dnsFindings(node.dnsPolicy, node.dnsConfig));
}

function walk(node: Record<string, unknown>, path: string, kubeMinor: number, issues: SpecIssue[]): void {
  nodeIssues(node, path, issues);
  for (const [key, value] of Object.entries(node)) {
    const at = joinKey(path, key);
    const rule = FIELD_RULES.get(key);
    if (rule) for (const [rel, message] of rule(value)) issues.push({ path: attach(at, rel), message });
    // serverLabels and storeLabels are TiDB and TiKV labels, not Kubernetes ones.
    if (LABEL_MAPS.has(key) && isObject(value)) {
      for (const [k, problem] of labelProblems(value)) issues.push({ path: joinKey(at, k), message: problem });
      continue;
    }
    if (key === 'annotations' && isObject(value)) {
      for (const [k, problem] of annotationProblems(value)) issues.push({ path: k === undefined ? at : joinKey(at, k), message: problem });
      continue;
    }
    if (key === 'env' && Array.isArray(value)) {
      value.forEach((e, i) => {
        const problem = isObject(e) ? envNameProblem(e.name, kubeMinor) : undefined;
        if (problem) issues.push({ path: `${at}[${i}].name`, message: problem });
      });
    }
    if ((key === 'image' && typeof value === 'string') || (NO_SPACE.has(key) && typeof value === 'string')) {
      const problem = imageProblem(value, key === 'image' ? 'image reference' : 'image name or tag');
      if (problem) issues.push({ path: at, message: problem });
      continue;
    }
    if (CONTAINER_LISTS.has(key) && Array.isArray(value)) {
      value.forEach((c, i) => {
        if (!isObject(c)) return;
        if (c.name !== undefined) {
          const problem = dnsLabelProblem(c.name, 'container name');
          if (problem) issues.push({ path: `${at}[${i}].name`, message: problem });
        }
        if (Array.isArray(c.ports)) containerPortIssues(c.ports, `${at}[${i}].ports`, issues);
      });
    }
    if ((key === 'service' && isObject(value)) || (key === 'services' && Array.isArray(value))) {
      const services = Array.isArray(value) ? value.map((s, i) => [s, `${at}[${i}]`] as const) : [[value, at] as const];
      for (const [svc, p] of services) if (isObject(svc)) serviceIssues(svc, p, issues);
    }
    if (Array.isArray(value)) {
      value.forEach((v, i) => {
        if (isObject(v)) walk(v, `${at}[${i}]`, kubeMinor, issues);
      });
    } else if (isObject(value) && key !== 'config') {
      walk(value, at, kubeMinor, issues);
    }
  }
}

function containerPortIssues(ports: unknown[], path: string, issues: SpecIssue[]): void {
  ports.forEach((p, i) => {
    if (!isObject(p)) return;
    const at = `${path}[${i}]`;
    const problems: [string, string | undefined][] = [
      ['containerPort', portProblem(p.containerPort)],
      ['hostPort', p.hostPort === undefined ? undefined : portProblem(p.hostPort, true)],
      ['name', p.name === undefined ? undefined : portNameProblem(p.name)],
    ];
    for (const [field, problem] of problems) if (problem) issues.push({ path: `${at}.${field}`, message: problem });
  });
}

function serviceIssues(svc: Record<string, unknown>, path: string, issues: SpecIssue[]): void {
  // An empty type means the default (ClusterIP), as in the operator.
  if (svc.type !== undefined && svc.type !== '') {
    const problem = serviceTypeProblem(svc.type);
    if (problem) issues.push({ path: `${path}.type`, message: problem });
  }
  const type = svc.type === undefined || svc.type === '' ? 'ClusterIP' : String(svc.type);
  const external = type === 'NodePort' || type === 'LoadBalancer';
  for (const field of ['port', 'nodePort', 'mysqlNodePort', 'statusNodePort']) {
    if (svc[field] === undefined) continue;
    const problem = portProblem(svc[field], field !== 'port');
    if (problem) issues.push({ path: `${path}.${field}`, message: problem });
    // ValidateService: node ports belong to NodePort and LoadBalancer Services.
    else if (field !== 'port' && svc[field] !== 0 && !external)
      issues.push({ path: `${path}.${field}`, message: `a node port needs type NodePort or LoadBalancer, not ${type}` });
  }
  if (svc.externalTrafficPolicy !== undefined && svc.externalTrafficPolicy !== '' && !external) {
    issues.push({
      path: `${path}.externalTrafficPolicy`,
      message: `only a Service of type NodePort or LoadBalancer has an external traffic policy, not ${type}`,
    });
  }
  if (svc.clusterIP === 'None' && type !== 'ClusterIP')
    issues.push({ path: `${path}.clusterIP`, message: `clusterIP None (headless) is for type ClusterIP, not ${type}` });
  if (Array.isArray(svc.additionalPorts)) {
    svc.additionalPorts.forEach((p, i) => {
      if (!isObject(p)) return;
      const at = `${path}.additionalPorts[${i}]`;
      const problems: [string, string | undefined][] = [
        ['port', portProblem(p.port)],
        ['nodePort', p.nodePort === undefined ? undefined : portProblem(p.nodePort, true)],
        ['targetPort', p.targetPort === undefined ? undefined : targetPortProblem(p.targetPort)],
        ['name', p.name === undefined ? undefined : portNameProblem(p.name)],
      ];
      for (const [field, problem] of problems) if (problem) issues.push({ path: `${at}.${field}`, message: problem });
    });
  }
}
