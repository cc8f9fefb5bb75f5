/**
 * What the API server refuses in the Pod, container, claim and Service fields a TidbCluster passes
 * through, beyond the JSON schema: each function takes the field as the user wrote it and returns
 * `[path below it, why]` pairs. The API server does not look into a StatefulSet's Pod template when the
 * StatefulSet is applied, only when its controller creates the Pods, so a value it refuses would sync
 * green and leave the cluster without Pods: these rules refuse it at render instead.
 *
 * Ported from k8s.io/kubernetes `pkg/apis/core/validation/validation.go` (release-1.32): ValidateTolerations,
 * ValidateResourceRequirements, validateEnv, validateEnvVarValueFrom, validateEnvFrom, validatePullPolicy,
 * validateDNSPolicy, validatePodDNSConfig, validateAffinity, validatePodSpecSecurityContext,
 * ValidateSecurityContext, validateTopologySpreadConstraints, validateVolumes, ValidatePersistentVolumeClaimSpec and ValidateService, and
 * k8s.io/apimachinery `pkg/util/validation` (IsValidIP, IsDNS1123Subdomain, IsQualifiedName).
 */
import { isIP } from 'node:net';
import { DNS1123_SUBDOMAIN } from '../base/patterns';
import { quantityValue } from '../base/quantity';
import { joinKey } from './crd-schema';
import { quoted } from './errors';
import { isObject as isObj, labelValueProblem, qualifiedNameProblem } from './api-rules';

/** A problem below the field: the path relative to it ('' for the field itself) and why. */
export type Finding = [path: string, problem: string];

/** The path of a finding below `base`. */
export function attach(base: string, rel: string): string {
  return rel === '' ? base : rel.startsWith('[') ? `${base}${rel}` : `${base}.${rel}`;
}
type Obj = Record<string, unknown>;

const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const MAX_ID = 2147483647;

// ---- tolerations (ValidateTolerations) ----

const EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

export function tolerationFindings(tolerations: unknown): Finding[] {
  const out: Finding[] = [];
  list(tolerations).forEach((t, i) => {
    if (!isObj(t)) return;
    const at = `[${i}]`;
    const key = typeof t.key === 'string' ? t.key : '';
    const operator = typeof t.operator === 'string' ? t.operator : '';
    const value = typeof t.value === 'string' ? t.value : '';
    if (key !== '') {
      const problem = qualifiedNameProblem(key);
      if (problem) out.push([`${at}.key`, problem]);
    } else if (operator !== 'Exists') {
      out.push([`${at}.operator`, 'a toleration without a key must have operator Exists (it then tolerates every taint)']);
    }
    if (t.tolerationSeconds !== undefined && t.tolerationSeconds !== null && t.effect !== 'NoExecute') {
      out.push([`${at}.effect`, 'tolerationSeconds needs effect NoExecute']);
    }
    if (operator === '' || operator === 'Equal') {
      const problem = labelValueProblem(value);
      if (problem) out.push([`${at}.value`, problem]);
    } else if (operator === 'Exists') {
      if (value !== '') out.push([`${at}.value`, 'a toleration with operator Exists has no value']);
    } else {
      out.push([`${at}.operator`, `expected Equal or Exists, got ${quoted(operator)}`]);
    }
    if (typeof t.effect === 'string' && t.effect !== '' && !EFFECTS.includes(t.effect)) {
      out.push([`${at}.effect`, `expected ${EFFECTS.join(', ')} (or empty for all), got ${quoted(t.effect)}`]);
    }
  });
  return out;
}

// ---- resources (ValidateResourceRequirements, validateContainerResourceName) ----

const STANDARD_CONTAINER_RESOURCES = new Set(['cpu', 'memory', 'ephemeral-storage']);
const HUGEPAGES = /^hugepages-/;

