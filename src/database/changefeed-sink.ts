/**
 * A Changefeed's sink URI: the schemes each TiCDC release line takes, the credentials a URI may carry
 * (refused in a document, which is kept in Git: they come from the Secret that `spec.sinkCredentials`
 * names, and the controller adds them at run time), and their redaction from any text.
 *
 * Sources: pingcap/tiflow `pkg/sink/sink_type.go` (scheme names) and `cdc/sink/dmlsink/factory/factory.go`
 * `New` (the schemes a release takes, lower-cased) at v7.1.6, v7.5.7, v8.1.2, v8.5.7; pingcap/ticdc
 * `pkg/config/sink_protocol.go` at v26.3.4 (the same schemes). Credentials: `pkg/sink/kafka/options.go`
 * `urlConfig` (`sasl-password`, `sasl-gssapi-password`); the MySQL sink reads the password from the URI's
 * user info (`pkg/sink/mysql/config.go`); storage URIs are read by pingcap/tidb `br/pkg/storage/parse.go`
 * `ExtractQueryParameters` (names lower-cased, `_` read as `-`), with `s3.go` `S3BackendOptions`
 * (`access-key`, `secret-access-key`, `session-token`) and `azblob.go` `AzblobBackendOptions`
 * (`account-key`, `sas-token`, `encryption-key`). The Pulsar sink reads no credential from its URI
 * (pingcap/tiflow `pkg/sink/pulsar/config.go` `NewPulsarConfig`): its token and password are replica
 * config fields (`sink.pulsar_config`). Redo log storages: `pkg/redo/config.go` `IsValidConsistentStorage`.
 */
import { hideUrlSecrets } from '../base/url-secrets';
import { suggest } from '../base/suggest';
import { tagVersionAtLeast } from '../base/version';
import { type SpecIssue, quoted } from '../tidbcluster/errors';
import { type CdcLine, type FieldSpec, type FieldTree, REPLICA_CONFIG_FIELDS } from './changefeed-fields';

/** Sinks by what reads their URI, and so where their credentials go. */
export type SinkFamily = 'mysql' | 'kafka' | 'pulsar' | 's3' | 'gcs' | 'azure' | 'file' | 'blackhole';

/** Each sink scheme, its family, and the first release line that takes it. */
export const SINK_SCHEMES: Readonly<Record<string, { readonly family: SinkFamily; readonly since?: CdcLine }>> = {
  mysql: { family: 'mysql' },
  'mysql+ssl': { family: 'mysql' },
  tidb: { family: 'mysql' },
  'tidb+ssl': { family: 'mysql' },
  kafka: { family: 'kafka' },
  'kafka+ssl': { family: 'kafka' },
  pulsar: { family: 'pulsar', since: '7.5' },
  'pulsar+ssl': { family: 'pulsar', since: '7.5' },
  'pulsar+http': { family: 'pulsar', since: '8.5' },
  'pulsar+https': { family: 'pulsar', since: '8.5' },
  s3: { family: 's3' },
  gcs: { family: 'gcs' },
  gs: { family: 'gcs' },
  azure: { family: 'azure' },
  azblob: { family: 'azure' },
  file: { family: 'file' },
  noop: { family: 'file' },
  blackhole: { family: 'blackhole' },
};

/**
 * Per family, the query parameters of the sink URI that carry secrets: what the controller adds from
 * the Secret, and what logs never show. A MySQL/TiDB sink's password is the URI's user info instead.
 */
export const SINK_CREDENTIAL_PARAMS: Readonly<Record<SinkFamily, readonly string[]>> = {
  mysql: [],
  kafka: ['sasl-password', 'sasl-gssapi-password'],
  pulsar: [],
  s3: ['access-key', 'secret-access-key', 'session-token'],
  gcs: [],
  azure: ['account-key', 'sas-token', 'encryption-key'],
  file: [],
  blackhole: [],
};

/** The families whose URI carries a password in its user info (`mysql://user:password@host`). */
export const SINK_USERINFO_PASSWORD: readonly SinkFamily[] = ['mysql'];

function secretPaths(tree: FieldTree, prefix: string): string[] {
  return Object.entries(tree).flatMap(([name, node]) => {
    const spec = (typeof node === 'object' && !Array.isArray(node) && '$' in node ? node : { $: node }) as FieldSpec;
    const path = prefix ? `${prefix}.${name}` : name;
    if (spec.secret) return [path];
    if (typeof spec.$ === 'string') return [];
    return Array.isArray(spec.$) ? secretPaths(spec.$[0], `${path}[]`) : secretPaths(spec.$ as FieldTree, path);
  });
}

