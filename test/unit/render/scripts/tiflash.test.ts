/**
 * TiFlash scripts, RUN under dash against stub commands (`support/sandbox.ts`): the init script really
 * writes the per-pod config files; the start script's argv is what tiflash gets. Plus lint.
 */
import { readFileSync } from 'fs';
import { NO_FEATURE_FLAGS } from '../../../../src/render/scripts';
import { tiflashInitScript, tiflashStartScript, type TiFlashScriptContext } from '../../../../src/render/scripts/tiflash';
import { parseToml } from '../../../../src/base/toml';
import { cluster, container, find, render } from '../../../support/render';
import {
  BASE_CONTEXT,
  callsOf,
  decodeTail,
  expectShellLintClean,
  lastWord,
  ScriptSandbox,
  type RunOptions,
  type RunResult,
} from '../../../support/sandbox';

const base: TiFlashScriptContext = {
  ...BASE_CONTEXT,
  mountConfigMap: false,
  enableDynamicConfiguration: false,
};
const ctx = (o: Partial<TiFlashScriptContext> = {}): TiFlashScriptContext => ({ ...base, ...o });
const mountCm = (o: Partial<TiFlashScriptContext> = {}) => ctx({ mountConfigMap: true, ...o });
const PREFER_PD = { ...NO_FEATURE_FLAGS, preferPdAddressesOverDiscovery: true };

/** The tiflash container's environment as the StatefulSet sets it (no POD_NAME without hostNetwork). */
const POD_ENV = {
  HOSTNAME: 'demo-tiflash-2',
  NAMESPACE: 'ns',
  CLUSTER_NAME: 'demo',
  HEADLESS_SERVICE_NAME: 'demo-tiflash-peer',
  CAPACITY: '0',
  TZ: 'UTC',
};

const TEMPLATES = {
  'etc/tiflash/config_templ.toml':
    '[flash.proxy]\n  advertise-addr = "demo-tiflash-POD_NUM.demo-tiflash-peer.ns.svc:20170"\n[raft]\n  pd_addr = "PD_ADDR"\n',
  'etc/tiflash/proxy_templ.toml': '[server]\n  engine-addr = "demo-tiflash-POD_NUM.demo-tiflash-peer.ns.svc:3930"\n',
};

const sandbox = new ScriptSandbox({ dirs: ['/etc/tiflash', '/data0'], servers: ['/tiflash/tiflash'] });
beforeAll(() => sandbox.setup());
afterAll(() => sandbox.cleanup());

