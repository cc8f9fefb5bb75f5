/**
 * Where the API server's Pod rules meet the documents beside a cluster (Backup, BackupSchedule,
 * Restore, TidbMonitor, TidbInitializer). Their Pod fields reach Pods that a controller creates after
 * the apply (a CronJob's Jobs, the Job a Restore's ConfigMap holds, the monitoring Job's Pod), where
 * the API server looks at them only then: a value it refuses would sync green and never run. Each
 * document's reader names its fields and their paths; the rules are `pod-rules.ts`' and
 * `api-rules.ts`', the same as for a TidbCluster's Pod fields (`api-input.ts`), plus those that only a
 * Job's Pod has (the labels the Job controller owns) and volumes given beside the renderer's own.
 *
 * Facts from k8s.io/kubernetes `pkg/apis/core/validation` (validateVolumes, validateVolumeMounts,
 * ValidateServiceAccountName, ValidateSecretName) and `pkg/apis/batch/validation` (ValidateGeneratedSelector).
 */
import { joinKey } from '../base/path';
import { DNS1123_SUBDOMAIN } from '../base/patterns';
import { JOB_NAME_LABEL } from './names';
import { annotationProblems, dnsLabelProblem, envNameProblem, isObject, labelProblems } from './api-rules';
import { quoted, type SpecIssue } from './errors';
import { DEFAULT_KUBE_VERSION, OLDEST_KUBE_MINOR, parseKubeVersion } from './kube-version';
import {
  affinityFindings,
  attach,
  classNameProblem,
  containerSecurityContextFindings,
  envFindings,
  podSecurityContextFindings,
  resourceFindings,
  tolerationFindings,
  type Finding,
} from './pod-rules';

/**
 * The labels the Job controller puts on each Job's Pods, which a Job's template may not set otherwise:
 * the API server refuses every Job created from such a template (its generated selector would not match).
 */
export const JOB_CONTROLLER_LABELS: readonly string[] = [
  'batch.kubernetes.io/controller-uid',
  JOB_NAME_LABEL,
  'controller-uid',
  'job-name',
];

/** Why the Pods of a Job may not carry the label `key`, or undefined. */
export function jobLabelProblem(key: string): string | undefined {
  if (!JOB_CONTROLLER_LABELS.includes(key)) return undefined;
  return `${quoted(key)} is a label the Job controller sets itself on a Job's Pods; Kubernetes refuses every Job whose Pods carry it from elsewhere: remove it`;
}

/** Why `name` cannot name a `kind` (a DNS subdomain, as Secrets and ServiceAccounts are named), or undefined. */
export function subdomainNameProblem(name: unknown, kind: 'Secret' | 'ServiceAccount'): string | undefined {
  if (typeof name === 'string' && name.length <= 253 && DNS1123_SUBDOMAIN.test(name)) return undefined;
  const length = typeof name === 'string' && name.length > 253 ? ` (it has ${name.length} characters)` : '';
  return `${quoted(name)} is not a valid ${kind} name${length}: lowercase letters, digits, "-" and ".", starting and ending with a letter or digit, at most 253`;
}

/** The Kubernetes minor the input is rendered for (the oldest supported one when the version is not one). */
export function targetMinor(kubeVersion: string | undefined): number {
  const target = parseKubeVersion(kubeVersion ?? DEFAULT_KUBE_VERSION);
  return 'error' in target ? OLDEST_KUBE_MINOR : target.minor;
}

/** A field of a Job's Pod, by what it becomes. */
export type PodField =
  | 'tolerations'
  | 'affinity'
  | 'nodeSelector'
  | 'podSecurityContext'
  | 'containerSecurityContext'
  | 'env'
  | 'resources'
  | 'serviceAccountName'
  | 'priorityClassName'
  | 'podLabels'
  | 'podAnnotations';

const one = (problem: string | undefined): Finding[] => (problem ? [['', problem]] : []);
const keyed = (problems: [string | undefined, string][]): Finding[] => problems.map(([k, p]) => [k === undefined ? '' : joinKey('', k), p]);

const envNameFindings =
  (kubeMinor: number) =>
  (e: unknown, i: number): Finding[] => {
    const problem = isObject(e) ? envNameProblem(e.name, kubeMinor) : undefined;
    return problem ? [[`[${i}].name`, problem]] : [];
  };

/** The labels of a Job's Pods: Kubernetes' label rules, and none the Job controller owns. */
export function podLabelFindings(labels: unknown): Finding[] {
  if (!isObject(labels)) return [];
  const out = keyed(labelProblems(labels));
  for (const key of Object.keys(labels)) {
    const problem = jobLabelProblem(key);
    if (problem) out.push([joinKey('', key), problem]);
  }
  return out;
}

