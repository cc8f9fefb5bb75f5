/**
 * Start scripts of PD, TiKV and TiDB: structure (the argv each server gets), lint (dash -n, shellcheck
 * when installed) and behaviour (scripts RUN with dash against stub commands, `support/sandbox.ts`).
 */
import {
  NO_FEATURE_FLAGS,
  type PdScriptContext,
  type ScriptContext,
  type StartScriptV2FeatureFlags,
  type TidbScriptContext,
  type TikvScriptContext,
  pdStartScript,
  tidbStartScript,
  tikvStartScript,
} from '../../../../src/render/scripts';
import { pdAddressHosts } from '../../../../src/render/scripts/common';
import {
  ANNOTATIONS_NORMAL,
  BASE_CONTEXT,
  callsOf,
  decodeTail,
  lastWord,
  expectShellLintClean,
  ScriptSandbox,
  type RunOptions as SandboxRunOptions,
  type RunResult,
} from '../../../support/sandbox';

// ---------------------------------------------------------------------------------------------
// Contexts

const base = BASE_CONTEXT;

function pdCtx(o: Partial<PdScriptContext> = {}): PdScriptContext {
  return { ...base, dataSubDir: '', startTimeout: 30, initWaitTime: 0, startUpScriptVersion: '', ...o };
}
function tikvCtx(o: Partial<TikvScriptContext> = {}): TikvScriptContext {
  return { ...base, dataSubDir: '', enableDynamicConfiguration: false, startTimeout: 30, ...o };
}
function tidbCtx(o: Partial<TidbScriptContext> = {}): TidbScriptContext {
  return { ...base, binlogEnabled: false, plugins: [], arguments: [], ...o };
}
function flags(o: Partial<StartScriptV2FeatureFlags>): StartScriptV2FeatureFlags {
  return { ...NO_FEATURE_FLAGS, ...o };
}

const PD_ADDRESSES = ['http://pd-a.example:2379', 'https://pd-b.example'];
const PREFER_PD = flags({ preferPdAddressesOverDiscovery: true });

// ---------------------------------------------------------------------------------------------
// Sandbox: stubs, path rewriting, running

/** What the pod environment holds (tidb-operator's StatefulSet env), per component. */
const POD_ENV: Record<'pd' | 'tikv' | 'tidb', Record<string, string>> = {
  pd: { POD_NAME: 'demo-pd-0', NAMESPACE: 'ns', PEER_SERVICE_NAME: 'demo-pd-peer', SERVICE_NAME: 'demo-pd', TZ: '' },
  tikv: {
    POD_NAME: 'demo-tikv-0',
    NAMESPACE: 'ns',
    CLUSTER_NAME: 'demo',
    HEADLESS_SERVICE_NAME: 'demo-tikv-peer',
    CAPACITY: '0',
    TZ: '',
  },
  tidb: {
    POD_NAME: 'demo-tidb-0',
    NAMESPACE: 'ns',
    CLUSTER_NAME: 'demo',
    HEADLESS_SERVICE_NAME: 'demo-tidb-peer',
    BINLOG_ENABLED: 'false',
    SLOW_LOG_FILE: '',
    TZ: '',
  },
};

const sandbox = new ScriptSandbox({ dirs: ['/var/lib/pd', '/var/lib/tikv'], servers: ['/pd-server', '/tikv-server', '/tidb-server'] });
beforeAll(() => sandbox.setup());
afterAll(() => sandbox.cleanup());

interface RunOptions extends SandboxRunOptions {
  component: 'pd' | 'tikv' | 'tidb';
}

function run(script: string, opts: RunOptions): RunResult {
  const { component, ...rest } = opts;
  return sandbox.run(script, { ...rest, env: { ...POD_ENV[component], ...opts.env } });
}

/** Runs and insists the server started, for tests that look at its argv. */
function argvOf(script: string, opts: RunOptions): string[] {
  const r = run(script, opts);
  if (r.status !== 0 || !r.argv) {
    throw new Error(`script failed (status ${r.status}):\n${r.stdout}\n${r.stderr}`);
  }
  return r.argv;
}

// ---------------------------------------------------------------------------------------------
// Structure: the argv each server gets

const pdBase = (host: string, scheme = 'http', name = 'demo-pd-0', dir = '/var/lib/pd') => [
  `--data-dir=${dir}`,
  `--name=${name}`,
  `--peer-urls=${scheme}://0.0.0.0:2380`,
  `--advertise-peer-urls=${scheme}://${host}:2380`,
  `--client-urls=${scheme}://0.0.0.0:2379`,
  `--advertise-client-urls=${scheme}://${host}:2379`,
  '--config=/etc/pd/pd.toml',
];
const PD_FQDN = 'demo-pd-0.demo-pd-peer.ns.svc';

