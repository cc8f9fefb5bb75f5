import { Discovery, type DiscoveryDeps } from '../../../src/controller/discovery/discovery';
import { LeaderElector, type LeaseRecord, type LeaseStore } from '../../../src/controller/runtime/leader';
import { Logger } from '../../../src/controller/runtime/log';
import { Metrics } from '../../../src/controller/runtime/metrics';
import { defaultPdUrls, parseControllerArgs } from '../../../src/controller/options';
import { parseClusterInfo, type ClusterInfo } from '../../../src/controller/model/cluster';
import { parseDuration } from '../../../src/controller/model/values';
import type { OwnerReference } from '../../../src/controller/model/objects';
import { PdClient } from '../../../src/controller/clients/pd';
import { WorkQueue } from '../../../src/controller/runtime/queue';

import { mkdtempSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseJsonExact } from '../../../src/controller/clients/json';

describe('JSON from PD', () => {
  it('reads 64-bit ids exactly, as decimal strings, and leaves everything else alone', () => {
    const text =
      '{"header":{"cluster_id":7301234567890123456},"members":[{"name":"a\\"1234567890123456789","member_id":10276657743932975437,"n":-9223372036854775807,"small":42,"f":1.5e300}]}';
    expect(parseJsonExact(text)).toEqual({
      header: { cluster_id: '7301234567890123456' },
      members: [{ name: 'a"1234567890123456789', member_id: '10276657743932975437', n: '-9223372036854775807', small: 42, f: 1.5e300 }],
    });
    expect(JSON.parse(text).members[0].member_id).not.toBe(10276657743932975437n.toString());
  });
});

const quiet = new Logger('error', {}, () => {});
const CLUSTER_JSON = JSON.stringify({
  name: 'c',
  clusterDomain: '',
  acrossK8s: false,
  tls: false,
  discoveryMtls: false,
  pdAddresses: [],
  cluster: null,
  components: ['tidb', 'pd', 'tikv'],
});

describe('parseDuration', () => {
  it.each([
    ['1500m', 90_000_000],
    ['400s', 400_000],
    ['1h30m', 5_400_000],
    ['250ms', 250],
    ['1.5s', 1500],
    // As Go's time.ParseDuration: a bare 0, a sign, a leading or trailing point, μs and µs.
    ['0', 0],
    ['-5m', -300_000],
    ['+1h', 3_600_000],
    ['.5s', 500],
    ['2.s', 2000],
    ['1500μs', 1.5],
  ])('%s', (text, ms) => expect(parseDuration(text)).toBe(ms));
  it.each(['', '10', 'ten seconds', '5s junk', 'forever', '1d', '--5m'])('rejects %j', (text) =>
    expect(parseDuration(text)).toBeUndefined(),
  );
});