/** Why `name` cannot be a container resource, or undefined. `storage` is allowed where the operator strips it. */
export function containerResourceNameProblem(name: string): string | undefined {
  if (STANDARD_CONTAINER_RESOURCES.has(name) || HUGEPAGES.test(name)) return undefined;
  if (!name.includes('/'))
    return `${quoted(name)} is not a resource a container can ask for: cpu, memory, ephemeral-storage, hugepages-<size>, or an extended resource with a domain (example.com/gpu)`;
  const problem = qualifiedNameProblem(name);
  if (problem) return problem;
  if (/(^|\.)kubernetes\.io\//.test(name))
    return `${quoted(name)} is not a resource a container can ask for: names under kubernetes.io are Kubernetes' own`;
  if (name.startsWith('requests.')) return `${quoted(name)} is not a resource name: it may not start with "requests."`;
  return undefined;
}

/**
 * Requests and limits together, as the component's `requests`/`limits` become the container's;
 * `skip` names keys the renderer takes out first (`storage`).
 */
export function resourceFindings(requests: unknown, limits: unknown, skip: readonly string[] = []): Finding[] {
  const out: Finding[] = [];
  const req = isObj(requests) ? requests : {};
  const lim = isObj(limits) ? limits : {};
  const check = (map: Obj, side: 'requests' | 'limits') => {
    for (const [name, q] of Object.entries(map)) {
      if (skip.includes(name)) continue;
      const problem = containerResourceNameProblem(name);
      if (problem) {
        out.push([joinKey(side, name), problem]);
        continue;
      }
      const v = quantityValue(q);
      if (v === undefined) continue; // the schema's pattern speaks for it
      if (v < 0) out.push([joinKey(side, name), `${quoted(q)} is negative; a quantity here must be 0 or more`]);
      else if (name.includes('/') && !Number.isInteger(v))
        out.push([joinKey(side, name), `${quoted(q)}: an extended resource is counted in whole units`]);
      else if (HUGEPAGES.test(name)) {
        // validateResourceQuantityHugePageValue: a whole number of pages of the size the name gives.
        const page = quantityValue(name.slice('hugepages-'.length));
        if (page !== undefined && page > 0 && (!Number.isInteger(v) || v % page !== 0))
          out.push([joinKey(side, name), `${quoted(q)} is not a whole number of ${name.slice('hugepages-'.length)} pages`]);
      }
    }
  };
  check(req, 'requests');
  check(lim, 'limits');
  for (const [name, q] of Object.entries(req)) {
    if (skip.includes(name) || !(name in lim)) continue;
    const r = quantityValue(q);
    const l = quantityValue(lim[name]);
    if (r !== undefined && l !== undefined && r > l)
      out.push([joinKey('requests', name), `the request ${quoted(q)} is above the limit ${quoted(lim[name])}`]);
  }
  for (const [name, q] of Object.entries(req)) {
    // Huge pages and extended resources cannot be overcommitted: a request needs the same limit.
    if (skip.includes(name) || !(HUGEPAGES.test(name) || name.includes('/'))) continue;
    if (!(name in lim))
      out.push([
        joinKey('requests', name),
        `${name} is requested, so it needs a limit too (equal to the request: it cannot be overcommitted)`,
      ]);
    else if (quantityValue(q) !== quantityValue(lim[name]))
      out.push([joinKey('requests', name), `${name} cannot be overcommitted: its request must equal its limit`]);
  }
  const hugepages = [...Object.keys(req), ...Object.keys(lim)].some((n) => HUGEPAGES.test(n));
  const cpuOrMemory = ['cpu', 'memory'].some((n) => n in req || n in lim);
  if (hugepages && !cpuOrMemory)
    out.push([
      Object.keys(req).some((n) => HUGEPAGES.test(n)) ? 'requests' : 'limits',
      'huge pages need a cpu or memory request or limit beside them',
    ]);
  return out;
}

// ---- env and envFrom (validateEnv, validateEnvVarValueFrom, validateObjectFieldSelector, validateEnvFrom) ----

/** fieldRef paths an environment variable may name (validEnvDownwardAPIFieldPathExpressions). */
const ENV_FIELD_PATHS = new Set([
  'metadata.name',
  'metadata.namespace',
  'metadata.uid',
  'spec.nodeName',
  'spec.serviceAccountName',
  'status.hostIP',
  'status.hostIPs',
  'status.podIP',
  'status.podIPs',
]);
const SUBSCRIPTED_PATH = /^metadata\.(labels|annotations)\['(.*)'\]$/;
const CONTAINER_RESOURCES = new Set([
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.ephemeral-storage',
]);

export function envFindings(env: unknown): Finding[] {
  const out: Finding[] = [];
  list(env).forEach((e, i) => {
    if (!isObj(e) || !isObj(e.valueFrom)) return;
    const at = `[${i}].valueFrom`;
    if (typeof e.value === 'string' && e.value !== '')
      out.push([`[${i}].value`, 'an environment variable has either a value or valueFrom, not both']);
    const from = e.valueFrom;
    const sources = ['fieldRef', 'resourceFieldRef', 'configMapKeyRef', 'secretKeyRef'].filter(
      (k) => from[k] !== undefined && from[k] !== null,
    );
    if (sources.length !== 1) {
      out.push([
        at,
        sources.length === 0
          ? 'valueFrom needs one source: fieldRef, resourceFieldRef, configMapKeyRef or secretKeyRef'
          : `valueFrom has one source, not ${sources.length} (${sources.join(', ')})`,
      ]);
      return;
    }
    if (isObj(from.fieldRef)) {
      const path = from.fieldRef.fieldPath;
      const sub = typeof path === 'string' ? SUBSCRIPTED_PATH.exec(path) : null;
      if (sub) {
        const problem = qualifiedNameProblem(sub[2].toLowerCase());
        if (problem) out.push([`${at}.fieldRef.fieldPath`, problem]);
      } else if (typeof path !== 'string' || !ENV_FIELD_PATHS.has(path)) {
        out.push([
          `${at}.fieldRef.fieldPath`,
          `${quoted(path)} is not a field an environment variable can read: ${[...ENV_FIELD_PATHS].join(', ')}, or metadata.labels['<key>'] / metadata.annotations['<key>']`,
        ]);
      }
    }
    if (
      isObj(from.resourceFieldRef) &&
      !CONTAINER_RESOURCES.has(String(from.resourceFieldRef.resource)) &&
      !/^(limits|requests)\.hugepages-/.test(String(from.resourceFieldRef.resource))
    ) {
      out.push([
        `${at}.resourceFieldRef.resource`,
        `${quoted(from.resourceFieldRef.resource)} is not a resource an environment variable can read: ${[...CONTAINER_RESOURCES].join(', ')}`,
      ]);
    }
    for (const ref of ['configMapKeyRef', 'secretKeyRef']) {
      const r = from[ref];
      if (!isObj(r)) continue;
      if (typeof r.name !== 'string' || r.name === '') out.push([`${at}.${ref}.name`, 'the name of the object to read is required']);
      if (typeof r.key === 'string' && (r.key === '' || !/^[-._a-zA-Z0-9]+$/.test(r.key)))
        out.push([`${at}.${ref}.key`, `${quoted(r.key)} is not a valid key: letters, digits, "-", "_" and "."`]);
    }
  });
  return out;
}

export function envFromFindings(envFrom: unknown): Finding[] {
  const out: Finding[] = [];
  list(envFrom).forEach((e, i) => {
    if (!isObj(e)) return;
    const sources = ['configMapRef', 'secretRef'].filter((k) => e[k] !== undefined && e[k] !== null);
    if (sources.length !== 1)
      out.push([
        `[${i}]`,
        sources.length === 0
          ? 'envFrom needs configMapRef or secretRef'
          : 'envFrom takes one of configMapRef and secretRef, not both: give each its own entry',
      ]);
    for (const ref of sources) {
      const r = e[ref];
      if (isObj(r) && (typeof r.name !== 'string' || r.name === ''))
        out.push([`[${i}].${ref}.name`, 'the name of the object to read is required']);
    }
  });
  return out;
}

// ---- DNS (validateDNSPolicy, validatePodDNSConfig) ----

export const DNS_POLICIES = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];

