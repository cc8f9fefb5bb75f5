/**
 * Root's password, users and the initial SQL: a TidbInitializer (or `spec.tidb.initializer
 * .createPassword`) renders as a ConfigMap, rights to read exactly its Secrets, and what the controller
 * is to do in its cluster JSON; bad documents are refused with their path and line; the SQL splits as
 * the mysql client splits it; the planner runs it once.
 */
import { stringify } from 'yaml';
import { buildModel, compareModels, type KubeObject } from '../../../src/diff';
import { loadManifests } from '../../../src/diff/load';
import { loadInputs } from '../../../src/backup/companions';
import { linkOperations } from '../../../src/backup/link';
import { splitSql } from '../../../src/base/sql';
import { planInitializer, SKIPPED } from '../../../src/controller/plan/initializer';
import { statementFailure } from '../../../src/controller/reconcile/initializer';
import { hidePasswords } from '../../../src/base/sql-secrets';
import { MysqlError } from '../../../src/controller/clients/mysql';
import { initializerOf, initializerMessage, type InitializerRecord } from '../../../src/controller/records/initializer';
import { parseClusterInfo } from '../../../src/controller/model/cluster';
import { renderClusters } from '../../../src/render/render';
import type { InitializerInfo } from '../../../src/tidbcluster/contract';
import { cluster, find, type Obj } from '../../support/render';
import { assertValidK8sObjects } from '../../support/k8s-schema';

const initializer = (spec: Obj = {}, metadata: Obj = {}): Obj => ({
  apiVersion: 'pingcap.com/v1alpha1',
  kind: 'TidbInitializer',
  metadata: { name: 'demo-init', namespace: 'ns', ...metadata },
  spec: { image: 'tnir/mysqlclient', cluster: { name: 'demo' }, passwordSecret: 'tidb-secret', ...spec },
});

function load(docs: Obj[]) {
  const loaded = loadInputs(docs.map((d) => stringify(d)).join('---\n'), 'in.yaml');
  const linked = linkOperations(loaded.clusters, loaded.documents);
  return { loaded, linked, errors: [...loaded.errors.map((e) => e.message), ...linked.errors].join('\n') };
}

function renderAll(docs: Obj[], kubeMinor = 31): Obj[] {
  const { loaded, linked, errors } = load(docs);
  if (errors) throw new Error(errors);
  const objects = renderClusters(
    loaded.clusters.map((c) => c.resolved),
    linked.operations,
  ).flatMap((r) => r.objects);
  assertValidK8sObjects(objects, `1.${kubeMinor}`);
  return objects;
}

const clusterInfo = (objects: Obj[]) => {
  const env = find(objects, 'Deployment', 'demo-discovery').spec.template.spec.containers[0].env;
  return JSON.parse(env.find((e: Obj) => e.name === 'TIDB_GITOPS_CLUSTER').value);
};
const ruleFor = (objects: Obj[], resource: string, name: string) =>
  find(objects, 'Role', 'demo-discovery').rules.filter((r: Obj) => r.resources.includes(resource) && r.resourceNames?.includes(name));

