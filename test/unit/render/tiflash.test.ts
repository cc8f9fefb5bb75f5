/**
 * TiFlash: the peer Service, ConfigMap (both TOML templates, per version and mode) and StatefulSet
 * (init container or mount-cm mode, log sidecars, TLS, storage claims), and the input it refuses.
 */
import { readFileSync } from 'fs';
import { parseToml, tomlFloat } from '../../../src/base/toml';
import { tiflashVersion } from '../../../src/tidbcluster/tiflash';
import { cluster, container, env, find, render, renderErrors, type Obj } from '../../support/render';
import { operatorExample } from '../../../scripts/lib/upstream';

const claim = (storage: string, extra: Obj = {}) => ({ resources: { requests: { storage } }, ...extra });
const TIFLASH = { replicas: 2, storageClaims: [claim('100Gi')] };
const MOUNT_CM = { 'tiflash.tidb.pingcap.com/mount-cm-in-tiflash-container': 'true' };

/** A cluster with TiFlash; `tiflash` fields override the default TiFlash spec, `spec` the cluster's. */
function withFlash(tiflash: Obj = {}, spec: Obj = {}, metadata: Obj = {}): Obj {
  return cluster({ tiflash: { ...TIFLASH, ...tiflash }, ...spec }, metadata);
}

function flash(input: Obj) {
  const objects = render(input);
  const sts = find(objects, 'StatefulSet', 'demo-tiflash');
  const cm = find(objects, 'ConfigMap', /^demo-tiflash/);
  return {
    objects,
    sts,
    pod: sts.spec.template.spec,
    cm,
    config: parseToml(cm.data['config_templ.toml']) as Obj,
    proxy: parseToml(cm.data['proxy_templ.toml']) as Obj,
    main: container(sts, 'tiflash'),
  };
}

/** What the operator writes for the default cluster `demo` in namespace `ns` from v7.1.0 on. */
const POD_HOST = 'demo-tiflash-POD_NUM.demo-tiflash-peer.ns.svc';
const CURRENT_CONFIG = {
  tmp_path: '/data0/tmp',
  flash: {
    service_addr: '0.0.0.0:3930',
    tidb_status_addr: 'demo-tidb.ns.svc:10080',
    flash_cluster: { log: '/data0/logs/flash_cluster_manager.log' },
    proxy: { addr: '0.0.0.0:20170', 'advertise-addr': `${POD_HOST}:20170`, config: '/data0/proxy.toml', 'data-dir': '/data0/proxy' },
  },
  logger: { errorlog: '/data0/logs/error.log', log: '/data0/logs/server.log' },
  raft: { pd_addr: 'demo-pd.ns.svc:2379' },
  storage: { main: { dir: ['/data0/db'] }, raft: { dir: ['/data0/kvstore'] } },
};
const CURRENT_PROXY = {
  'log-level': 'info',
  server: { 'advertise-status-addr': `${POD_HOST}:20292`, 'engine-addr': `${POD_HOST}:3930`, 'status-addr': '0.0.0.0:20292' },
};
const TLS_COMMON = {
  ca_path: '/var/lib/tiflash-tls/ca.crt',
  cert_path: '/var/lib/tiflash-tls/tls.crt',
  key_path: '/var/lib/tiflash-tls/tls.key',
};
const TLS_PROXY = {
  'ca-path': '/var/lib/tiflash-tls/ca.crt',
  'cert-path': '/var/lib/tiflash-tls/tls.crt',
  'key-path': '/var/lib/tiflash-tls/tls.key',
};

