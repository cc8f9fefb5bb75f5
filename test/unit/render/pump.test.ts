/**
 * Pump: objects (headless `<cluster>-pump`, ConfigMap `pump-config`, StatefulSet with volume `data`),
 * config and TLS, refused input, and the inline start command RUN under dash (`support/sandbox.ts`).
 */
import { pumpStartScript, type PumpScriptContext } from '../../../src/render/scripts/pump';
import { parseToml } from '../../../src/base/toml';
import { BASE_CONTEXT, callsOf, decodeTail, expectShellLintClean, lastWord, ScriptSandbox, type RunOptions } from '../../support/sandbox';
import { cluster, container, env, find, render, renderErrors, type Obj } from '../../support/render';

const withPump = (pump: Obj = {}, spec: Obj = {}, metadata: Obj = {}) =>
  cluster({ pump: { replicas: 3, requests: { storage: '20Gi' }, ...pump }, ...spec }, metadata);
const sts = (objects: Obj[]) => find(objects, 'StatefulSet', 'demo-pump');
const pumpOf = (objects: Obj[]) => container(sts(objects), 'pump');
const scriptOf = (objects: Obj[]) => pumpOf(objects).command[2] as string;
const pumpToml = (objects: Obj[]) => parseToml(find(objects, 'ConfigMap', /^demo-pump/).data['pump-config']);

const sandbox = new ScriptSandbox({ dirs: [], servers: ['/pump'] });
beforeAll(() => sandbox.setup());
afterAll(() => sandbox.cleanup());

/** Kubernetes sets HOSTNAME to the pod name (the StatefulSet does so itself with hostNetwork). */
const POD_ENV = { HOSTNAME: 'demo-pump-2' };
const run = (script: string, opts: RunOptions = {}) => sandbox.run(script, { ...opts, env: { ...POD_ENV, ...opts.env } });
const argvOf = (script: string, opts: RunOptions = {}) => sandbox.argvOf(script, { ...opts, env: { ...POD_ENV, ...opts.env } });

const v1Argv = (o: { pd?: string; host?: string; level?: string } = {}) => [
  `-pd-urls=${o.pd ?? 'http://demo-pd:2379'}`,
  `-L=${o.level ?? 'info'}`,
  `-advertise-addr=${o.host ?? 'demo-pump-2.demo-pump'}:8250`,
  '-config=/etc/pump/pump.toml',
  '-data-dir=/data',
  '-log-file=',
];
const v2Argv = (o: { pd?: string; host?: string; level?: string } = {}) => [
  `-pd-urls=${o.pd ?? 'http://demo-pd:2379'}`,
  '-L',
  o.level ?? 'info',
  '-log-file=',
  `-advertise-addr=${o.host ?? 'demo-pump-2.demo-pump'}:8250`,
  '-data-dir=/data',
  '--config=/etc/pump/pump.toml',
];

const LABELS = {
  'app.kubernetes.io/name': 'tidb-cluster',
  'app.kubernetes.io/managed-by': 'tidb-operator',
  'app.kubernetes.io/instance': 'demo',
  'app.kubernetes.io/component': 'pump',
};

