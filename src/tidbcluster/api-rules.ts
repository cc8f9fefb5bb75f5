/**
 * The rules the Kubernetes API server applies beyond the JSON schema (label and annotation syntax,
 * sizes, enums, port ranges, names), as pure functions that return why a value is refused. The input
 * is checked with them where it is read (`api-input.ts`, with paths and lines), and every rendered
 * object is checked again (`render/api-check.ts`), so nothing reaches a cluster that would refuse it.
 *
 * The rules follow k8s.io/apimachinery `pkg/util/validation` and `pkg/api/validation`, and
 * k8s.io/kubernetes `pkg/apis/core/validation` (ValidateLabels, ValidateAnnotations, IsEnvVarName,
 * IsRelaxedEnvVarName, IsValidPortNum, IsValidPortName, IsConfigMapKey, ValidateConfigMap).
 */
import { isIP } from 'node:net';
import { imageReferenceProblem } from '../base/image';
import { quoted } from './errors';
import { DNS1035_LABEL, DNS1123_LABEL, DNS1123_SUBDOMAIN } from '../base/patterns';

const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const ENV_VAR_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;
const CONFIG_MAP_KEY = /^[-._a-zA-Z0-9]+$/;

/** The most a label value, or the name part of a qualified name, may have. */
export const MAX_LABEL_LENGTH = 63;
/** All annotations of one object together (keys and values, in bytes): 256 KiB. */
export const MAX_ANNOTATIONS_BYTES = 256 * 1024;
/** All data of one ConfigMap together (values, in bytes): 1 MiB. */
export const MAX_CONFIGMAP_BYTES = 1024 * 1024;
/** The Service types the API server knows. */
export const SERVICE_TYPES = ['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'] as const;
/** Where environment variable names may hold any printable ASCII but `=` (RelaxedEnvironmentVariableValidation). */
export const RELAXED_ENV_NAMES_SINCE = 32;

const show = (s: string) => quoted(s.length > 80 ? `${s.slice(0, 77)}...` : s);
const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

/** Why `key` is not a qualified name (`[prefix/]name`, as label and annotation keys are), or undefined. */
export function qualifiedNameProblem(key: string): string | undefined {
  const parts = key.split('/');
  if (parts.length > 2) return `${show(key)} is not a valid key: at most one "/" (an optional DNS prefix, then a name)`;
  const name = parts[parts.length - 1];
  if (parts.length === 2) {
    const prefix = parts[0];
    if (prefix === '') return `${show(key)} is not a valid key: the prefix before "/" is empty`;
    if (prefix.length > 253 || !DNS1123_SUBDOMAIN.test(prefix)) {
      return `${show(key)} is not a valid key: its prefix must be a DNS subdomain (lowercase letters, digits, "-" and ".", at most 253)`;
    }
  }
  if (name === '') return `${show(key)} is not a valid key: the name part is empty`;
  if (name.length > MAX_LABEL_LENGTH)
    return `${show(key)} is not a valid key: the name part has ${name.length} characters, at most ${MAX_LABEL_LENGTH}`;
  if (!QUALIFIED_NAME_PART.test(name)) {
    return `${show(key)} is not a valid key: letters, digits, "-", "_" and ".", starting and ending with a letter or digit (optionally with a DNS prefix and "/")`;
  }
  return undefined;
}

/** Why `value` cannot be a label value, or undefined. */
export function labelValueProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return `a label value must be a string, got ${quoted(value)}`;
  if (value.length > MAX_LABEL_LENGTH) return `label value has ${value.length} characters, at most ${MAX_LABEL_LENGTH}`;
  if (!LABEL_VALUE.test(value)) {
    return `${show(value)} is not a valid label value: letters, digits, "-", "_" and ".", starting and ending with a letter or digit (or empty)`;
  }
  return undefined;
}

/** Problems of a label map (labels, selectors, nodeSelector), keyed by the offending key. */
export function labelProblems(labels: Readonly<Record<string, unknown>>): [key: string, problem: string][] {
  const out: [string, string][] = [];
  for (const [k, v] of Object.entries(labels)) {
    const problem = qualifiedNameProblem(k) ?? labelValueProblem(v);
    if (problem) out.push([k, problem]);
  }
  return out;
}

