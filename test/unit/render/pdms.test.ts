/**
 * PD micro-services (`spec.pdms` with `spec.pd.mode: ms`): the objects tidb-operator v1 creates for
 * TSO and scheduling (`pd_ms_member_manager.go`), PD as their API server, the micro-services' start
 * script run under dash against a stub pd-server, and the controller's upgrade steps
 * (`pd_ms_upgrader.go`): primary transfer before a restart, registration after it.
 */
import { parseToml } from '../../../src/base/toml';
import { pdmsStartScript } from '../../../src/render/scripts/pdms';
import { NO_FEATURE_FLAGS, type PdmsScriptContext } from '../../../src/render/scripts';
import { ANNOTATION, selectorLabels } from '../../../src/tidbcluster/names';
import { BLOCKED_BY } from '../../../src/tidbcluster/restart-order';
import { plan, type ComponentPlan } from '../../../src/controller/plan/plan';
import type { MsState, PlanInput } from '../../../src/controller/view/view';
import { versionAtLeast } from '../../../src/controller/model/values';
import type { Pod, StatefulSet } from '../../../src/controller/model/objects';
import { podOfMsMember } from '../../../src/controller/plan/pdms';
import { cluster, container, env, find, render, renderErrors, tomlOf, type Obj } from '../../support/render';
import { CLUSTER } from '../../support/plan-fixtures';
import { BASE_CONTEXT, expectShellLintClean, ScriptSandbox, type RunOptions } from '../../support/sandbox';

const PDMS = [
  { name: 'tso', replicas: 2 },
  { name: 'scheduling', replicas: 2 },
];
/** The demo cluster with PD in mode ms and both micro-services; `spec` overrides the cluster's fields. */
const msCluster = (spec: Obj = {}, metadata: Obj = {}) =>
  cluster({ pd: { replicas: 3, requests: { storage: '10Gi' }, mode: 'ms' }, pdms: PDMS, ...spec }, metadata);
const renderWith = (spec: Obj = {}, metadata: Obj = {}) => render(msCluster(spec, metadata));
const sts = (objects: Obj[], name: 'tso' | 'scheduling') => find(objects, 'StatefulSet', `demo-${name}`);
const main = (objects: Obj[], name: 'tso' | 'scheduling') => container(sts(objects, name), name);
const scriptOf = (objects: Obj[], name: string) => find(objects, 'ConfigMap', `demo-${name}`).data['startup-script'] as string;