describe('Pump objects', () => {
  test('headless demo-pump (no -peer, no used-by), ConfigMap even without config, StatefulSet with volume data', () => {
    const objects = render(withPump({ storageClassName: 'local' }));
    const svc = find(objects, 'Service', 'demo-pump');
    expect(svc.metadata.labels).toEqual(LABELS);
    expect(svc.spec).toEqual({
      clusterIP: 'None',
      ports: [{ name: 'pump', port: 8250, targetPort: 8250, protocol: 'TCP' }],
      selector: LABELS,
      publishNotReadyAddresses: true,
    });
    const cm = find(objects, 'ConfigMap', 'demo-pump');
    expect(cm.metadata.labels).toEqual(LABELS);
    expect(cm.data).toEqual({ 'pump-config': '' });
    const set = sts(objects);
    expect(set.spec.serviceName).toBe('demo-pump');
    expect(set.spec.podManagementPolicy).toBe('OrderedReady');
    expect(set.spec.updateStrategy).toBeUndefined();
    expect(JSON.parse(set.metadata.annotations['tidb-gitops.io/settings']).updateStrategy).toBe('RollingUpdate');
    expect(set.spec.replicas).toBeUndefined();
    expect(set.metadata.annotations['tidb-gitops.io/replicas']).toBe('3');
    expect(set.spec.volumeClaimTemplates).toEqual([
      {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: 'data', creationTimestamp: null },
        spec: {
          accessModes: ['ReadWriteOnce'],
          storageClassName: 'local',
          resources: { requests: { storage: '20Gi' } },
          volumeMode: 'Filesystem',
        },
        status: { phase: 'Pending' },
      },
    ]);
    expect(set.spec.template.metadata.annotations).toEqual({
      'prometheus.io/scrape': 'true',
      'prometheus.io/path': '/metrics',
      'prometheus.io/port': '8250',
    });
    expect(set.spec.template.spec.volumes).toEqual([
      { name: 'config', configMap: { name: 'demo-pump', items: [{ key: 'pump-config', path: 'pump.toml' }] } },
    ]);
    const c = pumpOf(objects);
    expect(c.image).toBe('pingcap/tidb-binlog:v8.5.7');
    expect(c.command.slice(0, 2)).toEqual(['/bin/sh', '-c']);
    expect(c.ports).toEqual([{ name: 'pump', containerPort: 8250 }]);
    expect(c.readinessProbe).toEqual({ tcpSocket: { port: 8250 } });
    expect(c.volumeMounts).toEqual([
      { name: 'data', mountPath: '/data' },
      { name: 'config', mountPath: '/etc/pump' },
    ]);
    expect(c.env).toBeUndefined();
    expect(JSON.parse(set.metadata.annotations['tidb-gitops.io/settings'])).toEqual({
      enablePVReclaim: false,
      forceUpgrade: false,
      kubeVersion: '1.31',
      paused: false,
      pvReclaimPolicy: 'Retain',
      updateStrategy: 'RollingUpdate',
    });
  });

  test('TiDB gets binlog on when Pump is there', () => {
    const tidb = container(find(render(withPump()), 'StatefulSet', 'demo-tidb'), 'tidb');
    expect(env(tidb).BINLOG_ENABLED).toBe('true');
  });

  test.each([
    ['nothing set: OrderedReady', {}, {}, 'OrderedReady'],
    ['cluster Parallel', {}, { podManagementPolicy: 'Parallel' }, 'Parallel'],
    ['component Parallel', { podManagementPolicy: 'Parallel' }, {}, 'Parallel'],
    ['any other value counts as Parallel', { podManagementPolicy: 'Sideways' }, {}, 'Parallel'],
    ['OrderedReady at cluster level', {}, { podManagementPolicy: 'OrderedReady' }, 'OrderedReady'],
  ])('podManagementPolicy, %s', (_name, pump, spec, policy) => {
    expect(sts(render(withPump(pump, spec))).spec.podManagementPolicy).toBe(policy);
  });

  test('OnDelete update strategy is taken as it is', () => {
    expect(
      JSON.parse(sts(render(withPump({ statefulSetUpdateStrategy: 'OnDelete' }))).metadata.annotations['tidb-gitops.io/settings'])
        .updateStrategy,
    ).toBe('OnDelete');
  });

  test('setTimeZone sets TZ to spec.timezone; hostNetwork sets HOSTNAME to the pod name', () => {
    const objects = render(
      withPump(
        {
          setTimeZone: true,
          hostNetwork: true,
          env: [
            { name: 'HOSTNAME', value: 'x' },
            { name: 'A', value: 'b' },
          ],
        },
        { timezone: 'Asia/Tokyo' },
      ),
    );
    expect(pumpOf(objects).env).toEqual([
      { name: 'TZ', value: 'Asia/Tokyo' },
      { name: 'HOSTNAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'A', value: 'b' },
    ]);
    expect(sts(objects).spec.template.spec.dnsPolicy).toBe('ClusterFirstWithHostNet');
    expect(env(pumpOf(render(withPump({}, { timezone: 'Asia/Tokyo' })))).TZ).toBeUndefined();
  });

  test('start script v2 mounts the pod annotations last', () => {
    const set = sts(render(withPump({}, { startScriptVersion: 'v2', tlsCluster: { enabled: true } })));
    expect(set.spec.template.spec.volumes.map((v: Obj) => v.name)).toEqual(['config', 'pump-tls', 'annotations']);
    expect(container(set, 'pump').volumeMounts).toEqual([
      { name: 'data', mountPath: '/data' },
      { name: 'config', mountPath: '/etc/pump' },
      { name: 'pump-tls', mountPath: '/var/lib/pump-tls', readOnly: true },
      { name: 'annotations', mountPath: '/etc/podinfo', readOnly: true },
    ]);
    expect(set.spec.template.spec.volumes[1]).toEqual({ name: 'pump-tls', secret: { secretName: 'demo-pump-cluster-secret' } });
  });

  test('init and additional containers, resources without storage, security contexts', () => {
    const set = sts(
      render(
        withPump({
          requests: { storage: '5Gi', cpu: '1' },
          limits: { memory: '2Gi' },
          initContainers: [{ name: 'prep', image: 'busybox' }],
          additionalContainers: [{ name: 'side', image: 'busybox' }],
          securityContext: { runAsUser: 1000 },
          annotations: { 'tidb.pingcap.com/sysctl-init': 'true' },
          podSecurityContext: { sysctls: [{ name: 'net.core.somaxconn', value: '1024' }] },
        }),
      ),
    );
    expect(set.spec.template.spec.initContainers.map((c: Obj) => c.name)).toEqual(['prep']);
    expect(set.spec.template.spec.securityContext.sysctls).toHaveLength(1);
    expect(set.spec.template.spec.containers.map((c: Obj) => c.name)).toEqual(['pump', 'side']);
    const c = container(set, 'pump');
    expect(c.resources).toEqual({ requests: { cpu: '1' }, limits: { memory: '2Gi' } });
    expect(c.securityContext).toEqual({ runAsUser: 1000 });
    expect(set.spec.volumeClaimTemplates[0].spec.resources.requests.storage).toBe('5Gi');
  });
});

