/**
 * The SQL accounts planner, rule by rule (TiDB's statements unless a case says MariaDB), and as
 * properties over generated declarations, servers and records: it never drops or changes an account
 * that is neither declared nor managed, never drops a Retain account, never names root unless root is
 * declared, and never holds a password.
 */
import fc from 'fast-check';
import type { ObservedAccount } from '../../../../src/controller/clients/sql-accounts';
import { planSqlAccounts, statementText, type SecretVersion, type SqlAccountsInput } from '../../../../src/controller/plan/sql-accounts';
import type { SqlAccountRecord } from '../../../../src/controller/records/sql-accounts';
import { accountName, type SqlAccountInfo, type SqlAccountRef } from '../../../../src/tidbcluster/contract/sql-accounts';

const role = (user: string, more: Partial<SqlAccountInfo> = {}): SqlAccountInfo => ({
  kind: 'SqlRole',
  document: `role-${user}`,
  user,
  host: '%',
  ...more,
});
const user = (name: string, more: Partial<SqlAccountInfo> = {}): SqlAccountInfo => ({
  kind: 'SqlUser',
  document: `user-${name}`,
  user: name,
  host: '%',
  password: { secret: 'app-passwords', key: name },
  ...more,
});

const observed = (ref: SqlAccountRef, more: Partial<ObservedAccount> = {}): ObservedAccount => ({
  ...ref,
  require: 'NONE',
  locked: false,
  grants: [],
  roles: [],
  unread: 0,
  ...more,
});

const SECRETS = new Map<string, SecretVersion>([['app-passwords', { version: 'uid-1/100', keys: ['app', 'report', 'ops'] }]]);

function input(more: Partial<SqlAccountsInput>): SqlAccountsInput {
  const obs = more.observed ?? new Map();
  return {
    accounts: [],
    dialect: 'tidb',
    server: [{ user: 'root', host: '%' }, ...[...obs.values()].map((o) => ({ user: o.user, host: o.host }))],
    observed: obs,
    records: {},
    secrets: SECRETS,
    login: { user: 'root', host: '%' },
    ...more,
  };
}

const texts = (i: SqlAccountsInput) => planSqlAccounts(i).steps.flatMap((s) => s.statements.map(statementText));
const byName = (...o: ObservedAccount[]) => new Map(o.map((x) => [accountName(x), x]));
const managed = (a: SqlAccountInfo, more: Partial<SqlAccountRecord> = {}): SqlAccountRecord => ({
  kind: a.kind,
  document: a.document,
  deletionPolicy: a.deletionPolicy ?? 'Retain',
  ...(a.kind === 'SqlUser' && { secretVersion: 'uid-1/100' }),
  applied: { grants: a.grants ?? [], roles: a.roles ?? [], ...(a.kind === 'SqlUser' && { require: a.require ?? 'NONE' }) },
  ...more,
});