describe('PD micro-service objects', () => {
  const objects = renderWith();

  test.each(['tso', 'scheduling'] as const)('%s: StatefulSet <cluster>-<name>, the PD image, no data volume, port 2379', (name) => {
    const set = sts(objects, name);
    const labels = selectorLabels('demo', name);
    expect(set.metadata.labels).toEqual(labels);
    expect(set.metadata.annotations[ANNOTATION.replicas]).toBe('2');
    expect(set.spec.serviceName).toBe(`demo-${name}-peer`);
    expect(set.spec.selector).toEqual({ matchLabels: labels });
    expect(set.spec.volumeClaimTemplates).toBeUndefined();
    // The controller owns replicas and the partition.
    expect(set.spec.replicas).toBeUndefined();
    expect(set.spec.updateStrategy).toBeUndefined();
    const c = main(objects, name);
    expect(c.image).toBe('pingcap/pd:v8.5.7');
    expect(c.command).toEqual(['/bin/sh', '/usr/local/bin/pdms_start_script.sh']);
    expect(c.ports).toEqual([{ name: 'server', containerPort: 2379, protocol: 'TCP' }]);
    expect(c.readinessProbe).toBeUndefined();
    expect(env(c)).toEqual({
      NAMESPACE: { fieldRef: { fieldPath: 'metadata.namespace' } },
      PEER_SERVICE_NAME: `demo-${name}-peer`,
      SERVICE_NAME: `demo-${name}`,
      SET_NAME: `demo-${name}`,
      // An empty value is left out, as the API server stores it.
      TZ: undefined,
      CLUSTER_NAME: 'demo',
      HEADLESS_SERVICE_NAME: `demo-${name}-peer`,
    });
    expect(c.volumeMounts.map((m: Obj) => m.mountPath)).toEqual(['/etc/podinfo', '/etc/pd', '/usr/local/bin']);
    const volumes = set.spec.template.spec.volumes as Obj[];
    const cm = find(objects, 'ConfigMap', `demo-${name}`);
    expect(volumes.find((v) => v.name === 'config')!.configMap).toEqual({
      name: cm.metadata.name,
      items: [{ key: 'config-file', path: 'pd.toml' }],
    });
    expect(volumes.find((v) => v.name === 'startup-script')!.configMap).toEqual({
      name: cm.metadata.name,
      items: [{ key: 'startup-script', path: 'pdms_start_script.sh' }],
    });
    expect(set.spec.template.metadata.annotations).toEqual({
      'prometheus.io/scrape': 'true',
      'prometheus.io/path': '/metrics',
      'prometheus.io/port': '2379',
    });
  });

  test.each(['tso', 'scheduling'] as const)(
    '%s: client Service (port name client) and headless peer Service with both PD ports',
    (name) => {
      const labels = selectorLabels('demo', name);
      const svc = find(objects, 'Service', `demo-${name}`);
      expect(svc.metadata.labels).toEqual({ ...labels, 'app.kubernetes.io/used-by': 'end-user' });
      expect(svc.spec).toEqual({
        type: 'ClusterIP',
        ports: [{ name: 'client', port: 2379, targetPort: 2379, protocol: 'TCP' }],
        selector: labels,
      });
      const peer = find(objects, 'Service', `demo-${name}-peer`);
      expect(peer.metadata.labels).toEqual({ ...labels, 'app.kubernetes.io/used-by': 'peer' });
      expect(peer.spec).toEqual({
        clusterIP: 'None',
        publishNotReadyAddresses: true,
        selector: labels,
        ports: [
          { name: 'tcp-peer-2380', port: 2380, targetPort: 2380, protocol: 'TCP' },
          { name: 'tcp-peer-2379', port: 2379, targetPort: 2379, protocol: 'TCP' },
        ],
      });
    },
  );

  test('PD runs as the API server: `services api` in its v2 script, which waits for its DNS name to be its own', () => {
    const script = find(objects, 'ConfigMap', 'demo-pd').data['startup-script'] as string;
    expect(script).toContain('# Starts pd-server in a tidb-gitops pod (start script v2).');
    expect(script).toMatch(/^ARGS="services api"$/m);
    expect(script).toContain('# WaitForDnsNameIpMatch');
  });

  test('the controller is told about both micro-services, in the operator order', () => {
    const deployment = find(objects, 'Deployment', 'demo-discovery');
    const info = JSON.parse(env(container(deployment, 'discovery')).TIDB_GITOPS_CLUSTER as string);
    expect(info.components.slice(0, 3)).toEqual(['tso', 'scheduling', 'pd']);
  });

  test('a cluster without micro-services renders no TSO or scheduling object, and PD in its own mode', () => {
    const plain = render(cluster());
    expect(plain.filter((o) => /-(tso|scheduling)(-|$)/.test(o.metadata.name))).toEqual([]);
    const script = find(plain, 'ConfigMap', 'demo-pd').data['startup-script'] as string;
    expect(script).not.toContain('services api');
  });
});