/** Problems of an annotation map: keys as qualified names (compared in lower case), and the total size. */
export function annotationProblems(annotations: Readonly<Record<string, unknown>>): [key: string | undefined, problem: string][] {
  const out: [string | undefined, string][] = [];
  let total = 0;
  for (const [k, v] of Object.entries(annotations)) {
    const problem = qualifiedNameProblem(k.toLowerCase());
    if (problem) out.push([k, problem]);
    if (typeof v !== 'string') out.push([k, `an annotation value must be a string, got ${quoted(v)}`]);
    else total += bytes(k) + bytes(v);
  }
  if (total > MAX_ANNOTATIONS_BYTES) {
    out.push([undefined, `annotations take ${kib(total)} together; Kubernetes allows at most ${kib(MAX_ANNOTATIONS_BYTES)} per object`]);
  }
  return out;
}

/** Why `name` cannot name an environment variable on the target Kubernetes minor, or undefined. */
export function envNameProblem(name: unknown, kubeMinor: number): string | undefined {
  if (typeof name !== 'string' || name === '') return 'an environment variable needs a name';
  if (kubeMinor >= RELAXED_ENV_NAMES_SINCE) {
    // IsRelaxedEnvVarName: printable ASCII but "=".
    if (!/^[\x20-\x3c\x3e-\x7e]+$/.test(name))
      return `${show(name)} is not a valid environment variable name: printable ASCII characters except "="`;
    return undefined;
  }
  if (!ENV_VAR_NAME.test(name)) {
    return `${show(name)} is not a valid environment variable name on Kubernetes 1.${kubeMinor}: letters, digits, "_", "-" and ".", not starting with a digit (any printable name but "=" needs 1.${RELAXED_ENV_NAMES_SINCE} or newer)`;
  }
  if (name === '.' || name === '..' || name.startsWith('..'))
    return `${show(name)} is not a valid environment variable name: it may not be or start with ".."`;
  return undefined;
}

/** Why `port` is not a port number (1 to 65535), or undefined. `zeroOk` for fields where 0 means unset. */
export function portProblem(port: unknown, zeroOk = false): string | undefined {
  if (zeroOk && port === 0) return undefined;
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) {
    return `expected a port number from ${zeroOk ? '0 (unset) or ' : ''}1 to 65535, got ${quoted(port)}`;
  }
  return undefined;
}

/** Why `name` is not a port name (IANA service name: at most 15 lowercase letters, digits and "-"), or undefined. */
export function portNameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string') return `a port name must be a string, got ${quoted(name)}`;
  if (
    name.length < 1 ||
    name.length > 15 ||
    !/^[-a-z0-9]+$/.test(name) ||
    !/[a-z]/.test(name) ||
    name.includes('--') ||
    name.startsWith('-') ||
    name.endsWith('-')
  ) {
    return `${show(name)} is not a valid port name: 1 to 15 lowercase letters, digits and "-", with at least one letter, no "--", not starting or ending with "-"`;
  }
  return undefined;
}

/** Why `target` is not a target port (a port number or a port name), or undefined. */
export function targetPortProblem(target: unknown): string | undefined {
  return typeof target === 'string' ? portNameProblem(target) : portProblem(target);
}

/** Why `type` is not a Service type, or undefined. */
export function serviceTypeProblem(type: unknown): string | undefined {
  if (typeof type === 'string' && (SERVICE_TYPES as readonly string[]).includes(type)) return undefined;
  return `expected a Service type (${SERVICE_TYPES.join(', ')}), got ${quoted(type)}`;
}

/** Why `image` cannot name a container image (or be `what` of one: a name or a tag, checked for white space only), or undefined. */
export function imageProblem(image: unknown, what = 'image reference'): string | undefined {
  if (typeof image !== 'string') return `an image must be a string, got ${quoted(image)}`;
  if (image.trim() !== image) return `${quoted(image)} has white space at its start or end; Kubernetes refuses such an image`;
  if (/\s/.test(image)) return `${quoted(image)} contains white space, which no ${what} has`;
  // A whole reference is read by the kubelet's grammar (src/base/image.ts); a name or a tag alone is not one.
  return what === 'image reference' ? imageReferenceProblem(image) : undefined;
}

const RBAC_KINDS = new Set(['Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding']);
/** The most a CronJob's name may have: the Jobs it makes add `-<minutes>` (11 characters) to a DNS label. */
export const MAX_CRONJOB_NAME = 52;