describe('a TidbInitializer renders', () => {
  test('as a ConfigMap with its SQL, read rights on its Secret, and the cluster JSON; no Job', () => {
    const objects = renderAll([
      cluster(),
      initializer({ initSql: 'CREATE DATABASE app;\n', permitHost: '10.0.%', timezone: 'Asia/Shanghai' }),
    ]);
    const cm = find(objects, 'ConfigMap', 'demo-tidb-initializer');
    expect(cm.metadata).toMatchObject({
      namespace: 'ns',
      labels: {
        'tidb-gitops.io/operation': 'demo-tidb-initializer',
        'app.kubernetes.io/instance': 'demo',
        'app.kubernetes.io/component': 'tidb-initializer',
      },
    });
    expect(cm.data).toEqual({ 'init-sql': 'CREATE DATABASE app;\n' });
    expect(objects.filter((o) => o.kind === 'Job')).toEqual([]);
    const info = clusterInfo(objects).initializer;
    expect(info).toEqual({
      name: 'demo-init',
      digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      passwordSecret: 'tidb-secret',
      permitHost: '10.0.%',
      sql: { configMap: 'demo-tidb-initializer', key: 'init-sql' },
      timezone: 'Asia/Shanghai',
    });
    expect(ruleFor(objects, 'secrets', 'tidb-secret')).toEqual([
      { apiGroups: [''], resources: ['secrets'], resourceNames: ['tidb-secret'], verbs: ['get'] },
    ]);
    expect(ruleFor(objects, 'configmaps', 'demo-tidb-initializer')[0].verbs).toEqual(['get', 'patch']);
    // The controller reads what the renderer wrote.
    expect(parseClusterInfo(JSON.stringify(clusterInfo(objects)), 'ns').initializer).toEqual(info);
  });

  test('tidb-gitops.io/existing-cluster reaches the controller, outside the digest; another value is refused where it is written', () => {
    const plain = clusterInfo(renderAll([cluster(), initializer({ initSql: 'SELECT 1;\n' })])).initializer;
    for (const answer of ['skip', 'run']) {
      const marked = clusterInfo(
        renderAll([cluster(), initializer({ initSql: 'SELECT 1;\n' }, { annotations: { 'tidb-gitops.io/existing-cluster': answer } })]),
      ).initializer;
      expect(marked).toEqual({ ...plain, existingCluster: answer });
      expect(
        parseClusterInfo(JSON.stringify({ name: 'demo', pdAddresses: [], components: [], initializer: marked }), 'ns').initializer,
      ).toEqual(marked);
    }
    expect(load([cluster(), initializer({}, { annotations: { 'tidb-gitops.io/existing-cluster': 'always' } })]).errors).toMatch(
      /document 2: metadata\.annotations\.tidb-gitops\.io\/existing-cluster \(line \d+\): expected skip \(it ran before, in tidb-operator: mark it done\) or run \(run it in the cluster as it is\), got "always"/,
    );
  });

  test("with its SQL in a ConfigMap of the user's: read right on that ConfigMap, no SQL copied", () => {
    const objects = renderAll([cluster(), initializer({ passwordSecret: undefined, initSqlConfigMap: 'my-sql' })]);
    expect(find(objects, 'ConfigMap', 'demo-tidb-initializer').data).toBeUndefined();
    expect(clusterInfo(objects).initializer.sql).toEqual({ configMap: 'my-sql', key: 'init-sql' });
    expect(ruleFor(objects, 'configmaps', 'my-sql')).toEqual([
      { apiGroups: [''], resources: ['configmaps'], resourceNames: ['my-sql'], verbs: ['get'] },
    ]);
    expect(find(objects, 'Role', 'demo-discovery').rules.filter((r: Obj) => r.resources.includes('secrets'))).toEqual([]);
  });

  test("reaches TiDB with the client certificate when its MySQL port has TLS, as the operator's Job did", () => {
    const tls = { tidb: { replicas: 2, tlsClient: { enabled: true, skipInternalClientCA: true } } };
    const objects = renderAll([cluster(tls), initializer({ tlsClientSecretName: 'init-client' })]);
    expect(clusterInfo(objects).initializer.tls).toEqual({ secret: 'init-client', skipCA: true });
    expect(ruleFor(objects, 'secrets', 'init-client')).toHaveLength(1);
    expect(
      clusterInfo(renderAll([cluster({ tidb: { replicas: 2, tlsClient: { enabled: true } } }), initializer()])).initializer.tls,
    ).toEqual({ secret: 'demo-tidb-client-secret' });
    const skip = cluster(
      { tidb: { replicas: 2, tlsClient: { enabled: true } } },
      { annotations: { 'tidb.tidb.pingcap.com/skip-tls-when-connect-tidb': 'true' } },
    );
    expect(clusterInfo(renderAll([skip, initializer()])).initializer.tls).toBeUndefined();
  });

  test('a change to the document changes the digest the controller announces a change by', () => {
    const digest = (spec: Obj) => clusterInfo(renderAll([cluster(), initializer(spec)])).initializer.digest;
    expect(digest({ initSql: 'SELECT 1;' })).toBe(digest({ initSql: 'SELECT 1;' }));
    expect(digest({ initSql: 'SELECT 1;' })).not.toBe(digest({ initSql: 'SELECT 2;' }));
    expect(digest({})).not.toBe(digest({ permitHost: 'x' }));
  });

  test("the fields of the operator's Job Pod are accepted and have no effect", () => {
    const plain = renderAll([cluster(), initializer()]);
    const pod = renderAll([
      cluster(),
      initializer({
        imagePullPolicy: 'Always',
        nodeSelector: { a: 'b' },
        tolerations: [{ operator: 'Exists' }],
        resources: { limits: { cpu: '1' } },
        serviceAccountName: 'x',
      }),
    ]);
    expect(pod).toEqual(plain);
  });
});

