/**
 * SqlUser and SqlRole documents read beside a cluster: their defaults, and every bad input refused
 * with its file, document, path, line and what was expected, as strictly as a TidbCluster.
 */
import { parseLevel } from '../../../src/database/read';
import { grantableAt, isPrivilege, PRIVILEGES } from '../../../src/database/privileges';
import { loadInputDocuments } from '../../../src/inputs';
import { errorsOf, loginCluster, read, sqlRole, sqlUser, yamlOf } from '../../support/sql-accounts';

const accountsOf = (docs: Parameters<typeof read>[0]) => {
  const r = read(docs);
  expect(r.errors).toEqual([]);
  return r.clusters[0].operations.sql;
};

const CLUSTER = yamlOf([loginCluster()]);

describe('reading SqlUser and SqlRole', () => {
  test("defaults: user from metadata.name, host %, no lock, Retain, report; the login Secret is the initializer's", () => {
    const sql = accountsOf([loginCluster(), sqlUser('app')]);
    expect(sql).toEqual({
      loginSecret: 'demo-init',
      accounts: [{ kind: 'SqlUser', document: 'app', user: 'app', host: '%', password: { secret: 'app-password', key: 'password' } }],
    });
  });

  test('every field: privileges upper case, sorted and once, grants by level, roles sorted, roles before users', () => {
    const sql = accountsOf([
      loginCluster(),
      sqlRole('writer', { grants: [{ privileges: ['insert', 'Update'], level: 'app.*' }] }),
      sqlRole('reader', { host: 'localhost', grants: [{ privileges: ['select'], level: '`app-1`.`odd``name`' }] }),
      sqlUser('app', {
        user: 'app_user',
        host: '10.0.%',
        require: 'SSL',
        resourceGroup: 'rg_app',
        locked: true,
        roles: [{ name: 'writer' }, { name: 'reader', host: 'localhost' }],
        grants: [
          { privileges: ['select', 'SELECT', 'show  view'], level: 'app.t1', withGrantOption: true },
          { privileges: ['BACKUP_ADMIN', 'process'], level: '*.*' },
          { privileges: ['all'], level: 'scratch.*' },
        ],
        deletionPolicy: 'Delete',
        drift: 'correct',
      }),
    ]);
    expect(sql?.accounts).toEqual([
      {
        kind: 'SqlRole',
        document: 'reader',
        user: 'reader',
        host: 'localhost',
        grants: [{ privileges: ['SELECT'], database: 'app-1', table: 'odd`name' }],
      },
      { kind: 'SqlRole', document: 'writer', user: 'writer', host: '%', grants: [{ privileges: ['INSERT', 'UPDATE'], database: 'app' }] },
      {
        kind: 'SqlUser',
        document: 'app',
        user: 'app_user',
        host: '10.0.%',
        password: { secret: 'app-password', key: 'password' },
        require: 'SSL',
        resourceGroup: 'rg_app',
        locked: true,
        roles: [
          { user: 'reader', host: 'localhost' },
          { user: 'writer', host: '%' },
        ],
        grants: [
          { privileges: ['BACKUP_ADMIN', 'PROCESS'] },
          { privileges: ['SELECT', 'SHOW VIEW'], database: 'app', table: 't1', withGrantOption: true },
          { privileges: ['ALL PRIVILEGES'], database: 'scratch' },
        ],
        deletionPolicy: 'Delete',
        drift: 'correct',
      },
    ]);
  });

  test('root only when spec.user: root is written', () => {
    expect(accountsOf([loginCluster(), sqlUser('admin', { user: 'root', host: 'localhost' })])?.accounts[0].user).toBe('root');
    expect(errorsOf([loginCluster(), sqlUser('root')])).toEqual([
      'in.yaml: document 2: metadata.name (line 24): this document would manage root (its name is the user when spec.user is left out): root is managed only when spec.user: root is written',
    ]);
    expect(errorsOf([loginCluster(), sqlUser('admin', { user: 'root', deletionPolicy: 'Delete' })])).toEqual([
      'in.yaml: document 2: spec.deletionPolicy (line 33): root is never dropped: leave deletionPolicy out (Retain) for root',
    ]);
  });

  test('the levels a grant can be on', () => {
    expect(parseLevel('*.*')).toEqual({});
    expect(parseLevel('app.*')).toEqual({ database: 'app' });
    expect(parseLevel('`my-db`.`t.1`')).toEqual({ database: 'my-db', table: 't.1' });
    for (const bad of ['*', 'app', '*.t', 'a.b.c', 'my-db.*', '`open.*', '']) expect(typeof parseLevel(bad)).toBe('string');
  });

  test("TiDB's privileges and levels (pkg/parser/mysql/privs.go, pkg/privilege/privileges/privileges.go)", () => {
    expect(PRIVILEGES).toHaveLength(16 + 31 + 2);
    expect(isPrivilege('RESOURCE_GROUP_USER')).toBe(true);
    expect(isPrivilege('GRANT OPTION')).toBe(false);
    expect(grantableAt('SELECT', 'table')).toBe(true);
    expect(grantableAt('EXECUTE', 'table')).toBe(false);
    expect(grantableAt('EXECUTE', 'database')).toBe(true);
    expect(grantableAt('CREATE USER', 'database')).toBe(false);
    expect(grantableAt('BACKUP_ADMIN', 'global')).toBe(true);
    expect(grantableAt('USAGE', 'table')).toBe(true);
  });
});

