/**
 * Everything a TidbCluster document must pass before rendering, in one place: the CRD schema, this
 * project's support rules, the rules the schema cannot express, and resolution. Every problem is
 * collected; none stops the others from being found.
 */
import { joinKey, validateTidbClusterSchema } from './crd-schema';
import { SpecError, type SpecIssue } from './errors';
import { COMPONENTS, names } from './names';
import { resolveCluster, type ResolveOptions, type ResolvedCluster } from './resolve';
import { unsupportedFields } from './support';
import { versionTagIssues } from './version-tags';
import type { TidbClusterManifest } from './types';
import { DNS1035_LABEL, DNS1123_LABEL, LONE_SURROGATE_SOURCE } from '../base/patterns';

/** Validates and resolves one document; throws SpecError with every issue found. */
export function checkTidbCluster(doc: unknown, options: ResolveOptions = {}): ResolvedCluster {
  const issues = documentIssues(doc);
  if (issues.length > 0) throw new SpecError(issues);
  return resolveCluster(doc as TidbClusterManifest, options);
}

/** Issues found before resolution (schema, support, names, references). */
export function documentIssues(doc: unknown): SpecIssue[] {
  const unsafe = unsafeTextIssues(doc, 'TidbCluster');
  if (unsafe.length > 0) return unsafe;
  const issues: SpecIssue[] = [...validateTidbClusterSchema(doc)];
  if (!isObject(doc)) return issues;
  issues.push(...metadataIssues(doc.metadata, isObject(doc.spec) ? doc.spec : {}));
  if (isObject(doc.spec)) {
    // A typo is an unknown field already; saying "not supported yet" about it too would double-count.
    const reported = new Set(issues.map((i) => i.path));
    issues.push(...unsupportedFields(doc as { spec: Record<string, unknown> }).filter((i) => !reported.has(i.path)));
    issues.push(...referenceIssues(doc.spec), ...versionTagIssues(doc.spec).filter((i) => !reported.has(i.path)));
  }
  return issues;
}

/**
 * Strings no output can carry and keys no JavaScript reader takes at face value; any input document is
 * refused with these before anything reads on.
 */
export function unsafeTextIssues(doc: unknown, kind: string): SpecIssue[] {
  const unencodable = loneSurrogates(doc, '');
  // No file can hold such a string (it has no UTF-8 form): the output could never say what the input meant.
  if (unencodable.length > 0) {
    return unencodable.map((path) => ({
      path,
      message: 'contains a lone UTF-16 surrogate (from a \\uD800-\\uDFFF escape), which no UTF-8 text can hold',
    }));
  }
  const proto = protoKeys(doc, '');
  // A __proto__ key means something else to every JavaScript reader: refuse it before anything reads on.
  return proto.map((path) => ({ path, message: `the key __proto__ is not accepted anywhere in a ${kind}` }));
}

const LONE_SURROGATE = new RegExp(LONE_SURROGATE_SOURCE);

/** Paths of every string (key or value) in `value` with a surrogate code unit that has no partner. */
function loneSurrogates(value: unknown, path: string): string[] {
  if (typeof value === 'string') return LONE_SURROGATE.test(value) ? [path] : [];
  if (Array.isArray(value)) return value.flatMap((v, i) => loneSurrogates(v, `${path}[${i}]`));
  if (!isObject(value)) return [];
  return Object.keys(value).flatMap((k) => {
    const at = joinKey(path, k);
    return LONE_SURROGATE.test(k) ? [at] : loneSurrogates(value[k], at);
  });
}

/** Paths of every own `__proto__` key in `value`. */
function protoKeys(value: unknown, path: string): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => protoKeys(v, `${path}[${i}]`));
  if (!isObject(value)) return [];
  return Object.keys(value).flatMap((k) => {
    const at = path === '' ? k : `${path}.${k}`;
    return k === '__proto__' ? [at] : protoKeys(value[k], at);
  });
}

/**
 * Pods get a `controller-revision-hash` label of `<statefulset>-<up to 10 chars>`, and label values
 * stop at 63 characters, so the longest StatefulSet name the cluster has, such as `<cluster>-tikv`
 * (47 left for the cluster), `<cluster>-tiflash` (44 left) or `<cluster>-scheduling` (41 left), bounds the cluster's name.
 */