/**
 * Per family, the replica config fields (dotted paths, `[]` for each item of a list) that carry secrets:
 * the controller fills them from the Secret; a document never holds them.
 */
export const SINK_CREDENTIAL_FIELDS: Readonly<Record<SinkFamily, readonly string[]>> = (() => {
  const all = secretPaths(REPLICA_CONFIG_FIELDS, '');
  return {
    mysql: [],
    kafka: all.filter((p) => p.startsWith('sink.kafka_config.')),
    pulsar: all.filter((p) => p.startsWith('sink.pulsar_config.')),
    s3: [],
    gcs: [],
    azure: [],
    file: [],
    blackhole: [],
  };
})();

/** The schemes a redo log storage (`consistent.storage`) takes; any scheme starting `blackhole` too. */
export const REDO_STORAGE_SCHEMES: readonly string[] = ['local', 'nfs', 's3', 'gcs', 'gs', 'azblob', 'azure', 'file', 'noop'];

/** A sink scheme's family, or undefined for a scheme TiCDC does not take. */
export function sinkFamily(scheme: string): SinkFamily | undefined {
  return Object.hasOwn(SINK_SCHEMES, scheme.toLowerCase()) ? SINK_SCHEMES[scheme.toLowerCase()].family : undefined;
}

/** A URI cut as Go's `url.Parse` cuts it: user info up to the authority's last `@`. */
export interface UriParts {
  readonly scheme: string;
  /** @default none */
  readonly userinfo?: string;
  readonly host: string;
  readonly path: string;
  readonly query: string;
}

