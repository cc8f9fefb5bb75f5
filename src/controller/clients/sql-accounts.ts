/**
 * The SQL accounts of a MySQL-protocol server as the controller reads them, over a connection logged
 * in as root: the accounts (`SELECT User, Host FROM mysql.user`), and for each one asked about its
 * `SHOW CREATE USER` (REQUIRE, ACCOUNT LOCK), its resource group (TiDB) and `SHOW GRANTS FOR` read
 * into privileges per level and the roles granted. Nothing read here keeps a password or its hash.
 *
 * The formats, per server:
 * - TiDB: `SHOW GRANTS` lines as pingcap/tidb `pkg/privilege/privileges/cache.go` (`showGrants`) writes
 *   them: `GRANT SELECT,INSERT ON *.* TO 'u'@'h'` (names joined by `,`, `ALL PRIVILEGES` for every one,
 *   `USAGE` for none), databases and tables in backquotes (`stringutil.Escape`), `WITH GRANT OPTION`
 *   per level, dynamic privileges on lines of their own, the roles on one line
 *   `GRANT 'r1'@'%', 'r2'@'%' TO 'u'@'h'`; asked for another account than the session's (no `USING`), the
 *   privileges of its roles are not merged in (`FindAllUserEffectiveRoles` of no active role). `SHOW CREATE USER` as `pkg/executor/show.go`
 *   (`fetchShowCreateUser`) writes it: `CREATE USER 'u'@'h' IDENTIFIED WITH 'plugin' AS '<hash>'
 *   REQUIRE NONE PASSWORD EXPIRE DEFAULT ACCOUNT UNLOCK ...`, always with `REQUIRE` and `ACCOUNT`. The
 *   resource group is not in it: TiDB keeps it in `mysql.user.User_attributes` (`$.resource_group`).
 * - MariaDB: names in backquotes (`` `u`@`h` ``), privileges joined by `, `, the password's hash in the
 *   grant of `USAGE` (`IDENTIFIED BY PASSWORD '*…'`), `REQUIRE` and `ACCOUNT LOCK` in `SHOW CREATE
 *   USER` only when set; its roles have no host (`GRANT `r` TO `u`@`%``, `mysql.user` lists them with
 *   the host ''): read here as host `%`, TiDB's host for a role.
 */
import type { SqlAccountRef, SqlGrantInfo } from '../../tidbcluster/contract/sql-accounts';
import { MysqlError, sqlString, type MysqlConnection, type QueryResult } from './mysql';

/** The server's grammar the statements follow. */
export type SqlDialect = 'tidb' | 'mariadb';

/** The dialect of a server, by its version (`8.0.11-TiDB-v8.5.0`, `10.11.6-MariaDB-0+deb12u1`). */
export const dialectOf = (serverVersion: string): SqlDialect => (/mariadb/i.test(serverVersion) ? 'mariadb' : 'tidb');

/** The host TiDB gives a role named without one. */
export const ROLE_HOST = '%';

/** One account as the server has it. */
export interface ObservedAccount extends SqlAccountRef {
  /** `REQUIRE`: `NONE`, `SSL`, `X509`, or `SPECIFIED` (a subject, issuer or cipher). @default 'NONE' (a role) */
  readonly require: string;
  /** `ACCOUNT LOCK`. */
  readonly locked: boolean;
  /** TiDB's resource group of the account. @default none (the default group, or not TiDB) */
  readonly resourceGroup?: string;
  /** Privileges per level, merged as one GRANT per level would give them; `USAGE` left out. */
  readonly grants: readonly SqlGrantInfo[];
  /** The roles granted, sorted. */
  readonly roles: readonly SqlAccountRef[];
  /** Lines of `SHOW GRANTS` not read (column privileges, PROXY, routines): left alone. */
  readonly unread: number;
}

/** What one line of `SHOW GRANTS` says. */
export type GrantLine =
  | { readonly kind: 'privileges'; readonly grant: SqlGrantInfo }
  | { readonly kind: 'roles'; readonly roles: readonly SqlAccountRef[] }
  | { readonly kind: 'other' };