describe('controller arguments', () => {
  const env = { MY_POD_NAMESPACE: 'ns', TIDB_GITOPS_CLUSTER: CLUSTER_JSON, MY_POD_NAME: 'c-discovery-abc' };

  it('takes the cluster from the environment the Deployment sets', () => {
    const { options } = parseControllerArgs([], env);
    expect(options).toMatchObject({
      identity: 'c-discovery-abc',
      discoveryPort: 10261,
      metricsPort: 10263,
      resyncMs: 30_000,
      checkSource: true,
    });
    expect(options!.cluster.components).toEqual(['pd', 'tikv', 'tidb']);
    expect(options!.pdUrls).toEqual(['http://c-pd.ns:2379']);
  });

  it('says what is wrong', () => {
    expect(parseControllerArgs([], {}).error).toMatch(/namespace is not known/);
    expect(parseControllerArgs([], { MY_POD_NAMESPACE: 'ns' }).error).toMatch(/TIDB_GITOPS_CLUSTER/);
    expect(parseControllerArgs(['--resync', 'soon'], env).error).toBe('--resync: "soon" is not a duration such as 500ms, 30s or 1m');
    expect(parseControllerArgs(['--bogus', '1'], env).error).toBe('unknown option "--bogus"');
    expect(parseControllerArgs(['--metrics-port=99999'], env).error).toMatch(/not a port number/);
    expect(parseControllerArgs([], { ...env, TIDB_GITOPS_CLUSTER: '{"name":"c","tls":"yes"}' }).error).toBe(
      'TIDB_GITOPS_CLUSTER.tls: expected true or false',
    );
  });

  it('takes failover settings from flags, or from TIDB_GITOPS_<OPTION> variables', () => {
    expect(parseControllerArgs([], env).options).toMatchObject({
      autoFailover: true,
      failoverPeriodMs: { pd: 300_000, tikv: 300_000, tiflash: 300_000, tidb: 300_000 },
    });
    const fromEnv = parseControllerArgs(['--tidb-failover-period', '30s'], {
      ...env,
      TIDB_GITOPS_PD_FAILOVER_PERIOD: '10m',
      TIDB_GITOPS_TIDB_FAILOVER_PERIOD: '1h',
    });
    expect(fromEnv.options?.failoverPeriodMs).toMatchObject({ pd: 600_000, tidb: 30_000 });
    expect(parseControllerArgs([], { ...env, TIDB_GITOPS_AUTO_FAILOVER: 'false' }).options?.autoFailover).toBe(false);
    expect(parseControllerArgs([], { ...env, TIDB_GITOPS_NO_SOURCE_CHECK: 'true' }).options?.checkSource).toBe(false);
    expect(parseControllerArgs([], { ...env, TIDB_GITOPS_FAILOVER: '1' }).error).toBe(
      'TIDB_GITOPS_FAILOVER: there is no option --failover',
    );
    expect(parseControllerArgs(['--auto-failover', 'maybe'], env).error).toBe('--auto-failover: expected true or false, got "maybe"');
  });

  it('refuses to start with cluster TLS on and no client certificate, saying what to mount', () => {
    const tlsEnv = { ...env, TIDB_GITOPS_CLUSTER: JSON.stringify({ ...JSON.parse(CLUSTER_JSON), tls: true }) };
    const missing = parseControllerArgs(['--pd-tls-dir', '/nonexistent/tls'], tlsEnv);
    expect(missing.options).toBeUndefined();
    expect(missing.startError).toBe(
      'cluster TLS is on (spec.tlsCluster.enabled), but the directory does not exist in /nonexistent/tls: the controller needs the client certificate of the Secret c-cluster-client-secret there (the rendered Deployment mounts it; check that the Secret exists and has ca.crt, tls.crt and tls.key), or another directory named with --pd-tls-dir',
    );
    const dir = mkdtempSync(join(tmpdir(), 'tls-'));
    writeFileSync(join(dir, 'ca.crt'), 'x');
    expect(parseControllerArgs(['--pd-tls-dir', dir], tlsEnv).startError).toMatch(/but tls.crt, tls.key are missing in /);
  });

  it('addresses PD as the operator does', () => {
    const base = parseClusterInfo(CLUSTER_JSON, 'ns');
    expect(defaultPdUrls({ ...base, tls: true, clusterDomain: 'cluster.local' })).toEqual(['https://c-pd.ns.svc.cluster.local:2379']);
    const hetero: ClusterInfo = {
      ...base,
      components: ['tikv'],
      cluster: { name: 'main', namespace: 'db', clusterDomain: '' },
      pdAddresses: ['http://pd.example:2379'],
    };
    expect(defaultPdUrls(hetero)).toEqual(['http://main-pd.db:2379', 'http://pd.example:2379']);
  });
});

describe('WorkQueue', () => {
  it('holds a key once and re-runs a key added while it was processed', async () => {
    const q = new WorkQueue();
    q.add('a');
    q.add('a');
    expect(q.length).toBe(1);
    expect(await q.get()).toBe('a');
    q.add('a'); // while processing
    expect(q.length).toBe(0);
    q.done('a');
    expect(q.length).toBe(1);
    q.shutDown();
    expect(await q.get()).toBeUndefined();
  });

  it('keeps the earliest of several delayed adds', async () => {
    const q = new WorkQueue();
    q.addAfter('a', 5000);
    q.addAfter('a', 10);
    const started = Date.now();
    expect(await q.get()).toBe('a');
    expect(Date.now() - started).toBeLessThan(4000);
    q.shutDown();
  });
});

describe('Metrics', () => {
  it('renders the Prometheus text format', () => {
    const m = new Metrics();
    m.declare('x_total', 'counter', 'Things.');
    m.inc('x_total', { kind: 'a"b' });
    m.inc('x_total', { kind: 'a"b' }, 2);
    expect(m.render()).toBe('# HELP x_total Things.\n# TYPE x_total counter\nx_total{kind="a\\"b"} 3\n');
    expect(() => m.inc('y_total')).toThrow(/not declared/);
  });
});