describe('spec.tidb.initializer.createPassword', () => {
  test("sets root's password from <cluster>-init, key root, as the operator reads it", () => {
    const objects = renderAll([cluster({ tidb: { replicas: 2, initializer: { createPassword: true } } })]);
    expect(clusterInfo(objects).initializer).toEqual({
      name: 'create-password',
      digest: expect.any(String),
      passwordSecret: 'demo-init',
      rootOnly: true,
      permitHost: '%',
    });
    expect(find(objects, 'ConfigMap', 'demo-tidb-initializer').data).toBeUndefined();
    expect(ruleFor(objects, 'secrets', 'demo-init')).toHaveLength(1);
  });

  test('false, or absent, renders nothing for it', () => {
    for (const tidb of [{ replicas: 2, initializer: { createPassword: false } }, { replicas: 2 }]) {
      const objects = renderAll([cluster({ tidb })]);
      expect(clusterInfo(objects).initializer).toBeUndefined();
      expect(objects.filter((o) => o.metadata.name === 'demo-tidb-initializer')).toEqual([]);
    }
  });
});

describe('bad TidbInitializers are refused with the path and line', () => {
  test.each([
    [{ initSql: 'SELECT 1;', initSqlConfigMap: 'x' }, 'spec.initSqlConfigMap', 'give the SQL once: initSql or initSqlConfigMap, not both'],
    [
      { permitHost: "x' OR 1" },
      'spec.permitHost',
      'invalid host "x\' OR 1": expected a MySQL host pattern such as %, 10.0.% or app.example.com',
    ],
    [
      { timezone: "UTC'; DROP" },
      'spec.timezone',
      'invalid time zone "UTC\'; DROP": expected a name such as Asia/Shanghai, SYSTEM or an offset such as +08:00',
    ],
    [
      { initSql: "INSERT INTO t VALUES ('a);\n" },
      'spec.initSql',
      'cannot be read as SQL statements: line 1: a quoted string that starts here is never closed',
    ],
    [
      { initSql: 'SELECT 1;\nDELIMITER //\nCREATE PROCEDURE p() BEGIN SELECT 1; END//\n' },
      'spec.initSql',
      'cannot be read as SQL statements: line 2: DELIMITER is a command of the mysql client, not SQL',
    ],
    [{ initSql: '-- nothing\n' }, 'spec.initSql', 'no SQL statement in it'],
    [{ passwordSecret: undefined }, 'spec', 'nothing to do: give passwordSecret, initSql or initSqlConfigMap'],
    [{ passwordSecret: 'Bad_Name' }, 'spec.passwordSecret', 'invalid Secret name "Bad_Name"'],
    [{ initSQL: 'x' }, 'spec.initSQL', 'unknown field'],
  ])('%j', (spec, path, message) => {
    const docs = [cluster(), initializer(spec)];
    // The line of the field in the second document, counted in the whole file.
    const text = docs.map((d) => stringify(d)).join('---\n');
    const key = path.slice(path.lastIndexOf('.') + 1);
    const lines = text.split('\n');
    // A mapping's line is its first key's, under the field.
    const at = lines.findIndex(
      (l, i) => i > lines.indexOf('kind: TidbInitializer') && l.startsWith(`${path === 'spec' ? '' : '  '}${key}:`),
    );
    const line = at + (path === 'spec' ? 2 : 1);
    expect(load(docs).errors).toContain(`in.yaml: document 2: ${path} (line ${line}): ${message}`);
  });

  test('one that names no cluster of the input, a second one for a cluster, or one beside createPassword', () => {
    expect(load([cluster(), initializer({ cluster: { name: 'other' } })]).errors).toMatch(
      /document 2: spec\.cluster\.name \(line \d+\): no TidbCluster "other" in the input \(have: ns\/demo\); a TidbInitializer renders with its cluster/,
    );
    expect(load([cluster(), initializer(), initializer({}, { name: 'second' })]).errors).toMatch(
      /document 3: metadata\.name \(line \d+\): TidbCluster ns\/demo already has the TidbInitializer "demo-init" at in\.yaml: document 2; a cluster is initialized once, keep one/,
    );
    expect(load([cluster({ tidb: { replicas: 1, initializer: { createPassword: true } } }), initializer()]).errors).toMatch(
      /sets spec\.tidb\.initializer\.createPassword, which initializes it too: drop createPassword/,
    );
    expect(load([cluster({ tidb: undefined }), initializer()]).errors).toMatch(
      /spec\.cluster\.name \(line \d+\): TidbCluster ns\/demo has no TiDB \(spec\.tidb\) for the controller to log in to/,
    );
    expect(load([cluster(), initializer({}, { namespace: 'other' })]).errors).toMatch(
      /metadata\.namespace \(line \d+\): a TidbInitializer must be in its cluster's namespace "ns"/,
    );
  });
});