const URI = /^([A-Za-z][A-Za-z0-9+.-]*):(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#.*)?$/s;

export function splitUri(uri: string): UriParts | undefined {
  const m = URI.exec(uri);
  if (!m) return undefined;
  const authority = m[2] ?? '';
  const at = authority.lastIndexOf('@');
  return {
    scheme: m[1].toLowerCase(),
    ...(at >= 0 && { userinfo: authority.slice(0, at) }),
    host: authority.slice(at + 1),
    path: m[3],
    query: m[4] ?? '',
  };
}

const decode = (s: string) => {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
};

/** A parameter name as BR reads it: lower case, `_` as `-`. */
const normal = (name: string) => name.toLowerCase().replace(/_/g, '-');

const ALL_PARAMS = [...new Set(Object.values(SINK_CREDENTIAL_PARAMS).flat())];

/** The credential parameters in a query string, by name as written (each once). */
export function credentialParamsIn(query: string): string[] {
  const names = query
    .split('&')
    .filter((kv) => kv !== '')
    .map((kv) => decode(kv.split('=')[0]));
  return [...new Set(names.filter((n) => ALL_PARAMS.includes(normal(n))))];
}

const SINK_CREDENTIAL_HOME =
  'name the Secret that holds it in `spec.sinkCredentials`; the controller adds it when it creates the changefeed';

/** How {@link sinkUriIssues} reads the URI. */
export interface SinkUriOptions {
  /** Where the URI stands in the document. @default 'spec.sinkURI' */
  path?: string;
  /** The cluster's TiCDC version (an image tag), for the schemes it takes. @default the newest release */
  version?: string;
}

/**
 * What is wrong with a Changefeed's sink URI: not a URI, a scheme TiCDC (or this release) does not take,
 * or a credential written into it. No message repeats the URI, which may hold a secret.
 */
export function sinkUriIssues(uri: unknown, options: SinkUriOptions = {}): SpecIssue[] {
  const path = options.path ?? 'spec.sinkURI';
  if (typeof uri !== 'string' || uri.trim() === '') {
    const got =
      typeof uri === 'string' ? 'an empty string' : uri === undefined ? 'nothing' : `a ${Array.isArray(uri) ? 'list' : typeof uri}`;
    return [{ path, message: `expected a sink URI such as kafka://broker:9092/topic or mysql://user@tidb:4000/, got ${got}` }];
  }
  const parts = splitUri(uri.trim());
  if (!parts)
    return [{ path, message: 'not a URI: expected scheme://host/..., such as kafka://broker:9092/topic or mysql://user@tidb:4000/' }];
  const issues: SpecIssue[] = [];
  const scheme = SINK_SCHEMES[parts.scheme];
  if (!Object.hasOwn(SINK_SCHEMES, parts.scheme)) {
    const hint = suggest(parts.scheme, Object.keys(SINK_SCHEMES));
    issues.push({
      path,
      message: `unknown sink scheme ${quoted(parts.scheme)}${hint ? `; did you mean ${quoted(hint)}?` : `; TiCDC takes ${Object.keys(SINK_SCHEMES).join(', ')}`}`,
    });
  } else if (options.version !== undefined && scheme.since && tagVersionAtLeast(options.version, `${scheme.since}.0`) === false) {
    issues.push({
      path,
      message: `${quoted(parts.scheme)} sinks are read from TiCDC v${scheme.since}; this cluster's TiCDC is ${options.version}`,
    });
  }
  const colon = parts.userinfo?.indexOf(':') ?? -1;
  if (parts.userinfo !== undefined && colon >= 0 && parts.userinfo.slice(colon + 1) !== '') {
    issues.push({
      path,
      message: `the URI carries a password: write it without one (scheme://user@host/) and ${SINK_CREDENTIAL_HOME}`,
    });
  }
  for (const name of credentialParamsIn(parts.query)) {
    issues.push({
      path,
      message: `\`${name}\` is a credential: keep it out of the URI (the document is kept in Git) and ${SINK_CREDENTIAL_HOME}`,
    });
  }
  return issues;
}

/**
 * What is wrong with an external storage URI in the replica config (`consistent.storage`, a claim-check
 * storage): a scheme it does not take, or a credential written into it.
 */
export function storageUriIssues(uri: string, path: string, schemes?: readonly string[]): SpecIssue[] {
  const parts = splitUri(uri);
  if (!parts) {
    return schemes ? [{ path, message: `expected a storage URI such as s3://bucket/prefix or nfs:///mnt/redo` }] : [];
  }
  const issues: SpecIssue[] = [];
  if (schemes && !schemes.includes(parts.scheme) && !parts.scheme.startsWith('blackhole')) {
    const hint = suggest(parts.scheme, schemes);
    issues.push({
      path,
      message: `${quoted(parts.scheme)} is no redo log storage: one of ${[...schemes, 'blackhole'].join(', ')}${hint ? `; did you mean ${quoted(hint)}?` : ''}`,
    });
  }
  if (parts.userinfo?.includes(':')) {
    issues.push({ path, message: 'the URI carries a password: keep it out of the document, which is kept in Git' });
  }
  for (const name of credentialParamsIn(parts.query)) {
    issues.push({
      path,
      message: `\`${name}\` is a credential: keep it out of the document (it is kept in Git); TiCDC reads the storage's credentials from its pods' environment or cloud identity too`,
    });
  }
  return issues;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** A name with `-` and `_` either way. */
const loose = (name: string) => escape(name).replace(/[-_]/g, '[-_]');

const PARAM_SECRET = new RegExp(`(^|[?&\\s"'\`;,(])(${ALL_PARAMS.map(loose).join('|')})=[^&\\s"]*`, 'gi');
const FIELD_NAMES = [...new Set(secretPaths(REPLICA_CONFIG_FIELDS, '').map((p) => p.slice(p.lastIndexOf('.') + 1)))];
const FIELD_SECRET = new RegExp(
  `(["']?(?:${FIELD_NAMES.map(loose).join('|')})["']?\\s*[:=]\\s*)("(?:[^"\\\\]|\\\\.)*"|'[^']*'|[^\\s,}&]+)`,
  'gi',
);
const USERINFO_PASSWORD = /([A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s/?#@:]*:)[^\s/?#]*@/g;

/**
 * The text with every sink secret replaced by `REDACTED`: user info passwords of URIs, the credential
 * query parameters of every family (any case, `_` or `-`), the replica config's credential fields as
 * JSON or `name=value`, and Azure SAS signatures.
 */
export function hideSinkSecrets(text: string): string {
  return hideUrlSecrets(
    text
      .replace(USERINFO_PASSWORD, '$1REDACTED@')
      .replace(PARAM_SECRET, '$1$2=REDACTED')
      .replace(FIELD_SECRET, (_, key: string, value: string) => `${key}${value.startsWith('"') ? '"REDACTED"' : 'REDACTED'}`),
  );
}