export function dnsFindings(policy: unknown, config: unknown): Finding[] {
  const out: Finding[] = [];
  if (policy !== undefined && policy !== '' && !DNS_POLICIES.includes(String(policy)))
    out.push(['dnsPolicy', `expected ${DNS_POLICIES.join(', ')}, got ${quoted(policy)}`]);
  const c = isObj(config) ? config : undefined;
  if (policy === 'None' && (!c || list(c.nameservers).length === 0))
    out.push([c ? 'dnsConfig' : 'dnsPolicy', 'dnsPolicy None takes every setting from dnsConfig: give at least one nameserver']);
  if (!c) return out;
  const servers = list(c.nameservers);
  if (servers.length > 3) out.push(['dnsConfig.nameservers', `${servers.length} nameservers; at most 3`]);
  servers.forEach((s, i) => {
    if (typeof s !== 'string' || isIP(s) === 0) out.push([`dnsConfig.nameservers[${i}]`, `${quoted(s)} is not an IP address`]);
  });
  const searches = list(c.searches);
  if (searches.length > 32) out.push(['dnsConfig.searches', `${searches.length} search domains; at most 32`]);
  if (searches.map(String).join(' ').length > 2048)
    out.push(['dnsConfig.searches', 'the search domains take more than 2048 characters together (with a space between each)']);
  searches.forEach((s, i) => {
    const domain = typeof s === 'string' ? s.replace(/\.$/, '') : '';
    if (domain.length > 253 || !DNS1123_SUBDOMAIN.test(domain))
      out.push([`dnsConfig.searches[${i}]`, `${quoted(s)} is not a DNS domain (lowercase letters, digits, "-" and ".")`]);
  });
  list(c.options).forEach((o, i) => {
    if (isObj(o) && (typeof o.name !== 'string' || o.name === '')) out.push([`dnsConfig.options[${i}].name`, 'a DNS option needs a name']);
  });
  return out;
}

