/**
 * SqlUsers and SqlRoles tied to their cluster: the cluster JSON holds them for the controller (and
 * parses back equal), the controller's Role may read exactly their Secrets and root's, and a document
 * that names no cluster, sits in another namespace, declares an account twice, grants an undeclared
 * role, asks for a resource group before v7.1, or whose cluster gives no root password is refused.
 */
import fc from 'fast-check';
import { encodeControllerClusterInfo, parseControllerClusterInfo, type ControllerClusterInfo } from '../../../src/tidbcluster/contract';
import { find, type Obj } from '../../support/render';
import { clusterJson, errorsOf, loginCluster, read, renderAccounts, sqlRole, sqlUser } from '../../support/sql-accounts';

const initializer = (spec: Obj = {}): Obj => ({
  apiVersion: 'pingcap.com/v1alpha1',
  kind: 'TidbInitializer',
  metadata: { name: 'demo-init', namespace: 'ns' },
  spec: { image: 'tnir/mysqlclient', cluster: { name: 'demo' }, passwordSecret: 'tidb-secret', ...spec },
});
const plainCluster = () => {
  const c = loginCluster();
  delete c.spec.tidb.initializer;
  return c;
};
const secretRule = (objects: Obj[]) => find(objects, 'Role', 'demo-discovery').rules.filter((r: Obj) => r.resources.includes('secrets'));

const EXAMPLE = [
  loginCluster(),
  sqlRole('reader', { grants: [{ privileges: ['SELECT'], level: 'app.*' }] }),
  sqlUser('app', {
    roles: [{ name: 'reader' }],
    grants: [{ privileges: ['INSERT', 'UPDATE', 'DELETE'], level: 'app.*' }],
    passwordSecret: { name: 'app-password', key: 'password' },
  }),
  sqlUser('backup', {
    user: 'br',
    host: '10.0.%',
    require: 'SSL',
    grants: [{ privileges: ['BACKUP_ADMIN', 'RESTORE_ADMIN'], level: '*.*' }],
    passwordSecret: { name: 'br-password', key: 'pw' },
    deletionPolicy: 'Delete',
  }),
];

