import { parseToml } from '../../../src/base/toml';
import { ANNOTATION, selectorLabels } from '../../../src/tidbcluster/names';
import { cluster, container, env, find, render, tomlOf } from '../../support/render';

describe('PD', () => {
  test('renders ConfigMap, client and peer Services and a StatefulSet named as the operator names them', () => {
    const objects = render(cluster());
    const sts = find(objects, 'StatefulSet', 'demo-pd');
    expect(sts.metadata.namespace).toBe('ns');
    expect(sts.spec.serviceName).toBe('demo-pd-peer');
    expect(sts.spec.selector.matchLabels).toEqual(selectorLabels('demo', 'pd'));
    expect(sts.spec.template.metadata.labels).toEqual(selectorLabels('demo', 'pd'));
    expect(find(objects, 'Service', 'demo-pd').spec.ports).toEqual([{ name: 'client', port: 2379, targetPort: 2379, protocol: 'TCP' }]);
    const peer = find(objects, 'Service', 'demo-pd-peer');
    expect(peer.spec.clusterIP).toBe('None');
    expect(peer.spec.publishNotReadyAddresses).toBe(true);
    expect(peer.metadata.labels['app.kubernetes.io/used-by']).toBe('peer');
    expect(find(objects, 'ConfigMap', 'demo-pd').data['startup-script']).toContain('/pd-server');
  });

  test('leaves replicas and partition to the controller and states the desired count in an annotation', () => {
    const sts = find(render(cluster()), 'StatefulSet', 'demo-pd');
    expect(sts.spec.replicas).toBeUndefined();
    // The controller owns updateStrategy (written with its partition); Git says which in the settings.
    expect(sts.spec.updateStrategy).toBeUndefined();
    expect(JSON.parse(sts.metadata.annotations['tidb-gitops.io/settings']).updateStrategy).toBe('RollingUpdate');
    expect(sts.metadata.annotations[ANNOTATION.replicas]).toBe('3');
    expect(JSON.parse(sts.metadata.annotations[ANNOTATION.settings])).toMatchObject({ maxFailoverCount: 3, paused: false });
  });

  test('data volume claim template carries apiVersion/kind, size and class, and what the API server stores with them', () => {
    const sts = find(
      render(cluster({ pd: { replicas: 1, requests: { storage: '5Gi', cpu: '1' }, storageClassName: 'fast' } })),
      'StatefulSet',
      'demo-pd',
    );
    expect(sts.spec.volumeClaimTemplates).toEqual([
      {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: 'pd', creationTimestamp: null },
        spec: {
          accessModes: ['ReadWriteOnce'],
          resources: { requests: { storage: '5Gi' } },
          storageClassName: 'fast',
          volumeMode: 'Filesystem',
        },
        status: { phase: 'Pending' },
      },
    ]);
    expect(container(sts, 'pd').resources).toEqual({ requests: { cpu: '1' } });
  });

  test('image is baseImage:version, the component version winning over the cluster version', () => {
    const objects = render(cluster({ pd: { replicas: 1, baseImage: 'registry.local/pd', version: 'v8.1.0' } }));
    expect(container(find(objects, 'StatefulSet', 'demo-pd'), 'pd').image).toBe('registry.local/pd:v8.1.0');
    expect(container(find(objects, 'StatefulSet', 'demo-tikv'), 'tikv').image).toBe('pingcap/tikv:v8.5.7');
  });

  test('the deprecated image counts only where baseImage is empty', () => {
    const sts = find(render(cluster({ pd: { replicas: 1, baseImage: '', image: 'my/pd:x' } })), 'StatefulSet', 'demo-pd');
    expect(container(sts, 'pd').image).toBe('my/pd:x');
  });

  test('env: operator values first, user env appended, reserved names not overridable', () => {
    const sts = find(
      render(
        cluster({
          timezone: 'Asia/Tokyo',
          pd: {
            replicas: 1,
            env: [
              { name: 'SET_NAME', value: 'x' },
              { name: 'EXTRA', value: 'y' },
            ],
          },
        }),
      ),
      'StatefulSet',
      'demo-pd',
    );
    const e = env(container(sts, 'pd'));
    expect(e).toMatchObject({
      PEER_SERVICE_NAME: 'demo-pd-peer',
      SERVICE_NAME: 'demo-pd',
      SET_NAME: 'demo-pd',
      TZ: 'Asia/Tokyo',
      EXTRA: 'y',
    });
    expect(e.POD_NAME).toBeUndefined();
  });

  test('hostNetwork adds POD_NAME and ClusterFirstWithHostNet', () => {
    const sts = find(render(cluster({ pd: { replicas: 1, hostNetwork: true } })), 'StatefulSet', 'demo-pd');
    expect(sts.spec.template.spec.hostNetwork).toBe(true);
    expect(sts.spec.template.spec.dnsPolicy).toBe('ClusterFirstWithHostNet');
    expect(env(container(sts, 'pd')).POD_NAME).toEqual({ fieldRef: { fieldPath: 'metadata.name' } });
  });

  test('Service type from spec.pd.service, else the deprecated spec.services entry', () => {
    expect(find(render(cluster({ services: [{ name: 'pd', type: 'NodePort' }] })), 'Service', 'demo-pd').spec.type).toBe('NodePort');
    const svc = find(
      render(
        cluster({
          services: [{ name: 'pd', type: 'NodePort' }],
          pd: {
            replicas: 1,
            service: {
              type: 'LoadBalancer',
              loadBalancerIP: '10.0.0.9',
              portName: 'pd',
              annotations: { a: 'b' },
              labels: { 'app.kubernetes.io/component': 'x', team: 'db' },
            },
          },
        }),
      ),
      'Service',
      'demo-pd',
    );
    expect(svc.spec).toMatchObject({ type: 'LoadBalancer', loadBalancerIP: '10.0.0.9', ports: [{ name: 'pd', port: 2379 }] });
    expect(svc.metadata.annotations).toEqual({ a: 'b' });
    expect(svc.metadata.labels).toMatchObject({ team: 'db', 'app.kubernetes.io/component': 'pd' });
  });

  test('readiness probe only when asked for', () => {
    expect(container(find(render(cluster()), 'StatefulSet', 'demo-pd'), 'pd').readinessProbe).toBeUndefined();
    const probe = container(
      find(render(cluster({ pd: { replicas: 1, readinessProbe: { periodSeconds: 5 } } })), 'StatefulSet', 'demo-pd'),
      'pd',
    ).readinessProbe;
    expect(probe).toEqual({ tcpSocket: { port: 2379 }, initialDelaySeconds: 10, periodSeconds: 5 });
  });

  test('config: TOML string and mapping give the same TOML; dashboard proxy key is owned by the renderer', () => {
    const fromString = tomlOf(
      find(
        render(cluster({ pd: { replicas: 1, config: '[replication]\nmax-replicas = 5\nlocation-labels = ["zone", "host"]\n' } })),
        'ConfigMap',
        'demo-pd',
      ),
    );
    const fromMap = tomlOf(
      find(
        render(cluster({ pd: { replicas: 1, config: { replication: { 'max-replicas': 5, 'location-labels': ['zone', 'host'] } } } })),
        'ConfigMap',
        'demo-pd',
      ),
    );
    expect(fromString).toBe(fromMap);
    expect(fromString).toBe('[replication]\n  location-labels = ["zone", "host"]\n  max-replicas = 5\n');
    const proxied = tomlOf(
      find(
        render(cluster({ pd: { replicas: 1, enableDashboardInternalProxy: true, config: { dashboard: { 'internal-proxy': false } } } })),
        'ConfigMap',
        'demo-pd',
      ),
    );
    expect(parseToml(proxied)).toEqual({ dashboard: { 'internal-proxy': true } });
  });

  test('configUpdateStrategy RollingUpdate names the ConfigMap by a hash of its data; a config change changes the name', () => {
    const a = render(cluster({ configUpdateStrategy: 'RollingUpdate' }));
    const b = render(cluster({ configUpdateStrategy: 'RollingUpdate', pd: { replicas: 3, config: { lease: 5 } } }));
    const nameA = find(a, 'ConfigMap', /^demo-pd-[0-9a-f]{7}$/).metadata.name;
    const nameB = find(b, 'ConfigMap', /^demo-pd-[0-9a-f]{7}$/).metadata.name;
    expect(nameA).not.toBe(nameB);
    const volumes = find(b, 'StatefulSet', 'demo-pd').spec.template.spec.volumes;
    expect(volumes.find((v: any) => v.name === 'config').configMap.name).toBe(nameB);
    expect(volumes.find((v: any) => v.name === 'startup-script').configMap).toEqual({
      name: nameB,
      items: [{ key: 'startup-script', path: 'pd_start_script.sh' }],
    });
  });

  test('storageVolumes become <component>-<name> claim templates mounted where asked', () => {
    const sts = find(
      render(
        cluster({
          pd: {
            replicas: 1,
            storageVolumes: [
              { name: 'log', storageSize: '2Gi', mountPath: '/var/log/pd' },
              { name: 'spare', storageSize: '1Gi', storageClassName: 'slow' },
            ],
          },
        }),
      ),
      'StatefulSet',
      'demo-pd',
    );
    expect(sts.spec.volumeClaimTemplates.map((v: any) => v.metadata.name)).toEqual(['pd', 'pd-log', 'pd-spare']);
    expect(sts.spec.volumeClaimTemplates[2].spec.storageClassName).toBe('slow');
    expect(container(sts, 'pd').volumeMounts).toContainEqual({ name: 'pd-log', mountPath: '/var/log/pd' });
    expect(container(sts, 'pd').volumeMounts.some((m: any) => m.name === 'pd-spare')).toBe(false);
  });

  test('sysctl-init annotation moves sysctls into a privileged init container', () => {
    const sts = find(
      render(
        cluster({
          pd: {
            replicas: 1,
            annotations: { 'tidb.pingcap.com/sysctl-init': 'true' },
            podSecurityContext: { sysctls: [{ name: 'net.core.somaxconn', value: '32768' }] },
          },
        }),
      ),
      'StatefulSet',
      'demo-pd',
    );
    expect(container(sts, 'init').command).toEqual(['sh', '-c', 'sysctl -w net.core.somaxconn=32768']);
    expect(container(sts, 'init').securityContext).toEqual({ privileged: true });
    expect(sts.spec.template.spec.securityContext).toEqual({ sysctls: [] });
  });
});