const RULES: Readonly<Record<PodField, (value: unknown, kubeMinor: number) => Finding[]>> = {
  tolerations: tolerationFindings,
  affinity: affinityFindings,
  nodeSelector: (v) => (isObject(v) ? keyed(labelProblems(v)) : []),
  podSecurityContext: podSecurityContextFindings,
  containerSecurityContext: containerSecurityContextFindings,
  env: (v, kubeMinor) => [...envFindings(v), ...(Array.isArray(v) ? v.flatMap(envNameFindings(kubeMinor)) : [])],
  // `requests` and `limits` of the object: a container's `resources`, or a container itself.
  resources: (v) => (isObject(v) ? resourceFindings(v.requests, v.limits) : []),
  serviceAccountName: (v) => (v === undefined || v === '' ? [] : one(subdomainNameProblem(v, 'ServiceAccount'))),
  priorityClassName: (v) => one(classNameProblem(v, 'PriorityClass')),
  podLabels: podLabelFindings,
  podAnnotations: (v) => (isObject(v) ? keyed(annotationProblems(v)) : []),
};

/**
 * The problems of the Pod fields of `node` (at `at` in the document): `fields` names the key of each
 * field the document has, by what it becomes in the Pod. Only environment variable names depend on
 * the target Kubernetes minor.
 */
export function podFieldIssues(
  node: Record<string, unknown>,
  at: string,
  fields: Partial<Record<PodField, string>>,
  kubeMinor = OLDEST_KUBE_MINOR,
): SpecIssue[] {
  const issues: SpecIssue[] = [];
  for (const [field, key] of Object.entries(fields) as [PodField, string][]) {
    const value = node[key];
    if (value === undefined || value === null) continue;
    const base = joinKey(at, key);
    for (const [rel, message] of RULES[field](value, kubeMinor)) issues.push({ path: attach(base, rel), message });
  }
  return issues;
}

/** A volume the renderer gives the Pod beside the document's own. */
export interface RenderedVolume {
  readonly name: string;
  /** Where the container mounts it. @default not mounted */
  readonly mountPath?: string;
  /** Why the document's mounts cannot name it (some of its Pods lack it). @default none: a mount may name it */
  readonly notMountable?: string;
}

/**
 * The document's own volumes and mounts (`volumesAt`, `mountsAt`) beside the renderer's: names are
 * DNS labels and unique across both, each volume has one source, each mount names a volume of the Pod,
 * and no two mounts of the container are at one path.
 */
export function volumeIssues(
  volumes: unknown,
  volumesAt: string,
  mounts: unknown,
  mountsAt: string,
  rendered: readonly RenderedVolume[],
): SpecIssue[] {
  const issues: SpecIssue[] = [];
  const names = new Map(rendered.map((v) => [v.name, v]));
  const own = new Set<string>();
  (Array.isArray(volumes) ? volumes : []).forEach((v, i) => {
    if (!isObject(v)) return;
    const at = `${volumesAt}[${i}]`;
    const name = v.name;
    const problem = dnsLabelProblem(name, 'volume name');
    if (problem) issues.push({ path: `${at}.name`, message: problem });
    else if (names.has(String(name)) || own.has(String(name))) {
      issues.push({
        path: `${at}.name`,
        message: `two volumes are named ${String(name)}${names.has(String(name)) ? ' (tidb-gitops gives the Pod one of that name)' : ''}; give this one another name`,
      });
    }
    own.add(String(name));
    const sources = Object.keys(v).filter((k) => k !== 'name' && v[k] !== undefined && v[k] !== null);
    if (sources.length !== 1)
      issues.push({
        path: at,
        message: `volume ${String(name)} needs exactly one source (emptyDir, configMap, secret, persistentVolumeClaim, ...), not ${sources.length}`,
      });
  });
  const paths = new Set(rendered.flatMap((v) => (v.mountPath !== undefined ? [v.mountPath] : [])));
  (Array.isArray(mounts) ? mounts : []).forEach((m, i) => {
    if (!isObject(m)) return;
    const at = `${mountsAt}[${i}]`;
    const name = String(m.name);
    const theirs = names.get(name);
    if (!own.has(name) && !theirs)
      issues.push({ path: `${at}.name`, message: `no volume of the Pod is named ${name}: name one of ${volumesAt}` });
    else if (!own.has(name) && theirs?.notMountable) issues.push({ path: `${at}.name`, message: theirs.notMountable });
    const path = typeof m.mountPath === 'string' ? m.mountPath : '';
    if (path !== '' && paths.has(path))
      issues.push({ path: `${at}.mountPath`, message: `two mounts are at ${path}; mount this one elsewhere` });
    paths.add(path);
  });
  return issues;
}
