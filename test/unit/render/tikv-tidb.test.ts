import { parseToml } from '../../../src/base/toml';
import { cluster, container, env, find, render, renderErrors, tomlOf } from '../../support/render';

describe('TiKV', () => {
  test('peer Service, StatefulSet with volume tikv, privileged false by default, no status port unless asked', () => {
    const objects = render(cluster());
    expect(find(objects, 'Service', 'demo-tikv-peer').spec.ports).toEqual([
      { name: 'peer', port: 20160, targetPort: 20160, protocol: 'TCP' },
    ]);
    const sts = find(objects, 'StatefulSet', 'demo-tikv');
    const tikv = container(sts, 'tikv');
    expect(tikv.securityContext).toEqual({ privileged: false });
    expect(tikv.ports).toEqual([{ name: 'server', containerPort: 20160, protocol: 'TCP' }]);
    expect(tikv.volumeMounts.find((m: any) => m.name === 'tikv').mountPath).toBe('/var/lib/tikv');
    expect(sts.spec.template.metadata.annotations['prometheus.io/port']).toBe('20180');
    const named = container(
      find(render(cluster({ tikv: { replicas: 1, enableNamedStatusPort: true, privileged: true } })), 'StatefulSet', 'demo-tikv'),
      'tikv',
    );
    expect(named.ports[1]).toEqual({ name: 'status', containerPort: 20180, protocol: 'TCP' });
    expect(named.securityContext).toEqual({ privileged: true });
  });

  test.each([
    [undefined, '0'],
    ['100Gi', '100GB'],
    ['1536Mi', '1536MB'],
    ['1T', '953674MB'],
  ])('CAPACITY from limits.storage %s is %s', (limit, capacity) => {
    const tikv = { replicas: 1, ...(limit && { limits: { storage: limit } }) };
    expect(env(container(find(render(cluster({ tikv })), 'StatefulSet', 'demo-tikv'), 'tikv')).CAPACITY).toBe(capacity);
  });

  test('log tailers come before tikv; before v5.0 they follow the old file names', () => {
    const sts = find(
      render(cluster({ tikv: { replicas: 1, separateRocksDBLog: true, separateRaftLog: true } })),
      'StatefulSet',
      'demo-tikv',
    );
    expect(sts.spec.template.spec.containers.map((c: any) => c.name)).toEqual(['rocksdblog', 'raftlog', 'tikv']);
    expect(container(sts, 'rocksdblog').command[2]).toBe('touch /var/lib/tikv/rocksdb.info; tail -n0 -F /var/lib/tikv/rocksdb.info;');
    expect(container(sts, 'raftlog').image).toBe('busybox:1.26.2');
    const old = find(render(cluster({ version: 'v4.0.9', tikv: { replicas: 1, separateRaftLog: true } })), 'StatefulSet', 'demo-tikv');
    expect(container(old, 'raftlog').command[2]).toContain('/var/lib/tikv/raft/LOG');
  });

  test('a log volume name points the tailer at that storage volume', () => {
    const sts = find(
      render(
        cluster({
          tikv: {
            replicas: 1,
            separateRaftLog: true,
            raftLogVolumeName: 'raft',
            storageVolumes: [{ name: 'raft', storageSize: '10Gi', mountPath: '/var/lib/raft' }],
          },
        }),
      ),
      'StatefulSet',
      'demo-tikv',
    );
    expect(container(sts, 'raftlog').volumeMounts).toEqual([{ name: 'tikv-raft', mountPath: '/var/lib/raft' }]);
    expect(container(sts, 'raftlog').command[2]).toContain('/var/lib/raft/raftdb.info');
  });

  test('pessimistic-txn durations given as digits are written bare', () => {
    const toml = tomlOf(
      find(
        render(
          cluster({
            tikv: { replicas: 1, config: { 'pessimistic-txn': { 'wait-for-lock-timeout': '1000', 'wake-up-delay-duration': '20ms' } } },
          }),
        ),
        'ConfigMap',
        'demo-tikv',
      ),
    );
    expect(parseToml(toml)).toEqual({ 'pessimistic-txn': { 'wait-for-lock-timeout': 1000, 'wake-up-delay-duration': '20ms' } });
  });

  test('a YAML float keeps its decimal point in TOML', () => {
    const yaml = `apiVersion: pingcap.com/v1alpha1
kind: TidbCluster
metadata: {name: demo}
spec:
  pd: {replicas: 1}
  tikv:
    replicas: 1
    config:
      storage:
        block-cache:
          capacity-ratio: 1.0
      raftstore:
        region-split-check-diff-ratio: 0.25
        count: 3
`;
    const toml = tomlOf(find(render(yaml), 'ConfigMap', 'demo-tikv'));
    expect(toml).toContain('capacity-ratio = 1.0');
    expect(toml).toContain('count = 3\n');
    expect(toml).toContain('region-split-check-diff-ratio = 0.25');
  });
});