/** A Lease kept in memory with Kubernetes' optimistic concurrency. */
class MemoryLeases implements LeaseStore {
  lease?: LeaseRecord;
  private rv = 0;
  async getLease(): Promise<LeaseRecord | undefined> {
    return this.lease;
  }
  async writeLease(_name: string, l: Omit<LeaseRecord, 'resourceVersion'>, rv?: string): Promise<string> {
    if ((rv === undefined) !== (this.lease === undefined) || (rv !== undefined && rv !== this.lease!.resourceVersion)) {
      throw Object.assign(new Error('conflict'), { code: 409 });
    }
    this.lease = { ...l, resourceVersion: String(++this.rv) };
    return this.lease.resourceVersion;
  }
}

describe('LeaderElector', () => {
  const timing = { leaseMs: 1000, renewMs: 40, renewDeadlineMs: 500 };
  const until = async (pred: () => boolean) => {
    for (let i = 0; i < 200 && !pred(); i++) await new Promise((r) => setTimeout(r, 10));
    expect(pred()).toBe(true);
  };

  it('lets one candidate lead, and the other take over once the leader releases', async () => {
    const store = new MemoryLeases();
    const a = new LeaderElector(store, 'l', 'a', timing, quiet, () => {});
    const b = new LeaderElector(store, 'l', 'b', timing, quiet, () => {});
    a.start();
    await until(() => a.isLeader);
    b.start();
    await new Promise((r) => setTimeout(r, 200));
    expect(b.isLeader).toBe(false);
    expect(store.lease!.holder).toBe('a');
    await a.stop();
    expect(store.lease!.holder).toBe('');
    await until(() => b.isLeader);
    expect(store.lease!.transitions).toBe(1);
    await b.stop();
  });

  it('takes over a Lease whose holder stopped renewing, after its duration', async () => {
    const store = new MemoryLeases();
    await store.writeLease('l', { holder: 'gone', durationSeconds: 1, transitions: 0 });
    const b = new LeaderElector(store, 'l', 'b', timing, quiet, () => {});
    const started = Date.now();
    b.start();
    await until(() => b.isLeader);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    await b.stop();
  });
});

