/**
 * A restore of a database, a table or a table filter, which BR starts on a cluster whatever tables it
 * holds, waits while a table it would restore into exists: what the rendered Job restores is read
 * from BR's arguments, the table filter as the TiDB tools read it, the cluster's tables from TiDB's
 * schema API; and the plan holds the restore back, saying why, while a full restore of everything is
 * left to BR's own check of an empty cluster.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { stringify } from 'yaml';
import { loadInputs } from '../../../../src/backup/companions';
import { linkOperations } from '../../../../src/backup/link';
import { parseTableFilter, type TableName } from '../../../../src/base/table-filter';
import { tidbTables } from '../../../../src/controller/clients/tidb';
import { planOneShotRuns as planOperations } from '../../../../src/controller/plan/one-shot-runs';
import { isSystemSchema, restoreBlocked, restoreWrites, type RestoreWrites } from '../../../../src/controller/plan/restore-check';
import { renderClusters } from '../../../../src/render/render';
import { cluster, find, type Obj } from '../../../support/render';

const S3 = { provider: 'ceph', endpoint: 'http://minio:9000', bucket: 'backups', prefix: 'demo/once', secretName: 's3-secret' };

/** The `job.json` the Restore renders to. */
function restoreJob(spec: Obj): string {
  const doc = {
    apiVersion: 'pingcap.com/v1alpha1',
    kind: 'Restore',
    metadata: { name: 'r', namespace: 'ns' },
    spec: { br: { cluster: 'demo' }, s3: S3, ...spec },
  };
  const loaded = loadInputs([cluster(), doc].map((d) => stringify(d)).join('---\n'), 'in.yaml');
  const linked = linkOperations(loaded.clusters, loaded.documents);
  const errors = [...loaded.errors.map((e) => e.message), ...linked.errors];
  if (errors.length > 0) throw new Error(errors.join('\n'));
  const objects = renderClusters(
    loaded.clusters.map((c) => c.resolved),
    linked.operations,
  ).flatMap((r) => r.objects);
  return find(objects, 'ConfigMap', 'restore-r').data['job.json'];
}

const TABLES: TableName[] = [
  { schema: 'app', name: 'users' },
  { schema: 'App', name: 'Orders' },
  { schema: 'billing', name: 'invoices' },
  { schema: 'mysql', name: 'user' },
];

const blockedBy = (writes: RestoreWrites) => restoreBlocked(writes, TABLES);

describe('what a restore writes into, from its rendered Job', () => {
  test('a full restore of everything, and a point in time without a filter, are left to BR', () => {
    expect(restoreWrites(restoreJob({}))).toEqual({ kind: 'all' });
    const pitr = { restoreMode: 'pitr', pitrRestoredTs: '450000000000000000', pitrFullBackupStorageProvider: { s3: S3 } };
    expect(restoreWrites(restoreJob(pitr))).toEqual({ kind: 'all' });
    expect(blockedBy(restoreWrites(restoreJob({})))).toBeUndefined();
  });

  test('a database, a table or a filter: held back while a table it restores into exists, in any case of its name', () => {
    expect(blockedBy(restoreWrites(restoreJob({ backupType: 'db', br: { cluster: 'demo', db: 'app' } })))).toBe(
      "the cluster already has tables it would restore into (app.users, App.Orders, of the database app): BR would restore the backup's rows among theirs; drop them, or set br.checkRequirements: false to restore into them anyway",
    );
    expect(blockedBy(restoreWrites(restoreJob({ backupType: 'table', br: { cluster: 'demo', db: 'app', table: 'orders' } })))).toMatch(
      /^the cluster already has tables it would restore into \(App\.Orders, of the table app\.orders\)/,
    );
    expect(
      blockedBy(restoreWrites(restoreJob({ backupType: 'table', br: { cluster: 'demo', db: 'app', table: 'gone' } }))),
    ).toBeUndefined();
    expect(blockedBy(restoreWrites(restoreJob({ tableFilter: ['billing.*'] })))).toMatch(
      /\(billing\.invoices, of the tables of the filter billing\.\*\)/,
    );
    expect(blockedBy(restoreWrites(restoreJob({ tableFilter: ['new.*'] })))).toBeUndefined();
    // System tables are the cluster's own: no restore waits for them.
    expect(blockedBy(restoreWrites(restoreJob({ tableFilter: ['*.*', '!app.*', '!billing.*'] })))).toBeUndefined();
    const pitr = {
      restoreMode: 'pitr',
      pitrRestoredTs: '450000000000000000',
      pitrFullBackupStorageProvider: { s3: S3 },
      tableFilter: ['app.users'],
    };
    expect(blockedBy(restoreWrites(restoreJob(pitr)))).toMatch(/\(app\.users, of the tables of the filter app\.users\)/);
  });

  test("checkRequirements: false turns the check off, as it turns off BR's; options given last count as BR reads them", () => {
    expect(restoreWrites(restoreJob({ backupType: 'db', br: { cluster: 'demo', db: 'app', checkRequirements: false } }))).toEqual({
      kind: 'unchecked',
    });
    expect(
      restoreWrites(restoreJob({ backupType: 'db', br: { cluster: 'demo', db: 'app', options: ['--check-requirements=false'] } })),
    ).toEqual({ kind: 'unchecked' });
    expect(blockedBy(restoreWrites(restoreJob({ br: { cluster: 'demo', options: ['-f', 'billing.invoices'] } })))).toMatch(
      /of the tables of the filter billing\.invoices\)/,
    );
    expect(blockedBy(restoreWrites(restoreJob({ br: { cluster: 'demo', options: ['--filter=@rules.txt'] } })))).toBe(
      'cannot tell which tables it restores into (the rule "@rules.txt" reads rules from a file, which cannot be read here), to check that none of them exists: set br.checkRequirements: false to restore without this check',
    );
  });
});