/** Where the text's next quoted part ends (after its closing quote), from its opening quote at `i`. */
function quotedEnd(text: string, i: number): number {
  const q = text[i];
  let j = i + 1;
  while (j < text.length) {
    if (q !== '`' && text[j] === '\\') j += 2;
    else if (text[j] === q && text[j + 1] === q) j += 2;
    else if (text[j] === q) return j + 1;
    else j++;
  }
  return text.length;
}

/** The unquoted value of a quoted part, or the part as it is. */
function unquote(part: string): string {
  const q = part[0];
  if (q !== "'" && q !== '"' && q !== '`') return part;
  const body = part
    .slice(1, -1)
    .split(q + q)
    .join(q);
  return q === '`' ? body : body.replace(/\\(.)/g, '$1');
}

/** Where `word` (surrounded by spaces) is in the text outside quotes, or -1. */
function indexOutsideQuotes(text: string, word: string, from = 0): number {
  for (let i = from; i < text.length; ) {
    const c = text[i];
    if (c === "'" || c === '"' || c === '`') {
      i = quotedEnd(text, i);
      continue;
    }
    if (text.startsWith(word, i)) return i;
    i++;
  }
  return -1;
}

/** The text split at commas outside quotes and parentheses, each part trimmed. */
function splitList(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; ) {
    const c = text[i];
    if (c === "'" || c === '"' || c === '`') {
      i = quotedEnd(text, i);
      continue;
    }
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(text.slice(start, i).trim());
      start = i + 1;
    }
    i++;
  }
  parts.push(text.slice(start).trim());
  return parts.filter((p) => p !== '');
}

/** An account as `SHOW GRANTS` names it: `'u'@'h'`, `` `u`@`h` ``, or a MariaDB role `` `r` `` (host `%`). The rest of the text after it. */
export function parseAccountRef(text: string): { ref: SqlAccountRef; rest: string } | undefined {
  const t = text.trimStart();
  const quoted = (s: string): [string, string] | undefined => {
    if (s[0] === "'" || s[0] === '"' || s[0] === '`') {
      const end = quotedEnd(s, 0);
      return [unquote(s.slice(0, end)), s.slice(end)];
    }
    const m = /^[^\s@,]+/.exec(s);
    return m ? [m[0], s.slice(m[0].length)] : undefined;
  };
  const user = quoted(t);
  if (!user) return undefined;
  if (user[1][0] !== '@') return { ref: { user: user[0], host: ROLE_HOST }, rest: user[1] };
  const host = quoted(user[1].slice(1));
  if (!host) return undefined;
  return { ref: { user: user[0], host: host[0] }, rest: host[1] };
}

/** A privilege level: `*.*`, `db.*`, `db.table`, each name plain or quoted; undefined for another (a routine). */
function parseLevel(text: string): { database?: string; table?: string } | undefined {
  if (text === '*.*' || text === '*') return {};
  const parts: string[] = [];
  let i = 0;
  while (i <= text.length) {
    let end: number;
    if (text[i] === '`' || text[i] === '"') end = quotedEnd(text, i);
    else {
      end = text.indexOf('.', i);
      if (end < 0) end = text.length;
    }
    parts.push(unquote(text.slice(i, end)));
    if (end >= text.length) break;
    if (text[end] !== '.') return undefined;
    i = end + 1;
  }
  if (parts.length !== 2 || parts[0] === '*') return undefined;
  return parts[1] === '*' ? { database: parts[0] } : { database: parts[0], table: parts[1] };
}

