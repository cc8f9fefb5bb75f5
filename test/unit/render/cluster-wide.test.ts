/**
 * Cluster-wide features on PD, TiKV and TiDB: TLS between components (`tlsCluster`), TLS for MySQL
 * clients (`tidb.tlsClient`), `acrossK8s`, heterogeneous clusters (`spec.cluster`) and `pdAddresses`.
 */
import { parseToml } from '../../../src/base/toml';
import { cluster, container, find, render, renderErrors, tomlOf, type Obj } from '../../support/render';

const TLS = { tlsCluster: { enabled: true } };

function volume(sts: Obj, name: string): Obj | undefined {
  return sts.spec.template.spec.volumes.find((v: Obj) => v.name === name);
}
function mount(c: Obj, name: string): Obj | undefined {
  return c.volumeMounts.find((m: Obj) => m.name === name);
}
function script(objects: Obj[], comp: string): string {
  return find(objects, 'ConfigMap', `demo-${comp}`).data['startup-script'];
}

describe('tlsCluster', () => {
  const objects = render(cluster(TLS));

  test.each([
    ['pd', 'pd-tls', '/var/lib/pd-tls'],
    ['tikv', 'tikv-tls', '/var/lib/tikv-tls'],
    ['tidb', 'tidb-tls', '/var/lib/tidb-tls'],
  ])('%s mounts its cluster secret as volume %s at %s', (comp, vol, dir) => {
    const sts = find(objects, 'StatefulSet', `demo-${comp}`);
    expect(volume(sts, vol)).toEqual({ name: vol, secret: { secretName: `demo-${comp}-cluster-secret` } });
    expect(mount(container(sts, comp), vol)).toEqual({ name: vol, mountPath: dir, readOnly: true });
  });

  test('certificate paths are forced into every config, over the user keys of the same table', () => {
    const withUser = render(
      cluster({ ...TLS, pd: { replicas: 1, config: { security: { 'cert-allowed-cn': ['TiDB'], 'cacert-path': '/mine' } } } }),
    );
    expect(parseToml(tomlOf(find(withUser, 'ConfigMap', 'demo-pd'))).security).toEqual({
      'cert-allowed-cn': ['TiDB'],
      'cacert-path': '/var/lib/pd-tls/ca.crt',
      'cert-path': '/var/lib/pd-tls/tls.crt',
      'key-path': '/var/lib/pd-tls/tls.key',
    });
    expect(parseToml(tomlOf(find(objects, 'ConfigMap', 'demo-tikv'))).security).toEqual({
      'ca-path': '/var/lib/tikv-tls/ca.crt',
      'cert-path': '/var/lib/tikv-tls/tls.crt',
      'key-path': '/var/lib/tikv-tls/tls.key',
    });
    expect(parseToml(tomlOf(find(objects, 'ConfigMap', 'demo-tidb'))).security).toEqual({
      'cluster-ssl-ca': '/var/lib/tidb-tls/ca.crt',
      'cluster-ssl-cert': '/var/lib/tidb-tls/tls.crt',
      'cluster-ssl-key': '/var/lib/tidb-tls/tls.key',
    });
  });

  test("PD URLs and TiKV's PD endpoint use https", () => {
    expect(script(objects, 'pd')).toContain('--advertise-client-urls=https://');
    expect(script(objects, 'pd')).toContain('--peer-urls=https://0.0.0.0:2380');
    expect(script(objects, 'tikv')).toContain('--pd=https://${CLUSTER_NAME}-pd:2379');
    const plain = render(cluster());
    expect(script(plain, 'pd')).not.toContain('https://');
  });

  test("TiDB's command readiness probe calls https with the cluster certificate", () => {
    const sts = find(render(cluster({ ...TLS, tidb: { replicas: 1, readinessProbe: { type: 'command' } } })), 'StatefulSet', 'demo-tidb');
    expect(container(sts, 'tidb').readinessProbe.exec.command).toEqual([
      'curl',
      'https://127.0.0.1:10080/status',
      '--fail',
      '--location',
      '--cacert',
      '/var/lib/tidb-tls/ca.crt',
      '--cert',
      '/var/lib/tidb-tls/tls.crt',
      '--key',
      '/var/lib/tidb-tls/tls.key',
    ]);
  });

  test('mountClusterClientSecret adds the client certificate to PD and TiKV, only with TLS on', () => {
    const spec = { pd: { replicas: 1, mountClusterClientSecret: true }, tikv: { replicas: 1, mountClusterClientSecret: true } };
    const on = render(cluster({ ...TLS, ...spec }));
    for (const comp of ['pd', 'tikv']) {
      const sts = find(on, 'StatefulSet', `demo-${comp}`);
      expect(volume(sts, 'cluster-client-tls')).toEqual({
        name: 'cluster-client-tls',
        secret: { secretName: 'demo-cluster-client-secret' },
      });
      expect(mount(container(sts, comp), 'cluster-client-tls')).toEqual({
        name: 'cluster-client-tls',
        mountPath: '/var/lib/cluster-client-tls',
        readOnly: true,
      });
      expect(volume(find(render(cluster(spec)), 'StatefulSet', `demo-${comp}`), 'cluster-client-tls')).toBeUndefined();
    }
  });

  test('enableDiscoveryMTLS makes PD call discovery with curl and its certificate; ignored without TLS', () => {
    const mtls = script(render(cluster({ tlsCluster: { enabled: true, enableDiscoveryMTLS: true } })), 'pd');
    expect(mtls).toContain('--cacert /var/lib/pd-tls/ca.crt');
    expect(mtls).toMatch(/curl .*https:\/\/\$\{?discovery_url|curl .*https:\/\//);
    expect(script(render(cluster({ tlsCluster: { enableDiscoveryMTLS: true } })), 'pd')).not.toContain('curl');
  });
});

describe('tidb.tlsClient', () => {
  test('TiDB mounts <cluster>-tidb-server-secret and sets ssl-ca/cert/key', () => {
    const objects = render(cluster({ tidb: { replicas: 1, tlsClient: { enabled: true } } }));
    const sts = find(objects, 'StatefulSet', 'demo-tidb');
    expect(volume(sts, 'tidb-server-tls')).toEqual({ name: 'tidb-server-tls', secret: { secretName: 'demo-tidb-server-secret' } });
    expect(mount(container(sts, 'tidb'), 'tidb-server-tls')).toEqual({
      name: 'tidb-server-tls',
      mountPath: '/var/lib/tidb-server-tls',
      readOnly: true,
    });
    expect(parseToml(tomlOf(find(objects, 'ConfigMap', 'demo-tidb'))).security).toEqual({
      'ssl-ca': '/var/lib/tidb-server-tls/ca.crt',
      'ssl-cert': '/var/lib/tidb-server-tls/tls.crt',
      'ssl-key': '/var/lib/tidb-server-tls/tls.key',
    });
    expect(volume(sts, 'tidb-tls')).toBeUndefined();
  });

  test('disableClientAuthn drops ssl-ca', () => {
    const objects = render(cluster({ tidb: { replicas: 1, tlsClient: { enabled: true, disableClientAuthn: true } } }));
    const security = parseToml(tomlOf(find(objects, 'ConfigMap', 'demo-tidb'))).security as Obj;
    expect(security['ssl-ca']).toBeUndefined();
    expect(security['ssl-cert']).toBe('/var/lib/tidb-server-tls/tls.crt');
  });

  test("PD's dashboard gets a client certificate towards TiDB (custom secret, skipInternalClientCA)", () => {
    const objects = render(
      cluster({
        pd: { replicas: 1, tlsClientSecretName: 'dash' },
        tidb: { replicas: 1, tlsClient: { enabled: true, skipInternalClientCA: true } },
      }),
    );
    const sts = find(objects, 'StatefulSet', 'demo-pd');
    expect(volume(sts, 'tidb-client-tls')).toEqual({ name: 'tidb-client-tls', secret: { secretName: 'dash' } });
    expect(mount(container(sts, 'pd'), 'tidb-client-tls')).toEqual({
      name: 'tidb-client-tls',
      mountPath: '/var/lib/tidb-client-tls',
      readOnly: true,
    });
    expect(parseToml(tomlOf(find(objects, 'ConfigMap', 'demo-pd'))).dashboard).toEqual({
      'tidb-cert-path': '/var/lib/tidb-client-tls/tls.crt',
      'tidb-key-path': '/var/lib/tidb-client-tls/tls.key',
    });
    const withCa = render(cluster({ tidb: { replicas: 1, tlsClient: { enabled: true } } }));
    expect(volume(find(withCa, 'StatefulSet', 'demo-pd'), 'tidb-client-tls')!.secret.secretName).toBe('demo-tidb-client-secret');
    expect((parseToml(tomlOf(find(withCa, 'ConfigMap', 'demo-pd'))).dashboard as Obj)['tidb-cacert-path']).toBe(
      '/var/lib/tidb-client-tls/ca.crt',
    );
  });

  test('no dashboard certificate for PD before v4.0 or with the skip-tls annotation', () => {
    const old = render(cluster({ version: 'v3.0.20', tidb: { replicas: 1, tlsClient: { enabled: true } } }));
    expect(volume(find(old, 'StatefulSet', 'demo-pd'), 'tidb-client-tls')).toBeUndefined();
    const skip = render(
      cluster(
        { tidb: { replicas: 1, tlsClient: { enabled: true } } },
        { annotations: { 'tidb.tidb.pingcap.com/skip-tls-when-connect-tidb': 'true' } },
      ),
    );
    expect(volume(find(skip, 'StatefulSet', 'demo-pd'), 'tidb-client-tls')).toBeUndefined();
    expect(parseToml(tomlOf(find(skip, 'ConfigMap', 'demo-pd'))).dashboard).toBeUndefined();
  });
});

describe('pdAddresses: what tidb-operator accepts, unless a script or URL would break', () => {
  const v2 = (pdAddresses: string[]) =>
    cluster({ startScriptVersion: 'v2', startScriptV2FeatureFlags: ['PreferPDAddressesOverDiscovery'], pdAddresses });

  test.each([
    ['http://pd.example.com:2379/', 'pd.example.com:2379'],
    ['https://10.0.0.1', '10.0.0.1:2379'],
    ['http://[fd00::1]:2380', '[fd00::1]:2379'],
    ['http://pd.example.com:2379/pd', 'pd.example.com:2379'],
    ['HTTP://pd-0.pd-peer.other.svc:2379', 'pd-0.pd-peer.other.svc:2379'],
  ])('%s is taken as tidb-operator takes it (its host, on the client port, in the TiKV script)', (address, pd) => {
    const objects = render(v2([address]));
    expect(find(objects, 'ConfigMap', /^demo-tikv/).data['startup-script']).toContain(`--pd=${pd}`);
  });

  test.each([
    [
      'pd-a:2379',
      'expected a PD client URL such as http://pd.example.com:2379, got "pd-a:2379" (tidb-operator takes http:// and https:// URLs only)',
    ],
    ['ftp://pd:2379', 'tidb-operator takes http:// and https:// URLs only'],
    ['http://', '"http://" has no host name or address'],
    ['http://:2379', 'has no host name or address'],
    ['http://pd:99999', 'has port "99999"; expected 1 to 65535'],
    ['http://pd a:2379', 'contains white space, which the start scripts cannot carry'],
    ['http://pd:2379/$(reboot)', 'contains a $ (the shell would expand it)'],
    ['http://${PD_DOMAIN}:2379', 'contains a $ (the shell would expand it)'],
    ['http://pd"x:2379', 'contains a quote or backslash'],
    ['http://pd{x}:2379', 'has no host name or address'],
  ])('%s is refused with the reason', (address, message) => {
    const errors = renderErrors(v2([address]));
    expect(errors).toContain('spec.pdAddresses[0] (line');
    expect(errors).toContain(message);
  });
});

describe('acrossK8s, clusterDomain, spec.cluster, pdAddresses', () => {
  test('acrossK8s: PD is named by its FQDN; TiKV and TiDB ask discovery for PD endpoints', () => {
    const objects = render(cluster({ acrossK8s: true }));
    expect(script(objects, 'pd')).toMatch(/--name=\$\{?domain\}?/);
    expect(script(objects, 'tikv')).toContain('/verify/');
    expect(script(objects, 'tidb')).toContain('/verify/');
    expect(script(render(cluster()), 'tikv')).not.toContain('/verify/');
  });

  test('clusterDomain is appended to Pod FQDNs', () => {
    const objects = render(cluster({ clusterDomain: 'cluster.local', startScriptVersion: 'v2' }));
    expect(script(objects, 'tikv')).toContain('TIKV_DOMAIN=${TIKV_POD_NAME}.demo-tikv-peer.ns.svc.cluster.local');
    expect(script(objects, 'pd')).toContain('demo-pd-peer.ns.svc.cluster.local');
  });

  test("a heterogeneous cluster without PD points TiKV and TiDB at the other cluster's PD", () => {
    const objects = render(cluster({ pd: undefined, cluster: { name: 'base' } }));
    expect(objects.filter((o) => o.metadata.name.startsWith('demo-pd'))).toEqual([]);
    expect(script(objects, 'tikv')).toContain('--pd=http://base-pd:2379');
    expect(script(objects, 'tidb')).toContain('--path=base-pd:2379');
  });

  test('with its own PD, spec.cluster does not redirect TiKV', () => {
    expect(script(render(cluster({ cluster: { name: 'base' } })), 'tikv')).toContain('--pd=http://${CLUSTER_NAME}-pd:2379');
  });

  test('pdAddresses reach the v2 scripts with PreferPDAddressesOverDiscovery', () => {
    const objects = render(
      cluster({
        startScriptVersion: 'v2',
        startScriptV2FeatureFlags: ['PreferPDAddressesOverDiscovery'],
        pdAddresses: ['http://pd-a.example:2379', 'http://pd-b.example:2379'],
      }),
    );
    expect(script(objects, 'pd')).toContain('--join=http://pd-a.example:2380,http://pd-b.example:2380');
    expect(script(objects, 'tikv')).toContain('--pd=pd-a.example:2379,pd-b.example:2379');
  });

  test('bad values are refused with their path', () => {
    expect(renderErrors(cluster({ tikv: { replicas: 1, logTailer: { sleepTimeSeconds: 5 } } }))).toContain(
      'spec.tikv.logTailer.sleepTimeSeconds (line 15): only read by native sidecars: set spec.tikv.logTailer.useSidecar: true',
    );
    expect(renderErrors(cluster({ pdAddresses: ['pd-a:2379'] }))).toContain(
      'spec.pdAddresses[0] (line 19): expected a PD client URL such as http://pd.example.com:2379, got "pd-a:2379"',
    );
  });
});

describe('storage classes', () => {
  test('an explicit storageClassName "" is kept: it asks for no class, unlike an unset one', () => {
    const objects = render(cluster({ pd: { replicas: 1, requests: { storage: '1Gi' }, storageClassName: '' } }));
    expect(find(objects, 'StatefulSet', 'demo-pd').spec.volumeClaimTemplates[0].spec.storageClassName).toBe('');
    expect(find(objects, 'StatefulSet', 'demo-tikv').spec.volumeClaimTemplates[0].spec).not.toHaveProperty('storageClassName');
  });
});

describe('configUpdateStrategy: InPlace or RollingUpdate, nothing else', () => {
  test.each([
    [{ configUpdateStrategy: 'Sometimes' }, 'spec.configUpdateStrategy (line 18): expected InPlace or RollingUpdate, got "Sometimes"'],
    [
      { configUpdateStrategy: 'rollingupdate' },
      'spec.configUpdateStrategy (line 18): expected InPlace or RollingUpdate, got "rollingupdate"; did you mean RollingUpdate?',
    ],
    [
      { tikv: { replicas: 3, requests: { storage: '1Gi' }, configUpdateStrategy: 'RollingUpdte' } },
      'spec.tikv.configUpdateStrategy (line 16): expected InPlace or RollingUpdate, got "RollingUpdte"; did you mean RollingUpdate?',
    ],
  ])('%j is refused with a did-you-mean', (spec, message) => {
    const errors = renderErrors(cluster(spec));
    expect(errors).toContain(message);
    // Once, though every component reads the cluster-wide value.
    expect(errors.split('\n')).toHaveLength(1);
  });

  test('each valid value renders', () => {
    for (const v of ['InPlace', 'RollingUpdate']) expect(() => render(cluster({ configUpdateStrategy: v }))).not.toThrow();
  });

  test('an unknown key of a megabyte gets no did-you-mean search, only the error', () => {
    const key = `x${'a'.repeat(1_000_000)}`;
    const errors = renderErrors(cluster({ pd: { replicas: 3, requests: { storage: '1Gi' }, [key]: 1 } }));
    expect(errors).toMatch(/spec\.pd\.xa{10}.* \(line \d+\): unknown field\n?/);
    expect(errors).not.toContain('did you mean');
  });
});