describe('rendered for the controller', () => {
  test("two users and a role: the cluster JSON holds them, the Role reads their Secrets and root's", () => {
    const objects = renderAccounts(EXAMPLE);
    expect(clusterJson(objects).sql).toEqual({
      loginSecret: 'demo-init',
      accounts: [
        { kind: 'SqlRole', document: 'reader', user: 'reader', host: '%', grants: [{ privileges: ['SELECT'], database: 'app' }] },
        {
          kind: 'SqlUser',
          document: 'app',
          user: 'app',
          host: '%',
          password: { secret: 'app-password', key: 'password' },
          roles: [{ user: 'reader', host: '%' }],
          grants: [{ privileges: ['DELETE', 'INSERT', 'UPDATE'], database: 'app' }],
        },
        {
          kind: 'SqlUser',
          document: 'backup',
          user: 'br',
          host: '10.0.%',
          password: { secret: 'br-password', key: 'pw' },
          require: 'SSL',
          grants: [{ privileges: ['BACKUP_ADMIN', 'RESTORE_ADMIN'] }],
          deletionPolicy: 'Delete',
        },
      ],
    });
    expect(secretRule(objects)).toEqual([
      { apiGroups: [''], resources: ['secrets'], resourceNames: ['app-password', 'br-password', 'demo-init'], verbs: ['get'] },
    ]);
  });

  test("the login Secret is a TidbInitializer's passwordSecret; TLS to TiDB is the initializer's", () => {
    const tls = plainCluster();
    tls.spec.tidb.tlsClient = { enabled: true };
    const objects = renderAccounts([tls, initializer(), sqlUser('app')]);
    expect(clusterJson(objects).sql).toMatchObject({ loginSecret: 'tidb-secret', tls: { secret: 'demo-tidb-client-secret' } });
    expect(secretRule(objects)[0].resourceNames).toEqual(['app-password', 'demo-tidb-client-secret', 'tidb-secret']);
  });

  test('no SqlUser or SqlRole: no sql in the cluster JSON, no more Secrets', () => {
    const objects = renderAccounts([loginCluster()]);
    expect(clusterJson(objects).sql).toBeUndefined();
    expect(secretRule(objects)[0].resourceNames).toEqual(['demo-init']);
  });

  test('the cluster JSON parses back equal (encode -> parse)', () => {
    const info = clusterJson(renderAccounts(EXAMPLE)) as ControllerClusterInfo;
    expect(parseControllerClusterInfo(encodeControllerClusterInfo(info))).toEqual(info);
  });

  test('every account read parses back equal (generated accounts)', () => {
    const privilege = fc.constantFrom('SELECT', 'INSERT', 'UPDATE', 'DELETE', 'INDEX');
    const account = fc.record({
      user: fc.stringMatching(/^u[a-z0-9_]{0,10}$/),
      host: fc.constantFrom('%', 'localhost', '10.0.%'),
      role: fc.boolean(),
      locked: fc.boolean(),
      grants: fc.array(fc.record({ privileges: fc.uniqueArray(privilege, { minLength: 1 }), db: fc.constantFrom('a', 'b', 'c') }), {
        maxLength: 3,
      }),
    });
    fc.assert(
      fc.property(fc.uniqueArray(account, { selector: (a) => `${a.user}@${a.host}`, maxLength: 5 }), (accounts) => {
        const docs = accounts.map((a, i) => {
          const grants = [...new Map(a.grants.map((g) => [g.db, { privileges: g.privileges, level: `${g.db}.*` }])).values()];
          return a.role
            ? sqlRole(`d${i}`, { user: a.user, host: a.host, grants })
            : sqlUser(`d${i}`, { user: a.user, host: a.host, locked: a.locked, grants });
        });
        const r = read([loginCluster(), ...docs]);
        expect(r.errors).toEqual([]);
        const sql = r.clusters[0].operations.sql;
        if (accounts.length === 0) return expect(sql).toBeUndefined();
        const info = {
          ...(JSON.parse(
            '{"name":"demo","clusterDomain":"","acrossK8s":false,"tls":false,"discoveryMtls":false,"pdAddresses":[],"cluster":null,"components":[]}',
          ) as ControllerClusterInfo),
          sql,
        };
        expect(parseControllerClusterInfo(encodeControllerClusterInfo(info)).sql).toEqual(sql);
        // Roles first, then users; each sorted by user and host.
        const kinds = sql!.accounts.map((a) => a.kind);
        expect(kinds).toEqual([...kinds].sort((a, b) => (a === b ? 0 : a === 'SqlRole' ? -1 : 1)));
      }),
      { numRuns: 200 },
    );
  });

  test('the parser refuses what the renderer never writes, naming the key', () => {
    const base = { name: 'demo', pdAddresses: [], cluster: null, components: [] };
    const parse = (sql: unknown) => () => parseControllerClusterInfo(JSON.stringify({ ...base, sql }));
    expect(parse({ accounts: [] })).toThrow(
      'TIDB_GITOPS_CLUSTER.sql: expected {loginSecret, accounts} and optionally tls {secret, skipCA}',
    );
    expect(parse({ loginSecret: 'x', accounts: [], tls: { secret: '' } })).toThrow(
      'TIDB_GITOPS_CLUSTER.sql.tls: expected {secret} and optionally skipCA: true',
    );
    const user = { kind: 'SqlUser', document: 'app', user: 'app', host: '%', password: { secret: 's', key: 'k' } };
    expect(parse({ loginSecret: 'x', accounts: [user] })).not.toThrow();
    for (const bad of [
      { ...user, password: undefined },
      { ...user, kind: 'SqlRole' },
      { ...user, grants: [{ privileges: ['select'] }] },
      { ...user, grants: [{ privileges: ['UPDATE', 'SELECT'] }] },
      { ...user, grants: [{ privileges: ['SELECT'], table: 't' }] },
      { ...user, require: 'TLS' },
      { ...user, deletionPolicy: 'Drop' },
    ])
      expect(parse({ loginSecret: 'x', accounts: [user, bad] })).toThrow(
        /^TIDB_GITOPS_CLUSTER\.sql\.accounts\[1\]: expected \{kind \(SqlUser or SqlRole\), document, user, host\}/,
      );
  });
});