describe('planSqlAccounts: each statement', () => {
  test('a missing role and user are created, roles first, with their grants; the password is named, never held', () => {
    const reader = role('reader', { grants: [{ privileges: ['SELECT'], database: 'app' }] });
    const app = user('app', {
      require: 'SSL',
      locked: true,
      resourceGroup: 'rg1',
      roles: [{ user: 'reader', host: '%' }],
      grants: [{ privileges: ['INSERT', 'UPDATE'], database: 'app', table: 'orders', withGrantOption: true }],
    });
    const plan = planSqlAccounts(input({ accounts: [reader, app] }));
    expect(plan.steps.map((s) => [s.account, s.news, s.statements.map(statementText)])).toEqual([
      ["'reader'@'%'", 'created', ["CREATE ROLE 'reader'@'%'", "GRANT SELECT ON `app`.* TO 'reader'@'%'"]],
      [
        "'app'@'%'",
        'created',
        [
          "CREATE USER 'app'@'%' IDENTIFIED BY <the password in Secret app-passwords, key app> REQUIRE SSL ACCOUNT LOCK RESOURCE GROUP `rg1`",
          "GRANT INSERT, UPDATE ON `app`.`orders` TO 'app'@'%' WITH GRANT OPTION",
          "GRANT 'reader'@'%' TO 'app'@'%'",
          "SET DEFAULT ROLE ALL TO 'app'@'%'",
        ],
      ],
    ]);
    expect(plan.steps[1].statements[0].parts).toEqual([
      "CREATE USER 'app'@'%' IDENTIFIED BY ",
      ' REQUIRE SSL ACCOUNT LOCK RESOURCE GROUP `rg1`',
    ]);
    expect(plan.steps[1].record).toMatchObject({ kind: 'SqlUser', deletionPolicy: 'Retain', secretVersion: 'uid-1/100' });
  });

  test('MariaDB: a role is named without a host; no RESOURCE GROUP, no SET DEFAULT ROLE', () => {
    const reader = role('reader', { grants: [{ privileges: ['SELECT'], database: 'app' }] });
    const app = user('app', { roles: [{ user: 'reader', host: '%' }] });
    expect(texts(input({ accounts: [reader, app], dialect: 'mariadb' }))).toEqual([
      'CREATE ROLE `reader`',
      'GRANT SELECT ON `app`.* TO `reader`',
      "CREATE USER 'app'@'%' IDENTIFIED BY <the password in Secret app-passwords, key app>",
      "GRANT `reader` TO 'app'@'%'",
    ]);
    const plan = planSqlAccounts(input({ accounts: [user('x', { resourceGroup: 'rg' })], dialect: 'mariadb' }));
    expect(plan.accounts[0]).toMatchObject({ state: 'waiting', reason: 'RESOURCE GROUP needs TiDB (v7.1 or later)' });
  });

  test('names are quoted: a quote in a user, a backquote in a database', () => {
    const odd = user("o'brien", {
      password: { secret: 'app-passwords', key: 'app' },
      grants: [{ privileges: ['SELECT'], database: 'we`ird' }],
    });
    expect(texts(input({ accounts: [odd] }))).toEqual([
      "CREATE USER 'o''brien'@'%' IDENTIFIED BY <the password in Secret app-passwords, key app>",
      "GRANT SELECT ON `we``ird`.* TO 'o''brien'@'%'",
    ]);
  });

  test('a missing Secret or key: the account waits, and nothing is done to it', () => {
    const plan = planSqlAccounts(
      input({
        accounts: [user('a', { password: { secret: 'nope', key: 'a' } }), user('b', { password: { secret: 'app-passwords', key: 'b' } })],
      }),
    );
    expect(plan.steps).toEqual([]);
    expect(plan.accounts.map((a) => [a.state, a.reason])).toEqual([
      ['waiting', 'the Secret nope is not there; create it with the key a and the password as its value'],
      ['waiting', 'the Secret app-passwords has no key b'],
    ]);
  });
});