describe('Discovery', () => {
  const PD_STS_UID = 'uid-of-c-pd';
  const pdOwner = { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'c-pd', uid: PD_STS_UID, controller: true };
  const pod = (name: string, ip = '10.0.0.1', ownerReferences: OwnerReference[] = [pdOwner]) => ({
    metadata: { name, labels: { 'app.kubernetes.io/component': 'pd', 'app.kubernetes.io/instance': 'c' }, ownerReferences },
    status: { podIP: ip },
  });
  const deps = (over: Partial<DiscoveryDeps> = {}): DiscoveryDeps => ({
    cluster: parseClusterInfo(CLUSTER_JSON, 'ns'),
    pods: () => [pod('c-pd-0', '10.0.0.1'), pod('c-pd-1', '10.0.0.2')],
    pdReplicas: () => 2,
    pdStatefulSet: () => ({ uid: PD_STS_UID, replicas: 2 }),
    // Nothing listens on port 9: PD does not answer yet.
    pdClients: [new PdClient('http://127.0.0.1:9', undefined, 500)],
    checkSource: true,
    note: () => {},
    ...over,
  });
  const b64 = (s: string) => Buffer.from(s).toString('base64');

  it('bootstraps from the last of the desired PD Pods to ask, when no PD answers', async () => {
    const d = new Discovery(deps());
    const first = await d.handle('GET', `/new/${b64('c-pd-0.c-pd-peer.ns.svc:2380\n')}`, '10.0.0.1');
    expect(first.status).toBe(500);
    expect(first.body).toMatch(/waiting for all 2 PD Pods to ask \(1 so far\)/);
    const second = await d.handle('GET', `/new/${b64('c-pd-1.c-pd-peer.ns.svc:2380\n')}/pd`, '::ffff:10.0.0.2');
    expect(second).toEqual({ status: 200, body: '--initial-cluster=c-pd-1=http://c-pd-1.c-pd-peer.ns.svc:2380' });
  });

  it('names members by FQDN with a cluster domain, and joins pdAddresses when given', async () => {
    const cluster = { ...parseClusterInfo(CLUSTER_JSON, 'ns'), clusterDomain: 'cluster.local', tls: true };
    const d = new Discovery(deps({ cluster, pdReplicas: () => 1 }));
    const host = 'c-pd-0.c-pd-peer.ns.svc.cluster.local';
    expect((await d.handle('GET', `/new/${b64(`${host}:2380\n`)}`, '10.0.0.1')).body).toBe(
      `--initial-cluster=${host}=https://${host}:2380`,
    );
    const j = new Discovery(deps({ cluster: { ...cluster, pdAddresses: ['http://a:2379', 'http://b:2379'] }, pdReplicas: () => 1 }));
    expect((await j.handle('GET', `/new/${b64(`${host}:2380\n`)}`, '10.0.0.1')).body).toBe('--join=http://a:2379,http://b:2379');
  });

  it('answers only Pods the PD StatefulSet made, with its ordinals: a look-alike Pod cannot bootstrap a second PD cluster', async () => {
    const rogue = pod('rogue', '10.0.0.9', []);
    const copied = pod('c-pd-1', '10.0.0.2', [{ ...pdOwner, uid: 'another-statefulset' }]);
    const extra = pod('c-pd-2', '10.0.0.3');
    const bare = pod('c-pd-0', '10.0.0.1', []);
    const d = new Discovery(deps({ pods: () => [pod('c-pd-0', '10.0.0.1'), rogue, copied, extra] }));
    const ask = (name: string, ip: string) => d.handle('GET', `/new/${b64(`${name}.c-pd-peer.ns.svc:2380\n`)}`, ip);
    expect(await ask('rogue', '10.0.0.9')).toEqual({ status: 403, body: 'rogue is not a Pod of StatefulSet c-pd\n' });
    expect(await ask('c-pd-1', '10.0.0.2')).toEqual({ status: 403, body: 'c-pd-1 is not a Pod of StatefulSet c-pd\n' });
    expect(await ask('c-pd-2', '10.0.0.3')).toEqual({ status: 403, body: 'c-pd-2 is not one of the 2 Pods of StatefulSet c-pd\n' });
    // None of them counted as a caller: c-pd-0 alone still waits for c-pd-1.
    expect(await ask('c-pd-0', '10.0.0.1')).toEqual({ status: 500, body: 'waiting for all 2 PD Pods to ask (1 so far)\n' });
    const unowned = new Discovery(deps({ pods: () => [bare] }));
    expect((await unowned.handle('GET', `/new/${b64('c-pd-0.c-pd-peer.ns.svc:2380\n')}`, '10.0.0.1')).status).toBe(403);
  });

  it('lets a failover replica (beyond the desired count) join, never bootstrap', async () => {
    const pods = [pod('c-pd-0', '10.0.0.1'), pod('c-pd-1', '10.0.0.2'), pod('c-pd-2', '10.0.0.3')];
    const d = new Discovery(deps({ pods: () => pods, pdStatefulSet: () => ({ uid: PD_STS_UID, replicas: 3 }) }));
    const ask = (name: string, ip: string) => d.handle('GET', `/new/${b64(`${name}.c-pd-peer.ns.svc:2380\n`)}`, ip);
    expect(await ask('c-pd-2', '10.0.0.3')).toEqual({
      status: 500,
      body: 'c-pd-2 is a failover replica: it joins a running PD cluster, never bootstraps one\n',
    });
    expect((await ask('c-pd-0', '10.0.0.1')).status).toBe(500);
    expect((await ask('c-pd-1', '10.0.0.2')).body).toBe('--initial-cluster=c-pd-1=http://c-pd-1.c-pd-peer.ns.svc:2380');
  });

  it('removes by id an unstarted member (no name) of the caller or of a PD Pod that is gone, never one of a Pod still there', async () => {
    // PD's /members as server/cluster/cluster.go GetMembers lists them: an unstarted member has an id and peer URLs only.
    const members = [
      { name: 'c-pd-0', member_id: '11', peer_urls: ['http://c-pd-0.c-pd-peer.ns.svc:2380'] },
      { member_id: '12', peer_urls: ['http://c-pd-1.c-pd-peer.ns.svc:2380'] },
      { member_id: '13', peer_urls: ['http://c-pd-2.c-pd-peer.ns.svc:2380'] },
      { member_id: '14', peer_urls: ['http://c-pd-3.c-pd-peer.ns.svc:2380'] },
    ];
    const deleted: string[] = [];
    const server = http.createServer((req, res) => {
      const id = /^\/pd\/api\/v1\/members\/id\/(\d+)$/.exec(req.url ?? '')?.[1];
      if (req.method === 'DELETE' && id !== undefined) {
        deleted.push(id);
        members.splice(
          members.findIndex((m) => m.member_id === id),
          1,
        );
        res.end(JSON.stringify(`removed, pd: ${id}`));
        return;
      }
      res.end(JSON.stringify({ members: members.map((m) => ({ ...m, member_id: Number(m.member_id) })) }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as { port: number };
      const pods = [pod('c-pd-0', '10.0.0.1'), pod('c-pd-1', '10.0.0.2'), pod('c-pd-3', '10.0.0.4')];
      const notes: string[] = [];
      const d = new Discovery(
        deps({
          pods: () => pods,
          pdReplicas: () => 4,
          pdStatefulSet: () => ({ uid: PD_STS_UID, replicas: 4 }),
          pdClients: [new PdClient(`http://127.0.0.1:${port}`, undefined, 2000)],
          note: (_k, m) => notes.push(m),
        }),
      );
      const got = await d.handle('GET', `/new/${b64('c-pd-1.c-pd-peer.ns.svc:2380\n')}`, '10.0.0.2');
      // c-pd-1's own (the caller) and c-pd-2's (no such Pod) go; c-pd-3's is its own to resume when it asks.
      expect(deleted).toEqual(['12', '13']);
      expect(got).toEqual({ status: 200, body: '--join=http://c-pd-0.c-pd-peer.ns.svc:2379' });
      expect(notes.slice(0, 2)).toEqual([
        'removed PD member 12, added for c-pd-1 but never started, so that c-pd-1 can join',
        'removed PD member 13, added for c-pd-2 but never started, so that c-pd-1 can join',
      ]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('refuses other paths, methods and register types', async () => {
    const d = new Discovery(deps());
    expect((await d.handle('POST', '/new/x', '10.0.0.1')).status).toBe(405);
    expect((await d.handle('GET', '/other', '10.0.0.1')).status).toBe(404);
    expect((await d.handle('GET', `/new/${b64('c-pd-0.c-pd-peer.ns.svc:2380')}/dm`, '10.0.0.1')).status).toBe(400);
    expect((await d.handle('GET', '/new/%%%', '10.0.0.1')).status).toBe(400);
  });
});

describe('Discovery /prestop/<pod>', () => {
  const tikv = (name: string, o: { terminating?: boolean; ip?: string; grace?: number } = {}) => ({
    metadata: {
      name,
      labels: { 'app.kubernetes.io/component': 'tikv', 'app.kubernetes.io/instance': 'c' },
      ...(o.terminating && { deletionTimestamp: new Date() }),
    },
    spec: { terminationGracePeriodSeconds: o.grace },
    status: { podIP: o.ip ?? '10.0.0.7' },
  });
  /** A clock that moves a second on every read, so the waits below take no real time. */
  const ticking = () => {
    let t = 0;
    return () => (t += 1000);
  };
  const discovery = (pods: ReturnType<typeof tikv>[]) =>
    new Discovery({
      cluster: parseClusterInfo(CLUSTER_JSON, 'ns'),
      pods: () => pods,
      pdReplicas: () => 3,
      pdStatefulSet: () => ({ replicas: 3 }),
      // Nothing listens on port 9: PD does not answer.
      pdClients: [new PdClient('http://127.0.0.1:9', undefined, 500)],
      checkSource: true,
      note: () => {},
      preStop: { pollMs: 1, now: ticking() },
    });

  it('serves only the PD (and micro-service), TiKV and TiCDC Pods of the cluster, asking from their own address', async () => {
    const d = discovery([tikv('c-tikv-0', { terminating: true })]);
    expect(await d.handle('GET', '/prestop/c-tidb-0', '10.0.0.7')).toEqual({
      status: 404,
      body: 'c-tidb-0 is not a PD, TSO, scheduling, TiKV or TiCDC Pod of cluster c\n',
    });
    expect(await d.handle('GET', '/prestop/c-tikv-0', '10.0.0.8')).toEqual({
      status: 403,
      body: "the request does not come from Pod c-tikv-0's address\n",
    });
  });

  it('refuses a Pod that is not being deleted, once the informer had time to see a deletion', async () => {
    expect(await discovery([tikv('c-tikv-0')]).handle('GET', '/prestop/c-tikv-0', '10.0.0.7')).toEqual({
      status: 409,
      body: 'c-tikv-0 is not being deleted: nothing to wait for\n',
    });
  });

  it('holds a deleted Pod at most its grace period less 10 seconds (and 1 for the hook to hear), then lets it go', async () => {
    const r = await discovery([tikv('c-tikv-0', { terminating: true, grace: 60 })]).handle('GET', '/prestop/c-tikv-0', '10.0.0.7');
    expect(r.status).toBe(200);
    expect(r.body).toMatch(/^stopped waiting after 50s: PD unavailable: /);
  });
});