describe('TiFlash objects', () => {
  test('peer Service: four ports, no used-by label, publishes unready pods', () => {
    const svc = find(render(withFlash()), 'Service', 'demo-tiflash-peer');
    expect(svc.metadata.labels).toEqual({
      'app.kubernetes.io/name': 'tidb-cluster',
      'app.kubernetes.io/managed-by': 'tidb-operator',
      'app.kubernetes.io/instance': 'demo',
      'app.kubernetes.io/component': 'tiflash',
    });
    expect(svc.spec).toEqual({
      clusterIP: 'None',
      ports: [
        { name: 'tiflash', port: 3930, targetPort: 3930, protocol: 'TCP' },
        { name: 'proxy', port: 20170, targetPort: 20170, protocol: 'TCP' },
        { name: 'metrics', port: 8234, targetPort: 8234, protocol: 'TCP' },
        { name: 'proxy-metrics', port: 20292, targetPort: 20292, protocol: 'TCP' },
      ],
      selector: svc.metadata.labels,
      publishNotReadyAddresses: true,
    });
  });

  test('StatefulSet: peer service, data0 claim, desired replicas as an annotation only', () => {
    const { sts, pod, main } = flash(withFlash({ storageClaims: [claim('100Gi', { storageClassName: 'local-storage' })] }));
    expect(sts.spec.serviceName).toBe('demo-tiflash-peer');
    expect(sts.spec.replicas).toBeUndefined();
    expect(sts.spec.updateStrategy).toBeUndefined();
    expect(JSON.parse(sts.metadata.annotations['tidb-gitops.io/settings']).updateStrategy).toBe('RollingUpdate');
    expect(sts.metadata.annotations['tidb-gitops.io/replicas']).toBe('2');
    expect(sts.spec.volumeClaimTemplates).toEqual([
      {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: 'data0', creationTimestamp: null },
        spec: {
          accessModes: ['ReadWriteOnce'],
          storageClassName: 'local-storage',
          resources: { requests: { storage: '100Gi' } },
          volumeMode: 'Filesystem',
        },
        status: { phase: 'Pending' },
      },
    ]);
    expect(pod.containers.map((c: Obj) => c.name)).toEqual(['tiflash', 'serverlog', 'errorlog', 'clusterlog']);
    expect(pod.initContainers.map((c: Obj) => c.name)).toEqual(['init']);
    expect(main.image).toBe('pingcap/tiflash:v8.5.7');
    expect(main.command.slice(0, 2)).toEqual(['/bin/sh', '-c']);
    expect(main.securityContext).toEqual({ privileged: false });
    expect(main.ports.map((p: Obj) => [p.name, p.containerPort])).toEqual([
      ['tiflash', 3930],
      ['proxy', 20170],
      ['tcp', 9000],
      ['http', 8123],
      ['internal', 9009],
      ['metrics', 8234],
    ]);
    expect(main.volumeMounts).toEqual([
      { name: 'annotations', mountPath: '/etc/podinfo', readOnly: true },
      { name: 'data0', mountPath: '/data0' },
    ]);
    expect(main.readinessProbe).toBeUndefined();
    expect(pod.volumes).toContainEqual({ name: 'config', configMap: { name: 'demo-tiflash' } });
    expect(sts.spec.template.metadata.annotations).toEqual({
      'prometheus.io/scrape': 'true',
      'prometheus.io/path': '/metrics',
      'prometheus.io/port': '8234',
      'tiflash.proxy.prometheus.io/port': '20292',
    });
  });

  test('env: TZ defaults to UTC (not empty as for TiKV), CAPACITY from limits.storage, user env after', () => {
    const main = flash(
      withFlash({
        limits: { storage: '1536Mi', cpu: '2' },
        env: [
          { name: 'TZ', value: 'X' },
          { name: 'EXTRA', value: '1' },
        ],
      }),
    ).main;
    expect(main.env).toEqual([
      { name: 'NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
      { name: 'CLUSTER_NAME', value: 'demo' },
      { name: 'HEADLESS_SERVICE_NAME', value: 'demo-tiflash-peer' },
      { name: 'CAPACITY', value: '1536MB' },
      { name: 'TZ', value: 'UTC' },
      { name: 'EXTRA', value: '1' },
    ]);
    expect(main.resources).toEqual({ limits: { cpu: '2' } });
    expect(env(flash(withFlash({}, { timezone: 'Asia/Shanghai' })).main).TZ).toBe('Asia/Shanghai');
  });

  test('several storage claims: data0..dataN volumes and mounts, one main dir each; an empty class is kept', () => {
    const { sts, main, config } = flash(withFlash({ storageClaims: [claim('100Gi'), claim('50Gi', { storageClassName: '' })] }));
    expect(
      sts.spec.volumeClaimTemplates.map((v: Obj) => [v.metadata.name, v.spec.resources.requests.storage, v.spec.storageClassName]),
    ).toEqual([
      ['data0', '100Gi', undefined],
      ['data1', '50Gi', ''],
    ]);
    expect(main.volumeMounts.map((m: Obj) => m.mountPath)).toEqual(['/etc/podinfo', '/data0', '/data1']);
    expect(config.storage.main.dir).toEqual(['/data0/db', '/data1/db']);
    expect(config.storage.raft.dir).toEqual(['/data0/kvstore']);
  });

  test('init container: helper image, POD_NAME, data0 and the whole ConfigMap, initializer resources', () => {
    const { pod } = flash(
      withFlash(
        { initializer: { requests: { cpu: '100m', storage: '1Gi' }, securityContext: { runAsUser: 0 } } },
        { helper: { image: 'alpine:3.16.0', imagePullPolicy: 'Always' } },
      ),
    );
    const init = pod.initContainers[0];
    expect(init).toMatchObject({
      name: 'init',
      image: 'alpine:3.16.0',
      imagePullPolicy: 'Always',
      env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
      volumeMounts: [
        { name: 'data0', mountPath: '/data0' },
        { name: 'config', mountPath: '/etc/tiflash', readOnly: true },
      ],
      resources: { requests: { cpu: '100m' } },
      securityContext: { runAsUser: 0 },
    });
    expect(init.command.slice(0, 2)).toEqual(['sh', '-c']);
    expect(init.command[2]).toContain('/etc/tiflash/config_templ.toml >/data0/config.toml');
  });

  test('log sidecars follow the three log files on data0, with logTailer resources and the helper image', () => {
    const { pod } = flash(
      withFlash(
        { logTailer: { limits: { cpu: '100m' }, securityContext: { runAsNonRoot: true } } },
        { helper: { image: 'alpine:3.16.0' } },
      ),
    );
    const files = {
      serverlog: '/data0/logs/server.log',
      errorlog: '/data0/logs/error.log',
      clusterlog: '/data0/logs/flash_cluster_manager.log',
    };
    for (const [name, file] of Object.entries(files)) {
      expect(pod.containers.find((c: Obj) => c.name === name)).toEqual({
        name,
        image: 'alpine:3.16.0',
        imagePullPolicy: 'IfNotPresent',
        command: ['sh', '-c', `touch ${file}; tail -n0 -F ${file};`],
        volumeMounts: [{ name: 'data0', mountPath: '/data0' }],
        resources: { limits: { cpu: '100m' } },
        securityContext: { runAsNonRoot: true },
      });
    }
  });

  test('log files moved in the config move the sidecars (and their mounts) too', () => {
    const config = { config: '[logger]\nlog = "/data1/logs/tiflash.log"\n[flash.flash_cluster]\nlog = "/logs/cluster.log"\n' };
    const { pod, config: toml } = flash(
      withFlash({
        config,
        storageClaims: [claim('10Gi'), claim('10Gi')],
        additionalVolumes: [{ name: 'logs', emptyDir: {} }],
        additionalVolumeMounts: [{ name: 'logs', mountPath: '/logs' }],
      }),
    );
    const serverlog = pod.containers.find((c: Obj) => c.name === 'serverlog');
    expect(serverlog.command[2]).toBe('touch /data1/logs/tiflash.log; tail -n0 -F /data1/logs/tiflash.log;');
    expect(serverlog.volumeMounts).toEqual([{ name: 'data1', mountPath: '/data1' }]);
    expect(pod.containers.find((c: Obj) => c.name === 'clusterlog').volumeMounts).toEqual([{ name: 'logs', mountPath: '/logs' }]);
    expect(toml.logger).toEqual({ log: '/data1/logs/tiflash.log', errorlog: '/data0/logs/error.log' });
  });

  test('hostNetwork adds POD_NAME from the pod name', () => {
    const { pod, main } = flash(withFlash({ hostNetwork: true }));
    expect(pod.hostNetwork).toBe(true);
    expect(pod.dnsPolicy).toBe('ClusterFirstWithHostNet');
    expect(main.env).toContainEqual({ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } });
  });

  test('sysctl init: a privileged `sysctl` container before `init`, then the user init containers', () => {
    const { pod } = flash(
      withFlash({
        annotations: { 'tidb.pingcap.com/sysctl-init': 'true' },
        podSecurityContext: { sysctls: [{ name: 'net.core.somaxconn', value: '32768' }] },
        initContainers: [{ name: 'mine', image: 'busybox' }],
      }),
    );
    expect(pod.initContainers.map((c: Obj) => c.name)).toEqual(['sysctl', 'init', 'mine']);
    expect(pod.initContainers[0]).toMatchObject({
      command: ['sh', '-c', 'sysctl -w net.core.somaxconn=32768'],
      securityContext: { privileged: true },
    });
    expect(pod.securityContext).toEqual({ sysctls: [] });
  });

  test('privileged, securityContext, additional containers, volumes and mounts', () => {
    const { pod, main } = flash(
      withFlash({
        privileged: true,
        additionalContainers: [
          { name: 'tiflash', env: [{ name: 'X', value: '1' }] },
          { name: 'extra', image: 'busybox' },
        ],
        additionalVolumes: [{ name: 'scratch', emptyDir: {} }],
        additionalVolumeMounts: [{ name: 'scratch', mountPath: '/scratch' }],
      }),
    );
    expect(main.securityContext).toEqual({ privileged: true });
    expect(main.env).toContainEqual({ name: 'X', value: '1' });
    expect(pod.containers.map((c: Obj) => c.name)).toEqual(['tiflash', 'serverlog', 'errorlog', 'clusterlog', 'extra']);
    expect(main.volumeMounts.map((m: Obj) => m.name)).toEqual(['annotations', 'data0', 'scratch']);
    expect(pod.volumes.map((v: Obj) => v.name)).toEqual(['annotations', 'config', 'scratch']);
    const own = flash(withFlash({ privileged: true, securityContext: { runAsUser: 1000 } })).main;
    expect(own.securityContext).toEqual({ runAsUser: 1000 });
  });

  test('operation settings for the controller', () => {
    const { sts } = flash(
      withFlash({ maxFailoverCount: 1, recoverFailover: true, failover: { recoverByUID: 'u-1' }, scalePolicy: { scaleInParallelism: 2 } }),
    );
    expect(JSON.parse(sts.metadata.annotations['tidb-gitops.io/settings'])).toMatchObject({
      maxFailoverCount: 1,
      recoverFailover: true,
      recoverByUID: 'u-1',
      scaleInParallelism: 2,
      scaleOutParallelism: 1,
    });
  });

  test('configUpdateStrategy RollingUpdate: a hashed ConfigMap name, referenced by the config volume', () => {
    const { cm, pod } = flash(withFlash({ configUpdateStrategy: 'RollingUpdate' }));
    expect(cm.metadata.name).toMatch(/^demo-tiflash-[0-9a-f]{7}$/);
    expect(pod.volumes).toContainEqual({ name: 'config', configMap: { name: cm.metadata.name } });
  });

  test('the operator example renders (with a namespace)', () => {
    const text = readFileSync(operatorExample('tiflash'), 'utf8');
    const objects = render(text, { namespace: 'tidb' });
    const sts = find(objects, 'StatefulSet', 'demo-tiflash');
    expect(sts.spec.volumeClaimTemplates[0].spec.storageClassName).toBe('local-storage');
    expect(container(sts, 'serverlog').image).toBe('alpine:3.16.0');
    expect(parseToml(find(objects, 'ConfigMap', /^demo-tiflash-/).data['config_templ.toml'])).toMatchObject({
      raft: { pd_addr: 'demo-pd.tidb.svc:2379' },
    });
  });
});

