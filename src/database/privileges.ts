/**
 * The privileges TiDB knows, and the narrowest level each can be granted at. Static privileges and
 * their levels: pingcap/tidb `pkg/parser/mysql/privs.go` (`Priv2Str`, `AllGlobalPrivs`, `AllDBPrivs`,
 * `AllTablePrivs`); dynamic privileges, all global: `pkg/privilege/privileges/privileges.go`
 * (`dynamicPrivs`).
 */

/** Where a GRANT applies: `*.*`, `db.*`, `db.table`. */
export type GrantLevel = 'global' | 'database' | 'table';

/** `ALL PRIVILEGES` (`ALL` reads as it): every privilege of the level, alone in its grant. */
export const ALL_PRIVILEGES = 'ALL PRIVILEGES';

/** `AllTablePrivs`: valid on a table, a database and globally. */
const TABLE = [
  'SELECT',
  'INSERT',
  'UPDATE',
  'DELETE',
  'CREATE',
  'DROP',
  'INDEX',
  'REFERENCES',
  'ALTER',
  'CREATE VIEW',
  'SHOW VIEW',
  'TRIGGER',
];
/** `AllDBPrivs` beyond the table's: valid on a database and globally. */
const DATABASE = ['LOCK TABLES', 'CREATE TEMPORARY TABLES', 'EVENT', 'CREATE ROUTINE', 'ALTER ROUTINE', 'EXECUTE'];
/** `AllGlobalPrivs` beyond the database's (`StaticGlobalOnlyPrivs`, with `CREATE ROLE` and `DROP ROLE`): `*.*` only. */
const GLOBAL = [
  'PROCESS',
  'SHOW DATABASES',
  'SUPER',
  'CREATE USER',
  'CREATE TABLESPACE',
  'CREATE ROLE',
  'DROP ROLE',
  'SHUTDOWN',
  'RELOAD',
  'FILE',
  'CONFIG',
  'REPLICATION CLIENT',
  'REPLICATION SLAVE',
];
/** `dynamicPrivs`: global only. */
export const DYNAMIC_PRIVILEGES = [
  'BACKUP_ADMIN',
  'RESTORE_ADMIN',
  'SYSTEM_USER',
  'SYSTEM_VARIABLES_ADMIN',
  'ROLE_ADMIN',
  'CONNECTION_ADMIN',
  'PLACEMENT_ADMIN',
  'DASHBOARD_CLIENT',
  'RESTRICTED_TABLES_ADMIN',
  'RESTRICTED_STATUS_ADMIN',
  'RESTRICTED_VARIABLES_ADMIN',
  'RESTRICTED_USER_ADMIN',
  'RESTRICTED_CONNECTION_ADMIN',
  'RESTRICTED_REPLICA_WRITER_ADMIN',
  'RESOURCE_GROUP_ADMIN',
  'RESOURCE_GROUP_USER',
];

/** Each privilege's narrowest level; `USAGE` and `ALL PRIVILEGES` go anywhere. */
const NARROWEST: ReadonlyMap<string, GrantLevel> = new Map<string, GrantLevel>([
  ...TABLE.map((p) => [p, 'table'] as const),
  ['USAGE', 'table'],
  [ALL_PRIVILEGES, 'table'],
  ...DATABASE.map((p) => [p, 'database'] as const),
  ...[...GLOBAL, ...DYNAMIC_PRIVILEGES].map((p) => [p, 'global'] as const),
]);

/** Every privilege name a grant may hold. */
export const PRIVILEGES: readonly string[] = [...NARROWEST.keys()];

/** A privilege as written (any case, runs of spaces, `ALL`), in TiDB's spelling. */
export function normalPrivilege(written: string): string {
  const p = written.trim().replace(/\s+/g, ' ').toUpperCase();
  return p === 'ALL' ? ALL_PRIVILEGES : p;
}

/** Whether TiDB knows the privilege (normalized). */
export const isPrivilege = (p: string): boolean => NARROWEST.has(p);

/** Whether the privilege can be granted at the level. */
export function grantableAt(p: string, level: GrantLevel): boolean {
  const narrowest = NARROWEST.get(p);
  if (narrowest === undefined) return false;
  const order: GrantLevel[] = ['table', 'database', 'global'];
  return order.indexOf(level) >= order.indexOf(narrowest);
}

/** Whether it is a dynamic privilege (global only, named `X_ADMIN`). */
export const isDynamic = (p: string): boolean => DYNAMIC_PRIVILEGES.includes(p);