/** One line of `SHOW GRANTS` (TiDB's or MariaDB's, see the module's comment). Never keeps what follows the grantee but `WITH GRANT OPTION`. */
export function parseGrantLine(line: string): GrantLine {
  const m = /^GRANT\s+/i.exec(line.trim());
  if (!m) return { kind: 'other' };
  const body = line.trim().slice(m[0].length);
  const to = indexOutsideQuotes(body, ' TO ');
  if (to < 0) return { kind: 'other' };
  const on = indexOutsideQuotes(body, ' ON ');
  if (on < 0 || on > to) {
    const roles: SqlAccountRef[] = [];
    for (const part of splitList(body.slice(0, to))) {
      const r = parseAccountRef(part);
      if (!r || r.rest.trim() !== '') return { kind: 'other' };
      roles.push(r.ref);
    }
    return { kind: 'roles', roles: sortRefs(roles) };
  }
  const privileges = splitList(body.slice(0, on)).map((p) => p.toUpperCase().replace(/\s+/g, ' '));
  if (privileges.some((p) => p.includes('(') || p === 'PROXY')) return { kind: 'other' };
  const level = parseLevel(body.slice(on + 4, to).trim());
  if (!level) return { kind: 'other' };
  const grantee = parseAccountRef(body.slice(to + 4));
  // Quoted parts after the grantee (MariaDB's password hash) are dropped before looking for the option.
  const tail = (grantee?.rest ?? '').replace(/'(?:[^'\\]|\\.|'')*'/g, "''");
  const withGrantOption = /\bWITH\s+GRANT\s+OPTION\b/i.test(tail);
  return {
    kind: 'privileges',
    grant: {
      privileges: privileges.filter((p) => p !== 'USAGE').sort(),
      ...level,
      ...(withGrantOption && { withGrantOption: true }),
    },
  };
}

/** The key of a privilege level: `*.*`, or the database and table apart. */
export const levelKey = (g: Pick<SqlGrantInfo, 'database' | 'table'>): string => JSON.stringify([g.database ?? null, g.table ?? null]);

/** `SHOW GRANTS` read: privileges merged per level (sorted: global, databases, tables), roles, lines not read. */
export function parseGrants(lines: readonly string[]): Pick<ObservedAccount, 'grants' | 'roles' | 'unread'> {
  const levels = new Map<string, { privileges: Set<string>; database?: string; table?: string; withGrantOption: boolean }>();
  const roles: SqlAccountRef[] = [];
  let unread = 0;
  for (const line of lines) {
    const g = parseGrantLine(line);
    if (g.kind === 'other') unread++;
    else if (g.kind === 'roles') roles.push(...g.roles);
    else {
      const key = levelKey(g.grant);
      const at = levels.get(key) ?? {
        privileges: new Set<string>(),
        ...(g.grant.database !== undefined && { database: g.grant.database }),
        ...(g.grant.table !== undefined && { table: g.grant.table }),
        withGrantOption: false,
      };
      for (const p of g.grant.privileges) at.privileges.add(p);
      at.withGrantOption ||= g.grant.withGrantOption === true;
      levels.set(key, at);
    }
  }
  const grants = [...levels.values()]
    .filter((l) => l.privileges.size > 0 || l.withGrantOption)
    .map(
      (l): SqlGrantInfo => ({
        privileges: [...l.privileges].sort(),
        ...(l.database !== undefined && { database: l.database }),
        ...(l.table !== undefined && { table: l.table }),
        ...(l.withGrantOption && { withGrantOption: true }),
      }),
    )
    .sort(compareLevels);
  return { grants, roles: sortRefs(roles), unread };
}

