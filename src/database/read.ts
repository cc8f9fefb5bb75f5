/**
 * SqlUser, SqlRole, ResourceGroup and Changefeed as document kinds the input reader takes beside
 * TidbClusters: each checked against its schema (unknown fields with a did-you-mean), then an
 * account's grants (privileges TiDB knows, at levels they can be granted at), roles and names, every
 * problem at once (a ResourceGroup by `resource-groups.ts`, a Changefeed by `changefeeds.ts`). A kind
 * of the project's group that none of them reads is refused.
 */
import { compareCodeUnits } from '../base/order';
import { SpecError, type SpecIssue } from '../tidbcluster/errors';
import type { DocumentKind, LoadedDocument } from '../tidbcluster/load';
import type { SqlAccountInfo, SqlAccountRef, SqlGrantInfo } from '../tidbcluster/contract';
import { suggest } from '../base/suggest';
import { ALL_PRIVILEGES, grantableAt, isDynamic, isPrivilege, normalPrivilege, PRIVILEGES, type GrantLevel } from './privileges';
import { changefeedKind } from './changefeeds';
import { ownKind, placement } from './kind';
import { resourceGroupKind } from './resource-groups';
import { HOST_PATTERN, SQL_SCHEMAS, USER_ONLY_FIELDS, USER_PATTERN } from './schema';
import {
  CHANGEFEED_KIND,
  type ResolvedChangefeed,
  RESOURCE_GROUP_KIND,
  type ResolvedResourceGroup,
  SQL_ROLE_KIND,
  SQL_USER_KIND,
  type ResolvedSqlAccount,
  type SqlAccountDocument,
  type SqlGrant,
  type SqlUserSpec,
} from './types';

/** A document read beside the clusters by this layer. */
export type DatabaseDocument = ResolvedSqlAccount | ResolvedResourceGroup | ResolvedChangefeed;

/** The kinds of the project's own API group. */
export const DATABASE_KINDS: readonly string[] = [SQL_USER_KIND, SQL_ROLE_KIND, RESOURCE_GROUP_KIND, CHANGEFEED_KIND];

/** The readers of SqlUser, SqlRole, ResourceGroup and Changefeed, for `parseDocuments`. */
export function databaseKinds(options: { readonly namespace?: string } = {}): DocumentKind<DatabaseDocument>[] {
  return [accountKind(SQL_USER_KIND, options), accountKind(SQL_ROLE_KIND, options), resourceGroupKind(options), changefeedKind(options)];
}

function accountKind(
  kind: typeof SQL_USER_KIND | typeof SQL_ROLE_KIND,
  options: { readonly namespace?: string },
): DocumentKind<DatabaseDocument> {
  return ownKind({
    kind,
    schema: SQL_SCHEMAS[kind],
    refused: (doc) => refusedFields(doc, kind),
    resolve: (doc: SqlAccountDocument) => resolveSqlAccount(doc, options),
  });
}

/**
 * The documents of the project's group whose kind no reader took (a misspelt kind), among the other objects of the input: each refused with a did-you-mean, never passed through and
 * applied, so that nobody thinks it runs. The same kinds of other groups pass through.
 */
export function unknownKindErrors(others: readonly LoadedDocument<Record<string, unknown>>[]): SpecError[] {
  return others
    .filter((o) => isOwnGroup(o.value))
    .map((o) => {
      const { apiVersion, kind } = o.value;
      const meant = suggest(String(kind), DATABASE_KINDS);
      const message = `${JSON.stringify(kind)} is no kind of ${String(apiVersion)}${meant ? `; did you mean ${meant}?` : ''} (its kinds: ${DATABASE_KINDS.join(', ')}); refused rather than applied and ignored`;
      return new SpecError([{ path: 'kind', line: o.line('kind'), message }], o.source);
    });
}

/** Whether an object is of the project's own API group (`tidb-gitops.io`). */
export function isOwnGroup(obj: Record<string, unknown>): boolean {
  return typeof obj.apiVersion === 'string' && obj.apiVersion.startsWith('tidb-gitops.io/');
}

