/**
 * Where backup data lives, checked where the document is read: exactly one provider, a bucket (or
 * container, or volume), and a prefix BR can address. The BR flags for it are in `br-args.ts`.
 */
import type { Volume, VolumeMount } from '../../imports/k8s';
import type { SpecIssue } from '../tidbcluster/errors';
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
  if (/^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/?#]+/.test(endpoint)) return undefined;
  return `expected a URL with its scheme and host, such as http://minio:9000 or https://s3.example.com, got ${JSON.stringify(endpoint)}`;
}

/** The storage `spec` names at `at`, or the problems that stop it being one. */
export function resolveStorage(spec: StorageProvider, at: string): { storage?: ResolvedStorage; issues: SpecIssue[] } {
  const given = PROVIDERS.filter((p) => spec[p] !== undefined && spec[p] !== null);
  if (given.length === 0) return { issues: [{ path: at === '' ? 's3' : `${at}.s3`, message: 'no storage: give one of s3, gcs, azblob or local' }] };
  if (given.length > 1) return { issues: [{ path: join(at, given[1]), message: `more than one storage: ${given.join(' and ')}; give one` }] };
  const provider = given[0];
  const here = join(at, provider);
  if (provider === 'local') return local(spec.local!, here);
  const s = spec[provider]!;
  const bucketKey = provider === 'azblob' ? 'container' : 'bucket';
  const bucket = provider === 'azblob' ? (s as AzblobStorage).container : (s as S3Storage | GcsStorage).bucket;
  const issues: SpecIssue[] = [];
  let location: { bucket: string; prefix: string } | undefined;
  if (bucket !== undefined && bucket !== '') {
    if (s.path !== undefined && s.path !== '') issues.push({ path: `${here}.path`, message: `give either ${bucketKey} (with prefix) or path, not both` });
    // `bucket/folder` in bucket is the bucket and the start of the prefix (pkg/backup/util/remote.go, makeS3Config).
    const [name, ...rest] = `${trimSlashes(bucket)}/${trimSlashes(s.prefix ?? '')}`.split('/');
    if (!BUCKET.test(name)) issues.push({ path: `${here}.${bucketKey}`, message: `${JSON.stringify(name)} is not a bucket name: expected letters, digits, '.', '-' and '_'` });
    location = { bucket: name, prefix: trimSlashes(rest.join('/')) };
  } else if (s.path !== undefined && s.path !== '') {
    // The operator's old form: `bucket/prefix` in one field (pkg/backup/util, checkS3Config and friends).
    const [first, ...rest] = trimSlashes(s.path.replace(/^[a-z0-9]+:\/\//, '')).split('/');
    location = { bucket: first, prefix: trimSlashes([...rest, s.prefix ?? ''].filter((p) => p !== '').join('/')) };
  } else {
    issues.push({ path: `${here}.${bucketKey}`, message: `no ${bucketKey}: the storage needs one (or path: ${bucketKey}/prefix)` });
  }
  if (location && /(^|\/)\.\.?(\/|$)/.test(location.prefix)) issues.push({ path: `${here}.prefix`, message: `${JSON.stringify(location.prefix)} has a "." or ".." segment, which object storage keeps literally` });
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
  else if (l.volume?.name && l.volumeMount.name !== l.volume.name) issues.push({ path: `${at}.volumeMount.name`, message: `expected the volume's name ${JSON.stringify(l.volume.name)}` });
  if (!l.volumeMount?.mountPath) issues.push({ path: `${at}.volumeMount.mountPath`, message: 'required field is missing' });
  if (issues.length > 0) return { issues };
  return { storage: { provider: 'local', bucket: l.volume.name, prefix: trimSlashes(l.prefix ?? ''), volume: l.volume, volumeMount: l.volumeMount }, issues };
}

/** Bucket names: S3's rules (with `_` for older buckets), GCS's and Azure's are subsets of this. */
const BUCKET = /^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$/;

function trimSlashes(s: string): string {
  return s.replace(/^\/+|\/+$/g, '');
}

function join(at: string, key: string): string {
  return at === '' ? key : `${at}.${key}`;
}