/**
 * Why `name` cannot name an object of `kind`: a DNS label starting with a letter for a Service, a DNS
 * label for a Namespace, a path segment for RBAC objects, a DNS subdomain otherwise (at most 52
 * characters for a CronJob).
 */
export function objectNameProblem(kind: string, name: unknown): string | undefined {
  if (typeof name !== 'string') return `expected a name, got ${quoted(name)}`;
  if (kind === 'Service') {
    return name.length <= 63 && DNS1035_LABEL.test(name)
      ? undefined
      : `${quoted(name)} is not a valid Service name (a DNS label starting with a letter, at most 63)`;
  }
  if (kind === 'Namespace') {
    return name.length <= 63 && DNS1123_LABEL.test(name)
      ? undefined
      : `${quoted(name)} is not a valid Namespace name (lowercase letters, digits and "-", starting and ending with a letter or digit, at most 63)`;
  }
  if (kind === 'CronJob' && name.length > MAX_CRONJOB_NAME) {
    return `${quoted(name)} is too long for a CronJob name: ${name.length} characters, at most ${MAX_CRONJOB_NAME} (its Jobs are named <name>-<minutes>)`;
  }
  if (RBAC_KINDS.has(kind)) {
    // RBAC names are path segments (kubernetes pkg/apis/rbac/validation ValidateRBACName): `:` is fine.
    return name !== '' && name !== '.' && name !== '..' && !/[/%]/.test(name)
      ? undefined
      : `${quoted(name)} is not a valid ${kind} name (not "." or "..", without "/" or "%")`;
  }
  return name.length <= 253 && DNS1123_SUBDOMAIN.test(name)
    ? undefined
    : `${quoted(name)} is not a valid object name (a DNS subdomain, at most 253)`;
}

/** Why `name` is not a container or volume name (a DNS label, at most 63), or undefined. */
export function dnsLabelProblem(name: unknown, what: string): string | undefined {
  if (typeof name === 'string' && name.length <= 63 && DNS1123_LABEL.test(name)) return undefined;
  return `${quoted(name)} is not a valid ${what}: lowercase letters, digits and "-", starting and ending with a letter or digit, at most 63`;
}

/** Why `key` cannot be a key of a ConfigMap (or, with `what`, of a Secret), or undefined. */
export function configMapKeyProblem(key: string, what: 'ConfigMap' | 'Secret' = 'ConfigMap'): string | undefined {
  if (key.length > 253 || !CONFIG_MAP_KEY.test(key))
    return `${show(key)} is not a valid ${what} key: letters, digits, "-", "_" and ".", at most 253`;
  if (key === '.' || key === '..' || key.startsWith('..'))
    return `${show(key)} is not a valid ${what} key: it may not be or start with ".."`;
  return undefined;
}

/** All data of one Secret together (decoded values, in bytes): 1 MiB. */
export const MAX_SECRET_BYTES = 1024 * 1024;

/** The Secret's size problem (`data` is base64, `stringData` plain text), or undefined. */
export function secretSizeProblem(
  data: Readonly<Record<string, unknown>>,
  stringData: Readonly<Record<string, unknown>>,
): string | undefined {
  let total = 0;
  for (const [k, v] of Object.entries(data)) if (typeof v === 'string' && !(k in stringData)) total += Buffer.from(v, 'base64').length;
  for (const v of Object.values(stringData)) if (typeof v === 'string') total += bytes(v);
  return total <= MAX_SECRET_BYTES ? undefined : `its data takes ${kib(total)}; a Secret holds at most ${kib(MAX_SECRET_BYTES)}`;
}

/**
 * Why `host` cannot be an Ingress host (a DNS name, optionally `*.` and a DNS name; not an IP
 * address), or undefined.
 */
export function ingressHostProblem(host: unknown): string | undefined {
  if (typeof host !== 'string') return `expected a host name, got ${quoted(host)}`;
  if (isIP(host) !== 0) return `${quoted(host)} is an IP address; an Ingress host is a DNS name (leave host out to match any)`;
  const name = host.startsWith('*.') ? host.slice(2) : host;
  if (name.length <= 253 - (host.length - name.length) && DNS1123_SUBDOMAIN.test(name)) return undefined;
  return `${show(host)} is not a valid host: lowercase letters, digits, "-" and ".", optionally starting with "*." (no "_", at most 253)`;
}