/** Global first, then databases, then tables, each by name. */
export function compareLevels(a: Pick<SqlGrantInfo, 'database' | 'table'>, b: Pick<SqlGrantInfo, 'database' | 'table'>): number {
  const rank = (g: Pick<SqlGrantInfo, 'database' | 'table'>) => (g.database === undefined ? 0 : g.table === undefined ? 1 : 2);
  return rank(a) - rank(b) || cmp(a.database ?? '', b.database ?? '') || cmp(a.table ?? '', b.table ?? '');
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Accounts by user, then host. */
export const sortRefs = <T extends SqlAccountRef>(refs: readonly T[]): T[] =>
  [...refs].sort((a, b) => cmp(a.user, b.user) || cmp(a.host, b.host));

/**
 * `SHOW CREATE USER` read for what the controller keeps: REQUIRE and ACCOUNT LOCK. The password's hash
 * comes before them; the last `REQUIRE` of the text is taken, so that a hash never reads as one.
 */
export function parseCreateUser(text: string): Pick<ObservedAccount, 'require' | 'locked'> {
  const requires = [...text.matchAll(/ REQUIRE (NONE|SSL|X509|\S+)/g)];
  const last = requires[requires.length - 1]?.[1];
  const require = last === undefined || last === 'NONE' ? 'NONE' : last === 'SSL' || last === 'X509' ? last : 'SPECIFIED';
  const locks = [...text.matchAll(/ ACCOUNT (LOCK|UNLOCK)\b/g)];
  return { require, locked: locks[locks.length - 1]?.[1] === 'LOCK' };
}

/** What the server says of accounts, read with a connection logged in as root. */
export class SqlAccountReader {
  constructor(
    private readonly conn: Pick<MysqlConnection, 'query'>,
    private readonly dialect: SqlDialect,
    /** The session's `sql_mode` has `NO_BACKSLASH_ESCAPES`. */
    private readonly noBackslashEscapes: boolean,
  ) {}

  /** Every account on the server; MariaDB's roles (no host) with host `%`. */
  async accounts(): Promise<SqlAccountRef[]> {
    const rows = (await this.conn.query('SELECT User, Host FROM mysql.user')).rows;
    return sortRefs(
      rows.map((r) => ({
        user: String(r[0] ?? ''),
        host: this.dialect === 'mariadb' && (r[1] ?? '') === '' ? ROLE_HOST : String(r[1] ?? ''),
      })),
    );
  }

  /** One account as the server has it; `role`: only its grants are read. */
  async account(ref: SqlAccountRef, role: boolean): Promise<ObservedAccount> {
    const name = this.name(ref, role);
    const grants = parseGrants((await this.conn.query(`SHOW GRANTS FOR ${name}`)).rows.map((r) => String(r[0] ?? '')));
    if (role) return { ...ref, require: 'NONE', locked: false, ...grants };
    const created = parseCreateUser(String((await this.conn.query(`SHOW CREATE USER ${name}`)).rows[0]?.[0] ?? ''));
    let resourceGroup: string | undefined;
    if (this.dialect === 'tidb') resourceGroup = await this.resourceGroup(ref);
    return { ...ref, ...created, ...(resourceGroup !== undefined && { resourceGroup }), ...grants };
  }

  /** TiDB's resource group of a user (`User_attributes`, from v7.1); none before, or for the default group. */
  private async resourceGroup(ref: SqlAccountRef): Promise<string | undefined> {
    const q = (s: string) => sqlString(s, this.noBackslashEscapes);
    let rows: QueryResult['rows'];
    try {
      rows = (
        await this.conn.query(
          `SELECT JSON_UNQUOTE(JSON_EXTRACT(User_attributes, '$.resource_group')) FROM mysql.user WHERE User = ${q(ref.user)} AND Host = ${q(ref.host)}`,
        )
      ).rows;
    } catch (err) {
      // A release without User_attributes has no resource groups.
      if (err instanceof MysqlError && err.code !== 0) return undefined;
      throw err;
    }
    const rg = rows[0]?.[0];
    return rg === null || rg === undefined || rg === '' || rg.toLowerCase() === 'default' ? undefined : rg;
  }

  private name(ref: SqlAccountRef, role: boolean): string {
    return accountSql(ref, role, this.dialect, this.noBackslashEscapes);
  }
}

/** An account as a statement names it: `'u'@'h'`; a MariaDB role by its name alone, in backquotes. */
export function accountSql(ref: SqlAccountRef, role: boolean, dialect: SqlDialect, noBackslashEscapes: boolean): string {
  if (role && dialect === 'mariadb') return identifier(ref.user);
  return `${sqlString(ref.user, noBackslashEscapes)}@${sqlString(ref.host, noBackslashEscapes)}`;
}

/** A name in backquotes, its backquotes doubled. */
export const identifier = (name: string): string => `\`${name.replace(/`/g, '``')}\``;