describe('planSqlAccounts: adoption, rotation, revoke', () => {
  test('an existing account not recorded is adopted: the password set from the Secret, grants made to match, never dropped', () => {
    const app = user('app', { grants: [{ privileges: ['SELECT'], database: 'app' }] });
    const obs = observed(app, { grants: [{ privileges: ['DELETE', 'SELECT'], database: 'app' }, { privileges: ['PROCESS'] }] });
    const plan = planSqlAccounts(input({ accounts: [app], observed: byName(obs) }));
    expect(plan.steps[0].statements.map(statementText)).toEqual([
      "ALTER USER 'app'@'%' IDENTIFIED BY <the password in Secret app-passwords, key app>",
      "REVOKE PROCESS ON *.* FROM 'app'@'%'",
      "REVOKE DELETE ON `app`.* FROM 'app'@'%'",
    ]);
    expect(plan.accounts[0].drift).toBeUndefined();
    expect(texts(input({ accounts: [app], observed: byName(obs) })).join('\n')).not.toMatch(/DROP|CREATE/);
  });

  test("a rotation: the Secret's version changed, the password is set again; unchanged, nothing", () => {
    const app = user('app');
    const obs = byName(observed(app));
    expect(texts(input({ accounts: [app], observed: obs, records: { "'app'@'%'": managed(app) } }))).toEqual([]);
    const rotated = new Map([['app-passwords', { version: 'uid-1/101', keys: ['app'] }]]);
    const plan = planSqlAccounts(input({ accounts: [app], observed: obs, records: { "'app'@'%'": managed(app) }, secrets: rotated }));
    expect(plan.steps[0].statements.map(statementText)).toEqual([
      "ALTER USER 'app'@'%' IDENTIFIED BY <the password in Secret app-passwords, key app>",
    ]);
    expect(plan.steps[0].record?.secretVersion).toBe('uid-1/101');
  });

  test('a grant Git removed is revoked; one Git added is granted; an option Git changed is altered', () => {
    const before = user('app', { grants: [{ privileges: ['INSERT', 'SELECT'], database: 'app' }], roles: [{ user: 'r', host: '%' }] });
    const after = user('app', { grants: [{ privileges: ['SELECT'], database: 'app' }, { privileges: ['BACKUP_ADMIN'] }], locked: true });
    const obs = byName(observed(before, { grants: before.grants, roles: before.roles }));
    expect(texts(input({ accounts: [after], observed: obs, records: { "'app'@'%'": managed(before) } }))).toEqual([
      "ALTER USER 'app'@'%' ACCOUNT LOCK",
      "REVOKE INSERT ON `app`.* FROM 'app'@'%'",
      "GRANT BACKUP_ADMIN ON *.* TO 'app'@'%'",
      "REVOKE 'r'@'%' FROM 'app'@'%'",
    ]);
  });
});

describe('planSqlAccounts: drift', () => {
  const app = user('app', { grants: [{ privileges: ['SELECT'], database: 'app' }] });
  const handMade = byName(observed(app, { grants: [{ privileges: ['DELETE', 'SELECT'], database: 'app' }], locked: true }));
  const records = { "'app'@'%'": managed(app) };

  test('a grant added and a lock set by hand are reported, and left as they are', () => {
    const plan = planSqlAccounts(input({ accounts: [app], observed: handMade, records }));
    expect(plan.steps[0].statements).toEqual([]);
    expect(plan.accounts[0]).toMatchObject({
      state: 'drift',
      drift: ['ACCOUNT LOCK by hand (Git: ACCOUNT UNLOCK)', 'DELETE ON `app`.* granted by hand'],
    });
  });

  test('with drift: correct, they are undone', () => {
    const plan = planSqlAccounts(input({ accounts: [{ ...app, drift: 'correct' }], observed: handMade, records }));
    expect(plan.steps[0].statements.map(statementText)).toEqual([
      "ALTER USER 'app'@'%' ACCOUNT UNLOCK",
      "REVOKE DELETE ON `app`.* FROM 'app'@'%'",
    ]);
    expect(plan.accounts[0]).toMatchObject({ state: 'changing', corrected: true });
  });

  test('a grant Git declares that was revoked by hand is drift too', () => {
    const plan = planSqlAccounts(input({ accounts: [app], observed: byName(observed(app)), records }));
    expect(plan.accounts[0]).toMatchObject({ state: 'drift', drift: ['SELECT ON `app`.* revoked by hand'] });
  });
});