describe('Pump config', () => {
  test('a mapping keeps every key and its type', () => {
    const toml = pumpToml(
      render(withPump({ config: { gc: 7, 'heartbeat-interval': 2, storage: { 'sync-log': 'true', 'kv-chan-cap': 1048576 } } })),
    );
    expect(toml).toEqual({ gc: 7, 'heartbeat-interval': 2, storage: { 'sync-log': 'true', 'kv-chan-cap': 1048576 } });
  });

  test("cluster TLS sets security.ssl-* to the mounted certificate, over the user's values", () => {
    const toml = pumpToml(
      render(
        withPump(
          { config: 'gc = 7\n[security]\nssl-ca = "/mine/ca.crt"\ncert-allowed-cn = ["tidb"]\n' },
          { tlsCluster: { enabled: true } },
        ),
      ),
    );
    expect(toml).toEqual({
      gc: 7,
      security: {
        'ssl-ca': '/var/lib/pump-tls/ca.crt',
        'ssl-cert': '/var/lib/pump-tls/tls.crt',
        'ssl-key': '/var/lib/pump-tls/tls.key',
        'cert-allowed-cn': ['tidb'],
      },
    });
  });

  test('configUpdateStrategy RollingUpdate: hashed ConfigMap name, referenced by the pod', () => {
    const objects = render(withPump({ configUpdateStrategy: 'RollingUpdate', config: { gc: 7 } }));
    const cm = find(objects, 'ConfigMap', /^demo-pump-[0-9a-f]{7}$/);
    expect(sts(objects).spec.template.spec.volumes[0].configMap.name).toBe(cm.metadata.name);
  });

  test('log-level is also -L', () => {
    const objects = render(withPump({ config: 'log-level = "warn"\n' }));
    expect(argvOf(scriptOf(objects))).toEqual(v1Argv({ level: 'warn' }));
    expect(pumpToml(objects)).toEqual({ 'log-level': 'warn' });
  });
});