/** Runs the init script on the sample templates as pod `podName`; returns the run and the files it wrote. */
function runInit(script: string, podName = 'demo-tiflash-3', opts: RunOptions = {}): RunResult & { config?: string; proxy?: string } {
  const r = sandbox.run(script, { files: TEMPLATES, dirs: ['data0'], ...opts, env: { POD_NAME: podName, ...opts.env } });
  // The sandbox moved /data0 into its run directory; the script copy names where.
  const root = /(\/[^\s>"]*)\/data0\/config\.toml/.exec(r.script)![1];
  const read = (f: string) => {
    try {
      return readFileSync(`${root}${f}`, 'utf8');
    } catch {
      return undefined;
    }
  };
  return { ...r, config: read('/data0/config.toml'), proxy: read('/data0/proxy.toml') };
}

const argvOf = (script: string, opts: RunOptions = {}) => sandbox.argvOf(script, { ...opts, env: { ...POD_ENV, ...opts.env } });

describe('init script (init mode)', () => {
  test.each(['v1', 'v2'] as const)('%s writes both files with the pod ordinal in place of POD_NUM', (version) => {
    const r = runInit(tiflashInitScript(ctx({ version })));
    expect(r.status).toBe(0);
    expect(r.config).toBe(TEMPLATES['etc/tiflash/config_templ.toml'].replace('POD_NUM', '3'));
    expect(r.proxy).toBe('[server]\n  engine-addr = "demo-tiflash-3.demo-tiflash-peer.ns.svc:3930"\n');
    // Nothing asks discovery unless the cluster spans Kubernetes clusters.
    expect(r.calls).toEqual([]);
  });

  test("without a namespace in the cluster, the pod's own NAMESPACE fills POD_NAMESPACE", () => {
    const files = {
      'etc/tiflash/config_templ.toml': '[flash]\n  tidb_status_addr = "demo-tidb.POD_NAMESPACE.svc:10080"\n',
      'etc/tiflash/proxy_templ.toml': '[server]\n  engine-addr = "demo-tiflash-POD_NUM.demo-tiflash-peer.POD_NAMESPACE.svc:3930"\n',
    };
    const r = runInit(tiflashInitScript(ctx({ namespace: undefined })), 'demo-tiflash-1', { files, env: { NAMESPACE: 'prod' } });
    expect(r.status).toBe(0);
    expect(r.config).toBe('[flash]\n  tidb_status_addr = "demo-tidb.prod.svc:10080"\n');
    expect(r.proxy).toBe('[server]\n  engine-addr = "demo-tiflash-1.demo-tiflash-peer.prod.svc:3930"\n');
  });

  test('a multi-digit ordinal (the last field of the pod name)', () => {
    const r = runInit(tiflashInitScript(ctx()), 'my-cluster-tiflash-12');
    expect(r.config).toContain('demo-tiflash-12.demo-tiflash-peer');
  });

  test('fails clearly when POD_NAME carries no ordinal', () => {
    const r = runInit(tiflashInitScript(ctx()), 'tiflash');
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('cannot read the pod ordinal from POD_NAME=tiflash');
    expect(r.config).toBeUndefined();
  });

  test('fails when a template is missing, instead of starting tiflash without config', () => {
    const r = runInit(tiflashInitScript(ctx()), 'demo-tiflash-0', { files: { 'etc/tiflash/config_templ.toml': 'x = 1\n' } });
    expect(r.status).not.toBe(0);
  });

  test.each([
    ['v1', 'http'],
    ['v2', 'https'],
  ] as const)('%s acrossK8s: retries discovery /verify, strips schemes, fills PD_ADDR', (version, scheme) => {
    const r = runInit(tiflashInitScript(ctx({ version, acrossK8s: true, scheme })), 'demo-tiflash-0', {
      env: { DISCOVERY_FAILS: '2', DISCOVERY_ANSWER: `${scheme}://demo-pd:2379,${scheme}://pd-1.other.svc:2379` },
    });
    expect(r.status).toBe(0);
    const calls = callsOf(r, 'wget');
    expect(calls).toHaveLength(3);
    const url = lastWord(calls[0]);
    expect(url).toMatch(/^http:\/\/demo-discovery\.ns:10261\/verify\//);
    expect(decodeTail(url)).toBe(`${scheme}://demo-pd:2379\n`);
    expect(r.config).toContain('pd_addr = "demo-pd:2379,pd-1.other.svc:2379"');
    expect(r.config).toContain('demo-tiflash-0.demo-tiflash-peer');
  });

  test('discovery mTLS: curl over https with the TiFlash certificate', () => {
    const r = runInit(tiflashInitScript(ctx({ acrossK8s: true, scheme: 'https', discoveryMtls: true })), 'demo-tiflash-0', {
      env: { DISCOVERY_ANSWER: 'https://demo-pd:2379' },
    });
    expect(callsOf(r, 'wget')).toEqual([]);
    const [curl] = callsOf(r, 'curl');
    expect(curl).toContain('--cacert /var/lib/tiflash-tls/ca.crt --cert /var/lib/tiflash-tls/tls.crt --key /var/lib/tiflash-tls/tls.key');
    expect(lastWord(curl)).toMatch(/^https:\/\/demo-discovery\.ns:10261\/verify\//);
    expect(r.config).toContain('pd_addr = "demo-pd:2379"');
  });
});

describe('rendered init container on the rendered templates', () => {
  test('acrossK8s v2: pod 1 gets its own addresses and the verified PD endpoints, as valid TOML', () => {
    const objects = render(
      cluster({
        startScriptVersion: 'v2',
        acrossK8s: true,
        tiflash: {
          replicas: 2,
          storageClaims: [{ resources: { requests: { storage: '10Gi' } } }],
          config: { proxy: 'log-level = "warn"\n' },
        },
      }),
    );
    const cm = find(objects, 'ConfigMap', 'demo-tiflash');
    const init = container(find(objects, 'StatefulSet', 'demo-tiflash'), 'init');
    const files = {
      'etc/tiflash/config_templ.toml': cm.data['config_templ.toml'],
      'etc/tiflash/proxy_templ.toml': cm.data['proxy_templ.toml'],
    };
    const r = runInit(init.command[2], 'demo-tiflash-1', { files, env: { DISCOVERY_ANSWER: 'http://demo-pd:2379,http://pd-0.far:2379' } });
    expect(r.status).toBe(0);
    const config = parseToml(r.config!) as Record<string, any>;
    expect(config.raft.pd_addr).toBe('demo-pd:2379,pd-0.far:2379');
    expect(config.flash.proxy['advertise-addr']).toBe('demo-tiflash-1.demo-tiflash-peer.ns.svc:20170');
    expect(parseToml(r.proxy!)).toMatchObject({
      'log-level': 'warn',
      server: { 'engine-addr': 'demo-tiflash-1.demo-tiflash-peer.ns.svc:3930' },
    });
  });
});

describe('start script, init mode', () => {
  test('v1 is one exec line: no annotations file needed', () => {
    const script = tiflashStartScript(ctx());
    expect(script).toBe('exec /tiflash/tiflash server --config-file /data0/config.toml\n');
    expect(argvOf(script, { annotations: null })).toEqual(['server', '--config-file', '/data0/config.toml']);
  });

  test('v2 has the common header: annotations required, debug mode holds', () => {
    const script = tiflashStartScript(ctx({ version: 'v2' }));
    expect(argvOf(script)).toEqual(['server', '--config-file', '/data0/config.toml']);
    const missing = sandbox.run(script, { annotations: null, env: POD_ENV });
    expect(missing.status).toBe(1);
    expect(missing.argv).toBeUndefined();
    const debug = sandbox.run(script, { annotations: 'runmode="debug"\n', env: POD_ENV });
    expect(debug.stdout).toContain('entering debug mode.');
    expect(debug.argv).toBeUndefined();
  });
});

const startArgs = (host: string, pd: string, statusAddr = false) => [
  'server',
  '--config-file',
  '/etc/tiflash/config_templ.toml',
  '--',
  `--flash.proxy.advertise-addr=${host}:20170`,
  ...(statusAddr ? [`--flash.proxy.advertise-status-addr=${host}:20292`] : []),
  `--flash.service_addr=${host}:3930`,
  `--raft.pd_addr=${pd}`,
];
const HOST = 'demo-tiflash-2.demo-tiflash-peer.ns.svc';

describe('start script, mount-cm mode', () => {
  // [name, context, expected argv]
  const cases: [string, TiFlashScriptContext, string[]][] = [
    ['v1', mountCm(), startArgs(HOST, 'http://demo-pd:2379')],
    [
      'v1 https, domain, dynamic config',
      mountCm({ scheme: 'https', clusterDomain: 'cluster.local', enableDynamicConfiguration: true }),
      startArgs(`${HOST}.cluster.local`, 'https://demo-pd:2379', true),
    ],
    ['v1 joined cluster without its own PD', mountCm({ remotePd: { name: 'other' } }), startArgs(HOST, 'http://other-pd:2379')],
    ['v2', mountCm({ version: 'v2' }), startArgs(HOST, 'demo-pd:2379')],
    [
      'v2 dynamic config, domain',
      mountCm({ version: 'v2', enableDynamicConfiguration: true, clusterDomain: 'c.local' }),
      startArgs(`${HOST}.c.local`, 'demo-pd:2379', true),
    ],
    ['v2 joined cluster', mountCm({ version: 'v2', remotePd: { name: 'other' } }), startArgs(HOST, 'other-pd:2379')],
    [
      'v2 PreferPDAddressesOverDiscovery',
      mountCm({
        version: 'v2',
        featureFlags: PREFER_PD,
        pdAddresses: ['http://pd-a.example:2379', 'https://pd-b.example'],
        acrossK8s: true,
      }),
      startArgs(HOST, 'pd-a.example:2379,pd-b.example:2379'),
    ],
    [
      'v1 ignores the v2 flag',
      mountCm({ featureFlags: PREFER_PD, pdAddresses: ['http://pd-a.example:2379'] }),
      startArgs(HOST, 'http://demo-pd:2379'),
    ],
  ];
  test.each(cases)('%s', (_name, context, argv) => {
    expect(argvOf(tiflashStartScript(context))).toEqual(argv);
  });

  test('v1 reads the names from the environment; v2 bakes them in', () => {
    const env = { NAMESPACE: 'elsewhere', HEADLESS_SERVICE_NAME: 'x-peer', CLUSTER_NAME: 'x' };
    expect(argvOf(tiflashStartScript(mountCm()), { env })).toEqual(startArgs('demo-tiflash-2.x-peer.elsewhere.svc', 'http://x-pd:2379'));
    expect(argvOf(tiflashStartScript(mountCm({ version: 'v2' })), { env })).toEqual(startArgs(HOST, 'demo-pd:2379'));
  });

  test('POD_NAME (hostNetwork) wins over HOSTNAME (the node name then)', () => {
    expect(argvOf(tiflashStartScript(mountCm()), { env: { POD_NAME: 'demo-tiflash-7', HOSTNAME: 'node-1' } })).toEqual(
      startArgs('demo-tiflash-7.demo-tiflash-peer.ns.svc', 'http://demo-pd:2379'),
    );
  });

  test('STORE_LABELS from the user env become --labels words', () => {
    const argv = argvOf(tiflashStartScript(mountCm({ version: 'v2' })), { env: { STORE_LABELS: 'zone=a' } });
    expect(argv.slice(-2)).toEqual(['--labels', 'zone=a']);
  });

  test('v1 acrossK8s: PD endpoints from discovery, kept as answered', () => {
    const r = sandbox.run(tiflashStartScript(mountCm({ acrossK8s: true })), {
      env: { ...POD_ENV, DISCOVERY_FAILS: '1', DISCOVERY_ANSWER: 'http://demo-pd:2379,http://pd-0.remote:2379' },
    });
    expect(r.status).toBe(0);
    const calls = callsOf(r, 'wget');
    expect(calls).toHaveLength(2);
    expect(lastWord(calls[0])).toMatch(/^http:\/\/demo-discovery\.ns:10261\/verify\//);
    expect(decodeTail(lastWord(calls[0]))).toBe('http://demo-pd:2379\n');
    expect(r.argv).toEqual(startArgs(HOST, 'http://demo-pd:2379,http://pd-0.remote:2379'));
  });

  test('v2 acrossK8s with discovery mTLS: curl, schemes stripped', () => {
    const r = sandbox.run(
      tiflashStartScript(mountCm({ version: 'v2', acrossK8s: true, scheme: 'https', discoveryMtls: true, clusterDomain: 'cluster.local' })),
      {
        env: { ...POD_ENV, DISCOVERY_ANSWER: 'https://demo-pd:2379,https://pd-0.remote:2379' },
      },
    );
    const [curl] = callsOf(r, 'curl');
    expect(curl).toContain('--cert /var/lib/tiflash-tls/tls.crt');
    expect(decodeTail(lastWord(curl))).toBe('demo-pd:2379\n');
    expect(r.argv).toEqual(startArgs(`${HOST}.cluster.local`, 'demo-pd:2379,pd-0.remote:2379'));
  });
});

describe('context checks', () => {
  test('names that would break the script are refused', () => {
    expect(() => tiflashStartScript(mountCm({ clusterName: 'a;b' }))).toThrow('clusterName: "a;b" is not a DNS label');
    expect(() => tiflashInitScript(ctx({ version: 'v2', namespace: undefined }))).toThrow('namespace: required for start script v2');
    expect(() => tiflashInitScript(ctx({ acrossK8s: true, namespace: undefined }))).toThrow(
      'namespace: required across Kubernetes clusters',
    );
  });
});

describe('lint', () => {
  const variants: [string, string][] = [];
  for (const version of ['v1', 'v2'] as const) {
    for (const acrossK8s of [false, true]) {
      for (const discoveryMtls of [false, true]) {
        const c = { version, acrossK8s, discoveryMtls, scheme: discoveryMtls ? ('https' as const) : ('http' as const) };
        const tag = `${version}${acrossK8s ? ' acrossK8s' : ''}${discoveryMtls ? ' mTLS' : ''}`;
        variants.push([`init ${tag}`, tiflashInitScript(ctx(c))]);
        variants.push([`start ${tag}`, tiflashStartScript(ctx(c))]);
        variants.push([`mount-cm ${tag}`, tiflashStartScript(mountCm({ ...c, enableDynamicConfiguration: true }))]);
      }
    }
  }
  variants.push([
    'mount-cm v2 prefer PD',
    tiflashStartScript(mountCm({ version: 'v2', featureFlags: PREFER_PD, pdAddresses: ['http://a:2379'] })),
  ]);

  test.each(variants)('%s passes dash -n (and shellcheck -s sh when installed)', (_name, script) => {
    expectShellLintClean(script);
  });

  test('no line ends in whitespace', () => {
    for (const [, script] of variants) expect(script).not.toMatch(/[ \t]$/m);
  });
});
