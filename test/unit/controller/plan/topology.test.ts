/**
 * Topology labels: when the renderer grants the controller `get` on Nodes (and nothing else that is
 * cluster-wide), how the controller turns Node labels into store and server labels, and the TiDB
 * status-port simulator the scenarios use. The whole path against a real API server is in
 * real-api.test.ts.
 */
import fc from 'fast-check';
import { request } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { controllerClusterInfo } from '../../../../src/render/discovery';
import { resolveCluster } from '../../../../src/tidbcluster/resolve';
import {
  labelsFromNode,
  storeHasLabels,
  tidbServerLabels,
  tidbTakesLabels,
  WELL_KNOWN_NODE_LABELS,
  zoneKeyOf,
} from '../../../../src/controller/plan/topology';
import { tidbStatusBase } from '../../../../src/controller/clients/tidb';
import { parseClusterInfo } from '../../../../src/controller/model/cluster';
import { buildModel, compareModels, RISK, type KubeObject } from '../../../../src/diff';
import { TidbSim } from '../../../sim/tidb';
import { cluster, find, render, renderErrors, type Obj } from '../../../support/render';
import { SCHEMA_MINORS } from '../../../support/k8s-schema';

const LOCATION = { pd: { replicas: 3, requests: { storage: '10Gi' }, config: { replication: { 'location-labels': ['zone', 'host'] } } } };
const clusterScoped = (objects: Obj[]) => objects.filter((o) => o.kind === 'ClusterRole' || o.kind === 'ClusterRoleBinding');

describe('rendering: node access only for clusters that ask for topology labels', () => {
  test('no ClusterRole by default: everything stays namespaced', () => {
    const objects = render(cluster());
    expect(clusterScoped(objects)).toEqual([]);
    expect(objects.every((o) => o.metadata.namespace === 'ns')).toBe(true);
    expect(
      find(objects, 'Deployment', 'demo-discovery').spec.template.spec.containers[0].env.find((e: Obj) => e.name === 'TIDB_GITOPS_CLUSTER')
        .value,
    ).not.toContain('readsNodes');
  });

  test('PD location-labels as one comma-separated string, as PD shows them in its API: refused, PD reads a TOML array', () => {
    expect(renderErrors(cluster({ pd: { replicas: 3, config: { replication: { 'location-labels': 'zone,host' } } } }))).toContain(
      'spec.pd.config.replication.location-labels (line 12): expected an array, got "zone,host"',
    );
  });

  test.each([
    ['PD location-labels (TOML array)', LOCATION],
    [
      'PD location-labels in a TOML config string',
      { pd: { replicas: 3, config: '[replication]\nlocation-labels = ["zone", "rack", "host"]\n' } },
    ],
    ['spec.tikv.storeLabels', { tikv: { replicas: 3, requests: { storage: '1Gi' }, storeLabels: ['topology.kubernetes.io/zone'] } }],
  ])('%s: a read-only ClusterRole (get nodes) and its binding to the controller ServiceAccount', (_name, spec) => {
    const objects = render(cluster(spec));
    const [role, binding] = clusterScoped(objects);
    expect(role).toEqual({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: {
        name: 'tidb-gitops:ns:demo-discovery',
        labels: expect.objectContaining({ 'app.kubernetes.io/component': 'discovery', 'app.kubernetes.io/instance': 'demo' }),
      },
      rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['get'] }],
    });
    expect(binding).toMatchObject({
      kind: 'ClusterRoleBinding',
      metadata: { name: 'tidb-gitops:ns:demo-discovery' },
      subjects: [{ kind: 'ServiceAccount', name: 'demo-discovery', namespace: 'ns' }],
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'tidb-gitops:ns:demo-discovery' },
    });
    expect(role.metadata.namespace).toBeUndefined();
    expect(binding.metadata.namespace).toBeUndefined();
    // Helm's order: cluster roles before the namespaced Role.
    const kinds = objects.map((o) => o.kind);
    expect(kinds.indexOf('ClusterRole')).toBeLessThan(kinds.indexOf('Role'));
    // The namespaced Role is the same as without topology labels.
    expect(find(objects, 'Role', 'demo-discovery').rules).toEqual(find(render(cluster()), 'Role', 'demo-discovery').rules);
  });

  test('the controller is told it may read Nodes, and reads the flag back', () => {
    const resolved = resolveCluster(cluster(LOCATION) as never);
    const info = controllerClusterInfo(resolved);
    expect(info.readsNodes).toBe(true);
    expect(parseClusterInfo(JSON.stringify(info), 'ns').readsNodes).toBe(true);
    expect(parseClusterInfo(JSON.stringify(controllerClusterInfo(resolveCluster(cluster() as never))), 'ns').readsNodes).toBeUndefined();
    expect(() => parseClusterInfo(JSON.stringify({ ...info, readsNodes: 'yes' }), 'ns')).toThrow(
      'TIDB_GITOPS_CLUSTER.readsNodes: expected true or false',
    );
  });

  test("a namespace is needed, since the binding must name the ServiceAccount's", () => {
    expect(renderErrors(cluster(LOCATION, { namespace: undefined }))).toMatch(
      /metadata\.namespace \(line \d+\): required with spec\.pd\.config replication\.location-labels \(zone, host\): the controller reads Nodes through a ClusterRoleBinding/,
    );
    expect(clusterScoped(render(cluster(LOCATION, { namespace: undefined }), { namespace: 'given' }))[1].subjects[0].namespace).toBe(
      'given',
    );
  });

  test('label keys PD would refuse are refused at render time, with their path', () => {
    const errors = renderErrors(
      cluster({
        pd: { replicas: 3, config: { replication: { 'location-labels': ['zone', 'bad key'] } } },
        tikv: { replicas: 3, storeLabels: ['-x'] },
      }),
    );
    expect(errors).toMatch(/spec\.pd\.config\.replication\.location-labels\[1\] \(line \d+\): expected a PD label key .*got "bad key"/);
    expect(errors).toMatch(/spec\.tikv\.storeLabels\[0\] \(line \d+\): expected a Node label key that is also a PD label key .*got "-x"/);
    expect(renderErrors(cluster({ pd: { replicas: 3, config: { replication: { 'location-labels': 3 } } } }))).toMatch(
      /spec\.pd\.config\.replication\.location-labels \(line \d+\): expected a list of label keys/,
    );
  });

  test('schema-valid on every target Kubernetes version', () => {
    for (const minor of SCHEMA_MINORS) expect(clusterScoped(render(cluster(LOCATION), { kubeVersion: `1.${minor}` }))).toHaveLength(2);
  });
});