describe('PD micro-service settings', () => {
  test('config: the user TOML, with PD cluster certificate paths under TLS, from PD Secret', () => {
    const config = { 'log-level': 'debug', security: { 'redact-info-log': true } };
    const plain = renderWith({ pdms: [{ name: 'tso', replicas: 1, config }] });
    expect(parseToml(tomlOf(find(plain, 'ConfigMap', 'demo-tso')))).toEqual(config);
    const tls = renderWith({ tlsCluster: { enabled: true }, pdms: [{ name: 'tso', replicas: 1, config, mountClusterClientSecret: true }] });
    expect(parseToml(tomlOf(find(tls, 'ConfigMap', 'demo-tso')))).toEqual({
      'log-level': 'debug',
      security: {
        'redact-info-log': true,
        'cacert-path': '/var/lib/pd-tls/ca.crt',
        'cert-path': '/var/lib/pd-tls/tls.crt',
        'key-path': '/var/lib/pd-tls/tls.key',
      },
    });
    const volumes = sts(tls, 'tso').spec.template.spec.volumes as Obj[];
    expect(volumes.filter((v) => v.secret).map((v) => [v.name, v.secret.secretName])).toEqual([
      ['pd-tls', 'demo-pd-cluster-secret'],
      ['cluster-client-tls', 'demo-cluster-client-secret'],
    ]);
    expect(
      main(tls, 'tso')
        .volumeMounts.slice(3)
        .map((m: Obj) => [m.name, m.mountPath]),
    ).toEqual([
      ['pd-tls', '/var/lib/pd-tls'],
      ['cluster-client-tls', '/var/lib/cluster-client-tls'],
    ]);
    expect(scriptOf(tls, 'tso')).toContain('--listen-addr=https://0.0.0.0:2379');
    expect(scriptOf(tls, 'tso')).toContain('--backend-endpoints=https://demo-pd:2379');
  });

  test('image: baseImage and version of the entry, else the cluster version; an entry naming no image at all runs PD image', () => {
    const own = renderWith({ pdms: [{ name: 'tso', replicas: 1, baseImage: 'registry.example/pd', version: 'v8.5.6' }] });
    expect(main(own, 'tso').image).toBe('registry.example/pd:v8.5.6');
    const none = renderWith({
      pd: { replicas: 1, mode: 'ms', baseImage: 'mirror/pd', version: 'v8.5.5' },
      pdms: [{ name: 'tso', replicas: 1, baseImage: '' }],
    });
    expect(main(none, 'tso').image).toBe('mirror/pd:v8.5.5');
  });

  test('pod settings: cluster-wide ones apply, but the service account is the entry own (as the operator sets it)', () => {
    const objects = renderWith({
      serviceAccount: 'cluster-sa',
      nodeSelector: { disk: 'ssd' },
      pdms: [
        { name: 'tso', replicas: 1, labels: { team: 'db' } },
        { name: 'scheduling', replicas: 1, serviceAccount: 'sched-sa' },
      ],
    });
    expect(sts(objects, 'tso').spec.template.spec.serviceAccountName).toBeUndefined();
    expect(sts(objects, 'scheduling').spec.template.spec.serviceAccountName).toBe('sched-sa');
    expect(sts(objects, 'tso').spec.template.spec.nodeSelector).toEqual({ disk: 'ssd' });
    expect(sts(objects, 'tso').spec.template.metadata.labels.team).toBe('db');
  });

  test('service: type, annotations, port name and the legacy spec.services entry', () => {
    const objects = renderWith({
      services: [{ name: 'scheduling', type: 'NodePort' }],
      pdms: [
        { name: 'tso', replicas: 1, service: { type: 'LoadBalancer', annotations: { a: 'b' }, portName: 'tso-client' } },
        { name: 'scheduling', replicas: 1 },
      ],
    });
    const tso = find(objects, 'Service', 'demo-tso');
    expect(tso.spec.type).toBe('LoadBalancer');
    expect(tso.metadata.annotations).toEqual({ a: 'b' });
    expect(tso.spec.ports[0].name).toBe('tso-client');
    expect(find(objects, 'Service', 'demo-scheduling').spec.type).toBe('NodePort');
  });

  test('storageVolumes become claims named <name>-<volume>; additional mounts are mounted', () => {
    const objects = renderWith({
      pdms: [
        {
          name: 'tso',
          replicas: 1,
          storageVolumes: [{ name: 'log', storageSize: '1Gi', mountPath: '/var/log/tso' }],
          additionalVolumes: [{ name: 'x', emptyDir: {} }],
          additionalVolumeMounts: [{ name: 'x', mountPath: '/x' }],
        },
      ],
    });
    expect(sts(objects, 'tso').spec.volumeClaimTemplates.map((c: Obj) => c.metadata.name)).toEqual(['tso-log']);
    expect(
      main(objects, 'tso')
        .volumeMounts.slice(3)
        .map((m: Obj) => m.mountPath),
    ).toEqual(['/var/log/tso', '/x']);
  });

  test('without a namespace: one problem at metadata.namespace, whichever script version', () => {
    for (const startScriptVersion of ['v1', 'v2']) {
      const errors = renderErrors(msCluster({ startScriptVersion }, { namespace: undefined }));
      expect(errors.split('\n').filter((l) => l.includes('metadata.namespace'))).toHaveLength(1);
    }
  });

  test('a cluster name must leave room for <cluster>-scheduling in the revision label', () => {
    const name = 'a'.repeat(42);
    expect(renderErrors(msCluster({}, { name }))).toContain('metadata.name');
    expect(() => render(msCluster({ pdms: [{ name: 'tso', replicas: 1 }] }, { name }))).not.toThrow();
  });
});