function maxName(spec: Record<string, unknown>): number {
  const pdms = Array.isArray(spec.pdms)
    ? spec.pdms.map((e) => (e as { name?: unknown } | null)?.name).filter((n): n is string => typeof n === 'string')
    : [];
  const present = [...COMPONENTS.filter((c) => spec[c] !== undefined && spec[c] !== null), ...pdms];
  const pods = 63 - 11 - Math.max(...(present.length > 0 ? present : ['tikv']).map((c) => c.length + 1));
  // createPassword's ConfigMap carries its own name as a label value (at most 63).
  const tidb = spec.tidb as { initializer?: { createPassword?: unknown } } | null | undefined;
  return tidb?.initializer?.createPassword === true ? Math.min(pods, 63 - names.initializer('').length) : pods;
}

function metadataIssues(metadata: unknown, spec: Record<string, unknown>): SpecIssue[] {
  const MAX_NAME = maxName(spec);
  if (!isObject(metadata)) return [{ path: 'metadata', message: 'required field is missing: a TidbCluster needs metadata.name' }];
  const issues: SpecIssue[] = [];
  const { name, namespace } = metadata;
  if (name === undefined) {
    issues.push({ path: 'metadata.name', message: 'required field is missing' });
  } else if (typeof name !== 'string') {
    issues.push({ path: 'metadata.name', message: `expected a string, got ${JSON.stringify(name)}` });
  } else if (!DNS1035_LABEL.test(name)) {
    issues.push({
      path: 'metadata.name',
      message: `invalid name ${JSON.stringify(name)}: expected lowercase letters, digits and '-', starting with a letter and ending with a letter or digit (it becomes part of Service names)`,
    });
  } else if (name.length > MAX_NAME) {
    const why =
      MAX_NAME === 63 - names.initializer('').length
        ? ` (with spec.tidb.initializer.createPassword, ConfigMap ${names.initializer(name)} carries its name as a label value, at most 63)`
        : '';
    issues.push({
      path: 'metadata.name',
      message: `name too long (${name.length} characters): at most ${MAX_NAME}, so that every derived object and Pod name fits Kubernetes limits${why}`,
    });
  }
  if (namespace !== undefined && (typeof namespace !== 'string' || !DNS1123_LABEL.test(namespace) || namespace.length > 63)) {
    issues.push({
      path: 'metadata.namespace',
      message: `invalid namespace ${JSON.stringify(namespace)}: expected a DNS label (lowercase letters, digits and '-')`,
    });
  }
  return issues;
}

/** Log volumes named by TiKV and TiDB must exist as a storage volume or an additional mount. */
function referenceIssues(spec: Record<string, unknown>): SpecIssue[] {
  const issues: SpecIssue[] = [];
  // [component, field, the switch that makes the field count, that switch's default]
  const refs: [string, string, string, boolean][] = [
    ['tikv', 'rocksDBLogVolumeName', 'separateRocksDBLog', false],
    ['tikv', 'raftLogVolumeName', 'separateRaftLog', false],
    ['tidb', 'slowLogVolumeName', 'separateSlowLog', true],
  ];
  for (const [comp, field, enabledBy, enabledByDefault] of refs) {
    const c = spec[comp];
    if (!isObject(c) || typeof c[field] !== 'string' || c[field] === '') continue;
    if (!(c[enabledBy] ?? enabledByDefault)) continue;
    const wanted = c[field] as string;
    const storage = listOfNames(c.storageVolumes, 'name');
    const mounts = listOfNames(c.additionalVolumeMounts, 'name');
    if (!storage.includes(wanted) && !mounts.includes(wanted)) {
      const known = [...storage, ...mounts];
      issues.push({
        path: `spec.${comp}.${field}`,
        message: `no storage volume or additional volume mount is named ${JSON.stringify(wanted)}${known.length ? ` (have: ${known.join(', ')})` : ''}`,
      });
    }
  }
  return issues;
}

function listOfNames(list: unknown, key: string): string[] {
  return Array.isArray(list) ? list.filter(isObject).map((x) => String(x[key])) : [];
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