describe('the diff report', () => {
  const model = (spec: Obj) => buildModel(render(cluster(spec)) as KubeObject[]);

  test('the ClusterRole belongs to its cluster, and its coming and going is a node-access risk', () => {
    const added = compareModels(model({}), model(LOCATION));
    expect(added.clusters.map((c) => c.id)).toEqual(['ns/demo']);
    const risks = added.clusters[0].risks.filter((r) => r.id === RISK.nodeAccess);
    expect(risks).toHaveLength(1);
    expect(risks[0].message).toMatch(
      /^The companion controller gets read access to Nodes \(ClusterRole tidb-gitops:ns:demo-discovery: get nodes, nothing else\)/,
    );
    expect(compareModels(model(LOCATION), model({})).clusters[0].risks.find((r) => r.id === RISK.nodeAccess)?.message).toMatch(
      /loses read access to Nodes/,
    );
    expect(compareModels(model(LOCATION), model(LOCATION)).clusters).toEqual([]);
  });
});

describe('Node labels to store and server labels', () => {
  const node = {
    'kubernetes.io/hostname': 'node-1',
    'topology.kubernetes.io/zone': 'z1',
    'failure-domain.beta.kubernetes.io/zone': 'old-z',
    'failure-domain.beta.kubernetes.io/region': 'r1',
    rack: 'r7',
  };

  test('short keys stand for the well-known labels (the stable one first); a Node label of the key itself wins', () => {
    expect(labelsFromNode(node, ['region', 'zone', 'rack', 'host', 'missing'])).toEqual({
      region: 'r1',
      zone: 'z1',
      rack: 'r7',
      host: 'node-1',
    });
    expect(labelsFromNode({ ...node, zone: 'own' }, ['zone'])).toEqual({ zone: 'own' });
    expect(labelsFromNode(node, ['topology.kubernetes.io/zone'])).toEqual({ 'topology.kubernetes.io/zone': 'z1' });
    // PD reserves `engine` for TiFlash.
    expect(labelsFromNode({ engine: 'x' }, ['engine'])).toEqual({});
  });

  test('property: every label comes from a wanted key and a value the Node has', () => {
    const key = fc.constantFrom(
      'zone',
      'host',
      'region',
      'rack',
      'kubernetes.io/hostname',
      'topology.kubernetes.io/zone',
      'topology.kubernetes.io/region',
    );
    fc.assert(
      fc.property(fc.dictionary(key, fc.string({ maxLength: 5 })), fc.array(key, { maxLength: 6 }), (nodeLabels, keys) => {
        const out = labelsFromNode(nodeLabels, keys);
        for (const [k, v] of Object.entries(out)) {
          expect(keys).toContain(k);
          const sources = [k, ...(WELL_KNOWN_NODE_LABELS[k] ?? [])];
          expect(sources.some((s) => nodeLabels[s] === v)).toBe(true);
        }
        for (const k of keys) if (nodeLabels[k] !== undefined) expect(out[k]).toBe(nodeLabels[k]);
      }),
    );
  });

  test('a store needs labels only when a wanted key differs; its other labels stay (PD merges keys without case)', () => {
    expect(storeHasLabels({ zone: 'z1', host: 'h', engine: 'tiflash' }, { zone: 'z1', host: 'h' })).toBe(true);
    expect(storeHasLabels({ Zone: 'z1' }, { zone: 'z1' })).toBe(true);
    expect(storeHasLabels({ zone: 'z0', host: 'h' }, { zone: 'z1', host: 'h' })).toBe(false);
    expect(storeHasLabels({}, { zone: 'z1' })).toBe(false);
  });

  test("TiDB: server labels under the Node's, and `zone` copied from the zone key PD spreads over", () => {
    expect(zoneKeyOf(['host'])).toBeUndefined();
    expect(zoneKeyOf(['topology.kubernetes.io/zone', 'host'])).toBe('topology.kubernetes.io/zone');
    expect(zoneKeyOf(['host', 'zone', 'topology.kubernetes.io/zone'])).toBe('zone');
    expect(
      tidbServerLabels({ dc: 'east', host: 'mine' }, node, ['topology.kubernetes.io/zone', 'host'], 'topology.kubernetes.io/zone'),
    ).toEqual({
      dc: 'east',
      host: 'node-1',
      'topology.kubernetes.io/zone': 'z1',
      zone: 'z1',
    });
    expect(tidbServerLabels({}, { 'kubernetes.io/hostname': 'n' }, ['zone', 'host'], 'zone')).toEqual({ host: 'n' });
  });

  test('TiDB takes labels over HTTP from v6.3.0; a custom build is left alone', () => {
    expect(tidbTakesLabels('5.7.25-TiDB-v6.2.0')).toBe(false);
    expect(tidbTakesLabels('5.7.25-TiDB-v6.3.0')).toBe(true);
    expect(tidbTakesLabels('8.0.11-TiDB-v8.5.0')).toBe(true);
    expect(tidbTakesLabels('8.0.11-TiDB-v10.0.0-alpha-123-gabcdef')).toBe(true);
    expect(tidbTakesLabels('5.7.25-TiDB-v5.4.3')).toBe(false);
    expect(tidbTakesLabels('8.0.11-TiDB-None')).toBeUndefined();
  });

  test('the status address of a TiDB Pod, https with tlsCluster', () => {
    const c = {
      name: 'c',
      namespace: 'ns',
      clusterDomain: '',
      acrossK8s: false,
      tls: false,
      discoveryMtls: false,
      pdAddresses: [],
      cluster: null,
      components: [],
    };
    expect(tidbStatusBase(c, 'c-tidb-0')).toBe('http://c-tidb-0.c-tidb-peer.ns:10080');
    expect(tidbStatusBase({ ...c, tls: true }, 'c-tidb-1')).toBe('https://c-tidb-1.c-tidb-peer.ns:10080');
  });
});