// ---- pull policy ----

export const PULL_POLICIES = ['Always', 'Never', 'IfNotPresent'];

export function pullPolicyProblem(p: unknown): string | undefined {
  return p === undefined || p === '' || PULL_POLICIES.includes(String(p))
    ? undefined
    : `expected ${PULL_POLICIES.join(', ')}, got ${quoted(p)}`;
}

// ---- security contexts (ValidatePodSecurityContext, ValidateSecurityContext) ----

const SYSCTL = /^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$/;
const idProblem = (v: unknown) =>
  typeof v === 'number' && (v < 0 || v > MAX_ID) ? `${v} is not a user or group ID: 0 to ${MAX_ID}` : undefined;

export function podSecurityContextFindings(ctx: unknown): Finding[] {
  if (!isObj(ctx)) return [];
  const out: Finding[] = [];
  for (const f of ['runAsUser', 'runAsGroup', 'fsGroup']) {
    const problem = idProblem(ctx[f]);
    if (problem) out.push([f, problem]);
  }
  list(ctx.supplementalGroups).forEach((g, i) => {
    const problem = idProblem(g);
    if (problem) out.push([`supplementalGroups[${i}]`, problem]);
  });
  const seen = new Set<string>();
  list(ctx.sysctls).forEach((s, i) => {
    if (!isObj(s)) return;
    const name = String(s.name ?? '');
    if (name.length > 253 || !SYSCTL.test(name))
      out.push([`sysctls[${i}].name`, `${quoted(s.name)} is not a sysctl name (lowercase dotted words, as net.core.somaxconn)`]);
    else if (seen.has(name)) out.push([`sysctls[${i}].name`, `sysctl ${name} is set twice`]);
    seen.add(name);
  });
  return out;
}