describe('the SQL splits as the mysql client splits it', () => {
  test('at ; outside quotes, names and comments, with the line each statement starts on', () => {
    const sql =
      "CREATE DATABASE app;\n-- a comment; not a statement\nCREATE TABLE app.t (\n  a VARCHAR(10) DEFAULT 'x;y', -- c;\n  `b;` INT\n);\n/* x; */ INSERT INTO app.t VALUES ('it''s', \"a\\\";\", 1)\n;\n/*T! SET GLOBAL tidb_x = 1 */;\nSELECT 1";
    expect(splitSql(sql)).toEqual({
      statements: [
        { text: 'CREATE DATABASE app', line: 1 },
        { text: "CREATE TABLE app.t (\n  a VARCHAR(10) DEFAULT 'x;y', -- c;\n  `b;` INT\n)", line: 3 },
        { text: "INSERT INTO app.t VALUES ('it''s', \"a\\\";\", 1)", line: 7 },
        { text: '/*T! SET GLOBAL tidb_x = 1 */', line: 9 },
        { text: 'SELECT 1', line: 10 },
      ],
    });
    expect(splitSql('--x;\nSELECT 2').statements.map((s) => s.text)).toEqual(['--x', 'SELECT 2']);
    expect(splitSql(' ;; \n # only\n').statements).toEqual([]);
    expect(splitSql('SELECT 1; /* never closed').problem).toBe('line 1: a comment that starts here is never closed');
  });
});