describe('planSqlAccounts: accounts that left Git', () => {
  const gone = user('old');
  const obs = byName(observed(gone));

  test('with Delete, the managed account is dropped and its record forgotten', () => {
    const plan = planSqlAccounts(input({ observed: obs, records: { "'old'@'%'": managed(gone, { deletionPolicy: 'Delete' }) } }));
    expect(plan.steps.map((s) => [s.news, s.statements.map(statementText), s.record])).toEqual([
      ['dropped', ["DROP USER 'old'@'%'"], undefined],
    ]);
    const r = role('reader');
    expect(texts(input({ observed: byName(observed(r)), records: { "'reader'@'%'": managed(r, { deletionPolicy: 'Delete' }) } }))).toEqual([
      "DROP ROLE 'reader'@'%'",
    ]);
  });

  test('with Retain, it is kept, noted, and never changed again', () => {
    const plan = planSqlAccounts(input({ observed: obs, records: { "'old'@'%'": managed(gone) } }));
    expect(plan.steps).toEqual([{ account: "'old'@'%'", kind: 'SqlUser', statements: [], record: { ...managed(gone), retained: true } }]);
    expect(plan.kept).toEqual(["'old'@'%'"]);
    expect(plan.unmanaged).toEqual([]);
  });

  test('root is never dropped, even recorded with Delete; unmanaged accounts are listed, root and system accounts not', () => {
    const root: SqlAccountInfo = { ...user('root'), deletionPolicy: 'Delete' };
    const plan = planSqlAccounts(
      input({
        observed: byName(observed(root)),
        server: [
          { user: 'root', host: '%' },
          { user: 'mariadb.sys', host: 'localhost' },
          { user: 'bob', host: '10.%' },
        ],
        records: { "'root'@'%'": managed(root, { deletionPolicy: 'Delete' }) },
      }),
    );
    expect(plan.steps.flatMap((s) => s.statements)).toEqual([]);
    expect(plan.kept).toEqual(["'root'@'%'"]);
    expect(plan.unmanaged).toEqual(["'bob'@'10.%'"]);
  });
});

// Properties, over generated declarations, servers and records.
const SEED = 20261208;
const RUNS = 3000;
const NAMES = ['root', 'app', 'report', 'ops', 'reader', 'writer', "o'x"];
const PASSWORDS = ['s3cr3t-Pass!', "it's-a-secret", 'p\\w"d'];

const grantArb = fc
  .record(
    {
      privileges: fc
        .uniqueArray(fc.constantFrom('SELECT', 'INSERT', 'DELETE', 'ALL PRIVILEGES', 'BACKUP_ADMIN'), { minLength: 1 })
        .map((p) => p.sort()),
      database: fc.constantFrom('app', 'logs'),
      table: fc.constantFrom('t1', 't2'),
      withGrantOption: fc.boolean(),
    },
    { requiredKeys: ['privileges'] },
  )
  .map((g) => (g.database === undefined ? { privileges: g.privileges, ...(g.withGrantOption && { withGrantOption: true }) } : g));
const refArb = fc.record({ user: fc.constantFrom(...NAMES), host: fc.constantFrom('%', 'localhost') });
const accountArb = fc.record({
  ref: refArb,
  kind: fc.constantFrom<'SqlUser' | 'SqlRole'>('SqlUser', 'SqlRole'),
  grants: fc.array(grantArb, { maxLength: 3 }),
  roles: fc.uniqueArray(refArb, { maxLength: 2, selector: accountName }),
  locked: fc.boolean(),
  require: fc.constantFrom('NONE', 'SSL', 'X509'),
  deletionPolicy: fc.constantFrom<'Retain' | 'Delete'>('Retain', 'Delete'),
  drift: fc.constantFrom<'report' | 'correct'>('report', 'correct'),
  key: fc.constantFrom('app', 'report', 'missing'),
});
type Gen = typeof accountArb extends fc.Arbitrary<infer T> ? T : never;
const info = (g: Gen): SqlAccountInfo => ({
  kind: g.kind,
  document: `d-${g.ref.user}`,
  ...g.ref,
  grants: g.grants,
  roles: g.roles,
  deletionPolicy: g.deletionPolicy,
  drift: g.drift,
  ...(g.kind === 'SqlUser' && { password: { secret: 'app-passwords', key: g.key }, locked: g.locked, require: g.require as 'NONE' }),
});
const world = fc.record({
  declared: fc.uniqueArray(accountArb, { maxLength: 4, selector: (g) => accountName(g.ref) }),
  server: fc.uniqueArray(accountArb, { maxLength: 5, selector: (g) => accountName(g.ref) }),
  recorded: fc.uniqueArray(accountArb, { maxLength: 4, selector: (g) => accountName(g.ref) }),
  dialect: fc.constantFrom<'tidb' | 'mariadb'>('tidb', 'mariadb'),
  version: fc.constantFrom('uid-1/100', 'uid-1/101'),
  applied: fc.boolean(),
});