/** The highest priority a PriorityClass of one's own may have; above it, only Kubernetes' own `system-` classes. */
export const MAX_USER_PRIORITY = 1_000_000_000;
/** The PriorityClasses Kubernetes makes itself, with their values. */
const SYSTEM_PRIORITY_CLASSES: Readonly<Record<string, number>> = {
  'system-cluster-critical': 2_000_000_000,
  'system-node-critical': 2_000_001_000,
};

/** A PriorityClass's problems, as `[field, why]`: names under `system-` are Kubernetes' own, values at most 1e9. */
export function priorityClassProblems(name: unknown, value: unknown): [field: 'metadata.name' | 'value', problem: string][] {
  if (typeof name === 'string' && name.startsWith('system-')) {
    return SYSTEM_PRIORITY_CLASSES[name] === value
      ? []
      : [
          [
            'metadata.name',
            `${quoted(name)}: names starting with "system-" are reserved for Kubernetes' own priority classes; choose another name`,
          ],
        ];
  }
  if (typeof value === 'number' && value > MAX_USER_PRIORITY)
    return [
      [
        'value',
        `${value} is above ${MAX_USER_PRIORITY}, the highest priority a PriorityClass of one's own may have (higher ones are Kubernetes' system classes)`,
      ],
    ];
  return [];
}

/** The ConfigMap's data size problem, or undefined. */
export function configMapSizeProblem(data: Readonly<Record<string, unknown>>): string | undefined {
  let total = 0;
  for (const v of Object.values(data)) if (typeof v === 'string') total += bytes(v);
  if (total <= MAX_CONFIGMAP_BYTES) return undefined;
  return `its data takes ${kib(total)}; a ConfigMap holds at most ${kib(MAX_CONFIGMAP_BYTES)}`;
}

/** What etcd stores of one object at most (its default --max-request-bytes): 1.5 MiB. */
export const MAX_OBJECT_BYTES = 1.5 * 1024 * 1024;
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * Why the object is too large to store, or to apply client-side (`kubectl apply`, Argo CD's default):
 * that keeps the whole object as JSON in an annotation, and all annotations together hold 256 KiB.
 * Go's JSON writes `<`, `>`, `&` and U+2028/U+2029 as six-character escapes, so they count six.
 */
export function objectSizeProblem(o: Readonly<Record<string, unknown>>): string | undefined {
  // Most objects are a few KiB: a bound taken in one walk spares serialising each of them.
  if (2 * jsonBytesBound(o) + bytes(LAST_APPLIED) + 1 <= MAX_ANNOTATIONS_BYTES) return undefined;
  const json = JSON.stringify(o);
  const escapes = (json.match(/[<>&\u2028\u2029]/g)?.length ?? 0) * 5;
  const size = bytes(json) + escapes;
  if (size > MAX_OBJECT_BYTES) return `the object takes ${kib(size)}; the API server stores at most ${kib(MAX_OBJECT_BYTES)} per object`;
  const meta = o.metadata as { annotations?: Record<string, unknown> } | undefined;
  let annotations = bytes(LAST_APPLIED) + size + 1;
  for (const [k, v] of Object.entries(meta?.annotations ?? {})) annotations += bytes(k) + (typeof v === 'string' ? bytes(v) : 0);
  if (annotations > MAX_ANNOTATIONS_BYTES) {
    return `the object takes ${kib(size)}: too large for client-side apply (kubectl apply, Argo CD's default), which keeps it in an annotation of at most ${kib(MAX_ANNOTATIONS_BYTES)} with the others; make the config smaller`;
  }
  return undefined;
}

/**
 * No fewer bytes than the value takes as Go's JSON writes it: a UTF-16 unit takes at most 6 bytes
 * (an escape), a number at most 24 characters, and an entry its quotes, colon and comma.
 */
function jsonBytesBound(v: unknown): number {
  if (typeof v === 'string') return 6 * v.length + 2;
  if (typeof v !== 'object' || v === null) return 24;
  let n = 2;
  if (Array.isArray(v)) {
    for (const x of v) n += jsonBytesBound(x) + 1;
    return n;
  }
  for (const [k, x] of Object.entries(v)) n += 6 * k.length + 4 + jsonBytesBound(x);
  return n;
}

function kib(n: number): string {
  return n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(2)} MiB` : `${(n / 1024).toFixed(1)} KiB`;
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
