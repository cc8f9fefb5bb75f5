/**
 * The TidbInitializer as a document kind the input reader takes beside TidbClusters (checked against
 * its CRD, its names and values, every problem at once), and what the controller is told to do for a
 * cluster: from its TidbInitializer, or from `spec.tidb.initializer.createPassword`.
 */
import { createHash } from 'node:crypto';
import { DNS1123_LABEL, DNS1123_SUBDOMAIN } from '../base/patterns';
import { splitSql } from '../base/sql';
import { MAX_ANNOTATIONS_BYTES, MAX_OBJECT_BYTES, objectSizeProblem } from '../tidbcluster/api-rules';
import { unsafeTextIssues } from '../tidbcluster/check';
import { validateSchema, type CompactSchema } from '../tidbcluster/crd-schema';
import type { SpecIssue } from '../tidbcluster/errors';
import type { DocumentKind } from '../tidbcluster/load';
import { podFieldIssues } from '../tidbcluster/job-pod-input';
import { ANNOTATION, names, SKIP_TLS_TO_TIDB } from '../tidbcluster/names';
import type { InitializerInfo } from '../tidbcluster/contract';
import type { ResolvedCluster } from '../tidbcluster/resolve';
import schema from './generated/tidbinitializer.schema.json';
import { INITIALIZER_KIND, type ResolvedInitializer, type TidbInitializer } from './types';

/** The key of the SQL in the rendered ConfigMap and in an `initSqlConfigMap` (the operator's). */
export const INIT_SQL_KEY = 'init-sql';

/** The name `initializerInfo` gives `spec.tidb.initializer.createPassword`. */
export const CREATE_PASSWORD = 'create-password';

/** The fields that set the operator's Job Pod: accepted, for the documents operator users have, and not used. */
export const POD_FIELDS = [
  'image',
  'imagePullPolicy',
  'imagePullSecrets',
  'nodeSelector',
  'tolerations',
  'podSecurityContext',
  'resources',
  'serviceAccountName',
] as const;

