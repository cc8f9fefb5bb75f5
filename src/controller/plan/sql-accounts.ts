/**
 * The SQL accounts Git declares (`SqlUser`, `SqlRole`), made to match on the server: pure. From the
 * declared accounts, the server's accounts as read, the records of the accounts the controller
 * manages and the password Secrets' versions, the statements to run, account by account (roles first,
 * then users, then the drops), and a report.
 *
 * The rules:
 * - A declared account that is missing is created; one that exists and is not recorded is adopted: its
 *   password set from the Secret and its privileges, roles and options made to match Git; never
 *   dropped and created again.
 * - A password is set again (`ALTER USER … IDENTIFIED BY`) when its Secret's version differs from the
 *   one recorded: a rotation without downtime. A plan never holds a password: a statement says which
 *   Secret and key its password comes from, and the action puts it in only when it sends it.
 * - What changed in Git since the account last matched (the record's `applied`) is made to match. What
 *   differs from Git although Git did not change is drift, done by hand: reported, and undone only
 *   with `drift: correct`.
 * - An account is dropped only when the controller manages it and its document left Git with
 *   `deletionPolicy: Delete`; with `Retain` it is kept and no longer changed. `root` and the account
 *   the controller logs in as are never dropped. An account neither declared nor recorded is never
 *   touched: it is listed as unmanaged (but for root and the servers' own accounts).
 *
 * Statements follow TiDB's grammar (pingcap/tidb `pkg/parser/parser.y`: `CREATE USER … REQUIRE …
 * ACCOUNT LOCK … RESOURCE GROUP …`, `GRANT priv ON level TO user`, `GRANT role TO user`), names as
 * string literals (`sqlString`) and databases, tables and resource groups in backquotes; MariaDB's
 * roles are named without a host.
 */
import { accountName, type SqlAccountInfo, type SqlAccountRef, type SqlGrantInfo } from '../../tidbcluster/contract/sql-accounts';
import { accountSql, compareLevels, identifier, levelKey, sortRefs, type ObservedAccount, type SqlDialect } from '../clients/sql-accounts';
import type { AppliedAccount, SqlAccountRecord } from '../records/sql-accounts';

/** What the controller knows of a password Secret: its version and keys, never its values. */
export interface SecretVersion {
  /** `<uid>/<resourceVersion>`. */
  readonly version: string;
  readonly keys: readonly string[];
}

export interface SqlAccountsInput {
  /** The accounts Git declares. */
  readonly accounts: readonly SqlAccountInfo[];
  readonly dialect: SqlDialect;
  /** The session's `sql_mode` has `NO_BACKSLASH_ESCAPES`. @default false */
  readonly noBackslashEscapes?: boolean;
  /** Every account on the server. */
  readonly server: readonly SqlAccountRef[];
  /** The accounts declared or recorded that exist, as read, by `'user'@'host'`. */
  readonly observed: ReadonlyMap<string, ObservedAccount>;
  /** The records of the accounts the controller manages, by `'user'@'host'`. */
  readonly records: Readonly<Record<string, SqlAccountRecord>>;
  /** The password Secrets there are, by name. */
  readonly secrets: ReadonlyMap<string, SecretVersion>;
  /** The account the controller logs in as. */
  readonly login: SqlAccountRef;
}

/** What a statement does. */
export type StatementKind =
  | 'CREATE ROLE'
  | 'CREATE USER'
  | 'SET PASSWORD'
  | 'ALTER USER'
  | 'GRANT'
  | 'REVOKE'
  | 'GRANT ROLE'
  | 'REVOKE ROLE'
  | 'SET DEFAULT ROLE'
  | 'DROP USER'
  | 'DROP ROLE';

/** One statement, without any password. */
export interface PlannedStatement {
  readonly kind: StatementKind;
  /** The text; with `password`, the text before and after it (two parts). */
  readonly parts: readonly string[];
  /** Where the password between the two parts comes from. @default none */
  readonly password?: { readonly secret: string; readonly key: string };
}