/** Fields refused with words of their own: an inline password, and a role's login settings. */
function refusedFields(doc: Record<string, unknown>, kind: string): SpecIssue[] {
  const spec = doc.spec;
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) return [];
  const issues: SpecIssue[] = [];
  const grants = (spec as Record<string, unknown>).grants;
  if (Array.isArray(grants))
    grants.forEach((g, i) => {
      if (typeof g === 'object' && g !== null && 'on' in g)
        issues.push({
          path: `spec.grants[${i}].on`,
          message: "write what the grant is on as level: 'db.*' (a key on is read as true by YAML 1.1 readers, kubectl's among them)",
        });
    });
  if ('password' in spec)
    issues.push({
      path: 'spec.password',
      message: `passwords are never written in Git: they come from a Secret, named in spec.passwordSecret {name, key}${kind === SQL_ROLE_KIND ? ' of an SqlUser (a role has none)' : ''}`,
    });
  if (kind === SQL_ROLE_KIND)
    for (const field of USER_ONLY_FIELDS.filter((f) => f in spec))
      issues.push({
        path: `spec.${field}`,
        message: `an SqlRole cannot log in, so it has no ${field}: ${USER_ONLY_FIELDS.join(', ')} belong to an SqlUser`,
      });
  return issues;
}

/** The document as the controller keeps it (defaults omitted, lists sorted), or its problems. */
export function resolveSqlAccount(
  doc: SqlAccountDocument,
  options: { readonly namespace?: string } = {},
): { value?: ResolvedSqlAccount; issues: SpecIssue[] } {
  const s = doc.spec as SqlUserSpec;
  const issues: SpecIssue[] = [];
  const user = s.user ?? doc.metadata.name;
  const name = (path: string, v: string | undefined) => {
    if (v !== undefined && !USER_PATTERN.test(v))
      issues.push({
        path,
        message: `invalid account name ${JSON.stringify(v)}: expected at most 32 characters, none of them a quote, backquote, backslash or white space`,
      });
  };
  const host = (path: string, v: string | undefined) => {
    if (v !== undefined && !HOST_PATTERN.test(v))
      issues.push({
        path,
        message: `invalid host ${JSON.stringify(v)}: expected a MySQL host pattern such as %, 10.0.% or app.example.com`,
      });
  };
  name(s.user === undefined ? 'metadata.name' : 'spec.user', user);
  host('spec.host', s.host);
  (s.roles ?? []).forEach((r, i) => {
    name(`spec.roles[${i}].name`, r.name);
    host(`spec.roles[${i}].host`, r.host);
  });
  if (user === 'root' && s.user === undefined)
    issues.push({
      path: 'metadata.name',
      message:
        'this document would manage root (its name is the user when spec.user is left out): root is managed only when spec.user: root is written',
    });
  if (user === 'root' && s.deletionPolicy === 'Delete')
    issues.push({ path: 'spec.deletionPolicy', message: 'root is never dropped: leave deletionPolicy out (Retain) for root' });
  const grants: SqlGrantInfo[] = [];
  const levels = new Map<string, number>();
  (s.grants ?? []).forEach((g, i) => {
    const grant = readGrant(g, `spec.grants[${i}]`, issues);
    if (!grant) return;
    const key = `${grant.database ?? '*'}.${grant.table ?? '*'}`;
    const first = levels.get(key);
    if (first !== undefined)
      issues.push({
        path: `spec.grants[${i}].level`,
        message: `${g.level} is already granted by spec.grants[${first}]: give the privileges of one level in one grant`,
      });
    else levels.set(key, i);
    grants.push(grant);
  });
  const roles: SqlAccountRef[] = [];
  (s.roles ?? []).forEach((r, i) => {
    const ref = { user: r.name, host: r.host ?? '%' };
    if (roles.some((o) => o.user === ref.user && o.host === ref.host))
      issues.push({ path: `spec.roles[${i}]`, message: `the role '${ref.user}'@'${ref.host}' is listed twice` });
    else if (ref.user === user && ref.host === (s.host ?? '%'))
      issues.push({ path: `spec.roles[${i}]`, message: 'an account cannot be granted to itself' });
    else roles.push(ref);
  });
  if (issues.length > 0) return { issues };
  const byRef = (a: SqlAccountRef, b: SqlAccountRef) => compareCodeUnits(a.user, b.user) || compareCodeUnits(a.host, b.host);
  const level = (g: SqlGrantInfo) => `${g.database === undefined ? '' : `\u0001${g.database}`}\u0000${g.table ?? ''}`;
  const account: SqlAccountInfo = {
    kind: doc.kind,
    document: doc.metadata.name,
    user,
    host: s.host ?? '%',
    ...(doc.kind === SQL_USER_KIND && { password: { secret: s.passwordSecret.name, key: s.passwordSecret.key } }),
    ...(s.require !== undefined && s.require !== 'NONE' && { require: s.require }),
    ...(s.resourceGroup !== undefined && { resourceGroup: s.resourceGroup }),
    ...(s.locked === true && { locked: true }),
    ...(roles.length > 0 && { roles: [...roles].sort(byRef) }),
    ...(grants.length > 0 && { grants: grants.sort((a, b) => compareCodeUnits(level(a), level(b))) }),
    ...(s.deletionPolicy === 'Delete' && { deletionPolicy: 'Delete' as const }),
    ...(s.drift === 'correct' && { drift: 'correct' as const }),
  };
  return {
    issues,
    value: {
      kind: doc.kind,
      name: doc.metadata.name,
      ...placement(doc.metadata, s.cluster, options),
      userGiven: s.user !== undefined,
      writtenRoles: roles,
      account,
    },
  };
}

