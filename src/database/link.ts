/**
 * Ties each SqlUser, SqlRole and ResourceGroup to the TidbCluster its `spec.cluster` names, among the
 * clusters of the same input, and gathers each cluster's into what the controller is told
 * (`ControllerClusterInfo.sql`): with the Secret it logs in as root with (the cluster's initializer's)
 * and the TLS it reaches TiDB with. A reference to no cluster, a document in another namespace, an
 * account or group declared twice, a role granted that no SqlRole declares, a resource group (or a
 * rule of one) before the TiDB release that has it, and a cluster with no root password to log in with
 * are errors naming the file, document, path and line.
 */
import { compareCodeUnits } from '../base/order';
import { imageVersionAtLeast } from '../base/version';
import type { ClusterOperations } from '../backup/link';
import { initializerInfo } from '../initializer/read';
import { accountName, type ResourceGroupInfo, type SqlAccountInfo, type SqlAccountsInfo } from '../tidbcluster/contract';
import { formatIssue } from '../tidbcluster/errors';
import type { LoadedCluster, LoadedDocument } from '../tidbcluster/load';
import type { ResolvedCluster } from '../tidbcluster/resolve';
import type { DatabaseDocument } from './read';
import { RESOURCE_GROUP_KIND, SQL_ROLE_KIND, type ResolvedResourceGroup, type ResolvedSqlAccount } from './types';

/** The first TiDB release with resource groups (`CREATE RESOURCE GROUP`, `ALTER USER ... RESOURCE GROUP`). */
export const RESOURCE_GROUP_SINCE = '7.1.0';
/** The first with a group's runaway-query rule (`QUERY_LIMIT`: `EXEC_ELAPSED`, `ACTION`). */
export const QUERY_LIMIT_SINCE = '7.2.0';
/** The first with a rule's `WATCH` of type PLAN, or without a `DURATION` (v7.2 has EXACT and SIMILAR, for a duration). */
export const QUERY_WATCH_SINCE = '7.3.0';

/** A document kept over SQL: an account or a resource group. */
export type SqlDocument = ResolvedSqlAccount | ResolvedResourceGroup;

export interface LinkedAccounts {
  /** Per cluster of the input, in the same order: its accounts, or none. */
  readonly sql: readonly (SqlAccountsInfo | undefined)[];
  /** `file: document N: path (line L): message`, one per problem. */
  readonly errors: string[];
}

/**
 * Ties the accounts and resource groups to their clusters. `operations[i]` are cluster i's other
 * documents (its TidbInitializer gives the Secret the controller logs in with).
 */
export function linkSqlAccounts(
  clusters: readonly LoadedCluster[],
  documents: readonly LoadedDocument<SqlDocument>[],
  operations: readonly ClusterOperations[],
): LinkedAccounts {
  const errors: string[] = [];
  const perCluster = clusters.map(() => [] as LoadedDocument<SqlDocument>[]);
  for (const doc of documents) {
    const a = doc.value;
    const fail = (path: string, message: string) => errors.push(formatIssue({ path, line: lineOf(doc, path), message }, doc.source));
    const index = placeDocument(clusters, doc, errors);
    if (index < 0) continue;
    const cluster = clusters[index].resolved;
    if (!cluster.tidb) {
      fail('spec.cluster.name', `TidbCluster ${clusterName(cluster)} has no TiDB (spec.tidb) for the controller to log in to`);
      continue;
    }
    const tooOld = releaseIssue(a, cluster.tidb.image);
    if (tooOld) {
      fail(
        tooOld.path,
        `${tooOld.what}, and TidbCluster ${clusterName(cluster)} runs ${cluster.tidb.image}: ${tooOld.fix}, or upgrade the cluster first`,
      );
      continue;
    }
    perCluster[index].push(doc);
  }
  const sql = perCluster.map((docs, i) => {
    if (docs.length === 0) return undefined;
    const found = clusterAccounts(clusters[i].resolved, docs, operations[i]);
    errors.push(...found.errors);
    return found.info;
  });
  return { sql, errors };
}