/** The statements of one account and the record to keep once they all ran. */
export interface AccountStep {
  /** `'user'@'host'`. */
  readonly account: string;
  readonly kind: 'SqlUser' | 'SqlRole';
  /** Its document. @default none (it left Git) */
  readonly document?: string;
  readonly statements: readonly PlannedStatement[];
  /** What the Event says once it ran. @default none (no statement) */
  readonly news?: 'created' | 'changed' | 'dropped';
  /** The record once every statement ran; undefined: none is kept. */
  readonly record: SqlAccountRecord | undefined;
}

/** How a declared account stands. */
export interface AccountReport {
  readonly document: string;
  readonly account: string;
  readonly kind: 'SqlUser' | 'SqlRole';
  /** `ok`: as Git says; `changing`: statements to run; `waiting`: on `reason`; `drift`: changed by hand, reported. */
  readonly state: 'ok' | 'changing' | 'waiting' | 'drift';
  /** Why it waits. @default none */
  readonly reason?: string;
  /** What differs from Git, done by hand. @default none */
  readonly drift?: readonly string[];
  /** The drift is undone by this pass's statements (`drift: correct`). @default false */
  readonly corrected?: boolean;
}

export interface SqlAccountsPlan {
  readonly steps: readonly AccountStep[];
  /** The declared accounts, in Git's order. */
  readonly accounts: readonly AccountReport[];
  /** On the server, neither declared nor managed (root and the servers' own accounts left out). */
  readonly unmanaged: readonly string[];
  /** Managed accounts whose document left Git, kept on the server (`Retain`, or root). */
  readonly kept: readonly string[];
}

/** Accounts a server makes for itself (MariaDB's, MySQL's): never listed, never touched. */
const SYSTEM_USERS = new Set(['root', 'mariadb.sys', 'mysql.sys', 'mysql.session', 'mysql.infoschema', 'PUBLIC', '']);

/** A privilege name the statements may carry as it is. */
const PRIVILEGE = /^[A-Z][A-Z0-9_]*( [A-Z][A-Z0-9_]*)*$/;
const GRANT_OPTION = 'GRANT OPTION';

/** A statement's text as the status and logs may show it: the password named by its Secret. */
export const statementText = (s: PlannedStatement): string =>
  s.password ? s.parts.join(`<the password in Secret ${s.password.secret}, key ${s.password.key}>`) : s.parts.join('');

export function planSqlAccounts(input: SqlAccountsInput): SqlAccountsPlan {
  const declared = new Map(input.accounts.map((a) => [accountName(a), a]));
  const onServer = new Set(input.server.map(accountName));
  const steps: AccountStep[] = [];
  const accounts: AccountReport[] = [];
  for (const a of input.accounts) {
    const { step, report } = planDeclared(a, input, onServer.has(accountName(a)));
    if (step) steps.push(step);
    accounts.push(report);
  }
  const kept: string[] = [];
  const left = Object.entries(input.records)
    .filter(([name]) => !declared.has(name))
    .sort(([, a], [, b]) => (a.kind === b.kind ? 0 : a.kind === 'SqlUser' ? -1 : 1));
  for (const [name, r] of left) {
    const exists = onServer.has(name);
    const ref = input.observed.get(name) ?? parseName(name);
    const untouchable = ref !== undefined && (ref.user === 'root' || accountName(ref) === accountName(input.login));
    if (r.deletionPolicy === 'Delete' && !r.retained && !untouchable && ref !== undefined) {
      const drop = exists
        ? [
            stmt(
              r.kind === 'SqlRole' ? 'DROP ROLE' : 'DROP USER',
              `${r.kind === 'SqlRole' ? 'DROP ROLE' : 'DROP USER'} ${who(ref, r.kind === 'SqlRole', input)}`,
            ),
          ]
        : [];
      steps.push({ account: name, kind: r.kind, statements: drop, ...(exists && { news: 'dropped' }), record: undefined });
      continue;
    }
    if (!exists) {
      steps.push({ account: name, kind: r.kind, statements: [], record: undefined });
      continue;
    }
    kept.push(name);
    if (!r.retained) steps.push({ account: name, kind: r.kind, statements: [], record: { ...r, retained: true } });
  }
  const unmanaged = sortRefs(input.server)
    .filter((s) => !SYSTEM_USERS.has(s.user) && !declared.has(accountName(s)) && input.records[accountName(s)] === undefined)
    .map(accountName);
  return { steps, accounts, unmanaged, kept: kept.sort() };
}