describe('the initializer runs once', () => {
  const info: InitializerInfo = { name: 'init', digest: 'sha256:a', passwordSecret: 's', permitHost: '%' };
  const running = (step: InitializerRecord['step']): InitializerRecord => ({
    name: 'init',
    phase: 'Running',
    step,
    digest: 'sha256:a',
    started: '2026-01-01T00:00:00Z',
  });

  test('waits for a ready TiDB Pod, announced once, then runs', () => {
    const first = planInitializer({ info });
    expect(first).toEqual({ kind: 'record', record: { name: 'init', phase: 'Waiting', reason: 'no TiDB Pod is ready' }, news: 'waiting' });
    expect(planInitializer({ info, record: (first as { record: InitializerRecord }).record })).toEqual({ kind: 'none' });
    expect(planInitializer({ info, record: { name: 'init', phase: 'Waiting', reason: 'the Secret s is not there' } })).toEqual({
      kind: 'record',
      record: { name: 'init', phase: 'Waiting', reason: 'no TiDB Pod is ready' },
    });
    expect(planInitializer({ info, readyPod: 'c-tidb-0' })).toEqual({ kind: 'run', pod: 'c-tidb-0' });
  });

  test('in a cluster set up before, marked skip in Git: done without running anything, unless it ran in another instance of the cluster', () => {
    const skip: InitializerInfo = { ...info, existingCluster: 'skip' };
    const done = { kind: 'record', record: { name: 'init', phase: 'Complete', digest: 'sha256:a', reason: SKIPPED } };
    expect(planInitializer({ info: skip, readyPod: 'p' })).toEqual(done);
    expect(
      planInitializer({
        info: skip,
        record: { name: 'init', phase: 'Waiting', reason: 'the cluster holds databases (app)' },
        readyPod: 'p',
      }),
    ).toEqual(done);
    // A run under way, or one over, is not overruled.
    expect(planInitializer({ info: skip, record: running('password'), readyPod: 'p' })).toEqual({
      kind: 'run',
      pod: 'p',
      resume: running('password'),
    });
    expect(
      planInitializer({
        info: skip,
        record: { name: 'init', phase: 'Complete', digest: 'sha256:a', root: 'set', clusterId: '1' },
        readyPod: 'p',
        clusterId: '2',
      }),
    ).toEqual({ kind: 'run', pod: 'p', formerCluster: '1' });
    // run: planned as any other, the action runs it whatever the cluster holds.
    expect(planInitializer({ info: { ...info, existingCluster: 'run' }, readyPod: 'p' })).toEqual({ kind: 'run', pod: 'p' });
  });

  test('a run cut off before its SQL is taken up again; one cut off in its SQL or host change is Lost, never run again', () => {
    for (const step of ['connect', 'password', 'users'] as const) {
      expect(planInitializer({ info, record: running(step), readyPod: 'p' })).toEqual({ kind: 'run', pod: 'p', resume: running(step) });
      expect(planInitializer({ info, record: running(step) })).toEqual({ kind: 'none' });
    }
    for (const step of ['sql', 'host'] as const) {
      const plan = planInitializer({ info, record: running(step), readyPod: 'p' });
      expect(plan).toMatchObject({
        kind: 'record',
        news: 'lost',
        record: { phase: 'Lost', error: expect.stringContaining('it is not run again') },
      });
    }
  });

  test('over is over: a changed document is announced once and not run; another name runs', () => {
    const done: InitializerRecord = { name: 'init', phase: 'Complete', digest: 'sha256:a', root: 'set', statements: 2 };
    expect(planInitializer({ info, record: done, readyPod: 'p' })).toEqual({ kind: 'none' });
    const changed = planInitializer({ info: { ...info, digest: 'sha256:b' }, record: done, readyPod: 'p' });
    expect(changed).toEqual({ kind: 'record', record: { ...done, changed: 'sha256:b' }, news: 'changed' });
    expect(planInitializer({ info: { ...info, digest: 'sha256:b' }, record: { ...done, changed: 'sha256:b' }, readyPod: 'p' })).toEqual({
      kind: 'none',
    });
    expect(planInitializer({ info: { ...info, name: 'init-2' }, record: done, readyPod: 'p' })).toEqual({ kind: 'run', pod: 'p' });
  });

  test('a cluster made anew (another PD cluster ID) is initialized again: its root has no password, it has none of the users', () => {
    const done: InitializerRecord = {
      name: 'init',
      phase: 'Complete',
      digest: 'sha256:a',
      root: 'set',
      statements: 2,
      clusterId: '7400000000000000001',
    };
    expect(planInitializer({ info, record: done, readyPod: 'p', clusterId: '7371123456789012345' })).toEqual({
      kind: 'run',
      pod: 'p',
      formerCluster: '7400000000000000001',
    });
    const waiting = planInitializer({ info, record: done, clusterId: '7371123456789012345' });
    expect(waiting).toEqual({
      kind: 'record',
      record: { name: 'init', phase: 'Waiting', reason: 'no TiDB Pod is ready', formerCluster: '7400000000000000001' },
      news: 'waiting',
    });
    expect(
      planInitializer({ info, record: (waiting as { record: InitializerRecord }).record, readyPod: 'p', clusterId: '7371123456789012345' }),
    ).toEqual({ kind: 'run', pod: 'p', formerCluster: '7400000000000000001' });
    // The same cluster, PD not answering, or a record from before the ID was kept: over.
    for (const [record, clusterId] of [
      [done, '7400000000000000001'],
      [done, undefined],
      [{ ...done, clusterId: undefined }, '7371123456789012345'],
    ] as const) {
      expect(planInitializer({ info, record, readyPod: 'p', ...(clusterId && { clusterId }) })).toEqual({ kind: 'none' });
    }
    expect(initializerMessage({ ...done, clusterId: '7371123456789012345', formerCluster: '7400000000000000001' })).toBe(
      "complete: root's password set; 2 SQL statements run; in the cluster made anew (it ran before in cluster 7400000000000000001, which is gone)",
    );
  });

  test('the record reads back as written, and says what happened in a line', () => {
    const r: InitializerRecord = {
      name: 'init',
      phase: 'Complete',
      digest: 'sha256:a',
      root: 'set',
      users: ['app'],
      statements: 1,
      started: 'x',
      finished: 'y',
    };
    expect(initializerOf(JSON.parse(JSON.stringify({ initializer: r })))).toEqual(r);
    expect(initializerOf({ initializer: { name: 'x', phase: 'Bogus' } })).toBeUndefined();
    expect(initializerMessage(r)).toBe("complete: root's password set; users created: app; 1 SQL statement run");
    expect(initializerMessage({ name: 'x', phase: 'Complete', root: 'kept' })).toBe(
      'complete: root already had a password, left as it was',
    );
  });
});