/**
 * The index of the cluster a document names, in its namespace; or -1, with the problem added to
 * `errors`: no such cluster in the input, or the document in another namespace than its cluster.
 */
export function placeDocument(clusters: readonly LoadedCluster[], doc: LoadedDocument<DatabaseDocument>, errors: string[]): number {
  const a = doc.value;
  const fail = (path: string, message: string) => errors.push(formatIssue({ path, line: lineOf(doc, path), message }, doc.source));
  const index = findCluster(clusters, a);
  if (index < 0) {
    const known = clusters.map((c) => clusterName(c.resolved));
    fail(
      'spec.cluster.name',
      `no TidbCluster ${JSON.stringify(a.cluster.name)}${a.cluster.namespace ? ` in namespace ${a.cluster.namespace}` : ''} in the input${known.length ? ` (have: ${known.join(', ')})` : ''}; ${article(a.kind)} ${a.kind} is kept by its cluster's controller`,
    );
    return -1;
  }
  const cluster = clusters[index].resolved;
  if ((a.namespace ?? cluster.namespace ?? '') !== (cluster.namespace ?? '')) {
    fail(
      'metadata.namespace',
      `${article(a.kind)} ${a.kind} must be in its cluster's namespace ${JSON.stringify(cluster.namespace ?? '')}: the cluster's controller reads its Secrets with rights in that namespace only`,
    );
    return -1;
  }
  return index;
}

/** What of a document the cluster's TiDB release does not have yet, if anything. */
function releaseIssue(a: SqlDocument, image: string): { path: string; what: string; fix: string } | undefined {
  const below = (version: string) => imageVersionAtLeast(image, version) === false;
  if (a.kind !== RESOURCE_GROUP_KIND) {
    if (a.account.resourceGroup !== undefined && below(RESOURCE_GROUP_SINCE))
      return { path: 'spec.resourceGroup', what: 'resource groups come with TiDB v7.1', fix: 'leave resourceGroup out' };
    return undefined;
  }
  if (below(RESOURCE_GROUP_SINCE)) return { path: 'kind', what: 'resource groups come with TiDB v7.1', fix: 'leave the ResourceGroup out' };
  const limit = a.group.queryLimit;
  if (limit && below(QUERY_LIMIT_SINCE))
    return { path: 'spec.queryLimit', what: 'runaway-query rules (QUERY_LIMIT) come with TiDB v7.2', fix: 'leave queryLimit out' };
  const watch = limit?.watch;
  if (watch && (watch.type === 'PLAN' || watch.durationMs === undefined) && below(QUERY_WATCH_SINCE))
    return {
      path: 'spec.queryLimit.watch',
      what: `a watch ${watch.type === 'PLAN' ? 'of type PLAN' : 'without a duration'} comes with TiDB v7.3 (v7.2 watches EXACT or SIMILAR for a duration)`,
      fix: watch.type === 'PLAN' ? 'watch EXACT or SIMILAR' : 'give watch.duration',
    };
  return undefined;
}

/**
 * One cluster's accounts and resource groups: each once, every role granted declared, and root's
 * password to log in with.
 */