describe('TiFlash config (v5.4.0 and newer)', () => {
  test('defaults only: paths, addresses, logs; from v7.1.0 no tcp/http ports', () => {
    const { config, proxy } = flash(withFlash());
    expect(config).toEqual(CURRENT_CONFIG);
    expect(proxy).toEqual(CURRENT_PROXY);
  });

  test('before v7.1.0 (or with the keep-ports annotation) the tcp/http ports are set', () => {
    expect(flash(withFlash({ version: 'v7.0.0' })).config).toEqual({ ...CURRENT_CONFIG, tcp_port: 9000, http_port: 8123 });
    const kept = flash(withFlash({}, {}, { annotations: { 'tidb.pingcap.com/tiflash-710-keep-ports': '' } })).config;
    expect(kept).toMatchObject({ tcp_port: 9000, http_port: 8123 });
  });

  test('TLS: certificate paths in both files; before v7.1.0 the secure ports replace the plain ones', () => {
    const tls = { tlsCluster: { enabled: true } };
    const v8 = flash(withFlash({}, tls));
    expect(v8.config).toEqual({ ...CURRENT_CONFIG, security: TLS_COMMON });
    expect(v8.proxy).toEqual({ ...CURRENT_PROXY, security: TLS_PROXY });
    const v7 = flash(withFlash({ version: 'v7.0.0', config: { config: 'tcp_port = 1\nhttp_port = 2\n' } }, tls));
    expect(v7.config).toEqual({ ...CURRENT_CONFIG, security: TLS_COMMON, tcp_port_secure: 9000, https_port: 8123 });
  });

  test("TLS: TiFlash's cert_allowed_cn also goes to the proxy's cert-allowed-cn, unless that is set", () => {
    const tls = { tlsCluster: { enabled: true } };
    const copied = flash(withFlash({ config: { config: '[security]\ncert_allowed_cn = ["TiDB"]\n' } }, tls));
    expect(copied.config.security).toEqual({ ...TLS_COMMON, cert_allowed_cn: ['TiDB'] });
    expect(copied.proxy.security).toEqual({ ...TLS_PROXY, 'cert-allowed-cn': ['TiDB'] });
    const own = flash(
      withFlash({ config: { config: '[security]\ncert_allowed_cn = ["TiDB"]\n', proxy: '[security]\ncert-allowed-cn = ["x"]\n' } }, tls),
    );
    expect(own.proxy.security['cert-allowed-cn']).toEqual(['x']);
    // Without TLS the user's keys are left alone and nothing is copied.
    expect(flash(withFlash({ config: { config: '[security]\ncert_allowed_cn = ["TiDB"]\n' } })).proxy.security).toBeUndefined();
  });

  test("the user's keys win over the defaults; either form (TOML text or mapping) per file", () => {
    const { config, proxy } = flash(
      withFlash({
        config: {
          config:
            '[flash]\nservice_addr = "0.0.0.0:4000"\n[raft]\npd_addr = "pd.elsewhere:2379"\n[profiles.default]\nmax_memory_usage = 0\n',
          proxy: { 'log-level': 'debug', server: { 'status-addr': '0.0.0.0:1' } },
        },
      }),
    );
    expect(config.flash.service_addr).toBe('0.0.0.0:4000');
    expect(config.raft).toEqual({ pd_addr: 'pd.elsewhere:2379' });
    expect(config.profiles).toEqual({ default: { max_memory_usage: 0 } });
    expect(proxy['log-level']).toBe('debug');
    expect(proxy.server['status-addr']).toBe('0.0.0.0:1');
    expect(proxy.server['engine-addr']).toBe(`${POD_HOST}:3930`);
  });

  test('an old-style path or raft.kvstore_path means the user laid out the disks', () => {
    const old = flash(withFlash({ config: { config: 'path = "/data0/db"\n[raft]\nkvstore_path = "/data0/kv"\n' } })).config;
    expect(old.storage).toBeUndefined();
    expect(old.path).toBe('/data0/db');
    const main = flash(withFlash({ config: { config: { storage: { main: { dir: ['/data0/x'] } } } } })).config;
    expect(main.storage).toEqual({ main: { dir: ['/data0/x'] }, raft: { dir: ['/data0/kvstore'] } });
  });

  test('mount-cm mode: no per-pod addresses in the templates, the ConfigMap mounted into tiflash, no init container', () => {
    const { pod, main, config, proxy } = flash(withFlash({ annotations: MOUNT_CM }, { tlsCluster: { enabled: true } }));
    expect(pod.initContainers).toBeUndefined();
    expect(main.volumeMounts).toEqual([
      { name: 'annotations', mountPath: '/etc/podinfo', readOnly: true },
      { name: 'data0', mountPath: '/data0' },
      { name: 'tiflash-tls', mountPath: '/var/lib/tiflash-tls', readOnly: true },
      { name: 'config', mountPath: '/etc/tiflash', readOnly: true },
    ]);
    expect(config.flash).toEqual({
      tidb_status_addr: 'demo-tidb.ns.svc:10080',
      flash_cluster: { log: '/data0/logs/flash_cluster_manager.log' },
      proxy: { addr: '0.0.0.0:20170', config: '/etc/tiflash/proxy_templ.toml', 'data-dir': '/data0/proxy' },
    });
    expect(proxy).toEqual({ 'log-level': 'info', server: { 'status-addr': '0.0.0.0:20292' }, security: TLS_PROXY });
    expect(main.command[2]).toContain('--config-file /etc/tiflash/config_templ.toml');
    expect(main.command[2]).toContain('PD_ADDRESS="https://${CLUSTER_NAME}-pd:2379"');
  });

  test('mount-cm is read from spec.tiflash.annotations only, as the operator reads it', () => {
    const { pod, sts } = flash(withFlash({}, { annotations: MOUNT_CM }));
    expect(pod.initContainers.map((c: Obj) => c.name)).toEqual(['init']);
    expect(sts.spec.template.metadata.annotations).toMatchObject(MOUNT_CM);
  });

  test('start script v2 in init mode: the common header, then tiflash from /data0/config.toml', () => {
    const { main } = flash(withFlash({}, { startScriptVersion: 'v2' }));
    expect(main.command[2]).toMatch(/^#!\/bin\/sh\n/);
    expect(main.command[2]).toContain('exec /tiflash/tiflash server ${ARGS}');
    expect(main.command[2]).toContain('ARGS="--config-file /data0/config.toml"');
  });

  test('TLS: the tiflash-tls secret is mounted into tiflash only', () => {
    const { pod, main } = flash(withFlash({}, { tlsCluster: { enabled: true } }));
    expect(pod.volumes).toContainEqual({ name: 'tiflash-tls', secret: { secretName: 'demo-tiflash-cluster-secret' } });
    expect(main.volumeMounts).toContainEqual({ name: 'tiflash-tls', mountPath: '/var/lib/tiflash-tls', readOnly: true });
    expect(pod.initContainers[0].volumeMounts.map((m: Obj) => m.name)).toEqual(['data0', 'config']);
  });

  test('acrossK8s: PD_ADDR in the template, filled by the init script; with discovery mTLS the init container gets the certificate', () => {
    const across = flash(withFlash({}, { acrossK8s: true }));
    expect(across.config.raft).toEqual({ pd_addr: 'PD_ADDR' });
    expect(across.pod.initContainers[0].command[2]).toContain('sed -i "s|PD_ADDR|${result}|g" /data0/config.toml');
    // The busybox helper has no curl: the call over mTLS needs a helper image that has it.
    const mtls = flash(
      withFlash(
        {},
        { acrossK8s: true, helper: { image: 'curlimages/curl:8.11.0' }, tlsCluster: { enabled: true, enableDiscoveryMTLS: true } },
      ),
    );
    const init = mtls.pod.initContainers[0];
    expect(init.image).toBe('curlimages/curl:8.11.0');
    expect(init.volumeMounts).toContainEqual({ name: 'tiflash-tls', mountPath: '/var/lib/tiflash-tls', readOnly: true });
    expect(init.command[2]).toContain('--cert /var/lib/tiflash-tls/tls.crt');
    expect(init.command[2]).toContain('pd_url="https://demo-pd:2379"');
  });

  test('joined cluster (spec.cluster) without its own PD and TiDB: their addresses', () => {
    const ref = { cluster: { name: 'main', namespace: 'other', clusterDomain: 'c.local' }, pd: undefined, tidb: undefined };
    const hetero = flash(withFlash({}, ref)).config;
    expect(hetero.raft).toEqual({ pd_addr: 'main-pd.other.svc.c.local:2379' });
    expect(hetero.flash.tidb_status_addr).toBe('main-tidb.other.svc.c.local:10080');
    // Across Kubernetes clusters: discovery finds PD, TiDB is reached through its headless Service.
    const across = flash(withFlash({}, { ...ref, acrossK8s: true })).config;
    expect(across.raft).toEqual({ pd_addr: 'PD_ADDR' });
    expect(across.flash.tidb_status_addr).toBe('main-tidb-peer.other.svc.c.local:10080');
    // A TiDB of its own is preferred; the namespace defaults to this cluster's.
    const ownTidb = flash(withFlash({}, { cluster: { name: 'main' }, pd: undefined })).config;
    expect(ownTidb.flash.tidb_status_addr).toBe('demo-tidb.ns.svc:10080');
    expect(ownTidb.raft.pd_addr).toBe('main-pd.ns.svc:2379');
  });

  test('pdAddresses replace the PD address only with v2 and PreferPDAddressesOverDiscovery', () => {
    const pdAddresses = ['http://pd-a.example:2379', 'http://pd-b.example:2379'];
    const flag = { startScriptV2FeatureFlags: ['PreferPDAddressesOverDiscovery'], pdAddresses };
    expect(flash(withFlash({}, { ...flag, startScriptVersion: 'v2' })).config.raft.pd_addr).toBe(
      'http://pd-a.example:2379,http://pd-b.example:2379',
    );
    expect(flash(withFlash({}, { ...flag, startScriptVersion: 'v1' })).config.raft.pd_addr).toBe('demo-pd.ns.svc:2379');
    expect(flash(withFlash({}, { pdAddresses, startScriptVersion: 'v2' })).config.raft.pd_addr).toBe('demo-pd.ns.svc:2379');
  });

  test('preferIPv6: IPv6 wildcards, listen_host and the metrics port; a dual-stack Service', () => {
    const { objects, config, proxy } = flash(withFlash({}, { preferIPv6: true }));
    expect(config.flash.service_addr).toBe('[::]:3930');
    expect(config.flash.proxy.addr).toBe('[::]:20170');
    expect(config.listen_host).toBe('::');
    expect(config.status).toEqual({ metrics_port: 8234 });
    expect(proxy.server['status-addr']).toBe('[::]:20292');
    expect(find(objects, 'Service', 'demo-tiflash-peer').spec.ipFamilyPolicy).toBe('PreferDualStack');
  });

  test('clusterDomain: in the pods own addresses (PD and TiDB are addressed without it, as by the operator)', () => {
    const { config, proxy } = flash(withFlash({}, { clusterDomain: 'cluster.local' }));
    expect(config.flash.proxy['advertise-addr']).toBe('demo-tiflash-POD_NUM.demo-tiflash-peer.ns.svc.cluster.local:20170');
    expect(proxy.server['engine-addr']).toBe('demo-tiflash-POD_NUM.demo-tiflash-peer.ns.svc.cluster.local:3930');
    expect(config.raft.pd_addr).toBe('demo-pd.ns.svc:2379');
  });
});

describe('TiFlash config before v5.4.0 (legacy defaults)', () => {
  const legacyBase = (tls: boolean) => ({
    tmp_path: '/data0/tmp',
    display_name: 'TiFlash',
    default_profile: 'default',
    path: '/data0/db',
    path_realtime_mode: false,
    mark_cache_size: 5368709120,
    minmax_index_cache_size: 5368709120,
    ...(tls ? { tcp_port_secure: 9000, https_port: 8123 } : { tcp_port: 9000, http_port: 8123 }),
    interserver_http_port: 9009,
    listen_host: '0.0.0.0',
    application: { runAsDaemon: true },
    flash: {
      compact_log_min_period: 200,
      overlap_threshold: tomlFloat(0.6),
      service_addr: '0.0.0.0:3930',
      tidb_status_addr: 'demo-tidb.ns.svc:10080',
      flash_cluster: {
        cluster_manager_path: '/tiflash/flash_cluster_manager',
        log: '/data0/logs/flash_cluster_manager.log',
        master_ttl: 60,
        refresh_interval: 20,
        update_rule_interval: 10,
      },
      proxy: { addr: '0.0.0.0:20170', 'advertise-addr': `${POD_HOST}:20170`, config: '/data0/proxy.toml', 'data-dir': '/data0/proxy' },
    },
    logger: { count: 10, errorlog: '/data0/logs/error.log', level: 'information', log: '/data0/logs/server.log', size: '100M' },
    profiles: {
      default: { load_balancing: 'random', max_memory_usage: 10000000000, use_uncompressed_cache: 0 },
      readonly: { readonly: 1 },
    },
    quotas: { default: { interval: { duration: 3600, errors: 0, execution_time: 0, queries: 0, read_rows: 0, result_rows: 0 } } },
    raft: { kvstore_path: '/data0/kvstore', pd_addr: 'demo-pd.ns.svc:2379', storage_engine: 'dt' },
    status: { metrics_port: 8234 },
    users: {
      default: { networks: { ip: '::/0' }, password: '', profile: 'default', quota: 'default' },
      readonly: { networks: { ip: '::/0' }, password: '', profile: 'readonly', quota: 'default' },
    },
    ...(tls && { security: TLS_COMMON }),
  });

  test('v5.3.0: the ClickHouse-era defaults, plain ports without TLS', () => {
    const { config, proxy } = flash(withFlash({ version: 'v5.3.0' }));
    expect(config).toEqual(legacyBase(false));
    expect(cmText(withFlash({ version: 'v5.3.0' }))).toContain('overlap_threshold = 0.6');
    expect(proxy).toEqual(CURRENT_PROXY);
  });

  test('v5.3.0 with TLS: secure ports only, certificate paths in both files', () => {
    const { config, proxy } = flash(withFlash({ version: 'v5.3.0' }, { tlsCluster: { enabled: true } }));
    expect(config).toEqual(legacyBase(true));
    expect(proxy).toEqual({ ...CURRENT_PROXY, security: TLS_PROXY });
  });

  test('several claims: one comma-separated path', () => {
    const { config } = flash(withFlash({ version: 'v4.0.9', storageClaims: [claim('1Gi'), claim('1Gi')] }));
    expect(config.path).toBe('/data0/db,/data1/db');
    expect(config.storage).toBeUndefined();
  });

  test('which tags count as v5.4.0 or newer', () => {
    const at = (tag: string) => tiflashVersion(`pingcap/tiflash:${tag}`);
    expect(at('v5.4.0')).toEqual({ atLeast540: true, below710: true });
    expect(at('v5.4.0-rc.1')).toEqual({ atLeast540: true, below710: true });
    expect(at('v7.1')).toEqual({ atLeast540: true, below710: false });
    expect(at('nightly')).toEqual({ atLeast540: true, below710: false });
    expect(at('v5.3.9')).toEqual({ atLeast540: false, below710: true });
    // A tag that is no version gets the legacy defaults, as with the operator.
    expect(at('my-build')).toEqual({ atLeast540: false, below710: false });
    expect(tiflashVersion('pingcap/tiflash')).toEqual({ atLeast540: true, below710: false });
  });
});

/** The input's error messages without file, document and line, one per line. */
function errorsOf(input: Obj): string {
  return renderErrors(input)
    .replace(/^test\.yaml: document 1: /gm, '')
    .replace(/ \(line \d+\)/g, '');
}

function cmText(input: Obj): string {
  return find(render(input), 'ConfigMap', /^demo-tiflash/).data['config_templ.toml'];
}

describe('TiFlash input it refuses', () => {
  test('no storage claim, or a claim without a size', () => {
    expect(errorsOf(withFlash({ storageClaims: [] }))).toContain(
      'spec.tiflash.storageClaims: at least one storage claim is required: TiFlash keeps its data, metadata and logs on the first one (data0)',
    );
    expect(errorsOf(withFlash({ storageClaims: [claim('1Gi'), { storageClassName: 'x' }] }))).toContain(
      'spec.tiflash.storageClaims[1].resources.requests.storage: required field is missing: the size of volume data1, such as 100Gi',
    );
  });

  test('claim fields the operator ignores', () => {
    const errors = errorsOf(
      withFlash({ storageClaims: [{ resources: { requests: { storage: '1Gi', cpu: '1' }, limits: { storage: '2Gi' } } }] }),
    );
    expect(errors).toContain('spec.tiflash.storageClaims[0].resources.limits: not supported yet: tidb-operator v1 ignores it for TiFlash');
    expect(errors).toContain('spec.tiflash.storageClaims[0].resources.requests.cpu: not supported yet');
  });

  test('fields TiFlash does not take', () => {
    expect(errorsOf(withFlash({ readinessProbe: { type: 'tcp' } }))).toBe(
      'spec.tiflash.readinessProbe: not supported yet: tidb-operator v1 sets no probe on TiFlash, so the field would have no effect; remove it',
    );
    expect(errorsOf(withFlash({ storageClassName: 'x' }))).toContain('spec.tiflash.storageClassName');
    expect(errorsOf(withFlash({ requests: { storage: '10Gi', cpu: '1' } }))).toBe(
      'spec.tiflash.requests.storage: not supported yet: tidb-operator v1 ignores it for TiFlash, whose volumes are sized by storageClaims; remove it',
    );
    expect(errorsOf(withFlash({ logTailer: { sleepTimeSeconds: 5 } }))).toContain(
      'spec.tiflash.logTailer.sleepTimeSeconds: only read by native sidecars',
    );
    expect(errorsOf(withFlash({ volumeAttributesClassName: 'fast' }))).toContain('spec.tiflash.volumeAttributesClassName');
    expect(errorsOf(withFlash({ suspendAction: { suspendStatefulSet: true } }))).toContain('spec.tiflash.suspendAction');
    // The off values are fine.
    expect(() => render(withFlash({ logTailer: { useSidecar: false }, suspendAction: {} }))).not.toThrow();
  });

  test('bad config: invalid TOML, a table the renderer writes into given as a value, a sub-config of the wrong type', () => {
    expect(errorsOf(withFlash({ config: { config: '[flash\n' } }))).toMatch(/^spec\.tiflash\.config\.config: invalid TOML at line 1/);
    expect(errorsOf(withFlash({ config: { config: 'flash = "x"\n', proxy: { server: 1 } } }))).toMatch(
      /spec\.tiflash\.config\.config\.flash: expected a table \(the renderer sets keys inside flash\), got "x"[\s\S]*spec\.tiflash\.config\.proxy\.server: expected a table/,
    );
    expect(errorsOf(withFlash({ config: { config: 3 } }))).toBe(
      'spec.tiflash.config.config: expected a TOML document (a string) or a mapping, got 3',
    );
  });

  test('log files a sidecar could not follow', () => {
    expect(errorsOf(withFlash({ config: { config: { logger: { log: '/var/log/tiflash.log' } } } }))).toContain(
      'spec.tiflash.config.config.logger.log: a log sidecar mounts the volume named by the first directory (var)',
    );
    expect(errorsOf(withFlash({ config: { config: { logger: { errorlog: '/data0/x; rm -rf /' } } } }))).toContain(
      'spec.tiflash.config.config.logger.errorlog: expected an absolute file path',
    );
    expect(errorsOf(withFlash({ config: { config: { logger: { log: '/data1/logs/x.log' } } } }))).toContain('(data1)');
    expect(errorsOf(withFlash({ config: { config: { logger: { log: '/server.log' } } } }))).toBe(
      'spec.tiflash.config.config.logger.log: expected a file in a directory on a volume, such as /data0/logs/server.log, got "/server.log"',
    );
  });

  test('acrossK8s with discovery mTLS in init mode, whose busybox helper has no curl: says what to change', () => {
    const across = { acrossK8s: true, tlsCluster: { enabled: true, enableDiscoveryMTLS: true } };
    expect(errorsOf(withFlash({}, across))).toBe(
      "spec.tlsCluster.enableDiscoveryMTLS: with acrossK8s, TiFlash's init container asks discovery over mTLS with curl, which the helper image busybox:1.26.2 does not have; " +
        'set spec.tiflash.annotations["tiflash.tidb.pingcap.com/mount-cm-in-tiflash-container"]: "true" (TiFlash v5.4.0+ then asks from its own container), or spec.helper.image to an image with sh and curl',
    );
    // Either way out renders: mount-cm mode, or a helper image with curl.
    expect(render(withFlash({ annotations: MOUNT_CM }, across)).length).toBeGreaterThan(0);
    expect(render(withFlash({}, { ...across, helper: { image: 'registry.example.com/tools:1' } })).length).toBeGreaterThan(0);
  });

  test('mount-cm mode needs TiFlash v5.4.0 or newer', () => {
    expect(errorsOf(withFlash({ version: 'v5.3.0', annotations: MOUNT_CM }))).toContain(
      'mount-cm mode needs TiFlash v5.4.0 or newer (image pingcap/tiflash:v5.3.0)',
    );
  });

  test('without a namespace the templates leave it to the init container; mount-cm mode and acrossK8s need one', () => {
    const objects = render(withFlash({}, {}, { namespace: undefined }));
    const templ = find(objects, 'ConfigMap', /^demo-tiflash/).data['config_templ.toml'];
    expect(templ).toContain('tidb_status_addr = "demo-tidb.POD_NAMESPACE.svc:10080"');
    const init = container(find(objects, 'StatefulSet', 'demo-tiflash'), 'init');
    expect(init.env).toContainEqual({ name: 'NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } });
    expect(() => render(withFlash({ annotations: MOUNT_CM }, {}, { namespace: undefined }))).toThrow(
      /metadata.namespace \(line 4\): required with spec.tiflash in mount-cm mode/,
    );
    expect(() => render(withFlash({}, { acrossK8s: true }, { namespace: undefined }))).toThrow(/required with spec.tiflash and acrossK8s/);
    expect(() => render(withFlash({ annotations: MOUNT_CM }, {}, { namespace: undefined }), { namespace: 'given' })).not.toThrow();
  });
});