describe('bad documents are refused with file, document, path and line', () => {
  const doc = (body: string) => `${CLUSTER}---\n${body}`;
  const user = (spec: string) =>
    doc(
      `apiVersion: tidb-gitops.io/v1alpha1\nkind: SqlUser\nmetadata:\n  name: app\n  namespace: ns\nspec:\n  cluster:\n    name: demo\n  passwordSecret:\n    name: app-password\n    key: password\n${spec}`,
    );
  // The line of `needle` in the last document.
  const lineOf = (text: string, needle: string) => {
    const lines = text.split('\n');
    return lines.indexOf(needle, lines.lastIndexOf('---')) + 1;
  };

  test('an unknown field, with a did-you-mean', () => {
    const text = user('  rolse: []\n');
    expect(errorsOf(text)).toEqual([
      `in.yaml: document 2: spec.rolse (line ${lineOf(text, '  rolse: []')}): unknown field; did you mean roles?`,
    ]);
  });

  test('an account or host name MySQL cannot take', () => {
    const text = user("  user: 'app user'\n  host: 'a b'\n  roles:\n    - name: r\n      host: '10.0.%'\n    - name: \"it's\"\n");
    expect(errorsOf(text)).toEqual([
      [
        `in.yaml: document 2: spec.user (line ${lineOf(text, "  user: 'app user'")}): invalid account name "app user": expected at most 32 characters, none of them a quote, backquote, backslash or white space`,
        `in.yaml: document 2: spec.host (line ${lineOf(text, "  host: 'a b'")}): invalid host "a b": expected a MySQL host pattern such as %, 10.0.% or app.example.com`,
        `in.yaml: document 2: spec.roles[1].name (line ${lineOf(text, '    - name: "it\'s"')}): invalid account name "it's": expected at most 32 characters, none of them a quote, backquote, backslash or white space`,
      ].join('\n'),
    ]);
  });

  test('a password written inline', () => {
    const text = user('  password: hunter2\n');
    const errors = errorsOf(text);
    expect(errors).toEqual([
      `in.yaml: document 2: spec.password (line ${lineOf(text, '  password: hunter2')}): passwords are never written in Git: they come from a Secret, named in spec.passwordSecret {name, key}`,
    ]);
    expect(errors.join('\n')).not.toContain('hunter2');
  });

  test('a privilege TiDB does not know, at a level it cannot be granted at, ALL PRIVILEGES with others, GRANT OPTION', () => {
    const text = user(
      [
        '  grants:',
        '    - privileges: [SELEKT]',
        "      level: 'app.*'",
        '    - privileges: [BACKUP_ADMIN, PROCESS, EXECUTE, SELECT]',
        '      level: app.t',
        '    - privileges: [ALL, SELECT]',
        "      level: 'other.*'",
        '    - privileges: [GRANT OPTION]',
        "      level: '*.*'",
        '    - privileges: [SELECT]',
        '      level: app',
        '',
      ].join('\n'),
    );
    const at = (needle: string) => lineOf(text, needle);
    expect(errorsOf(text)).toEqual([
      [
        `in.yaml: document 2: spec.grants[0].privileges[0] (line ${at('    - privileges: [SELEKT]')}): "SELEKT" is no privilege TiDB knows; did you mean SELECT? (expected one of its static privileges, SELECT, INSERT, CREATE USER..., or a dynamic one, BACKUP_ADMIN...: see the reference)`,
        `in.yaml: document 2: spec.grants[1].privileges[0] (line ${at('    - privileges: [BACKUP_ADMIN, PROCESS, EXECUTE, SELECT]')}): BACKUP_ADMIN can only be granted globally, on '*.*' (a dynamic privilege), not on "app.t"`,
        `in.yaml: document 2: spec.grants[1].privileges[1] (line ${at('    - privileges: [BACKUP_ADMIN, PROCESS, EXECUTE, SELECT]')}): PROCESS can only be granted globally, on '*.*', not on "app.t"`,
        `in.yaml: document 2: spec.grants[1].privileges[2] (line ${at('    - privileges: [BACKUP_ADMIN, PROCESS, EXECUTE, SELECT]')}): EXECUTE can only be granted on a database ('db.*') or globally, not on "app.t"`,
        `in.yaml: document 2: spec.grants[2].privileges (line ${at('    - privileges: [ALL, SELECT]')}): ALL PRIVILEGES stands alone in its grant: it already holds SELECT`,
        `in.yaml: document 2: spec.grants[3].privileges[0] (line ${at('    - privileges: [GRANT OPTION]')}): GRANT OPTION is given with withGrantOption: true, not as a privilege`,
        `in.yaml: document 2: spec.grants[4].level (line ${at('      level: app')}): expected '*.*', 'db.*' or 'db.table' (backquote a name with other characters: \`my-db\`.*), got "app"`,
      ].join('\n'),
    ]);
  });

  test('a grant keyed on (which YAML 1.1 reads as true) points to level', () => {
    const text = user(['  grants:', '    - privileges: [SELECT]', `      "on": 'app.*'`, `      level: 'app.*'`, ''].join('\n'));
    expect(errorsOf(text)).toEqual([
      `in.yaml: document 2: spec.grants[0].on (line ${lineOf(text, `      "on": 'app.*'`)}): write what the grant is on as level: 'db.*' (a key on is read as true by YAML 1.1 readers, kubectl's among them)`,
    ]);
  });

  test("an SqlRole with a user's fields", () => {
    const text = doc(
      'apiVersion: tidb-gitops.io/v1alpha1\nkind: SqlRole\nmetadata:\n  name: reader\n  namespace: ns\nspec:\n  cluster:\n    name: demo\n  passwordSecret:\n    name: x\n    key: y\n  locked: true\n',
    );
    expect(errorsOf(text)).toEqual([
      [
        `in.yaml: document 2: spec.passwordSecret (line ${lineOf(text, '    name: x')}): an SqlRole cannot log in, so it has no passwordSecret: passwordSecret, require, resourceGroup, locked belong to an SqlUser`,
        `in.yaml: document 2: spec.locked (line ${lineOf(text, '  locked: true')}): an SqlRole cannot log in, so it has no locked: passwordSecret, require, resourceGroup, locked belong to an SqlUser`,
      ].join('\n'),
    ]);
  });

  test('an SqlUser without its password Secret', () => {
    const text = doc(
      'apiVersion: tidb-gitops.io/v1alpha1\nkind: SqlUser\nmetadata:\n  name: app\n  namespace: ns\nspec:\n  cluster:\n    name: demo\n',
    );
    expect(errorsOf(text)).toEqual([
      `in.yaml: document 2: spec.passwordSecret (line ${lineOf(text, '  cluster:')}): required field is missing`,
    ]);
  });

  test('a kind of the project no reader takes is refused with a did-you-mean, another version too; the same kinds of other groups pass through', () => {
    const typo = doc('apiVersion: tidb-gitops.io/v1alpha1\nkind: Changefed\nmetadata:\n  name: f\n');
    expect(errorsOf(typo)).toEqual([
      `in.yaml: document 2: kind (line ${lineOf(typo, 'kind: Changefed')}): "Changefed" is no kind of tidb-gitops.io/v1alpha1; did you mean Changefeed? (its kinds: SqlUser, SqlRole, ResourceGroup, Changefeed); refused rather than applied and ignored`,
    ]);
    const other = doc('apiVersion: tidb-gitops.io/v1\nkind: SqlUser\nmetadata:\n  name: f\n');
    expect(errorsOf(other)[0]).toContain(
      `document 2: apiVersion (line ${lineOf(other, 'apiVersion: tidb-gitops.io/v1')}): expected tidb-gitops.io/v1alpha1, got "tidb-gitops.io/v1"`,
    );
    const azure = read(doc('apiVersion: resources.azure.com/v1api20200601\nkind: ResourceGroup\nmetadata:\n  name: rg\n'));
    expect(azure.errors).toEqual([]);
    expect(azure.others.map((o) => o.value.kind)).toEqual(['ResourceGroup']);
  });
});

describe('loadInputDocuments (tidb-gitops/inputs)', () => {
  test('reads SqlUsers and SqlRoles beside the operator documents of one text, and refuses a kind of its group it does not know', () => {
    const good = loadInputDocuments(yamlOf([loginCluster(), sqlRole('reader'), sqlUser('app')]), 'in.yaml');
    expect(good.errors).toEqual([]);
    expect(good.clusters).toHaveLength(1);
    expect(good.documents.map((d) => d.value.kind)).toEqual(['SqlRole', 'SqlUser']);
    const feed = { apiVersion: 'tidb-gitops.io/v1alpha1', kind: 'ChangeFeed', metadata: { name: 'f', namespace: 'ns' }, spec: {} };
    const refused = loadInputDocuments(yamlOf([loginCluster(), feed]), 'in.yaml');
    expect(refused.others).toEqual([]);
    expect(refused.errors.map((e) => e.message).join('\n')).toMatch(/in\.yaml: document 2: .*did you mean Changefeed\?/);
  });
});