/** One grant: its level and privileges, checked against what TiDB grants where. */
function readGrant(g: SqlGrant, path: string, issues: SpecIssue[]): SqlGrantInfo | undefined {
  const on = parseLevel(g.level);
  if (typeof on === 'string') {
    issues.push({ path: `${path}.level`, message: `${on}, got ${JSON.stringify(g.level)}` });
    return undefined;
  }
  const level: GrantLevel = on.database === undefined ? 'global' : on.table === undefined ? 'database' : 'table';
  const privileges = [...new Set(g.privileges.map(normalPrivilege))].sort(compareCodeUnits);
  const before = issues.length;
  if (privileges.length === 0) issues.push({ path: `${path}.privileges`, message: 'expected at least one privilege' });
  g.privileges.forEach((written, i) => {
    const p = normalPrivilege(written);
    const at = `${path}.privileges[${i}]`;
    if (p === 'GRANT OPTION') issues.push({ path: at, message: 'GRANT OPTION is given with withGrantOption: true, not as a privilege' });
    else if (!isPrivilege(p)) {
      const meant = suggest(p, PRIVILEGES);
      issues.push({
        path: at,
        message: `${JSON.stringify(written)} is no privilege TiDB knows${meant ? `; did you mean ${meant}?` : ''} (expected one of its static privileges, SELECT, INSERT, CREATE USER..., or a dynamic one, BACKUP_ADMIN...: see the reference)`,
      });
    } else if (!grantableAt(p, level))
      issues.push({
        path: at,
        message: `${p} can only be granted ${isDynamic(p) || !grantableAt(p, 'database') ? "globally, on '*.*'" : "on a database ('db.*') or globally"}${isDynamic(p) ? ' (a dynamic privilege)' : ''}, not on ${JSON.stringify(g.level)}`,
      });
  });
  if (privileges.includes(ALL_PRIVILEGES) && privileges.length > 1)
    issues.push({
      path: `${path}.privileges`,
      message: `ALL PRIVILEGES stands alone in its grant: it already holds ${privileges.filter((p) => p !== ALL_PRIVILEGES).join(', ')}`,
    });
  if (issues.length > before) return undefined;
  return { privileges, ...on, ...(g.withGrantOption === true && { withGrantOption: true }) };
}

/** `*.*`, `db.*` or `db.table` (names may be backquoted, a backquote doubled inside), or why not. */
export function parseLevel(on: string): { database?: string; table?: string } | string {
  const parts: { name: string; star: boolean }[] = [];
  let rest = on.trim();
  while (true) {
    const part = /^(\*|`((?:[^`]|``)+)`|([A-Za-z0-9_$]+))/.exec(rest);
    if (!part) break;
    parts.push({ name: part[2] !== undefined ? part[2].replace(/``/g, '`') : (part[3] ?? '*'), star: part[1] === '*' });
    rest = rest.slice(part[0].length);
    if (!rest.startsWith('.')) break;
    rest = rest.slice(1);
  }
  const expected = "expected '*.*', 'db.*' or 'db.table' (backquote a name with other characters: `my-db`.*)";
  if (rest !== '' || parts.length !== 2) return expected;
  const [db, table] = parts;
  if (db.star) return table.star ? {} : expected;
  return table.star ? { database: db.name } : { database: db.name, table: table.name };
}