/** `'user'@'host'` read back (the records' keys). */
function parseName(name: string): SqlAccountRef | undefined {
  const m = /^'(.*)'@'(.*)'$/s.exec(name);
  return m ? { user: m[1], host: m[2] } : undefined;
}

const stmt = (kind: StatementKind, text: string): PlannedStatement => ({ kind, parts: [text] });
const who = (ref: SqlAccountRef, role: boolean, input: SqlAccountsInput) =>
  accountSql(ref, role, input.dialect, input.noBackslashEscapes === true);

/** What Git asks of an account, as a record keeps it. */
function wanted(a: SqlAccountInfo): AppliedAccount {
  const user = a.kind === 'SqlUser';
  return {
    grants: [...(a.grants ?? [])].sort(compareLevels),
    roles: sortRefs(a.roles ?? []),
    ...(user && { require: a.require ?? 'NONE' }),
    ...(user && a.locked === true && { locked: true }),
    ...(user && a.resourceGroup !== undefined && { resourceGroup: a.resourceGroup }),
  };
}

/** An account as read, in the shape of what Git asks: taken as what was applied when it is adopted. */
function asApplied(o: ObservedAccount, role: boolean): AppliedAccount {
  return {
    grants: o.grants,
    roles: o.roles,
    ...(!role && { require: o.require }),
    ...(!role && o.locked && { locked: true }),
    ...(!role && o.resourceGroup !== undefined && { resourceGroup: o.resourceGroup }),
  };
}

/** Why the account cannot be planned, or undefined. */
function cannotPlan(a: SqlAccountInfo, input: SqlAccountsInput): string | undefined {
  const bad = (a.grants ?? []).flatMap((g) => g.privileges).find((p) => !PRIVILEGE.test(p));
  if (bad !== undefined) return `the privilege ${JSON.stringify(bad)} cannot be written in a GRANT`;
  if (a.kind === 'SqlUser' && a.resourceGroup !== undefined && input.dialect !== 'tidb') return 'RESOURCE GROUP needs TiDB (v7.1 or later)';
  if (a.kind !== 'SqlUser') return undefined;
  if (!a.password) return 'no password Secret is declared';
  const s = input.secrets.get(a.password.secret);
  if (!s) return `the Secret ${a.password.secret} is not there; create it with the key ${a.password.key} and the password as its value`;
  if (!s.keys.includes(a.password.key)) return `the Secret ${a.password.secret} has no key ${a.password.key}`;
  return undefined;
}

