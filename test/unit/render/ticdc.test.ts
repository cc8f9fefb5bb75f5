/**
 * TiCDC: objects (headless Service, StatefulSet, optional ConfigMap), config/flag/TZ rules, TLS and
 * sink secrets, refused input, and the inline start command RUN under dash (`support/sandbox.ts`).
 */
import { ticdcStartScript, type TiCDCScriptContext } from '../../../src/render/scripts/ticdc';
import { parseToml } from '../../../src/base/toml';
import { BASE_CONTEXT, callsOf, decodeTail, expectShellLintClean, lastWord, ScriptSandbox, type RunOptions } from '../../support/sandbox';
import { cluster, container, env, find, render, renderErrors, type Obj } from '../../support/render';

const withCdc = (ticdc: Obj = {}, spec: Obj = {}, metadata: Obj = {}) => cluster({ ticdc: { replicas: 2, ...ticdc }, ...spec }, metadata);
const sts = (objects: Obj[]) => find(objects, 'StatefulSet', 'demo-ticdc');
const cdc = (objects: Obj[]) => container(sts(objects), 'ticdc');
const scriptOf = (objects: Obj[]) => cdc(objects).command[2] as string;
const cdcConfigMaps = (objects: Obj[]) => objects.filter((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('demo-ticdc'));

const sandbox = new ScriptSandbox({ dirs: [], servers: ['/cdc'] });
beforeAll(() => sandbox.setup());
afterAll(() => sandbox.cleanup());

/** The pod environment the StatefulSet gives the ticdc container. */
const POD_ENV = { POD_NAME: 'demo-ticdc-1', NAMESPACE: 'ns', HEADLESS_SERVICE_NAME: 'demo-ticdc-peer', TZ: 'UTC' };
const run = (script: string, opts: RunOptions = {}) => sandbox.run(script, { ...opts, env: { ...POD_ENV, ...opts.env } });
const argvOf = (script: string, opts: RunOptions = {}) => sandbox.argvOf(script, { ...opts, env: { ...POD_ENV, ...opts.env } });

const FQDN = 'demo-ticdc-1.demo-ticdc-peer.ns.svc';
const TLS_FLAGS = ['--ca=/var/lib/ticdc-tls/ca.crt', '--cert=/var/lib/ticdc-tls/tls.crt', '--key=/var/lib/ticdc-tls/tls.key'];
const v1Argv = (o: { host?: string; pd?: string; log?: string[]; tls?: boolean; config?: boolean } = {}) => [
  'server',
  '--addr=0.0.0.0:8301',
  `--advertise-addr=${o.host ?? FQDN}:8301`,
  ...(o.log ?? ['--gc-ttl=86400', '--log-file=', '--log-level=info']),
  ...(o.tls ? TLS_FLAGS : []),
  `--pd=${o.pd ?? 'http://demo-pd:2379'}`,
  ...(o.config ? ['--config=/etc/ticdc/ticdc.toml'] : []),
];
const v2Argv = (o: { host?: string; pd?: string; tls?: boolean; config?: boolean } = {}) => [
  'server',
  '--addr=0.0.0.0:8301',
  `--advertise-addr=${o.host ?? FQDN}:8301`,
  '--gc-ttl=86400',
  '--log-file=',
  '--log-level=info',
  `--pd=${o.pd ?? 'http://demo-pd:2379'}`,
  ...(o.tls ? TLS_FLAGS : []),
  ...(o.config ? ['--config=/etc/ticdc/ticdc.toml'] : []),
];

describe('TiCDC objects', () => {
  test('headless demo-ticdc-peer without used-by; StatefulSet with an inline start command and no data volume', () => {
    const objects = render(withCdc());
    const svc = find(objects, 'Service', 'demo-ticdc-peer');
    expect(svc.metadata.labels).toEqual({
      'app.kubernetes.io/name': 'tidb-cluster',
      'app.kubernetes.io/managed-by': 'tidb-operator',
      'app.kubernetes.io/instance': 'demo',
      'app.kubernetes.io/component': 'ticdc',
    });
    expect(svc.spec).toEqual({
      clusterIP: 'None',
      ports: [{ name: 'ticdc', port: 8301, targetPort: 8301, protocol: 'TCP' }],
      selector: svc.metadata.labels,
      publishNotReadyAddresses: true,
    });
    const set = sts(objects);
    expect(set.spec.serviceName).toBe('demo-ticdc-peer');
    expect(set.spec.podManagementPolicy).toBe('Parallel');
    expect(set.spec.volumeClaimTemplates).toBeUndefined();
    expect(set.spec.replicas).toBeUndefined();
    expect(set.metadata.annotations['tidb-gitops.io/replicas']).toBe('2');
    expect(set.spec.template.metadata.annotations).toEqual({
      'prometheus.io/scrape': 'true',
      'prometheus.io/path': '/metrics',
      'prometheus.io/port': '8301',
    });
    const c = cdc(objects);
    expect(c.image).toBe('pingcap/ticdc:v8.5.7');
    expect(c.command.slice(0, 2)).toEqual(['/bin/sh', '-c']);
    expect(c.ports).toEqual([{ name: 'ticdc', containerPort: 8301, protocol: 'TCP' }]);
    expect(c.readinessProbe).toBeUndefined();
    expect(c.env).toEqual([
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
      { name: 'HEADLESS_SERVICE_NAME', value: 'demo-ticdc-peer' },
      { name: 'TZ', value: 'UTC' },
    ]);
    // v1: no annotations volume (the v1 command has no debug mode), nothing else either
    expect(c.volumeMounts).toEqual([]);
    expect(set.spec.template.spec.volumes).toEqual([]);
    expect(cdcConfigMaps(objects)).toEqual([]);
  });

  test('start script v2 mounts the pod annotations', () => {
    const set = sts(render(withCdc({}, { startScriptVersion: 'v2' })));
    expect(set.spec.template.spec.volumes).toEqual([
      {
        name: 'annotations',
        downwardAPI: { items: [{ path: 'annotations', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.annotations' } }] },
      },
    ]);
    expect(container(set, 'ticdc').volumeMounts).toEqual([{ name: 'annotations', mountPath: '/etc/podinfo', readOnly: true }]);
  });

  test('storageVolumes are the only claim templates; the component storageClassName is their default', () => {
    const set = sts(
      render(
        withCdc({
          storageClassName: 'fast',
          storageVolumes: [
            { name: 'sort', storageSize: '50Gi', mountPath: '/var/lib/sort' },
            { name: 'spare', storageSize: '1Gi', storageClassName: 'slow' },
          ],
        }),
      ),
    );
    expect(
      set.spec.volumeClaimTemplates.map((v: Obj) => [v.metadata.name, v.spec.storageClassName, v.spec.resources.requests.storage]),
    ).toEqual([
      ['ticdc-sort', 'fast', '50Gi'],
      ['ticdc-spare', 'slow', '1Gi'],
    ]);
    expect(container(set, 'ticdc').volumeMounts).toEqual([{ name: 'ticdc-sort', mountPath: '/var/lib/sort' }]);
  });

  test('mounts and volumes keep the operator order; additional containers merge; env cannot override TZ', () => {
    const set = sts(
      render(
        withCdc(
          {
            tlsClientSecretNames: ['kafka-a'],
            config: 'per-table-memory-quota = 1\n',
            storageVolumes: [{ name: 'sort', storageSize: '1Gi', mountPath: '/sort' }],
            additionalVolumes: [{ name: 'extra', emptyDir: {} }],
            additionalVolumeMounts: [{ name: 'extra', mountPath: '/extra' }],
            additionalContainers: [
              { name: 'ticdc', env: [{ name: 'GODEBUG', value: 'x' }] },
              { name: 'side', image: 'busybox' },
            ],
            env: [
              { name: 'TZ', value: 'Mars/Base' },
              { name: 'FOO', value: 'bar' },
            ],
          },
          { startScriptVersion: 'v2', tlsCluster: { enabled: true } },
        ),
      ),
    );
    const c = container(set, 'ticdc');
    expect(c.volumeMounts.map((m: Obj) => m.name)).toEqual([
      'annotations',
      'ticdc-tls',
      'cluster-client-tls',
      'ticdc-sort',
      'extra',
      'config',
      'kafka-a',
    ]);
    expect(set.spec.template.spec.volumes.map((v: Obj) => v.name)).toEqual([
      'annotations',
      'ticdc-tls',
      'cluster-client-tls',
      'extra',
      'kafka-a',
      'config',
    ]);
    expect(set.spec.template.spec.containers.map((x: Obj) => x.name)).toEqual(['ticdc', 'side']);
    expect(env(c)).toMatchObject({ TZ: 'UTC', FOO: 'bar', GODEBUG: 'x' });
  });

  test('tlsClientSecretNames: one read-only secret volume per name at /var/lib/sink-tls/<name>', () => {
    const set = sts(render(withCdc({ tlsClientSecretNames: ['kafka-a', 'mysql-b'] })));
    expect(set.spec.template.spec.volumes).toEqual([
      { name: 'kafka-a', secret: { secretName: 'kafka-a' } },
      { name: 'mysql-b', secret: { secretName: 'mysql-b' } },
    ]);
    expect(container(set, 'ticdc').volumeMounts).toEqual([
      { name: 'kafka-a', mountPath: '/var/lib/sink-tls/kafka-a', readOnly: true },
      { name: 'mysql-b', mountPath: '/var/lib/sink-tls/mysql-b', readOnly: true },
    ]);
  });

  test('cluster TLS: ticdc-tls and cluster-client-tls secrets', () => {
    const set = sts(render(withCdc({}, { tlsCluster: { enabled: true } })));
    expect(set.spec.template.spec.volumes).toEqual([
      { name: 'ticdc-tls', secret: { secretName: 'demo-ticdc-cluster-secret' } },
      { name: 'cluster-client-tls', secret: { secretName: 'demo-cluster-client-secret' } },
    ]);
    expect(container(set, 'ticdc').volumeMounts).toEqual([
      { name: 'ticdc-tls', mountPath: '/var/lib/ticdc-tls', readOnly: true },
      { name: 'cluster-client-tls', mountPath: '/var/lib/cluster-client-tls', readOnly: true },
    ]);
  });

  test("gracefulShutdownTimeout is the controller's (settings annotation), not terminationGracePeriodSeconds", () => {
    const settings = (objects: Obj[]) => JSON.parse(sts(objects).metadata.annotations['tidb-gitops.io/settings']);
    expect(settings(render(withCdc()))).toEqual({
      enablePVReclaim: false,
      forceUpgrade: false,
      kubeVersion: '1.31',
      paused: false,
      pvReclaimPolicy: 'Retain',
      gracefulShutdownTimeout: '10m',
      updateStrategy: 'RollingUpdate',
    });
    const objects = render(withCdc({ gracefulShutdownTimeout: '1h30m' }));
    expect(settings(objects).gracefulShutdownTimeout).toBe('1h30m');
    expect(sts(objects).spec.template.spec.terminationGracePeriodSeconds).toBeUndefined();
    expect(sts(render(withCdc({ terminationGracePeriodSeconds: 600 }))).spec.template.spec.terminationGracePeriodSeconds).toBe(600);
  });

  test('sysctl-init does not add a privileged init container to TiCDC: sysctls stay in the pod', () => {
    const podSecurityContext = { sysctls: [{ name: 'net.core.somaxconn', value: '32768' }] };
    const set = sts(render(withCdc({ annotations: { 'tidb.pingcap.com/sysctl-init': 'true' }, podSecurityContext })));
    expect(set.spec.template.spec.initContainers).toBeUndefined();
    expect(set.spec.template.spec.securityContext).toEqual(podSecurityContext);
  });
});

describe('TiCDC config, flags and TZ', () => {
  test('a config of flag keys only: flags and TZ, no ConfigMap, no --config', () => {
    const objects = render(withCdc({ config: 'tz = "Asia/Tokyo"\ngc-ttl = 3600\nlog-level = "debug"\nlog-file = "/var/log/cdc.log"\n' }));
    expect(cdcConfigMaps(objects)).toEqual([]);
    expect(env(cdc(objects)).TZ).toBe('Asia/Tokyo');
    expect(argvOf(scriptOf(objects))).toEqual(v1Argv({ log: ['--gc-ttl=3600', '--log-file=/var/log/cdc.log', '--log-level=debug'] }));
  });

  test('any other key: ConfigMap demo-ticdc with the whole config, mounted read-only, and --config', () => {
    const objects = render(withCdc({ config: 'gc-ttl = 3600\n[sorter]\nnum-concurrent-worker = 4\n' }));
    const cm = find(objects, 'ConfigMap', 'demo-ticdc');
    expect(Object.keys(cm.data)).toEqual(['config-file']);
    expect(parseToml(cm.data['config-file'])).toEqual({ 'gc-ttl': 3600, sorter: { 'num-concurrent-worker': 4 } });
    const set = sts(objects);
    expect(set.spec.template.spec.volumes).toEqual([
      { name: 'config', configMap: { name: 'demo-ticdc', items: [{ key: 'config-file', path: 'ticdc.toml' }] } },
    ]);
    expect(container(set, 'ticdc').volumeMounts).toEqual([{ name: 'config', mountPath: '/etc/ticdc', readOnly: true }]);
    expect(argvOf(scriptOf(objects))).toEqual(v1Argv({ log: ['--gc-ttl=3600', '--log-file=', '--log-level=info'], config: true }));
  });

  test('configUpdateStrategy RollingUpdate: hashed ConfigMap name, referenced by the pod', () => {
    const objects = render(withCdc({ configUpdateStrategy: 'RollingUpdate', config: '[sorter]\nnum-concurrent-worker = 4\n' }));
    const cm = find(objects, 'ConfigMap', /^demo-ticdc-[0-9a-f]{7}$/);
    expect(sts(objects).spec.template.spec.volumes[0].configMap.name).toBe(cm.metadata.name);
  });

  test("a config mapping reads timezone, gcTTL, logLevel and logFile (tidb-operator's typed struct)", () => {
    const objects = render(withCdc({ config: { timezone: 'Europe/Paris', gcTTL: 7200, logLevel: 'warn', logFile: '/log/cdc.log' } }));
    expect(cdcConfigMaps(objects)).toEqual([]);
    expect(env(cdc(objects)).TZ).toBe('Europe/Paris');
    expect(argvOf(scriptOf(objects))).toEqual(v1Argv({ log: ['--gc-ttl=7200', '--log-file=/log/cdc.log', '--log-level=warn'] }));
  });

  test.each([
    ['config tz', { config: 'tz = "Asia/Shanghai"\n' }, { timezone: 'Europe/Berlin' }, 'Asia/Shanghai'],
    ['spec.timezone', {}, { timezone: 'Europe/Berlin' }, 'Europe/Berlin'],
    ['neither: UTC', {}, {}, 'UTC'],
  ])('TZ from %s', (_name, ticdc, spec, tz) => {
    expect(env(cdc(render(withCdc(ticdc, spec)))).TZ).toBe(tz);
  });

  test('fails on config values of the wrong type or unsafe in the start command', () => {
    const errors = renderErrors(withCdc({ config: 'gc-ttl = "1d"\nlog-level = "info; reboot"\nlog-file = "a b"\ntz = 8\n' }));
    expect(errors).toContain('spec.ticdc.config.gc-ttl (line');
    expect(errors).toContain('expected a whole number of seconds (0 to 2147483647), got "1d"');
    expect(errors).toContain('spec.ticdc.config.log-level (line');
    expect(errors).toContain('expected a log level such as info or debug (it becomes a word of the start command), got "info; reboot"');
    expect(errors).toContain('spec.ticdc.config.log-file (line');
    expect(errors).toContain('spec.ticdc.config.tz (line');
    expect(errors).toContain('expected a string, got 8');
    expect(renderErrors(withCdc({ config: { gcTTL: 1.5 } }))).toContain('spec.ticdc.config.gcTTL (line');
  });

  test("TiCDC's new architecture (newarch = true, or TICDC_NEWARCH=true) is noted on the Pod for the controller; a newarch that is not a boolean is refused", () => {
    const annotation = (objects: Obj[]) => sts(objects).spec.template.metadata.annotations?.['tidb-gitops.io/ticdc-architecture'];
    expect(annotation(render(withCdc({ config: 'newarch = true\n' })))).toBe('new');
    expect(annotation(render(withCdc({ env: [{ name: 'TICDC_NEWARCH', value: 'true' }] })))).toBe('new');
    expect(annotation(render(withCdc({ env: [{ name: 'TICDC_NEWARCH', value: '1' }] })))).toBeUndefined();
    expect(annotation(render(withCdc({ config: 'newarch = false\n' })))).toBeUndefined();
    expect(annotation(render(withCdc()))).toBeUndefined();
    const errors = renderErrors(withCdc({ config: 'newarch = "yes"\n' }));
    expect(errors).toContain('spec.ticdc.config.newarch (line');
    expect(errors).toContain('expected true or false (TiCDC refuses to start with any other value), got "yes"');
  });

  test('fails on other keys in a config mapping, which tidb-operator would drop', () => {
    expect(renderErrors(withCdc({ config: { logLevel: 'info', sorter: { dir: '/x' } } }))).toMatch(
      /spec\.ticdc\.config\.sorter \(line \d+\): a config mapping only takes timezone, gcTTL, logLevel, logFile \(tidb-operator reads a mapping into its four-field TiCDCConfig, so every other key would be lost\); give TiCDC's config as a TOML string/,
    );
    expect(renderErrors(withCdc({ config: { 'log-level': 'warn' } }))).toContain(
      '(tidb-operator reads a mapping into its four-field TiCDCConfig, so every other key would be lost); write logLevel instead, or give',
    );
  });
});

describe('TiCDC refused input', () => {
  test.each([
    [{ readinessProbe: { type: 'tcp' } }, 'spec.ticdc.readinessProbe (line', 'tidb-operator gives TiCDC no readiness probe'],
    [{ requests: { storage: '10Gi' } }, 'spec.ticdc.requests.storage (line', 'TiCDC has no data volume'],
    [{ limits: { storage: '10Gi' } }, 'spec.ticdc.limits.storage (line', 'TiCDC has no data volume'],
    [
      { gracefulShutdownTimeout: '10 minutes' },
      'spec.ticdc.gracefulShutdownTimeout (line',
      'expected a Go duration such as 10m or 1h30m, got "10 minutes"',
    ],
    [{ tlsClientSecretNames: ['a.b'] }, 'spec.ticdc.tlsClientSecretNames[0] (line', 'must be a DNS label'],
    [{ tlsClientSecretNames: ['x', 'x'] }, 'spec.ticdc.tlsClientSecretNames[1] (line', 'is already a volume of the TiCDC pod'],
    [{ tlsClientSecretNames: ['config'] }, 'spec.ticdc.tlsClientSecretNames[0] (line', 'is already a volume of the TiCDC pod'],
    [{ suspendAction: { suspendStatefulSet: true } }, 'spec.ticdc.suspendAction (line', 'not supported yet'],
  ])('fails on %j', (ticdc, path, message) => {
    const errors = renderErrors(withCdc(ticdc));
    expect(errors).toContain(path);
    expect(errors).toContain(message);
  });
});

describe('TiCDC start command, run under dash', () => {
  test('v1: one exec of cdc server, names from the pod environment (no annotations file needed)', () => {
    const script = scriptOf(render(withCdc()));
    const r = run(script, { annotations: null, env: { NAMESPACE: 'other-ns', HEADLESS_SERVICE_NAME: 'svc' } });
    expect(r.status).toBe(0);
    expect(r.argv).toEqual(v1Argv({ host: 'demo-ticdc-1.svc.other-ns.svc' }));
    expect(r.calls.map((c) => c.split(' ')[0])).toEqual(['cdc']);
  });

  test('v1 with clusterDomain and TLS: domain suffix, certificate flags before an https --pd', () => {
    const script = scriptOf(render(withCdc({}, { clusterDomain: 'cluster.local', tlsCluster: { enabled: true } })));
    expect(argvOf(script)).toEqual(v1Argv({ host: `${FQDN}.cluster.local`, tls: true, pd: 'https://demo-pd:2379' }));
  });

  test('v1 acrossK8s: asks discovery /verify until it answers, then uses the answer as --pd', () => {
    const script = scriptOf(render(withCdc({}, { acrossK8s: true })));
    const r = run(script, { env: { DISCOVERY_FAILS: '2', DISCOVERY_ANSWER: 'http://demo-pd:2379,http://pd-b.other:2379' } });
    expect(r.status).toBe(0);
    const wgets = callsOf(r, 'wget');
    expect(wgets).toHaveLength(3);
    expect(lastWord(wgets[0])).toMatch(/^http:\/\/demo-discovery\.ns:10261\/verify\//);
    expect(decodeTail(lastWord(wgets[0]))).toBe('http://demo-pd:2379\n');
    expect(r.stdout).toContain('waiting for the verification of PD endpoints ...');
    expect(r.argv).toEqual(v1Argv({ pd: 'http://demo-pd:2379,http://pd-b.other:2379' }));
  });

  test('v2 acrossK8s with discovery mTLS: curl with the TiCDC certificate, https everywhere', () => {
    const script = scriptOf(
      render(withCdc({}, { startScriptVersion: 'v2', acrossK8s: true, tlsCluster: { enabled: true, enableDiscoveryMTLS: true } })),
    );
    const r = run(script, { env: { DISCOVERY_ANSWER: 'https://demo-pd:2379' } });
    expect(r.status).toBe(0);
    expect(callsOf(r, 'wget')).toEqual([]);
    const [curl] = callsOf(r, 'curl');
    expect(curl).toContain('--cacert /var/lib/ticdc-tls/ca.crt --cert /var/lib/ticdc-tls/tls.crt --key /var/lib/ticdc-tls/tls.key');
    expect(lastWord(curl)).toMatch(/^https:\/\/demo-discovery\.ns:10261\/verify\//);
    expect(decodeTail(lastWord(curl))).toBe('https://demo-pd:2379\n');
    expect(r.argv).toEqual(v2Argv({ pd: 'https://demo-pd:2379', tls: true }));
  });

  test('v2: names baked in, --pd before the TLS flags, --config last', () => {
    const objects = render(
      withCdc(
        { config: '[sorter]\ndir = "/tmp/sorter"\n' },
        { startScriptVersion: 'v2', tlsCluster: { enabled: true }, clusterDomain: 'c.local' },
      ),
    );
    const argv = argvOf(scriptOf(objects), { env: { NAMESPACE: 'not-read-by-v2', HEADLESS_SERVICE_NAME: 'not-read-by-v2' } });
    expect(argv).toEqual(v2Argv({ host: `${FQDN}.c.local`, pd: 'https://demo-pd:2379', tls: true, config: true }));
  });

  test('v2 with PreferPDAddressesOverDiscovery: pdAddresses as given, no discovery even acrossK8s', () => {
    const spec = {
      startScriptVersion: 'v2',
      acrossK8s: true,
      pdAddresses: ['http://pd-a.example:2379', 'http://pd-b.example:2379'],
      startScriptV2FeatureFlags: ['PreferPDAddressesOverDiscovery'],
    };
    const r = run(scriptOf(render(withCdc({}, spec))));
    expect(r.argv).toEqual(v2Argv({ pd: 'http://pd-a.example:2379,http://pd-b.example:2379' }));
    expect(callsOf(r, 'wget')).toEqual([]);
  });

  test.each(['v1', 'v2'])("%s: spec.cluster without a local PD uses the other cluster's PD", (version) => {
    const spec = { startScriptVersion: version, pd: undefined, cluster: { name: 'main', namespace: 'ns' } };
    const argv = argvOf(scriptOf(render(withCdc({}, spec))));
    expect(argv).toEqual((version === 'v1' ? v1Argv : v2Argv)({ pd: 'http://main-pd:2379' }));
  });

  test('v2: runmode=debug holds instead of starting cdc', () => {
    const r = run(scriptOf(render(withCdc({}, { startScriptVersion: 'v2' }))), { annotations: 'runmode="debug"\n' });
    expect(r.stdout).toContain('entering debug mode.');
    expect(r.argv).toBeUndefined();
    expect(callsOf(r, 'tail')).toEqual(['tail -f /dev/null']);
  });

  test('v2 without the annotations file exits 1', () => {
    const r = run(scriptOf(render(withCdc({}, { startScriptVersion: 'v2' }))), { annotations: null });
    expect(r.status).toBe(1);
    expect(r.argv).toBeUndefined();
  });
});

describe('TiCDC start command: context checks and lint', () => {
  const base: TiCDCScriptContext = {
    ...BASE_CONTEXT,
    gcTTL: 86400,
    logLevel: 'info',
    logFile: '',
    configFile: false,
  };

  test('throws on values that would break out of the command', () => {
    expect(() => ticdcStartScript({ ...base, logFile: '$(reboot)' })).toThrow(
      'ticdc start script: invalid context:\n  logFile: "$(reboot)" is not a path',
    );
    expect(() => ticdcStartScript({ ...base, version: 'v2', namespace: undefined })).toThrow('namespace: required for start script v2');
    expect(() => ticdcStartScript({ ...base, gcTTL: -1 })).toThrow('gcTTL: expected an integer >= 0, got -1');
  });

  const variants: [string, Partial<TiCDCScriptContext>][] = [
    ['v1', {}],
    ['v1 acrossK8s mTLS', { acrossK8s: true, scheme: 'https', discoveryMtls: true, configFile: true }],
    ['v2', { version: 'v2', clusterDomain: 'c.local' }],
    ['v2 acrossK8s', { version: 'v2', acrossK8s: true }],
  ];
  test.each(variants)('%s passes dash -n (and shellcheck -s sh when installed)', (_name, o) => {
    const script = ticdcStartScript({ ...base, ...o });
    expectShellLintClean(script);
    expect(script).not.toMatch(/[ \t]$/m);
  });

  test('the same argv under bash in POSIX mode', () => {
    const script = ticdcStartScript({ ...base, acrossK8s: true });
    const opts = { env: { DISCOVERY_ANSWER: 'http://demo-pd:2379' } };
    expect(argvOf(script, { ...opts, shell: 'bash' })).toEqual(argvOf(script, opts));
  });
});