describe('PD flags (restart with data: no discovery)', () => {
  const withWal = (dir: string) => ({ component: 'pd' as const, dirs: [`${dir}/member/wal`] });
  // [name, context, expected argv, data dir in the sandbox]
  const cases: [string, PdScriptContext, string[], string][] = [
    ['plain', pdCtx(), pdBase(PD_FQDN), 'var/lib/pd'],
    [
      'clusterDomain',
      pdCtx({ clusterDomain: 'cluster.local' }),
      pdBase(`${PD_FQDN}.cluster.local`, 'http', `${PD_FQDN}.cluster.local`),
      'var/lib/pd',
    ],
    ['acrossK8s', pdCtx({ acrossK8s: true }), pdBase(PD_FQDN, 'http', PD_FQDN), 'var/lib/pd'],
    ['https', pdCtx({ scheme: 'https' }), pdBase(PD_FQDN, 'https'), 'var/lib/pd'],
    ['dataSubDir', pdCtx({ dataSubDir: 'pd-data/' }), pdBase(PD_FQDN, 'http', 'demo-pd-0', '/var/lib/pd/pd-data'), 'var/lib/pd/pd-data'],
    ['remote PD (no effect on PD)', pdCtx({ remotePd: { name: 'other' } }), pdBase(PD_FQDN), 'var/lib/pd'],
  ];
  for (const version of ['v1', 'v2'] as const) {
    test.each(cases)(`${version} %s`, (_name, ctx, expected, dir) => {
      // v2 must use the namespace baked in, v1 the pod's NAMESPACE: give them different values.
      const c = { ...ctx, version, namespace: version === 'v2' ? 'ns' : 'not-read-by-v1' };
      const env: Record<string, string> = version === 'v2' ? { NAMESPACE: 'not-read-by-v2', PEER_SERVICE_NAME: 'x' } : {};
      const r = run(pdStartScript(c), { ...withWal(dir), env });
      expect(r.status).toBe(0);
      expect(r.argv).toEqual(expected);
      expect(callsOf(r, 'wget')).toEqual([]);
    });
  }

  test('v2 with pdAddresses and PreferPDAddressesOverDiscovery joins them (peer port, cluster scheme)', () => {
    const script = pdStartScript(pdCtx({ version: 'v2', scheme: 'https', pdAddresses: PD_ADDRESSES, featureFlags: PREFER_PD }));
    const r = run(script, { component: 'pd' }); // fresh member: discovery would be called otherwise
    expect(r.argv).toEqual([...pdBase(PD_FQDN, 'https'), '--join=https://pd-a.example:2380,https://pd-b.example:2380']);
    expect(callsOf(r, 'wget')).toEqual([]);
  });

  test('v1 ignores the v2 flags: pdAddresses still go through discovery', () => {
    const script = pdStartScript(pdCtx({ pdAddresses: PD_ADDRESSES, featureFlags: PREFER_PD }));
    const r = run(script, { component: 'pd', env: { DISCOVERY_ANSWER: '--join=http://pd-a.example:2379' } });
    expect(r.argv).toEqual([...pdBase(PD_FQDN), '--join=http://pd-a.example:2379']);
    expect(callsOf(r, 'wget')).toHaveLength(1);
  });

  test('v2 micro-service mode starts the API service (and v2 even when v1 is asked for)', () => {
    const script = pdStartScript(pdCtx({ microserviceMode: true }));
    const argv = argvOf(script, { ...withWal('var/lib/pd'), env: { NAMESPACE: 'not-read-by-v2' } });
    expect(argv).toEqual(['services', 'api', ...pdBase(PD_FQDN)]);
  });
});

const tikvBase = (pd: string, o: { host?: string; listen?: string; dir?: string } = {}) => {
  const host = o.host ?? 'demo-tikv-0.demo-tikv-peer.ns.svc';
  const listen = o.listen ?? '0.0.0.0';
  return [
    `--pd=${pd}`,
    `--advertise-addr=${host}:20160`,
    `--addr=${listen}:20160`,
    `--status-addr=${listen}:20180`,
    `--data-dir=${o.dir ?? '/var/lib/tikv'}`,
    '--capacity=0',
    '--config=/etc/tikv/tikv.toml',
  ];
};