describe('TiDB', () => {
  test('slow-log sidecar by default, first container, on an emptyDir', () => {
    const sts = find(render(cluster({ helper: { image: 'alpine:3.16.0' } })), 'StatefulSet', 'demo-tidb');
    expect(sts.spec.template.spec.containers.map((c: any) => c.name)).toEqual(['slowlog', 'tidb']);
    expect(container(sts, 'slowlog')).toMatchObject({
      image: 'alpine:3.16.0',
      command: ['sh', '-c', 'touch /var/log/tidb/slowlog; tail -n0 -F /var/log/tidb/slowlog;'],
    });
    expect(sts.spec.template.spec.volumes).toContainEqual({ name: 'slowlog', emptyDir: {} });
    expect(env(container(sts, 'tidb'))).toMatchObject({
      SLOW_LOG_FILE: '/var/log/tidb/slowlog',
      BINLOG_ENABLED: 'false',
      CLUSTER_NAME: 'demo',
    });
    expect(sts.spec.volumeClaimTemplates).toBeUndefined();
  });

  test('separateSlowLog false: no sidecar, empty SLOW_LOG_FILE (written as the API server stores it, without a value)', () => {
    const sts = find(render(cluster({ tidb: { replicas: 1, separateSlowLog: false } })), 'StatefulSet', 'demo-tidb');
    expect(sts.spec.template.spec.containers.map((c: any) => c.name)).toEqual(['tidb']);
    expect(container(sts, 'tidb').env).toContainEqual({ name: 'SLOW_LOG_FILE' });
  });

  test('slowLogVolumeName uses an additional mount, the file named after the volume', () => {
    const sts = find(
      render(
        cluster({
          tidb: {
            replicas: 1,
            slowLogVolumeName: 'logs',
            additionalVolumes: [{ name: 'logs', emptyDir: {} }],
            additionalVolumeMounts: [{ name: 'logs', mountPath: '/var/log/x' }],
          },
        }),
      ),
      'StatefulSet',
      'demo-tidb',
    );
    expect(env(container(sts, 'tidb')).SLOW_LOG_FILE).toBe('/var/log/x/logs');
    expect(container(sts, 'slowlog').volumeMounts).toEqual([{ name: 'logs', mountPath: '/var/log/x' }]);
  });

  test('readiness: TCP 4000 by default, the status URL with type command', () => {
    expect(container(find(render(cluster()), 'StatefulSet', 'demo-tidb'), 'tidb').readinessProbe).toEqual({
      tcpSocket: { port: 4000 },
      initialDelaySeconds: 10,
    });
    const cmd = container(
      find(
        render(cluster({ tidb: { replicas: 1, readinessProbe: { type: 'command', initialDelaySeconds: 3 } } })),
        'StatefulSet',
        'demo-tidb',
      ),
      'tidb',
    );
    expect(cmd.readinessProbe).toEqual({
      exec: { command: ['curl', 'http://127.0.0.1:10080/status', '--fail', '--location'] },
      initialDelaySeconds: 3,
    });
  });

  test('no client Service without spec.tidb.service', () => {
    expect(render(cluster()).some((o) => o.kind === 'Service' && o.metadata.name === 'demo-tidb')).toBe(false);
  });

  test('client Service: port, node ports, additional ports, status port', () => {
    const svc = find(
      render(
        cluster({
          tidb: {
            replicas: 1,
            service: {
              type: 'NodePort',
              port: 5000,
              mysqlNodePort: 30001,
              statusNodePort: 30002,
              externalTrafficPolicy: 'Local',
              additionalPorts: [{ name: 'x', port: 7000, targetPort: 7000, protocol: 'TCP' }],
            },
          },
        }),
      ),
      'Service',
      'demo-tidb',
    );
    expect(svc.spec.type).toBe('NodePort');
    expect(svc.spec.externalTrafficPolicy).toBe('Local');
    expect(svc.spec.ports).toEqual([
      { name: 'mysql-client', port: 5000, targetPort: 4000, protocol: 'TCP', nodePort: 30001 },
      { name: 'x', port: 7000, targetPort: 7000, protocol: 'TCP' },
      { name: 'status', port: 10080, targetPort: 10080, protocol: 'TCP', nodePort: 30002 },
    ]);
    const noStatus = find(render(cluster({ tidb: { replicas: 1, service: { exposeStatus: false } } })), 'Service', 'demo-tidb');
    expect(noStatus.spec.ports.map((p: any) => p.name)).toEqual(['mysql-client']);
  });

  test('load-balancer fields only with type LoadBalancer', () => {
    const service = { loadBalancerIP: '1.2.3.4', loadBalancerSourceRanges: ['10.0.0.0/8'], loadBalancerClass: 'x' };
    expect(
      find(render(cluster({ tidb: { replicas: 1, service: { ...service, type: 'LoadBalancer' } } })), 'Service', 'demo-tidb').spec,
    ).toMatchObject(service);
    const cip = find(render(cluster({ tidb: { replicas: 1, service: { ...service, type: 'ClusterIP' } } })), 'Service', 'demo-tidb').spec;
    expect(cip.loadBalancerIP).toBeUndefined();
    expect(cip.loadBalancerSourceRanges).toBeUndefined();
  });

  test('log.file.max-backups defaults to 3 but a user value stays', () => {
    expect(parseToml(tomlOf(find(render(cluster()), 'ConfigMap', 'demo-tidb')))).toEqual({ log: { file: { 'max-backups': 3 } } });
    const toml = tomlOf(
      find(render(cluster({ tidb: { replicas: 1, config: '[log.file]\nmax-backups = 10\nmax-days = 7\n' } })), 'ConfigMap', 'demo-tidb'),
    );
    expect(parseToml(toml)).toEqual({ log: { file: { 'max-backups': 10, 'max-days': 7 } } });
  });

  test('token auth and bootstrap SQL mount their sources and set their config keys', () => {
    const objects = render(cluster({ tidb: { replicas: 1, tokenBasedAuthEnabled: true, bootstrapSQLConfigMapName: 'init-sql' } }));
    const sts = find(objects, 'StatefulSet', 'demo-tidb');
    expect(sts.spec.template.spec.volumes).toContainEqual({
      name: 'tidb-auth-token',
      secret: { secretName: 'demo-tidb-auth-token-jwks-secret' },
    });
    expect(sts.spec.template.spec.volumes).toContainEqual({
      name: 'tidb-bootstrap-sql',
      configMap: { name: 'init-sql', items: [{ key: 'bootstrap-sql', path: 'bootstrap.sql' }] },
    });
    expect(parseToml(tomlOf(find(objects, 'ConfigMap', 'demo-tidb')))).toMatchObject({
      'initialize-sql-file': '/etc/tidb-bootstrap/bootstrap.sql',
      security: { 'auth-token-jwks': '/var/lib/tidb-auth-token/tidb_auth_token_jwks.json' },
    });
  });

  test('customized startup probe: init container copies the binary, tidb runs it', () => {
    const sts = find(
      render(
        cluster({
          tidb: {
            replicas: 1,
            customizedStartupProbe: { image: 'probe:1', binaryName: 'check', args: ['-x'], periodSeconds: 5, failureThreshold: 0 },
          },
        }),
      ),
      'StatefulSet',
      'demo-tidb',
    );
    expect(container(sts, 'check').args).toEqual(["cp /check /var/lib/customized-startup-probe/check; echo 'check copy finished'"]);
    expect(container(sts, 'tidb').startupProbe).toEqual({
      exec: { command: ['/var/lib/customized-startup-probe/check', '-x'] },
      successThreshold: 1,
      periodSeconds: 5,
    });
  });

  test('lifecycle and binlogEnabled', () => {
    const tidb = container(
      find(
        render(cluster({ tidb: { replicas: 1, binlogEnabled: true, lifecycle: { preStop: { exec: { command: ['sleep', '5'] } } } } })),
        'StatefulSet',
        'demo-tidb',
      ),
      'tidb',
    );
    expect(tidb.lifecycle).toEqual({ preStop: { exec: { command: ['sleep', '5'] } } });
    expect(env(tidb).BINLOG_ENABLED).toBe('true');
  });

  test('a slow-log volume that does not exist is refused where the input is read', () => {
    expect(renderErrors(cluster({ tidb: { replicas: 1, slowLogVolumeName: 'nope' } }))).toContain('spec.tidb.slowLogVolumeName (line');
  });
});