describe('the TiDB status-port simulator answers as tidb-server does', () => {
  const ip = '127.0.0.1';
  let sim: TidbSim;
  let base = '';
  beforeAll(async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, ip, () => {
        const p = (s.address() as AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    sim = new TidbSim({ configLabels: { dc: 'cfg' }, port });
    base = `http://${ip}:${port}`;
    await sim.serverStart('c-tidb-0', ip);
  });
  afterAll(() => sim.close());

  // One connection per request (agent: false), as the controller asks: a restarted server shares none.
  const call = (method: string, path: string, body?: string) =>
    new Promise<{ status: number; type?: string; text: string }>((resolve, reject) => {
      const req = request(`${base}${path}`, { method, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], text: Buffer.concat(chunks).toString('utf8') }),
        );
      });
      req.on('error', reject);
      req.end(body);
    });

  test('GET /info: the server info with its labels, indented by one space', async () => {
    const r = await call('GET', '/info');
    expect(r.status).toBe(200);
    expect(r.type).toBe('application/json');
    expect(r.text.split('\n')[1]).toBe(' "is_owner": false,');
    expect(JSON.parse(r.text)).toMatchObject({ version: '8.0.11-TiDB-v8.5.0', status_port: expect.any(Number), labels: { dc: 'cfg' } });
  });

  test('POST /labels merges over what the server has and answers the result; a restart forgets it', async () => {
    const r = await call('POST', '/labels', JSON.stringify({ zone: 'z1' }));
    expect([r.status, JSON.parse(r.text)]).toEqual([200, { dc: 'cfg', zone: 'z1' }]);
    expect(JSON.parse((await call('GET', '/info')).text).labels).toEqual({ dc: 'cfg', zone: 'z1' });
    expect((await call('GET', '/labels')).text).toBe('This api only support POST method');
    expect(await call('POST', '/labels', '[1]')).toMatchObject({
      status: 400,
      text: 'json: cannot unmarshal array into Go value of type map[string]string',
    });
    await sim.serverStart('c-tidb-0', ip);
    expect(JSON.parse((await call('GET', '/info')).text).labels).toEqual({ dc: 'cfg' });
  });

  test('before v6.3.0 there is no labels route', async () => {
    sim.setVersion('c-tidb-0', 'v6.1.7');
    await sim.serverStart('c-tidb-0', ip);
    expect(await call('POST', '/labels', '{}')).toMatchObject({ status: 404, text: '404 page not found\n' });
    sim.setVersion('c-tidb-0', 'v8.5.0');
    await sim.serverStart('c-tidb-0', ip);
  });
});