describe('linking errors', () => {
  test('a document naming no cluster of the input, or in another namespace', () => {
    expect(errorsOf([loginCluster(), sqlUser('app', { cluster: { name: 'other' } })])).toEqual([
      'in.yaml: document 2: spec.cluster.name (line 28): no TidbCluster "other" in namespace ns in the input (have: ns/demo); an SqlUser is kept by its cluster\'s controller',
    ]);
    expect(errorsOf([loginCluster(), sqlUser('app', { cluster: { name: 'demo', namespace: 'ns' } }, { namespace: 'apps' })])).toEqual([
      'in.yaml: document 2: metadata.namespace (line 25): an SqlUser must be in its cluster\'s namespace "ns": the cluster\'s controller reads its Secrets with rights in that namespace only',
    ]);
  });

  test('one account declared twice, also across SqlUser and SqlRole; a host compares without case', () => {
    expect(errorsOf([loginCluster(), sqlUser('app'), sqlRole('app-role', { user: 'app' })])).toEqual([
      "in.yaml: document 3: spec.user (line 41): the account 'app'@'%' is already declared by the SqlUser \"app\" at in.yaml: document 2; declare each account once",
    ]);
    expect(
      errorsOf([loginCluster(), sqlRole('r1', { user: 'r', host: 'LocalHost' }), sqlRole('r2', { user: 'r', host: 'localhost' })])[0],
    ).toContain('already declared by the SqlRole "r1"');
  });

  test('a role granted that no SqlRole declares, or that is a user', () => {
    expect(errorsOf([loginCluster(), sqlUser('app', { roles: [{ name: 'reader' }] })])).toEqual([
      "in.yaml: document 2: spec.roles[0].name (line 33): no SqlRole declares 'reader'@'%' for TidbCluster ns/demo: the roles the controller grants must be declared in the input",
    ]);
    expect(
      errorsOf([loginCluster(), sqlUser('other'), sqlUser('app', { roles: [{ name: 'reader' }, { name: 'other' }] }), sqlRole('reader')]),
    ).toEqual([
      "in.yaml: document 3: spec.roles[1].name (line 46): 'other'@'%' is the SqlUser \"other\", not a role: only an SqlRole can be granted",
    ]);
  });

  test('a resource group before TiDB v7.1', () => {
    expect(errorsOf([loginCluster({ version: 'v7.0.0' }), sqlUser('app', { resourceGroup: 'rg_app' })])).toEqual([
      'in.yaml: document 2: spec.resourceGroup (line 32): resource groups come with TiDB v7.1, and TidbCluster ns/demo runs pingcap/tidb:v7.0.0: leave resourceGroup out, or upgrade the cluster first',
    ]);
    expect(read([loginCluster({ version: 'v7.1.0' }), sqlUser('app', { resourceGroup: 'rg_app' })]).errors).toEqual([]);
  });

  test('a cluster that gives no root password to log in with', () => {
    expect(errorsOf([plainCluster(), sqlRole('reader')])).toEqual([
      "in.yaml: document 2: spec.cluster.name (line 26): TidbCluster ns/demo gives the controller no root password to log in with, and it keeps SQL accounts and resource groups as root: add a TidbInitializer for it with passwordSecret (a Secret whose key root holds root's password), or set spec.tidb.initializer.createPassword: true on the cluster (the Secret demo-init, key root)",
    ]);
    expect(errorsOf([plainCluster(), initializer({ passwordSecret: undefined, initSql: 'SELECT 1;' }), sqlRole('reader')])[0]).toContain(
      'gives the controller no root password to log in with',
    );
  });
});