describe('PD micro-service start script', () => {
  const ctx = (o: Partial<PdmsScriptContext> = {}): PdmsScriptContext => ({
    ...BASE_CONTEXT,
    service: 'tso',
    withName: true,
    startTimeout: 30,
    initWaitTime: 0,
    ...o,
  });
  const sandbox = new ScriptSandbox({ dirs: [], servers: ['/pd-server'] });
  beforeAll(() => sandbox.setup());
  afterAll(() => sandbox.cleanup());
  const POD = { HOSTNAME: 'demo-tso-1', NAMESPACE: 'ns', TZ: '' };
  const run = (script: string, opts: RunOptions = {}) => sandbox.run(script, { ...opts, env: { ...POD, ...opts.env } });
  const argvOf = (script: string, opts: RunOptions = {}) => {
    const r = run(script, opts);
    if (r.status !== 0 || !r.argv) throw new Error(`script failed (status ${r.status}):\n${r.stdout}\n${r.stderr}`);
    return r.argv;
  };

  test('v8.3.0 and later: `services <name> --name=<pod>`, listening on 2379 and backed by PD client Service', () => {
    expect(argvOf(pdmsStartScript(ctx()))).toEqual([
      'services',
      'tso',
      '--name=demo-tso-1',
      '--listen-addr=http://0.0.0.0:2379',
      '--advertise-listen-addr=http://demo-tso-1.demo-tso-peer.ns.svc:2379',
      '--backend-endpoints=http://demo-pd:2379',
      '--config=/etc/pd/pd.toml',
    ]);
    expect(
      argvOf(pdmsStartScript(ctx({ service: 'scheduling', withName: false })), { env: { HOSTNAME: 'demo-scheduling-0' } }).slice(0, 4),
    ).toEqual([
      'services',
      'scheduling',
      '--listen-addr=http://0.0.0.0:2379',
      '--advertise-listen-addr=http://demo-scheduling-0.demo-scheduling-peer.ns.svc:2379',
    ]);
  });

  test('the version decides --name as the operator decides it (v8.3.0, a newest alias passes, a non-version tag does not)', () => {
    const withName = (version: string) =>
      scriptOf(renderWith({ pdms: [{ name: 'tso', replicas: 1, version }] }), 'tso').includes('--name=');
    expect(withName('v8.3.0')).toBe(true);
    expect(withName('v8.5.7')).toBe(true);
    expect(withName('nightly')).toBe(true);
    expect(withName('v8.2.0')).toBe(false);
    expect(withName('custom-build')).toBe(false);
  });

  test('a cluster domain names the server by its FQDN; hostNetwork takes the Pod name from POD_NAME', () => {
    const argv = argvOf(pdmsStartScript(ctx({ clusterDomain: 'cluster.local' })), { env: { POD_NAME: 'demo-tso-0', HOSTNAME: 'node-7' } });
    expect(argv).toContain('--name=demo-tso-0.demo-tso-peer.ns.svc.cluster.local');
    expect(argv).toContain('--advertise-listen-addr=http://demo-tso-0.demo-tso-peer.ns.svc.cluster.local:2379');
  });

  test('PreferPDAddressesOverDiscovery: the PD addresses as host:2379; acrossK8s: what discovery verified', () => {
    const flags = { ...NO_FEATURE_FLAGS, preferPdAddressesOverDiscovery: true };
    const argv = argvOf(
      pdmsStartScript(ctx({ version: 'v2', featureFlags: flags, pdAddresses: ['http://pd-a.example:2379', 'https://10.0.0.1'] })),
    );
    expect(argv).toContain('--backend-endpoints=pd-a.example:2379,10.0.0.1:2379');
    const across = argvOf(pdmsStartScript(ctx({ acrossK8s: true })), {
      env: { DISCOVERY_ANSWER: 'http://demo-pd.ns:2379,http://pd-1.other:2379' },
    });
    expect(across).toContain('--backend-endpoints=demo-pd.ns:2379,pd-1.other:2379');
  });

  test('waits for its DNS name; gives up after spec.pd.startTimeout; with WaitForDnsNameIpMatch until it is its own', () => {
    expect(run(pdmsStartScript(ctx()), { env: { DIG_FAILS: '2' } }).argv).toBeDefined();
    const timeout = run(pdmsStartScript(ctx({ startTimeout: 3 })), { env: { DIG_FAILS: 'always' } });
    expect(timeout.status).toBe(1);
    expect(timeout.stderr).toContain('waiting for pd cluster ready timeout');
    const match = { ...NO_FEATURE_FLAGS, waitForDnsNameIpMatch: true };
    expect(
      run(pdmsStartScript(ctx({ featureFlags: match })), { env: { DIG_ANSWER: '10.0.0.5', HOST_IPS: '10.0.0.5' } }).argv,
    ).toBeDefined();
    expect(
      run(pdmsStartScript(ctx({ featureFlags: match, startTimeout: 3 })), { env: { DIG_ANSWER: '10.0.0.9', HOST_IPS: '10.0.0.5' } }).status,
    ).toBe(1);
  });

  test('the script is shellcheck-clean in each form', () => {
    for (const o of [
      {},
      { acrossK8s: true },
      { featureFlags: { ...NO_FEATURE_FLAGS, waitForDnsNameIpMatch: true }, initWaitTime: 5 },
      { service: 'scheduling' as const, withName: false },
    ]) {
      expectShellLintClean(pdmsStartScript(ctx(o)));
    }
  });
});

