/**
 * Where backup data lives, checked where the document is read: exactly one provider, a bucket (or
 * container, or volume), and a prefix BR can address. The BR flags for it are in `br-args.ts`.
 */
import type { Volume, VolumeMount } from '../../imports/k8s';
import type { SpecIssue } from '../tidbcluster/errors';
import { dnsLabelProblem } from '../tidbcluster/api-rules';
import { subdomainNameProblem } from '../tidbcluster/job-pod-input';
import type { AzblobStorage, GcsStorage, LocalStorage, S3Storage, StorageProvider } from './types';

interface StorageBase {
  /** The folder under the bucket, without leading or trailing `/`. */
  readonly prefix: string;
  /** The secret the Job reads credentials from. @default none (the Pod's own identity) */
  readonly secretName?: string;
}

export interface ResolvedS3 extends StorageBase {
  readonly provider: 's3';
  readonly bucket: string;
  readonly spec: S3Storage;
}

export interface ResolvedGcs extends StorageBase {
  readonly provider: 'gcs';
  readonly bucket: string;
  readonly spec: GcsStorage;
}

export interface ResolvedAzblob extends StorageBase {
  readonly provider: 'azblob';
  /** The container. */
  readonly bucket: string;
  readonly spec: AzblobStorage;
}

export interface ResolvedLocal extends StorageBase {
  readonly provider: 'local';
  /** The volume's name. */
  readonly bucket: string;
  readonly volume: Volume;
  readonly volumeMount: VolumeMount;
}

export type ResolvedStorage = ResolvedS3 | ResolvedGcs | ResolvedAzblob | ResolvedLocal;

const PROVIDERS = ['s3', 'gcs', 'azblob', 'local'] as const;

/**
 * Why an S3 endpoint cannot be used, as tidb-operator refuses it (pkg/backup/util/util.go,
 * `validateS3`: Go's `url.Parse` must find a scheme and a host); BR would fail on it at the first run.
 */