/** A MySQL host pattern: a name, an address, `%` and `_` wildcards, or `address/netmask`. */
const HOST = /^[A-Za-z0-9.%_:/-]{1,255}$/;
/** `SYSTEM`, an offset, or an IANA zone name. */
const TIME_ZONE = /^(SYSTEM|[+-](0?\d|1[0-4]):[0-5]\d|[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*)$/;

/** The reader of TidbInitializer documents, for `parseDocuments`. */
export function initializerKind(options: { readonly namespace?: string } = {}): DocumentKind<ResolvedInitializer> {
  return {
    kind: INITIALIZER_KIND,
    group: 'pingcap.com',
    check(doc) {
      const unsafe = unsafeTextIssues(doc, INITIALIZER_KIND);
      if (unsafe.length > 0) return unsafe;
      const issues: SpecIssue[] = [...validateSchema(schema as CompactSchema, doc), ...metadataIssues(doc.metadata)];
      if (issues.length > 0) return issues;
      return resolveInitializer(doc as unknown as TidbInitializer, options).issues;
    },
    read(doc) {
      const { value } = resolveInitializer(doc as unknown as TidbInitializer, options);
      if (!value) throw new Error(`${INITIALIZER_KIND}: read() of a document check() refused`);
      return value;
    },
  };
}

export function resolveInitializer(
  doc: TidbInitializer,
  options: { readonly namespace?: string } = {},
): { value?: ResolvedInitializer; issues: SpecIssue[] } {
  const s = doc.spec;
  const issues: SpecIssue[] = [];
  const objectName = (path: string, v: string | undefined, what: string) => {
    if (v !== undefined && (v.length > 253 || !DNS1123_SUBDOMAIN.test(v)))
      issues.push({ path, message: `invalid ${what} name ${JSON.stringify(v)}: expected lowercase letters, digits, '-' and '.'` });
  };
  // Its ConfigMap carries its own name as a label value (at most 63), as createPassword's does (tidbcluster/check.ts).
  const configMap = names.initializer(s.cluster.name);
  if (configMap.length > 63) {
    issues.push({
      path: 'spec.cluster.name',
      message: `a cluster with an initializer has a name of at most ${63 - names.initializer('').length} characters: its ConfigMap ${configMap} carries its name as a label value (at most 63)`,
    });
  }
  objectName('spec.passwordSecret', s.passwordSecret, 'Secret');
  objectName('spec.initSqlConfigMap', s.initSqlConfigMap, 'ConfigMap');
  objectName('spec.tlsClientSecretName', s.tlsClientSecretName, 'Secret');
  if (s.initSql !== undefined && s.initSqlConfigMap !== undefined)
    issues.push({ path: 'spec.initSqlConfigMap', message: 'give the SQL once: initSql or initSqlConfigMap, not both' });
  if (s.initSql !== undefined) {
    const split = splitSql(s.initSql);
    if (split.problem !== undefined)
      issues.push({
        path: 'spec.initSql',
        message: `cannot be read as SQL statements: ${split.problem} (lines counted from the first line of the SQL)`,
      });
    else if (split.statements.length === 0)
      issues.push({ path: 'spec.initSql', message: 'no SQL statement in it: leave it out, or give the SQL to run' });
    else {
      const size = initSqlSizeProblem(s.initSql, names.initializer(s.cluster.name));
      if (size) issues.push({ path: 'spec.initSql', message: size });
    }
  }
  if (s.permitHost !== undefined && !HOST.test(s.permitHost)) {
    issues.push({
      path: 'spec.permitHost',
      message: `invalid host ${JSON.stringify(s.permitHost)}: expected a MySQL host pattern such as %, 10.0.% or app.example.com`,
    });
  }
  if (s.timezone !== undefined && !TIME_ZONE.test(s.timezone)) {
    issues.push({
      path: 'spec.timezone',
      message: `invalid time zone ${JSON.stringify(s.timezone)}: expected a name such as Asia/Shanghai, SYSTEM or an offset such as +08:00`,
    });
  }
  // The operator's Job Pod takes these: a value the API server refuses there is refused here too.
  issues.push(
    ...podFieldIssues(s as unknown as Record<string, unknown>, 'spec', {
      tolerations: 'tolerations',
      nodeSelector: 'nodeSelector',
      resources: 'resources',
      podSecurityContext: 'podSecurityContext',
      serviceAccountName: 'serviceAccountName',
    }),
  );
  if (s.passwordSecret === undefined && s.initSql === undefined && s.initSqlConfigMap === undefined) {
    issues.push({ path: 'spec', message: 'nothing to do: give passwordSecret, initSql or initSqlConfigMap' });
  }
  const existing = (doc.metadata as { annotations?: Record<string, unknown> }).annotations?.[ANNOTATION.existingCluster];
  if (existing !== undefined && existing !== 'run' && existing !== 'skip') {
    issues.push({
      path: `metadata.annotations.${ANNOTATION.existingCluster}`,
      message: `expected skip (it ran before, in tidb-operator: mark it done) or run (run it in the cluster as it is), got ${JSON.stringify(existing)}`,
    });
  }
  if (issues.length > 0) return { issues };
  const namespace = doc.metadata.namespace ?? options.namespace;
  const clusterNamespace = s.cluster.namespace || undefined;
  return {
    issues,
    value: {
      kind: INITIALIZER_KIND,
      name: doc.metadata.name,
      ...(namespace !== undefined && { namespace }),
      cluster: { name: s.cluster.name, ...(clusterNamespace !== undefined && { namespace: clusterNamespace }) },
      ...(s.passwordSecret !== undefined && { passwordSecret: s.passwordSecret }),
      ...(existing !== undefined && { existingCluster: existing as 'run' | 'skip' }),
      ...(s.initSql !== undefined && { initSql: s.initSql }),
      ...(s.initSqlConfigMap !== undefined && { initSqlConfigMap: s.initSqlConfigMap }),
      permitHost: s.permitHost ?? '%',
      ...(s.timezone !== undefined && { timezone: s.timezone }),
      ...(s.tlsClientSecretName !== undefined && { tlsClientSecretName: s.tlsClientSecretName }),
    },
  };
}

/** What the renderer puts around the SQL in its ConfigMap (namespace, labels), at most. */
const CONFIGMAP_METADATA_BYTES = 1024;

/** Why `sql` is too large to keep in the rendered ConfigMap `configMap`, or undefined (`objectSizeProblem`'s bound). */
function initSqlSizeProblem(sql: string, configMap: string): string | undefined {
  const model = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: configMap, labels: { reserve: 'x'.repeat(CONFIGMAP_METADATA_BYTES) } },
    data: { [INIT_SQL_KEY]: sql },
  };
  if (objectSizeProblem(model) === undefined) return undefined;
  return (
    `${(Buffer.byteLength(sql, 'utf8') / 1024).toFixed(1)} KiB of SQL is too large to keep in the rendered ConfigMap ${configMap}: Kubernetes stores at most ${MAX_OBJECT_BYTES / 1024 / 1024} MiB per object, and ` +
    `client-side apply (kubectl apply, Argo CD's default) keeps a copy of the object in an annotation of at most ${MAX_ANNOTATIONS_BYTES / 1024} KiB; ` +
    `put the SQL in a ConfigMap of your own (key ${INIT_SQL_KEY}, created with server-side apply or outside Git) and name it in spec.initSqlConfigMap`
  );
}