// ---------------------------------------------------------------------------------------------
// The controller's upgrade steps for TSO and scheduling

const NOW = Date.parse('2026-11-27T12:00:00Z');
const UPDATE = 'demo-tso-new';
const CURRENT = 'demo-tso-old';

function tsoSts(replicas: number, partition: number, version = 'v8.5.7'): StatefulSet {
  return {
    metadata: { name: 'demo-tso', generation: 2, annotations: { [ANNOTATION.replicas]: String(replicas) } },
    spec: {
      replicas,
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition } },
      template: { spec: { containers: [{ name: 'tso', image: `pingcap/pd:${version}` }] } },
    },
    status: { observedGeneration: 2, replicas, currentRevision: CURRENT, updateRevision: UPDATE },
  } as StatefulSet;
}

function tsoPod(ord: number, revision: string, version = 'v8.5.6', ready = true): Pod {
  return {
    metadata: {
      name: `demo-tso-${ord}`,
      uid: `u${ord}`,
      labels: { 'controller-revision-hash': revision, 'app.kubernetes.io/component': 'tso' },
    },
    spec: { containers: [{ name: 'tso', image: `pingcap/pd:${version}` }] },
    status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: '2026-11-27T11:00:00Z' }] },
  } as Pod;
}

const member = (ord: number, name = `demo-tso-${ord}`) => ({ name, serviceAddr: `http://demo-tso-${ord}.demo-tso-peer.ns.svc:2379` });
const members3 = () => ({ members: [member(0), member(1), member(2)] });