function generated(w: typeof world extends fc.Arbitrary<infer T> ? T : never): SqlAccountsInput {
  const observedAccounts = w.server.map((g) => observed(g.ref, { grants: g.grants, roles: g.roles, locked: g.locked, require: g.require }));
  const records = Object.fromEntries(
    w.recorded.map((g) => [
      accountName(g.ref),
      { ...managed(info(g)), secretVersion: w.version, ...(!w.applied && { applied: undefined }) },
    ]),
  );
  return {
    accounts: w.declared.map(info),
    dialect: w.dialect,
    server: w.server.map((g) => g.ref),
    observed: byName(...observedAccounts),
    records,
    secrets: SECRETS,
    login: { user: 'root', host: '%' },
  };
}

describe('planSqlAccounts: properties', () => {
  test('never touches an account neither declared nor managed, never drops a Retain account, never changes root undeclared, never holds a password', () => {
    fc.assert(
      fc.property(world, (w) => {
        const i = generated(w);
        const plan = planSqlAccounts(i);
        const declared = new Set(i.accounts.map(accountName));
        const retained = new Set(
          Object.entries(i.records)
            .filter(([, r]) => r.deletionPolicy === 'Retain')
            .map(([n]) => n),
        );
        for (const step of plan.steps) {
          expect(declared.has(step.account) || i.records[step.account] !== undefined).toBe(true);
          for (const s of step.statements) {
            const text = s.parts.join(' ');
            if (s.kind === 'DROP USER' || s.kind === 'DROP ROLE') {
              expect(declared.has(step.account)).toBe(false);
              expect(retained.has(step.account)).toBe(false);
              expect(step.account.startsWith("'root'@")).toBe(false);
            }
            // root is changed only when declared.
            if (step.account.startsWith("'root'@")) expect(declared.has(step.account)).toBe(true);
            for (const p of PASSWORDS) expect(text).not.toContain(p);
            if (s.password) expect(s.parts).toHaveLength(2);
          }
        }
        expect(JSON.stringify(plan)).not.toMatch(/s3cr3t|it''s-a|p\\\\w/);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  test('once carried out, a plan leaves nothing to do: the server then holds what Git declares', () => {
    fc.assert(
      fc.property(world, (w) => {
        const i = generated(w);
        const plan = planSqlAccounts(i);
        const records: Record<string, SqlAccountRecord> = { ...i.records };
        const server = new Map(i.server.map((r) => [accountName(r), r]));
        const obs = new Map(i.observed);
        for (const step of plan.steps) {
          if (step.record) records[step.account] = step.record;
          else delete records[step.account];
          if (step.news === 'dropped') {
            server.delete(step.account);
            obs.delete(step.account);
          }
        }
        for (const a of i.accounts) {
          const report = plan.accounts.find((r) => r.account === accountName(a))!;
          if (report.state !== 'changing') continue;
          const applied = records[accountName(a)].applied!;
          server.set(accountName(a), { user: a.user, host: a.host });
          const seen = obs.get(accountName(a));
          const corrected = a.drift === 'correct' || seen === undefined;
          // Drift reported stays as it was; everything else is as Git says.
          if (corrected || (report.drift ?? []).length === 0)
            obs.set(
              accountName(a),
              observed(a, {
                grants: applied.grants,
                roles: applied.roles,
                locked: applied.locked === true,
                require: applied.require ?? 'NONE',
              }),
            );
        }
        const again = planSqlAccounts({ ...i, server: [...server.values()], observed: obs, records });
        for (const step of again.steps) {
          const report = again.accounts.find((r) => r.account === step.account);
          if (report?.drift) continue;
          expect([step.account, step.statements.map(statementText)]).toEqual([step.account, []]);
        }
      }),
      { seed: SEED, numRuns: 1000 },
    );
  });
});