export function containerSecurityContextFindings(ctx: unknown): Finding[] {
  if (!isObj(ctx)) return [];
  const out: Finding[] = [];
  for (const f of ['runAsUser', 'runAsGroup']) {
    const problem = idProblem(ctx[f]);
    if (problem) out.push([f, problem]);
  }
  if (ctx.privileged === true && ctx.allowPrivilegeEscalation === false)
    out.push([
      'allowPrivilegeEscalation',
      'a privileged container always can escalate privileges: allowPrivilegeEscalation false contradicts privileged true',
    ]);
  if (ctx.procMount !== undefined && ctx.procMount !== 'Default' && ctx.procMount !== 'Unmasked')
    out.push(['procMount', `expected Default or Unmasked, got ${quoted(ctx.procMount)}`]);
  return out;
}

// ---- affinity (validateAffinity) ----

function selectorRequirementFindings(req: unknown, at: string, node: boolean): Finding[] {
  if (!isObj(req)) return [];
  const out: Finding[] = [];
  const values = list(req.values);
  const keyProblem = qualifiedNameProblem(String(req.key ?? ''));
  if (keyProblem) out.push([`${at}.key`, keyProblem]);
  switch (req.operator) {
    case 'In':
    case 'NotIn':
      if (values.length === 0) out.push([`${at}.values`, `operator ${String(req.operator)} needs at least one value`]);
      break;
    case 'Exists':
    case 'DoesNotExist':
      if (values.length > 0) out.push([`${at}.values`, `operator ${String(req.operator)} takes no values`]);
      break;
    case 'Gt':
    case 'Lt':
      if (!node) out.push([`${at}.operator`, `expected In, NotIn, Exists or DoesNotExist, got ${quoted(req.operator)}`]);
      else if (values.length !== 1) out.push([`${at}.values`, `operator ${String(req.operator)} needs exactly one value (an integer)`]);
      break;
    default:
      out.push([`${at}.operator`, `expected In, NotIn, Exists, DoesNotExist${node ? ', Gt or Lt' : ''}, got ${quoted(req.operator)}`]);
  }
  if (!node || req.operator === 'In' || req.operator === 'NotIn') {
    values.forEach((v, i) => {
      const problem = node ? undefined : labelValueProblem(v);
      if (problem) out.push([`${at}.values[${i}]`, problem]);
    });
  }
  return out;
}

/** A label selector's problems (matchLabels and matchExpressions), at paths below `at`. */
export function labelSelectorFindings(sel: unknown, at: string): Finding[] {
  if (!isObj(sel)) return [];
  const out: Finding[] = [];
  if (isObj(sel.matchLabels)) {
    for (const [k, v] of Object.entries(sel.matchLabels)) {
      const problem = qualifiedNameProblem(k) ?? labelValueProblem(v);
      if (problem) out.push([joinKey(`${at}.matchLabels`, k), problem]);
    }
  }
  list(sel.matchExpressions).forEach((r, i) => out.push(...selectorRequirementFindings(r, `${at}.matchExpressions[${i}]`, false)));
  return out;
}

function podAffinityTermFindings(term: unknown, at: string): Finding[] {
  if (!isObj(term)) return [];
  const out: Finding[] = [];
  const key = typeof term.topologyKey === 'string' ? term.topologyKey : '';
  if (key === '') out.push([`${at}.topologyKey`, 'a pod affinity term needs a topologyKey (a node label such as kubernetes.io/hostname)']);
  else {
    const problem = qualifiedNameProblem(key);
    if (problem) out.push([`${at}.topologyKey`, problem]);
  }
  out.push(...labelSelectorFindings(term.labelSelector, `${at}.labelSelector`));
  out.push(...labelSelectorFindings(term.namespaceSelector, `${at}.namespaceSelector`));
  return out;
}

const weightProblem = (w: unknown) =>
  typeof w === 'number' && (w < 1 || w > 100) ? `a preference weight is 1 to 100, got ${w}` : undefined;

function nodeTermFindings(term: unknown, at: string): Finding[] {
  if (!isObj(term)) return [];
  const out: Finding[] = [];
  list(term.matchExpressions).forEach((r, i) => out.push(...selectorRequirementFindings(r, `${at}.matchExpressions[${i}]`, true)));
  list(term.matchFields).forEach((r, i) => {
    out.push(...selectorRequirementFindings(r, `${at}.matchFields[${i}]`, true));
    if (isObj(r) && r.key !== 'metadata.name') out.push([`${at}.matchFields[${i}].key`, 'matchFields can only match metadata.name']);
  });
  return out;
}