describe('Pump refused input', () => {
  test.each([
    [{ requests: { cpu: '1' } }, 'spec.pump.requests.storage (line', 'required field is missing: the size of each Pump data volume'],
    [{ limits: { storage: '1Gi' } }, 'spec.pump.limits.storage (line', 'Pump takes the size of its data volume from requests.storage'],
    [
      { additionalVolumes: [{ name: 'x', emptyDir: {} }] },
      'spec.pump.additionalVolumes (line',
      'tidb-operator does not add additional volumes to Pump',
    ],
    [
      { additionalVolumeMounts: [{ name: 'x', mountPath: '/x' }] },
      'spec.pump.additionalVolumeMounts (line',
      'does not add additional volume mounts to Pump',
    ],
    [{ readinessProbe: { type: 'tcp' } }, 'spec.pump.readinessProbe (line', 'Pump always gets a TCP readiness probe on 8250'],
    [{ storageVolumes: [{ name: 'x', storageSize: '1Gi' }] }, 'spec.pump.storageVolumes (line', ''],
    [{ config: 'log-level = 3\n' }, 'spec.pump.config.log-level (line', 'expected a string, got 3'],
    [{ config: { 'log-level': 'info debug' } }, 'spec.pump.config.log-level (line', 'expected a log level such as info or debug'],
  ])('fails on %j', (pump, path, message) => {
    const errors = renderErrors(withPump(pump));
    expect(errors).toContain(path);
    expect(errors).toContain(message);
  });

  test('without requests at all the claim has no size, as with the operator', () => {
    const set = sts(render(cluster({ pump: { replicas: 1 } })));
    expect(set.spec.volumeClaimTemplates[0].spec).toEqual({ accessModes: ['ReadWriteOnce'], volumeMode: 'Filesystem' });
  });

  test('v1 rendered without a namespace reads it from the pod when the address names it (else no NAMESPACE env)', () => {
    const objects = render(withPump({}, { clusterDomain: 'c.local' }, { namespace: undefined }));
    expect(pumpOf(objects).env).toEqual([{ name: 'NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } }]);
    expect(argvOf(scriptOf(objects), { env: { NAMESPACE: 'runtime-ns' } })).toEqual(
      v1Argv({ host: 'demo-pump-2.demo-pump.runtime-ns.svc.c.local' }),
    );
    const given = render(withPump({}, { clusterDomain: 'c.local' }, { namespace: undefined }), { namespace: 'given' });
    expect(pumpOf(given).env).toBeUndefined();
    expect(argvOf(scriptOf(given), { env: { NAMESPACE: 'not-read' } })).toEqual(
      v1Argv({ host: 'demo-pump-2.demo-pump.given.svc.c.local' }),
    );
    expect(pumpOf(render(withPump({}, {}, { namespace: undefined }))).env).toBeUndefined();
  });
});

describe('Pump start command, run under dash', () => {
  test('v1: runs pump; exit 0 means offline: says so and holds the container', () => {
    const r = run(scriptOf(render(withPump())), { annotations: null });
    expect(r.status).toBe(0);
    expect(r.argv).toEqual(v1Argv());
    expect(r.stdout).toMatch(/^\[\d{4}\/\d\d\/\d\d \d\d:\d\d:\d\d \+00:00\] pump offline, please delete my pod$/m);
    expect(callsOf(r, 'tail')).toEqual(['tail -f /dev/null']);
  });

  test('v1: pump failing ends the script with its status (the container restarts)', () => {
    // The stub pump cannot write its argv there, so it fails.
    const r = run(scriptOf(render(withPump())), { env: { ARGV_FILE: '/nonexistent/dir/argv' } });
    expect(r.status).not.toBe(0);
    expect(r.stdout).not.toContain('pump offline');
    expect(callsOf(r, 'tail')).toEqual([]);
  });

  test.each([
    ['clusterDomain', { clusterDomain: 'cluster.local' }, 'demo-pump-2.demo-pump.ns.svc.cluster.local', 'http://demo-pd:2379'],
    ['TLS', { tlsCluster: { enabled: true } }, 'demo-pump-2.demo-pump', 'https://demo-pd:2379'],
    ['spec.cluster without local PD', { pd: undefined, cluster: { name: 'main' } }, 'demo-pump-2.demo-pump', 'http://main-pd:2379'],
  ])('v1 and v2 with %s', (_name, spec, host, pd) => {
    expect(argvOf(scriptOf(render(withPump({}, spec))))).toEqual(v1Argv({ host, pd }));
    expect(argvOf(scriptOf(render(withPump({}, { ...spec, startScriptVersion: 'v2' }))))).toEqual(v2Argv({ host, pd }));
  });

  test('v1 acrossK8s: the zone gets .<ns>.svc; discovery /verify answers the PD URLs', () => {
    const r = run(scriptOf(render(withPump({}, { acrossK8s: true }))), {
      env: { DISCOVERY_FAILS: '1', DISCOVERY_ANSWER: 'http://demo-pd:2379,http://pd.other:2379' },
    });
    expect(r.status).toBe(0);
    const wgets = callsOf(r, 'wget');
    expect(wgets).toHaveLength(2);
    expect(lastWord(wgets[1])).toMatch(/^http:\/\/demo-discovery\.ns:10261\/verify\//);
    expect(decodeTail(lastWord(wgets[1]))).toBe('http://demo-pd:2379\n');
    expect(r.argv).toEqual(v1Argv({ pd: 'http://demo-pd:2379,http://pd.other:2379', host: 'demo-pump-2.demo-pump.ns.svc' }));
  });

  test('v2 acrossK8s with discovery mTLS: curl with the Pump certificate', () => {
    const spec = { startScriptVersion: 'v2', acrossK8s: true, tlsCluster: { enabled: true, enableDiscoveryMTLS: true } };
    const r = run(scriptOf(render(withPump({}, spec))), { env: { DISCOVERY_ANSWER: 'https://demo-pd:2379' } });
    const [curl] = callsOf(r, 'curl');
    expect(curl).toContain('--cacert /var/lib/pump-tls/ca.crt --cert /var/lib/pump-tls/tls.crt --key /var/lib/pump-tls/tls.key');
    expect(decodeTail(lastWord(curl))).toBe('https://demo-pd:2379\n');
    expect(r.argv).toEqual(v2Argv({ pd: 'https://demo-pd:2379', host: 'demo-pump-2.demo-pump.ns.svc' }));
  });

  test('v2 execs pump (no offline hold) and ignores PreferPDAddressesOverDiscovery, as the operator does', () => {
    const spec = {
      startScriptVersion: 'v2',
      pdAddresses: ['http://pd-a:2379'],
      startScriptV2FeatureFlags: ['PreferPDAddressesOverDiscovery'],
    };
    const r = run(scriptOf(render(withPump({ config: { 'log-level': 'debug' } }, spec))));
    expect(r.argv).toEqual(v2Argv({ level: 'debug' }));
    expect(r.stdout).not.toContain('pump offline');
    expect(callsOf(r, 'tail')).toEqual([]);
  });

  test('v2: runmode=debug holds instead of starting pump', () => {
    const r = run(scriptOf(render(withPump({}, { startScriptVersion: 'v2' }))), { annotations: 'runmode="debug"\n' });
    expect(r.stdout).toContain('entering debug mode.');
    expect(r.argv).toBeUndefined();
  });
});

describe('Pump start command: lint', () => {
  const base: PumpScriptContext = {
    ...BASE_CONTEXT,
    logLevel: 'info',
  };
  test.each([
    ['v1', {}],
    ['v1 acrossK8s mTLS', { acrossK8s: true, scheme: 'https', discoveryMtls: true }],
    ['v1 acrossK8s, namespace from the pod', { acrossK8s: true, namespace: undefined }],
    ['v2', { version: 'v2', clusterDomain: 'c.local' }],
    ['v2 acrossK8s', { version: 'v2', acrossK8s: true }],
  ] as [string, Partial<PumpScriptContext>][])('%s passes dash -n (and shellcheck -s sh when installed)', (_name, o) => {
    const script = pumpStartScript({ ...base, ...o });
    expectShellLintClean(script);
    expect(script).not.toMatch(/[ \t]$/m);
  });

  test('throws on an unsafe log level', () => {
    expect(() => pumpStartScript({ ...base, logLevel: 'info;id' })).toThrow(
      'pump start script: invalid context:\n  logLevel: "info;id" is not a log level',
    );
  });

  test('the same argv and offline hold under bash in POSIX mode', () => {
    const script = pumpStartScript(base);
    const dash = run(script);
    const bash = run(script, { shell: 'bash' });
    expect(bash.argv).toEqual(dash.argv);
    expect(bash.stdout).toEqual(expect.stringContaining('pump offline'));
  });
});