function metadataIssues(metadata: unknown): SpecIssue[] {
  if (typeof metadata !== 'object' || metadata === null)
    return [{ path: 'metadata', message: `required field is missing: a ${INITIALIZER_KIND} needs metadata.name` }];
  const { name, namespace } = metadata as Record<string, unknown>;
  const issues: SpecIssue[] = [];
  if (typeof name !== 'string') issues.push({ path: 'metadata.name', message: 'required field is missing' });
  else if (name.length > 63 || !DNS1123_LABEL.test(name))
    issues.push({
      path: 'metadata.name',
      message: `invalid name ${JSON.stringify(name)}: expected at most 63 lowercase letters, digits and '-'`,
    });
  if (namespace !== undefined && (typeof namespace !== 'string' || !DNS1123_LABEL.test(namespace) || namespace.length > 63)) {
    issues.push({
      path: 'metadata.namespace',
      message: `invalid namespace ${JSON.stringify(namespace)}: expected a DNS label (lowercase letters, digits and '-')`,
    });
  }
  return issues;
}

/**
 * What the controller sets up in the cluster's database, or undefined for nothing: the cluster's
 * TidbInitializer, else `createPassword` (root's password from `<cluster>-init`, as the operator reads
 * it). Both at once are refused by `link.ts`.
 */
export function initializerInfo(cluster: ResolvedCluster, init: ResolvedInitializer | undefined): InitializerInfo | undefined {
  if (!init && !cluster.createPassword) return undefined;
  const tls =
    cluster.sqlTls && !(SKIP_TLS_TO_TIDB in cluster.annotations)
      ? {
          secret: init?.tlsClientSecretName ?? names.tidbClientSecret(cluster.name),
          ...(cluster.sqlTls.skipInternalClientCA && { skipCA: true as const }),
        }
      : undefined;
  const sql =
    init?.initSql !== undefined
      ? { configMap: names.initializer(cluster.name), key: INIT_SQL_KEY }
      : init?.initSqlConfigMap !== undefined
        ? { configMap: init.initSqlConfigMap, key: INIT_SQL_KEY }
        : undefined;
  const info: Omit<InitializerInfo, 'digest'> = init
    ? {
        name: init.name,
        ...(init.passwordSecret !== undefined && { passwordSecret: init.passwordSecret }),
        ...(sql && { sql }),
        permitHost: init.permitHost,
        ...(init.timezone !== undefined && { timezone: init.timezone }),
        ...(tls && { tls }),
      }
    : { name: CREATE_PASSWORD, passwordSecret: names.initSecret(cluster.name), rootOnly: true, permitHost: '%', ...(tls && { tls }) };
  const digest = createHash('sha256')
    .update(JSON.stringify(info))
    .update('\0')
    .update(init?.initSql ?? '')
    .digest('hex');
  return { ...info, digest: `sha256:${digest}`, ...(init?.existingCluster !== undefined && { existingCluster: init.existingCluster }) };
}