export function affinityFindings(affinity: unknown): Finding[] {
  if (!isObj(affinity)) return [];
  const out: Finding[] = [];
  const node = isObj(affinity.nodeAffinity) ? affinity.nodeAffinity : {};
  const required = node.requiredDuringSchedulingIgnoredDuringExecution;
  if (isObj(required)) {
    const terms = list(required.nodeSelectorTerms);
    if (terms.length === 0)
      out.push([
        'nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms',
        'a required node affinity needs at least one term',
      ]);
    terms.forEach((t, i) =>
      out.push(...nodeTermFindings(t, `nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[${i}]`)),
    );
  }
  list(node.preferredDuringSchedulingIgnoredDuringExecution).forEach((p, i) => {
    if (!isObj(p)) return;
    const at = `nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[${i}]`;
    const problem = weightProblem(p.weight);
    if (problem) out.push([`${at}.weight`, problem]);
    out.push(...nodeTermFindings(p.preference, `${at}.preference`));
  });
  for (const kind of ['podAffinity', 'podAntiAffinity']) {
    const pa = isObj(affinity[kind]) ? (affinity[kind] as Obj) : {};
    list(pa.requiredDuringSchedulingIgnoredDuringExecution).forEach((t, i) =>
      out.push(...podAffinityTermFindings(t, `${kind}.requiredDuringSchedulingIgnoredDuringExecution[${i}]`)),
    );
    list(pa.preferredDuringSchedulingIgnoredDuringExecution).forEach((p, i) => {
      if (!isObj(p)) return;
      const at = `${kind}.preferredDuringSchedulingIgnoredDuringExecution[${i}]`;
      const problem = weightProblem(p.weight);
      if (problem) out.push([`${at}.weight`, problem]);
      out.push(...podAffinityTermFindings(p.podAffinityTerm, `${at}.podAffinityTerm`));
    });
  }
  return out;
}

export function topologySpreadFindings(constraints: unknown): Finding[] {
  const out: Finding[] = [];
  const seen = new Set<string>();
  list(constraints).forEach((c, i) => {
    if (!isObj(c)) return;
    // Only its presence is checked (validateTopologySpreadConstraints), not its form; a key appears
    // once per whenUnsatisfiable (DoNotSchedule when not given, as the operator renders it).
    if (typeof c.topologyKey !== 'string' || c.topologyKey === '')
      out.push([`[${i}].topologyKey`, 'a topology spread constraint needs a topologyKey']);
    const pair = `${String(c.topologyKey)}/${typeof c.whenUnsatisfiable === 'string' ? c.whenUnsatisfiable : 'DoNotSchedule'}`;
    if (seen.has(pair)) out.push([`[${i}].topologyKey`, `two constraints spread over ${String(c.topologyKey)}; give each key once`]);
    seen.add(pair);
    out.push(...labelSelectorFindings(c.labelSelector, `[${i}].labelSelector`));
  });
  return out;
}

/** Why `name` cannot name a StorageClass or PriorityClass (a DNS subdomain; empty means none), or undefined. */
export function classNameProblem(name: unknown, kind: 'StorageClass' | 'PriorityClass'): string | undefined {
  if (typeof name !== 'string' || name === '') return undefined;
  return name.length <= 253 && DNS1123_SUBDOMAIN.test(name)
    ? undefined
    : `${quoted(name)} is not a ${kind} name (lowercase letters, digits, "-" and ".", at most 253)`;
}

/** Why a claim's size is refused (it must be above zero), or undefined. */
export function claimSizeProblem(size: unknown): string | undefined {
  const v = quantityValue(size);
  return v !== undefined && v <= 0 ? `a volume of ${quoted(size)}: its size must be above zero` : undefined;
}