function planDeclared(a: SqlAccountInfo, input: SqlAccountsInput, exists: boolean): { step?: AccountStep; report: AccountReport } {
  const name = accountName(a);
  const base = { document: a.document, account: name, kind: a.kind };
  const waitFor = cannotPlan(a, input);
  if (waitFor !== undefined) return { report: { ...base, state: 'waiting', reason: waitFor } };
  const role = a.kind === 'SqlRole';
  const me = who(a, role, input);
  const want = wanted(a);
  const secret = a.password ? input.secrets.get(a.password.secret) : undefined;
  const record: SqlAccountRecord = {
    kind: a.kind,
    document: a.document,
    deletionPolicy: a.deletionPolicy ?? 'Retain',
    ...(secret && { secretVersion: secret.version }),
    applied: want,
  };
  const rec = input.records[name];
  const statements: PlannedStatement[] = [];
  if (!exists) {
    if (role) statements.push(stmt('CREATE ROLE', `CREATE ROLE ${me}`));
    else statements.push({ kind: 'CREATE USER', parts: [`CREATE USER ${me} IDENTIFIED BY `, options(want, input)], password: a.password! });
    const empty: AppliedAccount = {
      grants: [],
      roles: [],
      ...(!role && { require: want.require, locked: want.locked, resourceGroup: want.resourceGroup }),
    };
    statements.push(...matchGrants(me, want, empty, empty, true, input).statements);
    return {
      step: { account: name, kind: a.kind, document: a.document, statements, news: 'created', record },
      report: { ...base, state: 'changing' },
    };
  }
  const observed = input.observed.get(name);
  if (!observed) return { report: { ...base, state: 'waiting', reason: 'the account could not be read' } };
  const applied = rec?.applied ?? asApplied(observed, role);
  if (!role && (rec?.secretVersion === undefined || rec.secretVersion !== secret?.version))
    statements.push({ kind: 'SET PASSWORD', parts: [`ALTER USER ${me} IDENTIFIED BY `, ''], password: a.password! });
  const correct = a.drift === 'correct';
  const drift: string[] = [];
  if (!role) {
    const o = asApplied(observed, false);
    const change: Partial<AppliedAccount> = {};
    const attr = <K extends 'require' | 'locked' | 'resourceGroup'>(k: K, show: (v: AppliedAccount[K]) => string) => {
      if (same(o[k], want[k])) return;
      if (same(applied[k], want[k])) {
        drift.push(`${show(o[k])} by hand (Git: ${show(want[k])})`);
        if (!correct) return;
      }
      change[k] = want[k];
    };
    attr('require', (v) => `REQUIRE ${v ?? 'NONE'}`);
    attr('locked', (v) => `ACCOUNT ${v ? 'LOCK' : 'UNLOCK'}`);
    if (input.dialect === 'tidb') attr('resourceGroup', (v) => `RESOURCE GROUP ${v ?? 'default'}`);
    if (Object.keys(change).length > 0) {
      const text = options({ require: 'NONE', ...change, grants: [], roles: [] }, input, Object.keys(change));
      statements.push(stmt('ALTER USER', `ALTER USER ${me}${text}`));
    }
  }
  const grants = matchGrants(me, want, applied, asApplied(observed, role), correct, input);
  statements.push(...grants.statements);
  drift.push(...grants.drift);
  const driftReport = drift.length > 0 ? { drift, ...(correct && { corrected: true }) } : {};
  const state = statements.length > 0 ? 'changing' : drift.length > 0 ? 'drift' : 'ok';
  return {
    step: { account: name, kind: a.kind, document: a.document, statements, ...(statements.length > 0 && { news: 'changed' }), record },
    report: { ...base, state, ...driftReport },
  };
}

const same = (a: unknown, b: unknown) => (a ?? false) === (b ?? false) || JSON.stringify(a) === JSON.stringify(b);

/** `REQUIRE`, `ACCOUNT` and `RESOURCE GROUP`, in TiDB's order, each only when asked (`only`) or not the default. */
function options(a: AppliedAccount, input: SqlAccountsInput, only?: readonly string[]): string {
  const ask = (k: string, isDefault: boolean) => (only ? only.includes(k) : !isDefault);
  const parts: string[] = [];
  if (ask('require', (a.require ?? 'NONE') === 'NONE')) parts.push(`REQUIRE ${a.require ?? 'NONE'}`);
  if (ask('locked', !a.locked)) parts.push(`ACCOUNT ${a.locked ? 'LOCK' : 'UNLOCK'}`);
  if (input.dialect === 'tidb' && ask('resourceGroup', a.resourceGroup === undefined))
    parts.push(`RESOURCE GROUP ${a.resourceGroup === undefined ? 'default' : identifier(a.resourceGroup)}`);
  return parts.map((p) => ` ${p}`).join('');
}

/** A privilege level as a statement writes it. */
export const levelSql = (g: Pick<SqlGrantInfo, 'database' | 'table'>): string =>
  g.database === undefined ? '*.*' : `${identifier(g.database)}.${g.table === undefined ? '*' : identifier(g.table)}`;