function tsoPlan(pods: Pod[], ms: MsState, partition = 3): ComponentPlan {
  const input: PlanInput = {
    cluster: { ...CLUSTER, name: 'demo', components: ['tso'] },
    components: [{ kind: 'tso', sts: tsoSts(3, partition), pods }],
    pd: { members: [], leader: undefined, stores: [], evicting: new Set(), ms: { tso: ms } },
    now: NOW,
  };
  return plan(input).find((p) => p.kind === 'tso')!;
}

describe('TSO and scheduling upgrades (pd_ms_upgrader.go)', () => {
  const old3 = () => [tsoPod(0, CURRENT), tsoPod(1, CURRENT), tsoPod(2, CURRENT)];
  const members = { members: [member(0), member(1), member(2)], primary: member(2).serviceAddr };

  test('the highest ordinal goes first; its primary moves to the lowest ordinal first (no higher one exists)', () => {
    const p = tsoPlan(old3(), members);
    expect(p.action).toEqual({
      type: 'transfer-primary',
      service: 'tso',
      pod: 'demo-tso-2',
      primary: member(2).serviceAddr,
      to: 'demo-tso-0',
    });
    expect(p.event).toMatchObject({ type: 'Normal', reason: 'PrimaryTransfer', pod: 'demo-tso-2' });
  });

  test('a Pod that is not the primary restarts without a transfer', () => {
    const p = tsoPlan(old3(), { ...members, primary: member(0).serviceAddr });
    expect(p.action).toEqual({ type: 'apply', replicas: 3, partition: 2 });
  });

  test('the primary moves to the highest ordinal above (already upgraded) when there is one', () => {
    const pods = [tsoPod(0, CURRENT), tsoPod(1, CURRENT), tsoPod(2, UPDATE, 'v8.5.7')];
    const p = tsoPlan(pods, { ...members, primary: member(1).serviceAddr });
    expect(p.action).toMatchObject({ type: 'transfer-primary', pod: 'demo-tso-1', to: 'demo-tso-2' });
  });

  test('the target is named as PD registry names it; servers registered without a name leave the choice to the primary', () => {
    // A server started without --name is named TSO-<pod> (v8.3.x) by itself.
    const p = tsoPlan(old3(), {
      members: [member(0, 'TSO-demo-tso-0'), member(1, 'TSO-demo-tso-1'), member(2, 'TSO-demo-tso-2')],
      primary: member(2).serviceAddr,
    });
    expect(p.action).toMatchObject({ type: 'transfer-primary', to: 'TSO-demo-tso-0' });
    // Servers before v8.3.0 register no name at all.
    const unnamed = tsoPlan(old3(), { members: [member(0, ''), member(1, ''), member(2)], primary: member(2).serviceAddr });
    expect(unnamed.action).toMatchObject({ type: 'transfer-primary', pod: 'demo-tso-2', to: '' });
    expect(unnamed.reason).toBe('moving the tso primary from demo-tso-2 to another server before restarting demo-tso-2');
  });

  test('a primary older than v8.3.0 (no transfer API) or alone restarts as the primary', () => {
    const old = [tsoPod(0, CURRENT, 'v8.1.0'), tsoPod(1, CURRENT, 'v8.1.0'), tsoPod(2, CURRENT, 'v8.1.0')];
    expect(tsoPlan(old, members).action).toEqual({ type: 'apply', replicas: 3, partition: 2 });
    expect(tsoPlan(old3(), { members: [member(2)], primary: member(2).serviceAddr }).action).toEqual({
      type: 'apply',
      replicas: 3,
      partition: 2,
    });
  });

  test('while no primary is elected (a transfer under way), the Pod restarts as the operator lets it', () => {
    expect(tsoPlan(old3(), { ...members, primary: '' }).action).toEqual({ type: 'apply', replicas: 3, partition: 2 });
  });

  test('an upgraded Pod counts once Ready and registered with PD again', () => {
    const pods = [tsoPod(0, CURRENT), tsoPod(1, CURRENT), tsoPod(2, UPDATE, 'v8.5.7')];
    const unregistered = tsoPlan(pods, { members: [member(0), member(1)], primary: member(0).serviceAddr });
    expect(unregistered.action).toBeUndefined();
    expect(unregistered.reason).toBe('waiting for the tso server of demo-tso-2 to register with PD');
    const registered = tsoPlan(pods, { ...members, primary: member(0).serviceAddr });
    expect(registered.action).toEqual({ type: 'apply', replicas: 3, partition: 1 });
  });

  test('PD registry unreadable: the upgrade waits and says why', () => {
    const p = tsoPlan(old3(), { error: 'GET http://demo-pd:2379/pd/api/v2/ms/members/tso: HTTP 404 not support micro service' });
    expect(p.action).toBeUndefined();
    expect(p.reason).toContain('not support micro service');
  });

  test('scale-in: a primary hands over before its Pod goes; another Pod goes at once', () => {
    const pods = [tsoPod(0, UPDATE, 'v8.5.7'), tsoPod(1, UPDATE, 'v8.5.7'), tsoPod(2, UPDATE, 'v8.5.7')];
    const scaleIn = (primary: number) => {
      const sts = { ...tsoSts(3, 3), metadata: { ...tsoSts(3, 3).metadata, annotations: { [ANNOTATION.replicas]: '2' } } } as StatefulSet;
      sts.status = { ...sts.status!, currentRevision: UPDATE };
      const input: PlanInput = {
        cluster: { ...CLUSTER, name: 'demo', components: ['tso'] },
        components: [{ kind: 'tso', sts, pods }],
        pd: {
          members: [],
          leader: undefined,
          stores: [],
          evicting: new Set(),
          ms: { tso: { ...members3(), primary: member(primary).serviceAddr } },
        },
        now: NOW,
      };
      return plan(input).find((p) => p.kind === 'tso')!;
    };
    expect(scaleIn(2).action).toEqual({
      type: 'transfer-primary',
      service: 'tso',
      pod: 'demo-tso-2',
      primary: member(2).serviceAddr,
      to: 'demo-tso-0',
    });
    expect(scaleIn(1).action).toEqual({ type: 'apply', replicas: 2, partition: 2 });
  });

  test('order: scheduling waits for TSO, PD for both', () => {
    expect(BLOCKED_BY.tso).toEqual([]);
    expect(BLOCKED_BY.scheduling).toEqual(['tso']);
    expect(BLOCKED_BY.pd).toEqual(['tso', 'scheduling']);
  });

  test('versions compare as tidb-operator cmpver does: newest aliases with a suffix pass, pre-releases count as their release', () => {
    expect(versionAtLeast('nightly-20251101', 'v8.3.0')).toBe(true);
    expect(versionAtLeast('latest', 'v8.3.0')).toBe(true);
    expect(versionAtLeast('v8.3.0-5427', 'v8.3.0')).toBe(true);
    expect(versionAtLeast('v8.2.9', 'v8.3.0')).toBe(false);
    expect(versionAtLeast('custom-build', 'v8.3.0')).toBeUndefined();
    expect(versionAtLeast(undefined, 'v8.3.0')).toBeUndefined();
  });

  test('a registered server maps to its Pod by the first label of its address', () => {
    expect(podOfMsMember({ serviceAddr: 'https://demo-tso-10.demo-tso-peer.ns.svc.cluster.local:2379' })).toBe('demo-tso-10');
    expect(podOfMsMember({ serviceAddr: 'demo-tso-1.demo-tso-peer.ns.svc:2379' })).toBe('demo-tso-1');
  });
});