function clusterAccounts(
  cluster: ResolvedCluster,
  all: readonly LoadedDocument<SqlDocument>[],
  ops: ClusterOperations | undefined,
): { info?: SqlAccountsInfo; errors: string[] } {
  const errors: string[] = [];
  const fail = (doc: LoadedDocument<SqlDocument>, path: string, message: string) =>
    errors.push(formatIssue({ path, line: lineOf(doc, path), message }, doc.source));
  const docs = all.filter((d): d is LoadedDocument<ResolvedSqlAccount> => d.value.kind !== RESOURCE_GROUP_KIND);
  const groups = all.filter((d): d is LoadedDocument<ResolvedResourceGroup> => d.value.kind === RESOURCE_GROUP_KIND);
  const named = new Map<string, LoadedDocument<ResolvedResourceGroup>>();
  for (const doc of groups) {
    const first = named.get(doc.value.group.name);
    if (first)
      fail(
        doc,
        doc.value.nameGiven ? 'spec.name' : 'metadata.name',
        `the resource group ${doc.value.group.name} is already declared by the ResourceGroup ${JSON.stringify(first.value.name)} at ${first.source.file}: document ${first.source.document}; declare each group once (names are compared without regard to case)`,
      );
    else named.set(doc.value.group.name, doc);
  }
  const seen = new Map<string, LoadedDocument<ResolvedSqlAccount>>();
  // A host matches without regard to case; a user name is compared as written.
  const key = (a: { user: string; host: string }) => `${a.user}@${a.host.toLowerCase()}`;
  for (const doc of docs) {
    const first = seen.get(key(doc.value.account));
    if (first)
      fail(
        doc,
        doc.value.userGiven ? 'spec.user' : 'metadata.name',
        `the account ${accountName(doc.value.account)} is already declared by the ${first.value.kind} ${JSON.stringify(first.value.name)} at ${first.source.file}: document ${first.source.document}; declare each account once`,
      );
    else seen.set(key(doc.value.account), doc);
  }
  for (const doc of docs)
    doc.value.writtenRoles.forEach((r, i) => {
      const declared = seen.get(key(r));
      if (declared?.value.kind === SQL_ROLE_KIND) return;
      fail(
        doc,
        `spec.roles[${i}].name`,
        declared
          ? `${accountName(r)} is the SqlUser ${JSON.stringify(declared.value.name)}, not a role: only an SqlRole can be granted`
          : `no SqlRole declares ${accountName(r)} for TidbCluster ${clusterName(cluster)}: the roles the controller grants must be declared in the input`,
      );
    });
  const init = initializerInfo(cluster, ops?.initializer);
  if (!init?.passwordSecret) {
    fail(
      all[0],
      'spec.cluster.name',
      `TidbCluster ${clusterName(cluster)} gives the controller no root password to log in with, and it keeps SQL accounts and resource groups as root: ` +
        `add a TidbInitializer for it with passwordSecret (a Secret whose key root holds root's password), or set spec.tidb.initializer.createPassword: true on the cluster (the Secret ${cluster.name}-init, key root)`,
    );
  }
  if (errors.length > 0 || !init?.passwordSecret) return { errors };
  const order = (a: SqlAccountInfo, b: SqlAccountInfo) =>
    (a.kind === b.kind ? 0 : a.kind === SQL_ROLE_KIND ? -1 : 1) || compareCodeUnits(a.user, b.user) || compareCodeUnits(a.host, b.host);
  return {
    errors,
    info: {
      loginSecret: init.passwordSecret,
      ...(init.tls && { tls: init.tls }),
      accounts: docs.map((d) => d.value.account).sort(order),
      ...(groups.length > 0 && {
        resourceGroups: groups.map((d): ResourceGroupInfo => d.value.group).sort((a, b) => compareCodeUnits(a.name, b.name)),
      }),
    },
  };
}

/** A path's line, else its parent's (a namespace left out is written nowhere). */
export function lineOf(doc: LoadedDocument<unknown>, path: string): number | undefined {
  return doc.line(path) ?? doc.line(path.slice(0, Math.max(0, path.lastIndexOf('.'))));
}

/** The cluster a document names: same name, and same namespace when it has one. */
function findCluster(clusters: readonly LoadedCluster[], a: DatabaseDocument): number {
  const named = clusters.map((c, i) => [c.resolved, i] as const).filter(([c]) => c.name === a.cluster.name);
  if (a.cluster.namespace !== undefined) return named.find(([c]) => (c.namespace ?? '') === a.cluster.namespace)?.[1] ?? -1;
  return named.length === 1 ? named[0][1] : -1;
}

/** `an SqlUser`, `an SqlRole`, `a ResourceGroup`. */
const article = (kind: string) => (/^[AEIOSU]/.test(kind) ? 'an' : 'a');

export function clusterName(c: ResolvedCluster): string {
  return c.namespace ? `${c.namespace}/${c.name}` : c.name;
}
