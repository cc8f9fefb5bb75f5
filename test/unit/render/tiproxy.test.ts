/**
 * TiProxy: the objects tidb-operator v1 creates for `spec.tiproxy`, its config per TLS layout, the
 * readiness probe, the start script (run under dash against a stub tiproxy binary) and bad input.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { parseToml } from '../../../src/base/toml';
import { TIPROXY_BINARY, tiproxyStartScript, type TiProxyScriptContext } from '../../../src/render/scripts/tiproxy';
import { ANNOTATION, selectorLabels } from '../../../src/tidbcluster/names';
import { cluster, container, env, find, render, renderErrors, tomlOf, type Obj } from '../../support/render';
import { expectShellLintClean, ScriptSandbox, type RunOptions, type RunResult } from '../../support/sandbox';

const tiproxy = (o: Obj = {}) => ({ replicas: 2, version: 'v1.3.0', ...o });
/** The demo cluster with TiProxy, rendered; `spec` overrides the cluster's fields. */
const renderWith = (spec: Obj = {}, metadata: Obj = {}) => render(cluster({ tiproxy: tiproxy(), ...spec }, metadata));
const sts = (objects: Obj[]) => find(objects, 'StatefulSet', 'demo-tiproxy');
const proxy = (objects: Obj[]) => container(sts(objects), 'tiproxy');
const configOf = (objects: Obj[]): Obj => parseToml(tomlOf(find(objects, 'ConfigMap', 'demo-tiproxy')));
const volumesOf = (objects: Obj[]) => sts(objects).spec.template.spec.volumes as Obj[];
const secretVolumes = (objects: Obj[]) =>
  Object.fromEntries(
    volumesOf(objects)
      .filter((v) => v.secret)
      .map((v) => [v.name, v.secret.secretName]),
  );
const secretMounts = (objects: Obj[]) => {
  const secrets = new Set(
    volumesOf(objects)
      .filter((v) => v.secret)
      .map((v) => v.name),
  );
  return Object.fromEntries((proxy(objects).volumeMounts as Obj[]).filter((m) => secrets.has(m.name)).map((m) => [m.name, m.mountPath]));
};
const LABELS = selectorLabels('demo', 'tiproxy');