describe('TiKV flags', () => {
  const cases: [string, Partial<TikvScriptContext>, string[], string[]][] = [
    ['plain', {}, tikvBase('http://demo-pd:2379'), tikvBase('demo-pd:2379')],
    ['https', { scheme: 'https' }, tikvBase('https://demo-pd:2379'), tikvBase('demo-pd:2379')],
    [
      'clusterDomain',
      { clusterDomain: 'cluster.local' },
      tikvBase('http://demo-pd:2379', { host: 'demo-tikv-0.demo-tikv-peer.ns.svc.cluster.local' }),
      tikvBase('demo-pd:2379', { host: 'demo-tikv-0.demo-tikv-peer.ns.svc.cluster.local' }),
    ],
    [
      'dataSubDir and IPv6',
      { dataSubDir: 'data', preferIPv6: true },
      tikvBase('http://demo-pd:2379', { dir: '/var/lib/tikv/data', listen: '[::]' }),
      tikvBase('demo-pd:2379', { dir: '/var/lib/tikv/data', listen: '[::]' }),
    ],
    ['remote PD', { remotePd: { name: 'other' } }, tikvBase('http://other-pd:2379'), tikvBase('other-pd:2379')],
    ['pdAddresses without the flag', { pdAddresses: PD_ADDRESSES }, tikvBase('http://demo-pd:2379'), tikvBase('demo-pd:2379')],
    [
      'pdAddresses with PreferPDAddressesOverDiscovery (v2 only)',
      { pdAddresses: PD_ADDRESSES, featureFlags: PREFER_PD, acrossK8s: true },
      // v1: the flag is ignored and acrossK8s asks discovery (answer below)
      tikvBase('http://demo-pd:2379,http://pd-x.remote:2379'),
      tikvBase('pd-a.example:2379,pd-b.example:2379'),
    ],
  ];
  test.each(cases)('%s (v1 with scheme, v2 without)', (_name, o, v1, v2) => {
    const env = { DISCOVERY_ANSWER: 'http://demo-pd:2379,http://pd-x.remote:2379' };
    expect(argvOf(tikvStartScript(tikvCtx({ ...o, version: 'v1' })), { component: 'tikv', env })).toEqual(v1);
    const v2env = { ...env, NAMESPACE: 'not-read-by-v2', HEADLESS_SERVICE_NAME: 'x', CLUSTER_NAME: 'x' };
    expect(argvOf(tikvStartScript(tikvCtx({ ...o, version: 'v2' })), { component: 'tikv', env: v2env })).toEqual(v2);
  });

  test('--advertise-status-addr only with dynamic configuration (v1 after --status-addr, v2 last)', () => {
    const on = tikvCtx({ enableDynamicConfiguration: true, clusterDomain: 'cl.local' });
    const host = 'demo-tikv-0.demo-tikv-peer.ns.svc.cl.local';
    const v1 = argvOf(tikvStartScript(on), { component: 'tikv' });
    const expectedV1 = tikvBase('http://demo-pd:2379', { host });
    expectedV1.splice(4, 0, `--advertise-status-addr=${host}:20180`);
    expect(v1).toEqual(expectedV1);
    const v2 = argvOf(tikvStartScript({ ...on, version: 'v2' }), { component: 'tikv' });
    expect(v2).toEqual([...tikvBase('demo-pd:2379', { host }), `--advertise-status-addr=${host}:20180`]);
    for (const version of ['v1', 'v2'] as const) {
      const off = argvOf(tikvStartScript(tikvCtx({ version })), { component: 'tikv' });
      expect(off.some((a) => a.startsWith('--advertise-status-addr'))).toBe(false);
    }
  });

  test('acrossK8s: v1 verifies "<scheme>://${CLUSTER_NAME}-pd:2379" and keeps the answer as is', () => {
    const answer = 'https://demo-pd:2379,https://pd-1.other:2379';
    const r = run(tikvStartScript(tikvCtx({ acrossK8s: true, scheme: 'https' })), {
      component: 'tikv',
      env: { DISCOVERY_ANSWER: answer, DISCOVERY_FAILS: '2' },
    });
    expect(r.argv?.[0]).toBe(`--pd=${answer}`);
    const urls = callsOf(r, 'wget').map(lastWord);
    expect(urls).toHaveLength(3);
    expect(urls[0]).toMatch(/^http:\/\/demo-discovery\.ns:10261\/verify\//);
    expect(decodeTail(urls[0])).toBe('https://demo-pd:2379\n');
    expect(r.stdout.match(/waiting for the verification of PD endpoints/g)).toHaveLength(2);
  });

  test('acrossK8s: v2 verifies "<cluster>-pd:2379" and strips http://', () => {
    const r = run(tikvStartScript(tikvCtx({ version: 'v2', acrossK8s: true })), {
      component: 'tikv',
      env: { DISCOVERY_ANSWER: 'demo-pd:2379,http://pd-1.other:2379', NAMESPACE: 'x', CLUSTER_NAME: 'x' },
    });
    expect(r.argv?.[0]).toBe('--pd=demo-pd:2379,pd-1.other:2379');
    const [url] = callsOf(r, 'wget').map(lastWord);
    expect(url).toMatch(/^http:\/\/demo-discovery\.ns:10261\/verify\//);
    expect(decodeTail(url)).toBe('demo-pd:2379\n');
  });

  test('discovery mTLS: curl with the TiKV cluster certificate over https', () => {
    const r = run(tikvStartScript(tikvCtx({ version: 'v2', acrossK8s: true, discoveryMtls: true, scheme: 'https' })), {
      component: 'tikv',
      env: { DISCOVERY_ANSWER: 'demo-pd:2379' },
    });
    expect(callsOf(r, 'wget')).toEqual([]);
    const [call] = callsOf(r, 'curl');
    const certs = '--cacert /var/lib/tikv-tls/ca.crt --cert /var/lib/tikv-tls/tls.crt --key /var/lib/tikv-tls/tls.key';
    expect(call.startsWith(`curl -sS --fail --max-time 3 ${certs} https://demo-discovery.ns:10261/verify/`)).toBe(true);
    expect(r.argv?.[0]).toBe('--pd=demo-pd:2379');
  });

  test.each(['v1', 'v2'] as const)('%s: STORE_LABELS from the environment becomes --labels', (version) => {
    const argv = argvOf(tikvStartScript(tikvCtx({ version })), { component: 'tikv', env: { STORE_LABELS: 'zone=a' } });
    expect(argv.slice(-3)).toEqual(['--config=/etc/tikv/tikv.toml', '--labels', 'zone=a']);
  });
});

const tidbBase = (path: string, host = 'demo-tidb-0.demo-tidb-peer.ns.svc') => [
  '--store=tikv',
  `--advertise-address=${host}`,
  '--host=0.0.0.0',
  `--path=${path}`,
  '--config=/etc/tidb/tidb.toml',
];

describe('TiDB flags', () => {
  test('v1: binlog from $BINLOG_ENABLED, slow log from $SLOW_LOG_FILE, plugins, then arguments', () => {
    const ctx = tidbCtx({ plugins: ['audit-1', 'whitelist-1'], arguments: ['--tidb_service_scope', 'background'] });
    const argv = argvOf(tidbStartScript(ctx), {
      component: 'tidb',
      env: { BINLOG_ENABLED: 'true', SLOW_LOG_FILE: '/var/log/tidb/slowlog' },
    });
    expect(argv).toEqual([
      ...tidbBase('demo-pd:2379'),
      '--enable-binlog=true',
      '--log-slow-query=/var/log/tidb/slowlog',
      '--plugin-dir',
      '/plugins',
      '--plugin-load',
      'audit-1,whitelist-1',
      '--tidb_service_scope',
      'background',
    ]);
  });

  test('v1 reads binlog at run time only: the context value is ignored', () => {
    const argv = argvOf(tidbStartScript(tidbCtx({ binlogEnabled: true })), { component: 'tidb' });
    expect(argv).toEqual(tidbBase('demo-pd:2379'));
  });

  test('v2: binlog and plugins decided at render time, arguments ignored', () => {
    const ctx = tidbCtx({
      version: 'v2',
      binlogEnabled: true,
      plugins: ['audit-1'],
      arguments: ['--ignored'],
      clusterDomain: 'cluster.local',
    });
    const argv = argvOf(tidbStartScript(ctx), {
      component: 'tidb',
      env: { BINLOG_ENABLED: 'false', SLOW_LOG_FILE: '/var/log/tidb/slowlog', NAMESPACE: 'x' },
    });
    expect(argv).toEqual([
      ...tidbBase('demo-pd:2379', 'demo-tidb-0.demo-tidb-peer.ns.svc.cluster.local'),
      '--enable-binlog=true',
      '--plugin-dir=/plugins',
      '--plugin-load=audit-1',
      '--log-slow-query=/var/log/tidb/slowlog',
    ]);
  });

  const pathCases: [string, Partial<TidbScriptContext>, string, string][] = [
    ['plain', {}, 'demo-pd:2379', 'demo-pd:2379'],
    ['https (no scheme in --path)', { scheme: 'https' }, 'demo-pd:2379', 'demo-pd:2379'],
    ['remote PD', { remotePd: { name: 'other' } }, 'other-pd:2379', 'other-pd:2379'],
    ['acrossK8s (answer stripped of http://)', { acrossK8s: true }, 'demo-pd:2379,pd-1.x:2379', 'demo-pd:2379,pd-1.x:2379'],
    [
      'pdAddresses with the v2 flag',
      { pdAddresses: PD_ADDRESSES, featureFlags: PREFER_PD },
      'demo-pd:2379',
      'pd-a.example:2379,pd-b.example:2379',
    ],
  ];
  test.each(pathCases)('--path: %s', (_name, o, v1, v2) => {
    const env = { DISCOVERY_ANSWER: 'http://demo-pd:2379,http://pd-1.x:2379' };
    expect(argvOf(tidbStartScript(tidbCtx(o)), { component: 'tidb', env })).toEqual(tidbBase(v1));
    expect(argvOf(tidbStartScript(tidbCtx({ ...o, version: 'v2' })), { component: 'tidb', env })).toEqual(tidbBase(v2));
  });

  test('acrossK8s v1 verifies "${CLUSTER_NAME}-pd:2379" at ${CLUSTER_NAME}-discovery.${NAMESPACE}', () => {
    const r = run(tidbStartScript(tidbCtx({ acrossK8s: true })), {
      component: 'tidb',
      env: { DISCOVERY_ANSWER: 'demo-pd:2379', CLUSTER_NAME: 'envc', NAMESPACE: 'envns' },
    });
    const [url] = callsOf(r, 'wget').map(lastWord);
    expect(url).toMatch(/^http:\/\/envc-discovery\.envns:10261\/verify\//);
    expect(decodeTail(url)).toBe('envc-pd:2379\n');
  });
});

// ---------------------------------------------------------------------------------------------
// Behaviour

describe('PD bootstrap', () => {
  test.each([
    ['v1', 'http://demo-discovery.ns.svc:10261/new/'],
    ['v2', 'http://demo-discovery.ns:10261/new/'],
  ] as const)('%s fresh member asks discovery /new and passes its answer through', (version, prefix) => {
    const answer = `--initial-cluster=demo-pd-0=http://${PD_FQDN}:2380`;
    const r = run(pdStartScript(pdCtx({ version })), {
      component: 'pd',
      env: { DISCOVERY_ANSWER: answer, DISCOVERY_FAILS: '2' },
    });
    expect(r.status).toBe(0);
    expect(r.argv).toEqual([...pdBase(PD_FQDN), answer]);
    const urls = callsOf(r, 'wget').map(lastWord);
    expect(urls).toHaveLength(3); // two failures retried
    expect(urls[0].startsWith(prefix)).toBe(true);
    expect(decodeTail(urls[0])).toBe(`${PD_FQDN}:2380\n`);
    expect(r.stdout.match(/waiting for discovery service to return start args/g)).toHaveLength(2);
    // retries and the start are spread by random sleeps below 5 and 10 seconds
    const sleeps = callsOf(r, 'sleep').map((c) => Number(lastWord(c)));
    expect(sleeps.every((s) => Number.isInteger(s) && s >= 0 && s < 10)).toBe(true);
  });

  test('the /new name carries the cluster domain', () => {
    const r = run(pdStartScript(pdCtx({ version: 'v2', clusterDomain: 'cluster.local' })), {
      component: 'pd',
      env: { DISCOVERY_ANSWER: '--join=http://x:2379' },
    });
    expect(decodeTail(lastWord(callsOf(r, 'wget')[0]))).toBe(`${PD_FQDN}.cluster.local:2380\n`);
  });

  test('discovery mTLS: curl with the PD cluster certificate', () => {
    const r = run(pdStartScript(pdCtx({ discoveryMtls: true, scheme: 'https' })), {
      component: 'pd',
      env: { DISCOVERY_ANSWER: '--join=https://x:2379' },
    });
    const [call] = callsOf(r, 'curl');
    expect(call).toContain('--cacert /var/lib/pd-tls/ca.crt --cert /var/lib/pd-tls/tls.crt --key /var/lib/pd-tls/tls.key');
    expect(lastWord(call).startsWith('https://demo-discovery.ns.svc:10261/new/')).toBe(true);
    expect(r.argv?.slice(-1)).toEqual(['--join=https://x:2379']);
  });

  test.each(['v1', 'v2'] as const)('%s with a join file joins its URLs, without discovery', (version) => {
    const members = `demo-pd-0=http://${PD_FQDN}:2380,demo-pd-1=http://demo-pd-1.demo-pd-peer.ns.svc:2380`;
    const r = run(pdStartScript(pdCtx({ version, dataSubDir: 'sub' })), {
      component: 'pd',
      files: { 'var/lib/pd/sub/join': members },
    });
    expect(r.argv?.slice(-1)).toEqual([`--join=http://${PD_FQDN}:2380,http://demo-pd-1.demo-pd-peer.ns.svc:2380`]);
    expect(callsOf(r, 'wget')).toEqual([]);
  });

  test.each(['v1', 'v2'] as const)('%s with member/wal restarts with no discovery and no join', (version) => {
    const r = run(pdStartScript(pdCtx({ version })), { component: 'pd', dirs: ['var/lib/pd/member/wal'] });
    expect(r.argv).toEqual(pdBase(PD_FQDN));
    expect(r.calls.filter((c) => /^(wget|curl) /.test(c))).toEqual([]);
  });
});

describe('annotations and debug mode', () => {
  const all: [string, string][] = [];
  for (const version of ['v1', 'v2'] as const) {
    all.push([`pd ${version}`, pdStartScript(pdCtx({ version }))]);
    all.push([`tikv ${version}`, tikvStartScript(tikvCtx({ version }))]);
    all.push([`tidb ${version}`, tidbStartScript(tidbCtx({ version }))]);
  }
  const component = (name: string) => name.split(' ')[0] as 'pd' | 'tikv' | 'tidb';

  test.each(all)('%s: no annotations file -> exit 1, server not started', (name, script) => {
    const r = run(script, { component: component(name), annotations: null, dirs: ['var/lib/pd/member/wal'] });
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('/podinfo/annotations does not exist');
    expect(r.argv).toBeUndefined();
    expect(r.calls).toEqual([]);
  });

  test.each(all)('%s: runmode="debug" holds instead of starting the server', (name, script) => {
    const r = run(script, {
      component: component(name),
      annotations: `${ANNOTATIONS_NORMAL}runmode="debug"\n`,
      dirs: ['var/lib/pd/member/wal'],
    });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('entering debug mode.');
    expect(r.calls).toEqual(['tail -f /dev/null']);
    expect(r.argv).toBeUndefined();
  });

  test.each(all)('%s: runmode="normal" starts the server', (name, script) => {
    const r = run(script, {
      component: component(name),
      annotations: `${ANNOTATIONS_NORMAL}runmode="normal"\n`,
      dirs: ['var/lib/pd/member/wal'],
    });
    expect(r.status).toBe(0);
    expect(r.argv).toBeDefined();
    expect(callsOf(r, 'tail')).toEqual([]);
  });

  test('an annotation that is not valid sh, or names an unset variable, does not stop the start', () => {
    const script = tidbStartScript(tidbCtx());
    const odd = 'note="uses `backtick"\nother="${UNSET_VAR} and $ALSO_UNSET"\n';
    const r = run(script, { component: 'tidb', annotations: odd });
    expect(r.status).toBe(0);
    expect(r.argv).toEqual(tidbBase('demo-pd:2379'));
    const r2 = run(script, { component: 'tidb', annotations: 'other="${UNSET_VAR}"\nrunmode="debug"\n' });
    expect(r2.argv).toBeUndefined();
  });
});

describe('DNS waits', () => {
  test('v1 waits with nslookup until the name resolves', () => {
    const r = run(pdStartScript(pdCtx()), { component: 'pd', env: { NSLOOKUP_FAILS: '2' }, dirs: ['var/lib/pd/member/wal'] });
    expect(r.status).toBe(0);
    expect(callsOf(r, 'nslookup')).toEqual(Array(3).fill(`nslookup ${PD_FQDN}`));
    expect(r.argv).toEqual(pdBase(PD_FQDN));
  });

  test('v1 times out after startTimeout seconds with exit 1', () => {
    const r = run(pdStartScript(pdCtx({ startTimeout: 5 })), { component: 'pd', env: { NSLOOKUP_FAILS: 'always' } });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('waiting for pd cluster ready timeout');
    // one lookup per second; the 5th second ends the wait before a 5th lookup (as the operator)
    expect(callsOf(r, 'sleep')).toEqual(Array(5).fill('sleep 1'));
    expect(callsOf(r, 'nslookup')).toHaveLength(4);
    expect(r.argv).toBeUndefined();
  });

  test('v1 with startUpScriptVersion v1 waits with dig until it answers a record', () => {
    const r = run(pdStartScript(pdCtx({ startUpScriptVersion: 'v1', startTimeout: 4 })), {
      component: 'pd',
      env: { DIG_ANSWER: '' },
    });
    expect(r.status).toBe(1);
    expect(callsOf(r, 'dig')).toEqual(Array(3).fill(`dig ${PD_FQDN} A ${PD_FQDN} AAAA +search +short`));
    expect(callsOf(r, 'nslookup')).toEqual([]);
  });

  test('v2 waits with dig; NoWaitDNS skips the wait', () => {
    const wait = run(pdStartScript(pdCtx({ version: 'v2' })), {
      component: 'pd',
      env: { DIG_FAILS: '1' },
      dirs: ['var/lib/pd/member/wal'],
    });
    expect(wait.status).toBe(0);
    expect(callsOf(wait, 'dig')).toHaveLength(2);
    const noWait = run(pdStartScript(pdCtx({ version: 'v2', featureFlags: flags({ noWaitDns: true }) })), {
      component: 'pd',
      env: { DIG_FAILS: 'always' },
      dirs: ['var/lib/pd/member/wal'],
    });
    expect(noWait.status).toBe(0);
    expect(noWait.calls.filter((c) => /^(dig|nslookup|getent|hostname) /.test(c))).toEqual([]);
    // the only sleep left is the random start delay
    expect(callsOf(noWait, 'sleep')).toHaveLength(1);
  });

  test('v2 PD IP match: sleeps initWaitTime, then waits until the name resolves to a pod IP', () => {
    const ctx = pdCtx({ version: 'v2', initWaitTime: 7, featureFlags: flags({ waitForDnsNameIpMatch: true }) });
    const ok = run(pdStartScript(ctx), {
      component: 'pd',
      env: { DIG_ANSWER: '10.0.0.9\nfd00::5', HOST_IPS: '10.0.0.5 fd00::5' },
      dirs: ['var/lib/pd/member/wal'],
    });
    expect(ok.status).toBe(0);
    expect(callsOf(ok, 'sleep')[0]).toBe('sleep 7');
    expect(callsOf(ok, 'hostname')).toEqual(['hostname -I']);

    const stale = run(pdStartScript({ ...ctx, startTimeout: 3 }), {
      component: 'pd',
      env: { DIG_ANSWER: '10.0.0.5', HOST_IPS: '10.0.0.50 10.0.0.51' }, // a prefix is not a match
    });
    expect(stale.status).toBe(1);
    expect(stale.stderr).toContain('waiting for cluster ready timeout');
    expect(callsOf(stale, 'dig')).toHaveLength(2);
    expect(stale.argv).toBeUndefined();
  });

  test('PD micro-service mode waits for the IP match unless NoWaitDNS', () => {
    const r = run(pdStartScript(pdCtx({ microserviceMode: true, startTimeout: 2 })), {
      component: 'pd',
      env: { DIG_ANSWER: '10.0.0.9' },
    });
    expect(r.status).toBe(1);
    expect(callsOf(r, 'hostname')).toEqual(['hostname -I']);
    const skip = run(pdStartScript(pdCtx({ microserviceMode: true, featureFlags: flags({ noWaitDns: true }) })), {
      component: 'pd',
      env: { DIG_ANSWER: '10.0.0.9' },
      dirs: ['var/lib/pd/member/wal'],
    });
    expect(skip.status).toBe(0);
  });

  test('v2 TiKV IP match uses getent and spec.pd.startTimeout; off without the flag', () => {
    const on = tikvCtx({ version: 'v2', startTimeout: 4, featureFlags: flags({ waitForDnsNameIpMatch: true }) });
    const ok = run(tikvStartScript(on), { component: 'tikv', env: { GETENT_IPS: '10.0.0.8 10.0.0.5' } });
    expect(ok.status).toBe(0);
    expect(callsOf(ok, 'getent')).toEqual(['getent ahosts demo-tikv-0.demo-tikv-peer.ns.svc']);
    const timeout = run(tikvStartScript(on), { component: 'tikv', env: { GETENT_IPS: '', GETENT_FAILS: 'always' } });
    expect(timeout.status).toBe(1);
    expect(callsOf(timeout, 'getent')).toHaveLength(3);
    expect(timeout.argv).toBeUndefined();
    const off = run(tikvStartScript(tikvCtx({ version: 'v2' })), { component: 'tikv', env: { GETENT_FAILS: 'always' } });
    expect(off.status).toBe(0);
    expect(callsOf(off, 'getent')).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// Lint, dialect, determinism

function everyScript(): [string, string][] {
  const out: [string, string][] = [];
  const variants: Partial<ScriptContext>[] = [
    {},
    { clusterDomain: 'cluster.local' },
    { acrossK8s: true },
    { scheme: 'https', discoveryMtls: true, acrossK8s: true },
    { pdAddresses: PD_ADDRESSES, featureFlags: PREFER_PD },
    { remotePd: { name: 'other' }, preferIPv6: true },
    { featureFlags: flags({ waitForDnsNameIpMatch: true }) },
    { featureFlags: flags({ noWaitDns: true }) },
  ];
  for (const version of ['v1', 'v2'] as const) {
    variants.forEach((v, i) => {
      const c = { ...v, version };
      out.push([`pd ${version} #${i}`, pdStartScript(pdCtx({ ...c, dataSubDir: 'd', initWaitTime: 3 }))]);
      out.push([`tikv ${version} #${i}`, tikvStartScript(tikvCtx({ ...c, enableDynamicConfiguration: true }))]);
      out.push([`tidb ${version} #${i}`, tidbStartScript(tidbCtx({ ...c, plugins: ['a'], arguments: ['--x', 'y'] }))]);
    });
  }
  out.push(['pd v1 dig', pdStartScript(pdCtx({ startUpScriptVersion: 'v1' }))]);
  out.push(['pd ms', pdStartScript(pdCtx({ microserviceMode: true }))]);
  return out;
}

describe('lint and dialect', () => {
  const scripts = everyScript();

  test.each(scripts)('%s passes dash -n (and shellcheck -s sh when installed)', (_name, script) => {
    expectShellLintClean(script);
  });

  test.each(scripts)('%s is POSIX sh text: #!/bin/sh, no bash-isms, no trailing blanks, final newline', (_name, script) => {
    expect(script.startsWith('#!/bin/sh\n')).toBe(true);
    expect(script.endsWith('\n')).toBe(true);
    expect(script.endsWith('\n\n')).toBe(false);
    expect(script).not.toMatch(/[ \t]$/m);
    // code only: comments and single-quoted strings (awk programs) may say anything
    const code = script
      .split('\n')
      .filter((l) => !/^\s*#/.test(l))
      .join('\n')
      .replace(/'[^'\n]*'/g, "''");
    expect(code).not.toMatch(/\[\[|\$RANDOM|<<<|==|\$\{[A-Za-z_]+\[|^\s*(source|function|local|declare)\s/m);
    // `set -o pipefail` only behind the probe that checks the shell knows it
    expect(script.match(/set -o pipefail/g)).toEqual(['set -o pipefail', 'set -o pipefail']);
    expect(script).toContain('if (set -o pipefail) 2>/dev/null; then set -o pipefail; fi');
  });

  test('rendering is deterministic', () => {
    expect(everyScript()).toEqual(scripts);
  });

  test('the sandbox copy rewrote every absolute path the scripts touch', () => {
    const r = run(pdStartScript(pdCtx({ dataSubDir: 'x' })), { component: 'pd', dirs: ['var/lib/pd/x/member/wal'] });
    expect(r.script).not.toMatch(/[\s"=]\/(etc\/podinfo|var\/lib\/pd\b(?!-)|pd-server)/);
    expect(r.status).toBe(0);
  });

  test.each(['pd', 'tikv', 'tidb'] as const)('%s gives the same argv under bash in POSIX mode', (component) => {
    const script =
      component === 'pd'
        ? pdStartScript(pdCtx({ version: 'v2', clusterDomain: 'c.local' }))
        : component === 'tikv'
          ? tikvStartScript(tikvCtx({ acrossK8s: true }))
          : tidbStartScript(tidbCtx({ plugins: ['p'], arguments: ['--a'] }));
    const opts: RunOptions = { component, env: { DISCOVERY_ANSWER: '--join=http://x:2379' } };
    expect(argvOf(script, { ...opts, shell: 'bash' })).toEqual(argvOf(script, opts));
  });
});

// ---------------------------------------------------------------------------------------------
// Context validation and helpers

describe('context validation', () => {
  test('fails without a namespace for v2, naming the field', () => {
    expect(() => pdStartScript(pdCtx({ version: 'v2', namespace: undefined }))).toThrow(
      'pd start script: invalid context:\n  namespace: required for start script v2, which bakes it into the script',
    );
  });

  test('v1 does not need the namespace', () => {
    expect(() => tikvStartScript(tikvCtx({ namespace: undefined }))).not.toThrow();
  });

  test('fails listing every bad value at once', () => {
    const bad = tidbCtx({ clusterName: 'Demo"', pdAddresses: ['http://a$(id)'], plugins: ['a b'], arguments: ['x\ny'] });
    expect(() => tidbStartScript(bad)).toThrow(
      [
        'tidb start script: invalid context:',
        '  clusterName: "Demo\\"" is not a DNS label (lowercase letters, digits, -)',
        '  pdAddresses[0]: "http://a$(id)" is not a URL usable in a script (no quotes, backslashes, spaces or $( )',
        '  plugins[0]: "a b" is not a plugin name (letters, digits, ., _, -)',
        '  arguments[0]: "x\\ny" contains a line break',
      ].join('\n'),
    );
  });

  test('fails on a non-integer or zero startTimeout and an unsafe dataSubDir', () => {
    expect(() => pdStartScript(pdCtx({ startTimeout: 0, dataSubDir: 'a;b' }))).toThrow(
      /dataSubDir: "a;b" is not a relative path[\s\S]*startTimeout: expected an integer >= 1, got 0/,
    );
  });

  test('pdAddresses hosts: URL host (IPv6 keeps brackets), else the entry itself', () => {
    expect(pdAddressHosts(['http://pd-a:2379', 'https://[fd00::1]:2379', 'another.pd', '${PD_DOMAIN}'])).toEqual([
      'pd-a',
      '[fd00::1]',
      'another.pd',
      '${PD_DOMAIN}',
    ]);
  });
});