/** Each privilege of each level (`GRANT OPTION` one of them), by level key and name. */
function items(grants: readonly SqlGrantInfo[]): Map<string, { level: SqlGrantInfo; privilege: string }> {
  const out = new Map<string, { level: SqlGrantInfo; privilege: string }>();
  for (const g of grants) {
    const level: SqlGrantInfo = {
      privileges: [],
      ...(g.database !== undefined && { database: g.database }),
      ...(g.table !== undefined && { table: g.table }),
    };
    for (const p of [...g.privileges, ...(g.withGrantOption ? [GRANT_OPTION] : [])])
      out.set(`${levelKey(g)}\n${p}`, { level, privilege: p });
  }
  return out;
}

/**
 * The GRANTs and REVOKEs (privileges per level, then roles) that take the account from `observed` to
 * `want`: what Git changed since `applied` always; what was done by hand (drift) only with `correct`.
 */
function matchGrants(
  me: string,
  want: AppliedAccount,
  applied: AppliedAccount,
  observed: AppliedAccount,
  correct: boolean,
  input: SqlAccountsInput,
): { statements: PlannedStatement[]; drift: string[] } {
  const drift: string[] = [];
  const grant = new Map<string, { level: SqlGrantInfo; privileges: string[] }>();
  const revoke = new Map<string, { level: SqlGrantInfo; privileges: string[] }>();
  const add = (to: typeof grant, level: SqlGrantInfo, privilege: string) => {
    const k = levelKey(level);
    const at = to.get(k) ?? { level, privileges: [] };
    at.privileges.push(privilege);
    to.set(k, at);
  };
  const [w, a, o] = [items(want.grants), items(applied.grants), items(observed.grants)];
  for (const [k, it] of w) {
    if (o.has(k)) continue;
    if (a.has(k)) drift.push(`${it.privilege} ON ${levelSql(it.level)} revoked by hand`);
    if (!a.has(k) || correct) add(grant, it.level, it.privilege);
  }
  for (const [k, it] of o) {
    if (w.has(k)) continue;
    if (!a.has(k)) drift.push(`${it.privilege} ON ${levelSql(it.level)} granted by hand`);
    if (a.has(k) || correct) add(revoke, it.level, it.privilege);
  }
  const statements: PlannedStatement[] = [];
  const byLevel = (m: typeof grant) => [...m.values()].sort((x, y) => compareLevels(x.level, y.level));
  for (const r of byLevel(revoke))
    statements.push(stmt('REVOKE', `REVOKE ${r.privileges.sort().join(', ')} ON ${levelSql(r.level)} FROM ${me}`));
  for (const g of byLevel(grant)) {
    const privileges = g.privileges.filter((p) => p !== GRANT_OPTION).sort();
    const option = privileges.length < g.privileges.length ? ' WITH GRANT OPTION' : '';
    statements.push(
      stmt('GRANT', `GRANT ${privileges.length > 0 ? privileges.join(', ') : 'USAGE'} ON ${levelSql(g.level)} TO ${me}${option}`),
    );
  }
  const names = (refs: readonly SqlAccountRef[]) => new Map(refs.map((r) => [accountName(r), r]));
  const [wr, ar, or] = [names(want.roles), names(applied.roles), names(observed.roles)];
  const role = (r: SqlAccountRef) => who(r, true, input);
  let rolesChanged = false;
  for (const [k, r] of or) {
    if (wr.has(k)) continue;
    if (!ar.has(k)) drift.push(`role ${k} granted by hand`);
    if (ar.has(k) || correct) {
      statements.push(stmt('REVOKE ROLE', `REVOKE ${role(r)} FROM ${me}`));
      rolesChanged = true;
    }
  }
  for (const [k, r] of wr) {
    if (or.has(k)) continue;
    if (ar.has(k)) drift.push(`role ${k} revoked by hand`);
    if (!ar.has(k) || correct) {
      statements.push(stmt('GRANT ROLE', `GRANT ${role(r)} TO ${me}`));
      rolesChanged = true;
    }
  }
  // TiDB (as MySQL) activates no granted role at login unless it is a default role.
  if (rolesChanged && input.dialect === 'tidb' && want.roles.length > 0)
    statements.push(stmt('SET DEFAULT ROLE', `SET DEFAULT ROLE ALL TO ${me}`));
  return { statements, drift };
}