describe('TiProxy objects', () => {
  const objects = renderWith();

  test('client Service: NodePort (hard-coded by the operator), API and SQL ports, not-ready Pods published', () => {
    const svc = find(objects, 'Service', 'demo-tiproxy');
    expect(svc.metadata.labels).toEqual({ ...LABELS, 'app.kubernetes.io/used-by': 'end-user' });
    expect(svc.spec).toEqual({
      type: 'NodePort',
      ports: [
        { name: 'tiproxy-api', port: 3080, targetPort: 3080, protocol: 'TCP' },
        { name: 'tiproxy-sql', port: 6000, targetPort: 6000, protocol: 'TCP' },
      ],
      selector: LABELS,
      publishNotReadyAddresses: true,
    });
  });

  test('peer Service: headless, API and peer ports', () => {
    const peer = find(objects, 'Service', 'demo-tiproxy-peer');
    expect(peer.metadata.labels).toEqual({ ...LABELS, 'app.kubernetes.io/used-by': 'peer' });
    expect(peer.spec).toEqual({
      type: 'ClusterIP',
      clusterIP: 'None',
      ports: [
        { name: 'tiproxy-api', port: 3080, targetPort: 3080, protocol: 'TCP' },
        { name: 'tiproxy-peer', port: 3081, targetPort: 3081, protocol: 'TCP' },
      ],
      selector: LABELS,
      publishNotReadyAddresses: true,
    });
  });

  test('StatefulSet: peer serviceName, no replicas, partition or volume claim; desired count and settings in annotations', () => {
    const s = sts(objects);
    expect(s.metadata.labels).toEqual(LABELS);
    expect(s.spec.selector.matchLabels).toEqual(LABELS);
    expect(s.spec.serviceName).toBe('demo-tiproxy-peer');
    expect(s.spec.replicas).toBeUndefined();
    expect(s.spec.updateStrategy).toBeUndefined();
    expect(JSON.parse(s.metadata.annotations['tidb-gitops.io/settings']).updateStrategy).toBe('RollingUpdate');
    expect(s.spec.podManagementPolicy).toBe('Parallel');
    expect(s.spec.volumeClaimTemplates).toBeUndefined();
    expect(s.metadata.annotations[ANNOTATION.replicas]).toBe('2');
    const settings = JSON.parse(s.metadata.annotations[ANNOTATION.settings]);
    expect(settings).toEqual({
      paused: false,
      pvReclaimPolicy: 'Retain',
      enablePVReclaim: false,
      forceUpgrade: false,
      kubeVersion: '1.31',
      serverLabels: {},
      updateStrategy: 'RollingUpdate',
    });
    expect(s.spec.template.metadata.annotations).toEqual({
      'prometheus.io/scrape': 'true',
      'prometheus.io/path': '/api/metrics',
      'prometheus.io/port': '3080',
    });
  });

  test('container: start script from the ConfigMap, three ports, operator env, no readiness probe by default', () => {
    const c = proxy(objects);
    expect(c.image).toBe('pingcap/tiproxy:v1.3.0');
    expect(c.imagePullPolicy).toBe('IfNotPresent');
    expect(c.command).toEqual(['/bin/sh', '/etc/proxy/start.sh']);
    expect(c.ports).toEqual([
      { name: 'tiproxy', containerPort: 6000, protocol: 'TCP' },
      { name: 'tiproxy-api', containerPort: 3080, protocol: 'TCP' },
      { name: 'tiproxy-peer', containerPort: 3081, protocol: 'TCP' },
    ]);
    expect(c.env).toEqual([
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
      { name: 'HEADLESS_SERVICE_NAME', value: 'demo-tiproxy-peer' },
    ]);
    expect(c.volumeMounts).toEqual([
      { name: 'config', mountPath: '/etc/proxy', readOnly: true },
      { name: 'annotations', mountPath: '/etc/podinfo', readOnly: true },
    ]);
    expect(c.readinessProbe).toBeUndefined();
    expect(volumesOf(objects)).toEqual([
      {
        name: 'config',
        configMap: {
          name: 'demo-tiproxy',
          items: [
            { key: 'config-file', path: 'proxy.toml' },
            { key: 'startup-script', path: 'start.sh' },
          ],
        },
      },
      {
        name: 'annotations',
        downwardAPI: { items: [{ path: 'annotations', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.annotations' } }] },
      },
    ]);
  });

  test('ConfigMap <cluster>-tiproxy holds proxy.toml and start.sh, with the owned keys set', () => {
    const cm = find(objects, 'ConfigMap', 'demo-tiproxy');
    expect(cm.metadata.labels).toEqual(LABELS);
    expect(Object.keys(cm.data).sort()).toEqual(['config-file', 'startup-script']);
    expect(cm.data['config-file']).toBe(
      'workdir = "/var/lib/tiproxy/work"\n\n[proxy]\n  pd-addrs = "demo-pd:2379"\n  require-backend-tls = false\n',
    );
    expect(cm.data['startup-script']).toContain('exec /bin/tiproxy ${ARGS}');
  });

  test('the ConfigMap stays in place under a cluster-wide RollingUpdate strategy (the others get hashed names)', () => {
    const rolled = renderWith({ configUpdateStrategy: 'RollingUpdate' });
    expect(find(rolled, 'ConfigMap', 'demo-tiproxy').metadata.name).toBe('demo-tiproxy');
    expect(volumesOf(rolled)[0].configMap.name).toBe('demo-tiproxy');
    expect(find(rolled, 'ConfigMap', /^demo-pd-[0-9a-f]{7}$/)).toBeDefined();
  });

  test('user env is appended, reserved names are not overridden; user annotations win over the Prometheus ones', () => {
    const objs = renderWith({
      tiproxy: tiproxy({
        env: [
          { name: 'NAMESPACE', value: 'x' },
          { name: 'EXTRA', value: 'y' },
        ],
        annotations: { 'prometheus.io/scrape': 'false', team: 'db' },
      }),
    });
    expect(env(proxy(objs))).toEqual({
      POD_NAME: { fieldRef: { fieldPath: 'metadata.name' } },
      NAMESPACE: { fieldRef: { fieldPath: 'metadata.namespace' } },
      HEADLESS_SERVICE_NAME: 'demo-tiproxy-peer',
      EXTRA: 'y',
    });
    expect(sts(objs).spec.template.metadata.annotations).toMatchObject({
      'prometheus.io/scrape': 'false',
      team: 'db',
      'prometheus.io/port': '3080',
    });
  });

  test('storageVolumes become tiproxy-<name> claims; additional volumes and mounts follow the operator ones', () => {
    const objs = renderWith({
      tiproxy: tiproxy({
        storageClassName: 'fast',
        storageVolumes: [
          { name: 'work', storageSize: '1Gi', mountPath: '/var/lib/tiproxy' },
          { name: 'spare', storageSize: '2Gi', storageClassName: 'slow' },
        ],
        additionalVolumes: [{ name: 'extra', emptyDir: {} }],
        additionalVolumeMounts: [{ name: 'extra', mountPath: '/extra' }],
      }),
    });
    const claims = sts(objs).spec.volumeClaimTemplates;
    expect(claims.map((c: Obj) => [c.metadata.name, c.spec.storageClassName, c.spec.resources.requests.storage])).toEqual([
      ['tiproxy-work', 'fast', '1Gi'],
      ['tiproxy-spare', 'slow', '2Gi'],
    ]);
    expect(proxy(objs).volumeMounts.map((m: Obj) => m.name)).toEqual(['config', 'annotations', 'tiproxy-work', 'extra']);
    expect(volumesOf(objs).map((v) => v.name)).toEqual(['config', 'annotations', 'extra']);
  });

  test('image: own baseImage and version win; the cluster version applies otherwise', () => {
    expect(proxy(renderWith({ tiproxy: { replicas: 1 } })).image).toBe('pingcap/tiproxy:v8.5.7');
    expect(proxy(renderWith({ tiproxy: { replicas: 1, baseImage: 'reg/tiproxy', version: 'v1.2.0' } })).image).toBe('reg/tiproxy:v1.2.0');
  });

  test('the sysctl-init annotation adds no init container to TiProxy (PD, TiKV, TiDB and TiFlash only)', () => {
    const sysctls = [{ name: 'net.core.somaxconn', value: '32768' }];
    const objs = renderWith({
      tiproxy: tiproxy({ annotations: { 'tidb.pingcap.com/sysctl-init': 'true' }, podSecurityContext: { sysctls } }),
    });
    expect(sts(objs).spec.template.spec.initContainers).toBeUndefined();
    expect(sts(objs).spec.template.spec.securityContext).toEqual({ sysctls });
    expect(sts(objs).spec.template.metadata.annotations['tidb.pingcap.com/sysctl-init']).toBe('true');
  });

  test('additionalContainers named tiproxy are merged into the container, init containers kept', () => {
    const objs = renderWith({
      tiproxy: tiproxy({
        additionalContainers: [
          { name: 'tiproxy', env: [{ name: 'EXTRA', value: '1' }] },
          { name: 'side', image: 'busybox' },
        ],
        initContainers: [{ name: 'prep', image: 'busybox' }],
      }),
    });
    const spec = sts(objs).spec.template.spec;
    expect(spec.containers.map((c: Obj) => c.name)).toEqual(['tiproxy', 'side']);
    expect(env(proxy(objs)).EXTRA).toBe('1');
    expect(spec.initContainers.map((c: Obj) => c.name)).toEqual(['prep']);
  });

  test('serverLabels go to the controller settings only', () => {
    const objs = renderWith({ tiproxy: tiproxy({ serverLabels: { region: 'us', rack: 'r1' } }) });
    expect(JSON.parse(sts(objs).metadata.annotations[ANNOTATION.settings]).serverLabels).toEqual({ region: 'us', rack: 'r1' });
    expect(tomlOf(find(objs, 'ConfigMap', 'demo-tiproxy'))).not.toContain('rack');
  });

  test('preferIPv6 asks both Services for dual stack', () => {
    const objs = renderWith({ preferIPv6: true });
    expect(find(objs, 'Service', 'demo-tiproxy').spec.ipFamilyPolicy).toBe('PreferDualStack');
    expect(find(objs, 'Service', 'demo-tiproxy-peer').spec.ipFamilyPolicy).toBe('PreferDualStack');
  });

  test('OnDelete and OrderedReady are taken from the spec', () => {
    const s = sts(renderWith({ tiproxy: tiproxy({ statefulSetUpdateStrategy: 'OnDelete', podManagementPolicy: 'OrderedReady' }) }));
    expect(JSON.parse(s.metadata.annotations['tidb-gitops.io/settings']).updateStrategy).toBe('OnDelete');
    expect(s.spec.podManagementPolicy).toBe('OrderedReady');
  });
});

describe('TiProxy config', () => {
  test('user keys are kept; workdir and pd-addrs are the renderer’s; require-backend-tls only defaulted', () => {
    const config = configOf(
      renderWith({
        tiproxy: tiproxy({
          config: '[proxy]\npd-addrs = "elsewhere:2379"\nrequire-backend-tls = true\nmax-connections = 100\n[log]\nlevel = "warn"\n',
        }),
      }),
    );
    expect(config).toEqual({
      workdir: '/var/lib/tiproxy/work',
      proxy: { 'pd-addrs': 'demo-pd:2379', 'require-backend-tls': true, 'max-connections': 100 },
      log: { level: 'warn' },
    });
  });

  test('a mapping config gives the same TOML as the string form', () => {
    const fromMap = tomlOf(find(renderWith({ tiproxy: tiproxy({ config: { log: { level: 'warn' } } }) }), 'ConfigMap', 'demo-tiproxy'));
    const fromString = tomlOf(find(renderWith({ tiproxy: tiproxy({ config: '[log]\nlevel = "warn"\n' }) }), 'ConfigMap', 'demo-tiproxy'));
    expect(fromMap).toBe(fromString);
  });

  test('without a PD of its own, spec.cluster names the PD; with one, the local PD wins', () => {
    const remote = render(cluster({ pd: undefined, cluster: { name: 'base', namespace: 'other' }, tiproxy: tiproxy() }));
    expect(configOf(remote).proxy).toMatchObject({ 'pd-addrs': 'base-pd:2379' });
    const local = renderWith({ cluster: { name: 'base' } });
    expect(configOf(local).proxy).toMatchObject({ 'pd-addrs': 'demo-pd:2379' });
  });
});

describe('TiProxy TLS', () => {
  const TLS_CLUSTER = { tlsCluster: { enabled: true } };
  const tidbTls = (o: Obj = {}) => ({ tidb: { replicas: 1, tlsClient: { enabled: true, ...o } } });
  const SKIP = { 'tidb.tidb.pingcap.com/skip-tls-when-connect-tidb': 'true' };
  const certs = (dir: string, keys = ['ca', 'key', 'cert']) =>
    Object.fromEntries(keys.map((k) => [k, `${dir}/${k === 'ca' ? 'ca.crt' : k === 'key' ? 'tls.key' : 'tls.crt'}`]));
  const CLIENT = '/var/lib/cluster-client-tls';
  const SERVER = '/var/lib/tiproxy-server-tls';
  const SQL = '/var/lib/tiproxy-sql-tls';
  const HTTP = '/var/lib/tiproxy-http-server-tls';
  const OWN = '/var/lib/tiproxy-tls';

  describe('legacy layout (certLayout unset)', () => {
    test('cluster TLS: cluster-client certificate towards PD, TiProxy’s own certificate for the API', () => {
      const objs = renderWith(TLS_CLUSTER);
      expect(configOf(objs).security).toEqual({
        'cluster-tls': certs(CLIENT),
        'server-http-tls': { ...certs(HTTP), 'skip-ca': true },
      });
      expect(secretVolumes(objs)).toEqual({
        'cluster-client-tls': 'demo-cluster-client-secret',
        'tiproxy-tls': 'demo-tiproxy-cluster-secret',
      });
      expect(secretMounts(objs)).toEqual({ 'cluster-client-tls': CLIENT, 'tiproxy-tls': HTTP });
    });

    test('TiDB TLS: TiDB’s server certificate for clients and the API, a client certificate towards TiDB', () => {
      const objs = renderWith(tidbTls());
      expect(configOf(objs).security).toEqual({
        'server-tls': { ...certs(SERVER), 'skip-ca': true },
        'sql-tls': certs(SQL),
        'server-http-tls': { ...certs(SERVER), 'skip-ca': true },
      });
      expect(secretVolumes(objs)).toEqual({ 'tidb-server-tls': 'demo-tidb-server-secret', 'tidb-client-tls': 'demo-tidb-client-secret' });
      expect(secretMounts(objs)).toEqual({ 'tidb-server-tls': SERVER, 'tidb-client-tls': SQL });
    });

    test('both: no separate API certificate, everything else combined', () => {
      const objs = renderWith({ ...TLS_CLUSTER, ...tidbTls() });
      expect(configOf(objs).security).toEqual({
        'cluster-tls': certs(CLIENT),
        'server-tls': { ...certs(SERVER), 'skip-ca': true },
        'sql-tls': certs(SQL),
        'server-http-tls': { ...certs(SERVER), 'skip-ca': true },
      });
      expect(Object.keys(secretVolumes(objs))).toEqual(['cluster-client-tls', 'tidb-server-tls', 'tidb-client-tls']);
    });

    test('skipInternalClientCA skips the CA check, disableClientAuthn drops the client certificate', () => {
      const objs = renderWith(tidbTls({ skipInternalClientCA: true, disableClientAuthn: true }));
      expect(configOf(objs).security['sql-tls']).toEqual({ 'skip-ca': true });
      // The client secret is still mounted, as the operator does.
      expect(secretVolumes(objs)['tidb-client-tls']).toBe('demo-tidb-client-secret');
    });

    test('a skip-ca the user wrote is kept, and then the CA is configured', () => {
      const config = configOf(
        renderWith({
          ...tidbTls({ skipInternalClientCA: true }),
          tiproxy: tiproxy({ config: { security: { 'sql-tls': { 'skip-ca': false }, 'server-tls': { 'skip-ca': false } } } }),
        }),
      );
      expect(config.security['sql-tls']).toEqual({ 'skip-ca': false, ...certs(SQL) });
      expect(config.security['server-tls']['skip-ca']).toBe(false);
    });

    test('the skip-tls-when-connect-tidb annotation turns TLS towards TiDB off, unless sslEnableTiDB', () => {
      const skipped = renderWith(tidbTls(), { annotations: SKIP });
      expect(configOf(skipped).security['sql-tls']).toBeUndefined();
      expect(secretVolumes(skipped)['tidb-client-tls']).toBeUndefined();
      const forced = renderWith({ ...tidbTls(), tiproxy: tiproxy({ sslEnableTiDB: true }) }, { annotations: SKIP });
      expect(configOf(forced).security['sql-tls']).toEqual(certs(SQL));
      expect(secretVolumes(forced)['tidb-client-tls']).toBe('demo-tidb-client-secret');
    });

    test('tlsClientSecretName names the client certificate Secret', () => {
      const objs = renderWith({ ...tidbTls(), tiproxy: tiproxy({ tlsClientSecretName: 'my-proxy-client' }) });
      expect(secretVolumes(objs)['tidb-client-tls']).toBe('my-proxy-client');
    });

    test('tlsClient without spec.tidb changes nothing', () => {
      const objs = render(cluster({ tidb: undefined, tiproxy: tiproxy() }));
      expect(configOf(objs).security).toBeUndefined();
      expect(secretVolumes(objs)).toEqual({});
    });
  });

  describe('certLayout v1', () => {
    const V1 = (o: Obj = {}) => ({ tiproxy: tiproxy({ certLayout: 'v1', ...o }) });

    test('cluster TLS: TiProxy’s own certificate for PD and the API; cluster-client mounted for the probe', () => {
      const objs = renderWith({ ...TLS_CLUSTER, ...V1() });
      expect(configOf(objs).security).toEqual({
        'cluster-tls': certs(OWN),
        'server-http-tls': { ...certs(OWN), 'skip-ca': true },
      });
      expect(secretVolumes(objs)).toEqual({
        'cluster-client-tls': 'demo-cluster-client-secret',
        'tiproxy-tls': 'demo-tiproxy-cluster-secret',
      });
      expect(secretMounts(objs)).toEqual({ 'cluster-client-tls': CLIENT, 'tiproxy-tls': OWN });
    });

    test('with TiDB TLS: server certificate without CA, TiDB’s CA towards TiDB, no client certificate', () => {
      const objs = renderWith({ ...TLS_CLUSTER, ...tidbTls(), ...V1() });
      expect(configOf(objs).security).toEqual({
        'cluster-tls': certs(OWN),
        'server-tls': { ...certs(SERVER, ['key', 'cert']), 'skip-ca': true },
        'sql-tls': certs(SERVER, ['ca']),
        'server-http-tls': { ...certs(OWN), 'skip-ca': true },
      });
      expect(Object.keys(secretVolumes(objs))).toEqual(['cluster-client-tls', 'tiproxy-tls', 'tidb-server-tls']);
      const skipCa = configOf(renderWith({ ...TLS_CLUSTER, ...tidbTls({ skipInternalClientCA: true }), ...V1() }));
      expect(skipCa.security['sql-tls']).toEqual({ 'skip-ca': true });
      const skipped = configOf(renderWith({ ...TLS_CLUSTER, ...tidbTls(), ...V1() }, { annotations: SKIP }));
      expect(skipped.security['sql-tls']).toBeUndefined();
    });

    test('TiDB TLS only, with a certificate mounted at /var/lib/tiproxy-tls by the user', () => {
      const objs = renderWith({
        ...tidbTls(),
        ...V1({
          additionalVolumes: [{ name: 'api-cert', secret: { secretName: 'api' } }],
          additionalVolumeMounts: [{ name: 'api-cert', mountPath: OWN }],
        }),
      });
      expect(configOf(objs).security['server-http-tls']).toEqual({ ...certs(OWN), 'skip-ca': true });
      expect(secretVolumes(objs)).toEqual({ 'tidb-server-tls': 'demo-tidb-server-secret', 'api-cert': 'api' });
    });

    test('fails without tlsCluster when nothing is mounted where the API certificate is configured', () => {
      expect(renderErrors(cluster(V1()))).toContain('spec.tiproxy.certLayout (line');
      expect(renderErrors(cluster(V1()))).toContain(
        '"v1" configures TiProxy\'s HTTP API certificate (security.server-http-tls) from /var/lib/tiproxy-tls',
      );
    });
  });
});

describe('TiProxy readiness probe', () => {
  const probeOf = (readinessProbe: Obj | undefined, spec: Obj = {}) =>
    proxy(renderWith({ ...spec, tiproxy: tiproxy({ readinessProbe }) })).readinessProbe;

  test('none without a type (the operator’s compatibility rule)', () => {
    expect(probeOf({ periodSeconds: 5 })).toBeUndefined();
  });

  test('tcp checks the SQL port; both delays default to 10', () => {
    expect(probeOf({ type: 'tcp' })).toEqual({ tcpSocket: { port: 6000 }, initialDelaySeconds: 10, periodSeconds: 10 });
    expect(probeOf({ type: 'tcp', initialDelaySeconds: 3, periodSeconds: 7 })).toEqual({
      tcpSocket: { port: 6000 },
      initialDelaySeconds: 3,
      periodSeconds: 7,
    });
  });

  test('command curls the health API; under cluster TLS over https with the cluster-client certificate, in both layouts', () => {
    expect(probeOf({ type: 'command' })).toEqual({
      exec: { command: ['curl', 'http://127.0.0.1:3080/api/debug/health', '--fail', '--location'] },
      initialDelaySeconds: 10,
      periodSeconds: 10,
    });
    const tlsCommand = [
      'curl',
      'https://127.0.0.1:3080/api/debug/health',
      '--fail',
      '--location',
      '--cacert',
      '/var/lib/cluster-client-tls/ca.crt',
      '--cert',
      '/var/lib/cluster-client-tls/tls.crt',
      '--key',
      '/var/lib/cluster-client-tls/tls.key',
    ];
    expect(probeOf({ type: 'command' }, { tlsCluster: { enabled: true } }).exec.command).toEqual(tlsCommand);
    const v1 = proxy(
      renderWith({ tlsCluster: { enabled: true }, tiproxy: tiproxy({ certLayout: 'v1', readinessProbe: { type: 'command' } }) }),
    );
    expect(v1.readinessProbe.exec.command).toEqual(tlsCommand);
    expect(v1.volumeMounts).toContainEqual({ name: 'cluster-client-tls', mountPath: '/var/lib/cluster-client-tls', readOnly: true });
  });
});

describe('TiProxy start script', () => {
  const ctx = (o: Partial<TiProxyScriptContext> = {}): TiProxyScriptContext => ({
    clusterName: 'demo',
    namespace: 'ns',
    clusterDomain: '',
    ...o,
  });
  const sandbox = new ScriptSandbox({ dirs: [], servers: [] });
  let stubDir = '';

  beforeAll(() => {
    sandbox.setup();
    // A tiproxy that answers --help with $TIPROXY_HELP and otherwise records its argv.
    stubDir = mkdtempSync(join(tmpdir(), 'tiproxy-stub-'));
    const stub = join(stubDir, 'tiproxy');
    writeFileSync(
      stub,
      [
        '#!/bin/sh',
        'echo "tiproxy $*" >>"$STUB_LOG"',
        'if [ "${1:-}" = --help ]; then printf \'%s\\n\' "${TIPROXY_HELP:-}"; exit 0; fi',
        'printf \'%s\\n\' "$@" >"$ARGV_FILE"',
        '',
      ].join('\n'),
    );
    chmodSync(stub, 0o755);
  });
  afterAll(() => {
    sandbox.cleanup();
    rmSync(stubDir, { recursive: true, force: true });
  });

  const NEW_HELP =
    'Usage:\n  tiproxy [flags]\n\nFlags:\n      --advertise-addr string   advertise address\n      --config string           proxy config file path';
  const OLD_HELP = 'Usage:\n  tiproxy [flags]\n\nFlags:\n      --config string   proxy config file path';
  const POD = { POD_NAME: 'demo-tiproxy-0', NAMESPACE: 'from-env', HEADLESS_SERVICE_NAME: 'demo-tiproxy-peer' };

  function run(script: string, opts: RunOptions & { help?: string } = {}): RunResult {
    const { help = NEW_HELP, ...rest } = opts;
    const stubbed = script.split(TIPROXY_BINARY).join(join(stubDir, 'tiproxy'));
    return sandbox.run(stubbed, { ...rest, env: { ...POD, TIPROXY_HELP: help, ...rest.env } });
  }

  test.each(['dash', 'bash'] as const)(
    '%s: a tiproxy whose help knows --advertise-addr gets the Pod’s FQDN (namespace baked in)',
    (shell) => {
      const r = run(tiproxyStartScript(ctx()), { shell });
      expect(r.status).toBe(0);
      expect(r.argv).toEqual(['--config=/etc/proxy/proxy.toml', '--advertise-addr=demo-tiproxy-0.demo-tiproxy-peer.ns.svc']);
      expect(r.calls.filter((c) => c.startsWith('tiproxy'))).toEqual([
        'tiproxy --help',
        'tiproxy --config=/etc/proxy/proxy.toml --advertise-addr=demo-tiproxy-0.demo-tiproxy-peer.ns.svc',
      ]);
    },
  );

  test.each(['dash', 'bash'] as const)('%s: an older tiproxy only gets --config', (shell) => {
    const r = run(tiproxyStartScript(ctx()), { help: OLD_HELP, shell });
    expect(r.status).toBe(0);
    expect(r.argv).toEqual(['--config=/etc/proxy/proxy.toml']);
  });

  test('clusterDomain is appended; HOSTNAME stands in for POD_NAME', () => {
    const r = run(tiproxyStartScript(ctx({ clusterDomain: 'cluster.local' })), { env: { POD_NAME: '', HOSTNAME: 'demo-tiproxy-3' } });
    expect(r.argv).toEqual(['--config=/etc/proxy/proxy.toml', '--advertise-addr=demo-tiproxy-3.demo-tiproxy-peer.ns.svc.cluster.local']);
  });

  test('rendered without a namespace, the Pod’s NAMESPACE is used', () => {
    const script = tiproxyStartScript(ctx({ namespace: undefined }));
    expect(run(script).argv).toEqual(['--config=/etc/proxy/proxy.toml', '--advertise-addr=demo-tiproxy-0.demo-tiproxy-peer.from-env.svc']);
  });

  test('debug run mode holds the container without starting tiproxy; a missing annotations file stops it', () => {
    const debug = run(tiproxyStartScript(ctx()), { annotations: 'runmode="debug"\n' });
    expect(debug.status).toBe(0);
    expect(debug.stdout).toContain('entering debug mode.');
    expect(debug.argv).toBeUndefined();
    const missing = run(tiproxyStartScript(ctx()), { annotations: null });
    expect(missing.status).toBe(1);
    expect(missing.argv).toBeUndefined();
  });

  test('the script in the ConfigMap is this script, for the rendered cluster', () => {
    const cm = find(renderWith({ clusterDomain: 'example.org' }), 'ConfigMap', 'demo-tiproxy');
    expect(cm.data['startup-script']).toBe(tiproxyStartScript(ctx({ clusterDomain: 'example.org' })));
  });

  test.each([
    ['plain', ctx()],
    ['clusterDomain', ctx({ clusterDomain: 'cluster.local' })],
    ['no namespace', ctx({ namespace: undefined })],
  ])('%s passes dash -n (and shellcheck -s sh when installed)', (_name, c) => {
    const script = tiproxyStartScript(c);
    expectShellLintClean(script);
    expect(script.startsWith('#!/bin/sh\n')).toBe(true);
    expect(script).not.toMatch(/\[\[|==/);
  });

  test('fails on a context that could break out of the script', () => {
    expect(() => tiproxyStartScript(ctx({ namespace: 'a b' }))).toThrow('tiproxy start script: invalid context');
    expect(() => tiproxyStartScript(ctx({ clusterDomain: '$(x)' }))).toThrow('clusterDomain');
  });
});

describe('TiProxy bad input', () => {
  test('fails with acrossK8s, which the operator refuses for TiProxy', () => {
    expect(renderErrors(cluster({ acrossK8s: true, tiproxy: tiproxy() }))).toContain('spec.tiproxy (line');
    expect(renderErrors(cluster({ acrossK8s: true, tiproxy: tiproxy() }))).toContain('TiProxy cannot be rendered with spec.acrossK8s');
  });

  test('fails on an unknown certLayout', () => {
    expect(renderErrors(cluster({ tiproxy: tiproxy({ certLayout: 'V1' }) }))).toMatch(
      /spec\.tiproxy\.certLayout \(line \d+\): expected "" \(legacy\) or "v1", got "V1"/,
    );
  });

  test('fails on a config that holds a value where the renderer writes a table', () => {
    expect(renderErrors(cluster({ tiproxy: tiproxy({ config: 'proxy = "x"\n' }) }))).toMatch(
      /spec\.tiproxy\.config\.proxy \(line \d+\): expected a table \(the renderer sets keys in \[proxy\]\), got a value of type string/,
    );
    expect(
      renderErrors(cluster({ tlsCluster: { enabled: true }, tiproxy: tiproxy({ config: 'security = { cluster-tls = 1.5 }\n' }) })),
    ).toMatch(
      /spec\.tiproxy\.config\.security\.cluster-tls \(line \d+\): expected a table \(the renderer sets keys in \[security\.cluster-tls\]\), got a value of type float/,
    );
  });

  test('fails on an invalid tlsClientSecretName', () => {
    expect(renderErrors(cluster({ tiproxy: tiproxy({ tlsClientSecretName: 'Bad_Name' }) }))).toContain('spec.tiproxy.tlsClientSecretName');
  });

  test('refuses configUpdateStrategy RollingUpdate and suspendAction with a reason', () => {
    expect(renderErrors(cluster({ tiproxy: tiproxy({ configUpdateStrategy: 'RollingUpdate' }) }))).toContain(
      'spec.tiproxy.configUpdateStrategy (line',
    );
    expect(renderErrors(cluster({ tiproxy: tiproxy({ configUpdateStrategy: 'RollingUpdate' }) }))).toContain(
      "TiProxy's ConfigMap is always updated in place",
    );
    expect(renderErrors(cluster({ tiproxy: tiproxy({ suspendAction: { suspendStatefulSet: true } }) }))).toContain(
      'spec.tiproxy.suspendAction',
    );
    expect(renderErrors(cluster({ tiproxy: tiproxy({ maxFailoverCount: 3 }) }))).toContain('spec.tiproxy.maxFailoverCount');
  });

  test('accepts the off values: configUpdateStrategy InPlace, suspendAction without suspending', () => {
    expect(() =>
      renderWith({ tiproxy: tiproxy({ configUpdateStrategy: 'InPlace', suspendAction: { suspendStatefulSet: false } }) }),
    ).not.toThrow();
  });
});