describe('the table filter of the TiDB tools', () => {
  const selects = (rules: string[], schema: string, name: string) => {
    const f = parseTableFilter(rules);
    if ('problem' in f) throw new Error(f.problem);
    return f.matches({ schema, name });
  };

  test('wildcards, classes, quotes and escapes; the last rule that matches decides; names without regard to case', () => {
    expect(selects(['app.*'], 'APP', 'x')).toBe(true);
    expect(selects(['app.*'], 'app2', 'x')).toBe(false);
    expect(selects(['a?p.t[0-9]'], 'app', 't7')).toBe(true);
    expect(selects(['a?p.t[!0-9]'], 'app', 't7')).toBe(false);
    expect(selects(['*.*', '!app.*'], 'app', 'x')).toBe(false);
    expect(selects(['!app.*', '*.*'], 'app', 'x')).toBe(true);
    expect(selects(['"my.db".`t``x`'], 'my.db', 't`x')).toBe(true);
    expect(selects(['my\\.db.t'], 'my.db', 't')).toBe(true);
    expect(selects(['my\\.db.t'], 'myxdb', 't')).toBe(false);
    expect(selects(['/^ap+$/.*'], 'app', 'x')).toBe(true);
    expect(selects(['# a comment', 'app.users'], 'app', 'users')).toBe(true);
    expect(selects([], 'app', 'users')).toBe(false);
  });

  test('fails, saying which rule, when a rule cannot be read', () => {
    expect(parseTableFilter(['app'])).toEqual({ problem: 'the rule "app" has no dot between a schema and a table pattern' });
    expect(parseTableFilter(['"app.t'])).toEqual({ problem: 'the rule "\\"app.t" has a quoted name that is never closed' });
    expect(parseTableFilter(['app.[a'])).toEqual({ problem: 'the rule "app.[a" has a character class that is never closed' });
  });
});

describe("the cluster's tables, from TiDB's schema API", () => {
  let server: Server;
  let base = '';
  const seen: string[] = [];
  beforeAll(async () => {
    // TiDB's answers: `db_name` / `name` as model.CIStr, in MarshalIndent's shape; 400 for a missing schema.
    const schemas: Record<string, string[]> = { mysql: ['user'], app: ['users', 'orders'], INFORMATION_SCHEMA: ['TABLES'], empty: [] };
    server = createServer((req, res) => {
      seen.push(req.url ?? '');
      const url = new URL(req.url ?? '/', 'http://x');
      const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
      const send = (status: number, body: unknown) =>
        res
          .writeHead(status, { 'content-type': 'application/json' })
          .end(typeof body === 'string' ? body : JSON.stringify(body, null, ' '));
      if (parts.length === 1 && parts[0] === 'schema')
        return send(
          200,
          Object.keys(schemas).map((s, i) => ({ id: i + 1, db_name: { O: s, L: s.toLowerCase() }, charset: 'utf8mb4', state: 5 })),
        );
      if (parts.length === 2 && parts[0] === 'schema') {
        const tables = schemas[parts[1]];
        if (!tables) return send(400, `[schema:1049]Unknown database '${parts[1]}'`);
        return send(
          200,
          tables.map((t, i) => ({ id: 100 + i, name: { O: t, L: t.toLowerCase() } })),
        );
      }
      return send(404, '404 page not found');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('user schemas only are listed, each for its table names', async () => {
    expect(await tidbTables(base, { timeoutMs: 5000 }, (s) => !isSystemSchema(s))).toEqual([
      { schema: 'app', name: 'users' },
      { schema: 'app', name: 'orders' },
    ]);
    expect(seen).toEqual(['/schema', '/schema/app?id_name_only=true', '/schema/empty?id_name_only=true']);
    await expect(tidbTables(`${base}/nothing`, { timeoutMs: 5000 }, () => true)).rejects.toThrow(/HTTP 404 404 page not found/);
  });
});

describe('the plan holds back a restore that would write into tables that exist', () => {
  test('waiting, with why, once; it starts when nothing holds it back', () => {
    const template = { json: '{}', digest: 'sha256:a', spec: 'sha256:s' };
    const why = 'the cluster already has tables it would restore into (app.users, of the database app): …';
    const held = planOperations({ operations: [{ job: 'restore-r', template, pods: [], blocked: why }], clusterId: '7', now: 0 })[0];
    expect(held).toEqual({ record: { job: 'restore-r', phase: 'Waiting', reason: why }, news: 'waiting' });
    // A backup is never held back for it.
    expect(planOperations({ operations: [{ job: 'backup-b', template, pods: [], blocked: why }], clusterId: '7', now: 0 })[0].create).toBe(
      true,
    );
    expect(
      planOperations({ operations: [{ job: 'restore-r', template, pods: [], record: held.record }], clusterId: '7', now: 0 })[0].create,
    ).toBe(true);
  });
});