describe('a failed statement of the initial SQL says no password', () => {
  test("the server's words quoting the statement lose its password and the Secrets' ones, and keep the rest", () => {
    const statement = "CREATE USERR 'app'@'%' IDENTIFIED BY 'lit\\'pass'";
    const err = new MysqlError(
      "You have an error in your SQL syntax; check the manual that corresponds to your MariaDB server version for the right syntax to use near 'USERR 'app'@'%' IDENTIFIED BY 'lit\\'pass'' at line 1",
      1064,
      '42000',
    );
    const known = ['from-the-secret'];
    const said = statementFailure(err, { index: 1, total: 3, line: 4 }, (text) => hidePasswords(text, { statement, known }));
    expect(said).toBe(
      "statement 2 of 3 (line 4 of the SQL) failed: ERROR 1064 (42000): You have an error in your SQL syntax; check the manual that corresponds to your MariaDB server version for the right syntax to use near 'USERR 'app'@'%' IDENTIFIED BY '***'' at line 1; the 1 before it ran, none after it",
    );
    // A password of the Secrets', however the server came to say it.
    const echoed = new MysqlError("Operation CREATE USER failed for 'app'@'%' with from-the-secret", 1396, 'HY000');
    expect(
      statementFailure(echoed, { index: 0, total: 1, line: 1 }, (text) => hidePasswords(text, { statement: 'CREATE USER app', known })),
    ).not.toContain('from-the-secret');
  });
});

describe('diff', () => {
  const risks = (before: Obj[] | undefined, after: Obj[]) =>
    compareModels(
      buildModel((before ? renderAll(before) : []) as KubeObject[]),
      buildModel(renderAll(after) as KubeObject[]),
    ).clusters.flatMap((c) => c.risks.filter((r) => r.id === 'initializer').map((r) => r.message));

  test('reads a TidbInitializer beside its cluster in the inputs, as render does, not as an object of its own', () => {
    const text = [cluster(), initializer({ initSql: 'SELECT 1;' })].map((d) => stringify(d)).join('---\n');
    const loaded = loadManifests([{ file: 'in.yaml', text, explicit: true }]);
    expect(loaded.errors).toEqual([]);
    expect(loaded.objects.filter((o) => o.kind === 'TidbInitializer')).toEqual([]);
    expect(loaded.objects).toEqual(renderAll([cluster(), initializer({ initSql: 'SELECT 1;' })]));
  });

  test('reports one added to a running cluster, renamed, or changed; not one that comes with a new cluster', () => {
    const sql = { initSql: 'CREATE DATABASE app;' };
    expect(risks(undefined, [cluster(), initializer(sql)])).toEqual([]);
    expect(risks([cluster()], [cluster(), initializer(sql)])).toEqual([
      "The initializer demo-init is added to a running cluster: once this lands, the controller logs in to TiDB as root and sets root's password and creates the users of the Secret tidb-secret (root's only while it has none), runs the SQL of the ConfigMap demo-tidb-initializer, once.",
    ]);
    expect(risks([cluster(), initializer(sql)], [cluster(), initializer(sql)])).toEqual([]);
    expect(risks([cluster(), initializer(sql)], [cluster(), initializer({ initSql: 'CREATE DATABASE app2;' })])[0]).toMatch(
      /^The initializer demo-init changed: it runs once, so if it already ran this change does nothing/,
    );
    expect(risks([cluster(), initializer(sql)], [cluster(), initializer(sql, { name: 'again' })])[0]).toMatch(
      /^The initializer demo-init is replaced by again, a new one: it sets root's password/,
    );
    expect(risks([cluster()], [cluster({ tidb: { replicas: 2, initializer: { createPassword: true } } })])).toEqual([
      "The initializer create-password is added to a running cluster: once this lands, the controller logs in to TiDB as root and sets root's password from the Secret demo-init while root has none, once.",
    ]);
  });
});