function endpointProblem(endpoint: string | undefined): string | undefined {
  if (endpoint === undefined || endpoint === '') return undefined;
  if (/\s/.test(endpoint)) return `${JSON.stringify(endpoint)} contains white space, which no URL has (BR cannot parse it)`;
  if (/^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/?#]+/.test(endpoint)) return undefined;
  return `expected a URL with its scheme and host, such as http://minio:9000 or https://s3.example.com, got ${JSON.stringify(endpoint)}`;
}

/** The storage `spec` names at `at`, or the problems that stop it being one. */
export function resolveStorage(spec: StorageProvider, at: string): { storage?: ResolvedStorage; issues: SpecIssue[] } {
  const found = storageAt(spec, at);
  const names = storageNameIssues(spec, at);
  return names.length === 0 ? found : { issues: [...found.issues, ...names] };
}

/**
 * The names the BR Pod gives the API server: the Secret's (in `secretKeyRef`, `envFrom` or a volume, a
 * DNS subdomain) and a local volume's (a DNS label).
 */
function storageNameIssues(spec: StorageProvider, at: string): SpecIssue[] {
  const issues: SpecIssue[] = [];
  for (const provider of ['s3', 'gcs', 'azblob'] as const) {
    const secretName = spec[provider]?.secretName;
    const problem = secretName !== undefined && secretName !== '' ? subdomainNameProblem(secretName, 'Secret') : undefined;
    if (problem) issues.push({ path: `${join(at, provider)}.secretName`, message: problem });
  }
  const volume = spec.local?.volume?.name;
  const problem = volume ? dnsLabelProblem(volume, 'volume name') : undefined;
  if (problem) issues.push({ path: `${join(at, 'local')}.volume.name`, message: problem });
  return issues;
}

function storageAt(spec: StorageProvider, at: string): { storage?: ResolvedStorage; issues: SpecIssue[] } {
  const given = PROVIDERS.filter((p) => spec[p] !== undefined && spec[p] !== null);
  if (given.length === 0)
    return { issues: [{ path: at === '' ? 's3' : `${at}.s3`, message: 'no storage: give one of s3, gcs, azblob or local' }] };
  if (given.length > 1)
    return { issues: [{ path: join(at, given[1]), message: `more than one storage: ${given.join(' and ')}; give one` }] };
  const provider = given[0];
  const here = join(at, provider);
  if (provider === 'local') return local(spec.local!, here);
  const s = spec[provider]!;
  const bucketKey = provider === 'azblob' ? 'container' : 'bucket';
  const bucket = provider === 'azblob' ? (s as AzblobStorage).container : (s as S3Storage | GcsStorage).bucket;
  const issues: SpecIssue[] = [];
  let location: { bucket: string; prefix: string } | undefined;
  const rules = bucketRules(provider, s);
  const check = (key: string, name: string, folder: string) => {
    const problem = bucketProblem(rules, name) ?? urlPathProblem(folder);
    if (problem) issues.push({ path: `${here}.${key}`, message: problem });
  };
  const prefixProblem = urlPathProblem(s.prefix ?? '');
  if (prefixProblem) issues.push({ path: `${here}.prefix`, message: prefixProblem });
  if (bucket !== undefined && bucket !== '') {
    if (s.path !== undefined && s.path !== '')
      issues.push({ path: `${here}.path`, message: `give either ${bucketKey} (with prefix) or path, not both` });
    // `bucket/folder` in bucket is the bucket and the start of the prefix (pkg/backup/util/remote.go, makeS3Config).
    const [name, ...folder] = trimSlashes(bucket).split('/');
    check(bucketKey, name, folder.join('/'));
    location = { bucket: name, prefix: trimSlashes([...folder, trimSlashes(s.prefix ?? '')].filter((p) => p !== '').join('/')) };
  } else if (s.path !== undefined && s.path !== '') {
    // The operator's old form: `bucket/prefix` in one field (pkg/backup/util, checkS3Config and friends).
    const [first, ...rest] = trimSlashes(s.path.replace(/^[a-z0-9]+:\/\//, '')).split('/');
    check('path', first, rest.join('/'));
    location = { bucket: first, prefix: trimSlashes([...rest, s.prefix ?? ''].filter((p) => p !== '').join('/')) };
  } else {
    issues.push({ path: `${here}.${bucketKey}`, message: `no ${bucketKey}: the storage needs one (or path: ${bucketKey}/prefix)` });
  }
  if (location && /(^|\/)\.\.?(\/|$)/.test(location.prefix))
    issues.push({
      path: `${here}.prefix`,
      message: `${JSON.stringify(location.prefix)} has a "." or ".." segment, which object storage keeps literally`,
    });
  // Retention finds a run's folder by its path segments (src/controller/plan/retention.ts): none is empty.
  else if (location?.prefix.includes('//'))
    issues.push({
      path: `${here}.prefix`,
      message: `${JSON.stringify(location.prefix)} has an empty folder name ("//"), which object storage keeps literally: write one "/"`,
    });
  const endpoint = provider === 's3' ? endpointProblem((s as S3Storage).endpoint) : undefined;
  if (endpoint) issues.push({ path: `${here}.endpoint`, message: endpoint });
  if (issues.length > 0 || !location) return { issues };
  const secretName = s.secretName === '' ? undefined : s.secretName;
  const base = { ...location, ...(secretName !== undefined && { secretName }) };
  if (provider === 's3') return { storage: { provider, ...base, spec: s as S3Storage }, issues };
  if (provider === 'gcs') return { storage: { provider, ...base, spec: s as GcsStorage }, issues };
  return { storage: { provider, ...base, spec: s as AzblobStorage }, issues };
}

function local(l: LocalStorage, at: string): { storage?: ResolvedLocal; issues: SpecIssue[] } {
  const issues: SpecIssue[] = [];
  if (!l.volume?.name) issues.push({ path: `${at}.volume.name`, message: 'required field is missing' });
  if (!l.volumeMount?.name) issues.push({ path: `${at}.volumeMount.name`, message: 'required field is missing' });
  else if (l.volume?.name && l.volumeMount.name !== l.volume.name)
    issues.push({ path: `${at}.volumeMount.name`, message: `expected the volume's name ${JSON.stringify(l.volume.name)}` });
  if (!l.volumeMount?.mountPath) issues.push({ path: `${at}.volumeMount.mountPath`, message: 'required field is missing' });
  for (const [key, value] of [
    ['prefix', l.prefix ?? ''],
    ['volumeMount.mountPath', l.volumeMount?.mountPath ?? ''],
  ] as const) {
    const problem = urlPathProblem(value);
    if (problem) issues.push({ path: `${at}.${key}`, message: problem });
  }
  if (issues.length > 0) return { issues };
  return {
    storage: {
      provider: 'local',
      bucket: l.volume.name,
      prefix: trimSlashes(l.prefix ?? ''),
      volume: l.volume,
      volumeMount: l.volumeMount,
    },
    issues,
  };
}

/**
 * Whose bucket naming rules apply: AWS's for S3 on AWS (provider aws or none, and no endpoint or one
 * of amazonaws.com); an S3-compatible store behind its own endpoint (Ceph, MinIO and the other
 * providers) keeps its own, often looser, rules (Ceph's relaxed names take upper case and `_`), so
 * there only what no store takes is refused; GCS's and Azure's for those.
 */
type BucketRules = 'aws' | 's3-compatible' | 'gcs' | 'azblob';

function bucketRules(provider: 's3' | 'gcs' | 'azblob', s: S3Storage | GcsStorage | AzblobStorage): BucketRules {
  if (provider !== 's3') return provider;
  const { provider: vendor, endpoint } = s as S3Storage;
  const aws =
    (vendor === undefined || vendor === '' || vendor === 'aws') &&
    (endpoint === undefined || endpoint === '' || /^[a-z]+:\/\/([^/]*\.)?amazonaws\.com(\.cn)?(:\d+)?(\/|$)/i.test(endpoint));
  return aws ? 'aws' : 's3-compatible';
}

/** What no S3-compatible store takes in a bucket name (S3's old rules, with upper case and `_`). */
const LOOSE_BUCKET = /^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$/;
const IP_ADDRESS = /^\d{1,3}(\.\d{1,3}){3}$/;

/**
 * Why the store refuses `name` as a bucket (an Azure container): AWS's general purpose bucket naming
 * rules, Google Cloud Storage's and Azure's container names; S3-compatible stores, only the loose shape.
 */
function bucketProblem(rules: BucketRules, name: string): string | undefined {
  const not = `${JSON.stringify(name)} is not a bucket name`;
  if (rules === 's3-compatible')
    return LOOSE_BUCKET.test(name)
      ? undefined
      : `${not}: expected at most 255 letters, digits, '.', '-' and '_', starting with a letter or digit`;
  const where = { aws: 'on AWS S3', gcs: 'on Google Cloud Storage', azblob: 'for an Azure Blob container' }[rules];
  const chars =
    rules === 'aws'
      ? "lowercase letters, digits, '.' and '-'"
      : rules === 'gcs'
        ? "lowercase letters, digits, '.', '-' and '_'"
        : "lowercase letters, digits and '-'";
  const max = rules === 'gcs' && name.includes('.') ? 222 : 63;
  // Shorter than 3 characters names no bucket, as a misspelt name names none: BR says so at its first run.
  if (name.length > max) return `${not} ${where}: expected at most ${max} characters, got ${name.length}`;
  if (!(rules === 'aws' ? /^[a-z0-9.-]+$/ : rules === 'gcs' ? /^[a-z0-9._-]+$/ : /^[a-z0-9-]+$/).test(name))
    return `${not} ${where}: expected ${chars} only`;
  if (!/^[a-z0-9]/.test(name) || !/[a-z0-9]$/.test(name)) return `${not} ${where}: it must start and end with a letter or digit`;
  if (rules === 'azblob')
    return name.includes('--') ? `${not} ${where}: "--" is not allowed, each '-' stands between letters or digits` : undefined;
  if (name.includes('..')) return `${not} ${where}: two adjacent periods`;
  if (IP_ADDRESS.test(name)) return `${not} ${where}: it may not look like an IP address`;
  if (rules === 'gcs') {
    if (name.split('.').some((c) => c.length > 63)) return `${not} ${where}: each dot-separated part is at most 63 characters`;
    return name.startsWith('goog') || name.includes('google')
      ? `${not} ${where}: it may not start with "goog" or contain "google"`
      : undefined;
  }
  const prefix = ['xn--', 'sthree-', 'amzn-s3-demo-'].find((p) => name.startsWith(p));
  if (prefix) return `${not} ${where}: the prefix ${prefix} is reserved`;
  const suffix = ['-s3alias', '--ol-s3', '.mrap', '--x-s3', '--table-s3'].find((p) => name.endsWith(p));
  return suffix ? `${not} ${where}: the suffix ${suffix} is reserved` : undefined;
}

/**
 * Why a folder cannot go into the storage URL as it is. BR parses `--storage` with Go's `url.Parse`
 * (pingcap/tidb br/pkg/storage/parse.go `ParseRawURL`, after turning `+` into `%2B`) and takes the
 * decoded path as the prefix: `?` would start the query, `#` the fragment, `%` an escape (`%2e%2e` is
 * `..`), and a control character fails the parse. The kubelet expands `$(NAME)` in the Job's
 * arguments and environment, where the URL goes; the run script puts each run's folder where `{run}`
 * is; `"` and `\` would break the report of each run (JSON in the Job's termination message).
 * Retention reads the folder as written: with these refused, the three read one path.
 */
export function urlPathProblem(folder: string): string | undefined {
  const shown = JSON.stringify(folder);
  const use = '; use letters, digits, spaces and - _ . / + = @ : , ~ !';
  const why: Record<string, string> = {
    '?': "which BR reads as the start of the storage URL's query: the data would go elsewhere",
    '#': "which BR reads as the start of the storage URL's fragment: the data would go elsewhere",
    '%': 'which BR reads as an escape in the storage URL (%2e is "."): the data would go elsewhere, or BR fails',
    $: 'which the kubelet reads as a reference to a variable ($(NAME)) in the Job',
    '"': "which would break the report of each run (the Job's termination message)",
    '\\': "which would break the report of each run (the Job's termination message)",
  };
  for (const ch of folder) {
    if (why[ch] !== undefined) return `${shown} has ${JSON.stringify(ch)}, ${why[ch]}${use}`;
    if (/[\u0000-\u001f\u007f]/.test(ch)) return `${shown} has a control character, which BR cannot parse in a storage URL${use}`;
  }
  if (folder.includes('{run}'))
    return `${shown} has "{run}", where the run script puts each run's folder: the data would go elsewhere${use}`;
  return undefined;
}

function trimSlashes(s: string): string {
  return s.replace(/^\/+|\/+$/g, '');
}

function join(at: string, key: string): string {
  return at === '' ? key : `${at}.${key}`;
}
