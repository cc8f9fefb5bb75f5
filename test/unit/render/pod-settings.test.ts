import { cluster, container, find, render } from '../../support/render';

describe('pod settings: cluster level as defaults, component level wins', () => {
  const toleration = (key: string) => ({ key, operator: 'Exists', effect: 'NoSchedule' });

  test('nodeSelector, annotations and labels merge (component wins); selector labels always win', () => {
    const objects = render(
      cluster({
        nodeSelector: { disk: 'ssd', zone: 'a' },
        annotations: { team: 'db', 'prometheus.io/port': '9999' },
        labels: { env: 'prod' },
        tikv: { replicas: 3, nodeSelector: { zone: 'b' }, labels: { 'app.kubernetes.io/component': 'evil', tier: 'storage' } },
      }),
    );
    const tikv = find(objects, 'StatefulSet', 'demo-tikv').spec.template;
    expect(tikv.spec.nodeSelector).toEqual({ disk: 'ssd', zone: 'b' });
    expect(tikv.metadata.annotations).toMatchObject({ team: 'db', 'prometheus.io/port': '9999', 'prometheus.io/scrape': 'true' });
    expect(tikv.metadata.labels).toMatchObject({ env: 'prod', tier: 'storage', 'app.kubernetes.io/component': 'tikv' });
    expect(find(objects, 'StatefulSet', 'demo-pd').spec.template.spec.nodeSelector).toEqual({ disk: 'ssd', zone: 'a' });
  });

  test('tolerations, affinity, imagePullSecrets: the component list replaces the cluster list', () => {
    const affinity = {
      podAntiAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          { weight: 1, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { a: 'b' } } } },
        ],
      },
    };
    const objects = render(
      cluster({
        tolerations: [toleration('cluster')],
        affinity,
        imagePullSecrets: [{ name: 'cluster-secret' }],
        tidb: { replicas: 1, tolerations: [toleration('tidb')], imagePullSecrets: [{ name: 'tidb-secret' }] },
      }),
    );
    const tidb = find(objects, 'StatefulSet', 'demo-tidb').spec.template.spec;
    const pd = find(objects, 'StatefulSet', 'demo-pd').spec.template.spec;
    expect(tidb.tolerations).toEqual([toleration('tidb')]);
    expect(pd.tolerations).toEqual([toleration('cluster')]);
    expect(tidb.imagePullSecrets).toEqual([{ name: 'tidb-secret' }]);
    expect(pd.affinity).toEqual(affinity);
  });

  test('scheduler, priority class, service account, grace period, security context', () => {
    const objects = render(
      cluster({
        schedulerName: 'tidb-scheduler',
        priorityClassName: 'high',
        serviceAccount: 'tidb',
        podSecurityContext: { runAsUser: 1000 },
        pd: { replicas: 1, serviceAccount: 'pd', terminationGracePeriodSeconds: 60, securityContext: { runAsNonRoot: true } },
      }),
    );
    const pd = find(objects, 'StatefulSet', 'demo-pd').spec.template.spec;
    expect(pd).toMatchObject({
      schedulerName: 'tidb-scheduler',
      priorityClassName: 'high',
      serviceAccountName: 'pd',
      terminationGracePeriodSeconds: 60,
      securityContext: { runAsUser: 1000 },
    });
    expect(container(find(objects, 'StatefulSet', 'demo-pd'), 'pd').securityContext).toEqual({ runAsNonRoot: true });
    expect(find(objects, 'StatefulSet', 'demo-tidb').spec.template.spec.serviceAccountName).toBe('tidb');
  });

  test('topologySpreadConstraints get the component selector and a default maxSkew', () => {
    const sts = find(
      render(cluster({ topologySpreadConstraints: [{ topologyKey: 'topology.kubernetes.io/zone' }] })),
      'StatefulSet',
      'demo-tikv',
    );
    expect(sts.spec.template.spec.topologySpreadConstraints).toEqual([
      {
        maxSkew: 1,
        topologyKey: 'topology.kubernetes.io/zone',
        whenUnsatisfiable: 'DoNotSchedule',
        labelSelector: {
          matchLabels: {
            'app.kubernetes.io/name': 'tidb-cluster',
            'app.kubernetes.io/managed-by': 'tidb-operator',
            'app.kubernetes.io/component': 'tikv',
            'app.kubernetes.io/instance': 'demo',
          },
        },
      },
    ]);
  });

  test('update strategy, pod management policy and pull policy', () => {
    const objects = render(
      cluster({
        statefulSetUpdateStrategy: 'OnDelete',
        podManagementPolicy: 'OrderedReady',
        imagePullPolicy: 'Always',
        tidb: { replicas: 1, podManagementPolicy: 'Whatever' },
      }),
    );
    const pd = find(objects, 'StatefulSet', 'demo-pd');
    expect(pd.spec).toMatchObject({ podManagementPolicy: 'OrderedReady' });
    expect(JSON.parse(pd.metadata.annotations['tidb-gitops.io/settings']).updateStrategy).toBe('OnDelete');
    expect(find(objects, 'StatefulSet', 'demo-tidb').spec.podManagementPolicy).toBe('Parallel');
    expect(container(find(objects, 'StatefulSet', 'demo-tidb'), 'tidb').imagePullPolicy).toBe('Always');
  });

  test('additionalContainers: same name merges into the rendered container, others are appended', () => {
    const sts = find(
      render(
        cluster({
          tikv: {
            replicas: 1,
            additionalContainers: [
              { name: 'tikv', env: [{ name: 'EXTRA', value: '1' }], volumeMounts: [{ name: 'extra', mountPath: '/extra' }] },
              { name: 'agent', image: 'agent:1' },
            ],
            additionalVolumes: [{ name: 'extra', emptyDir: {} }],
          },
        }),
      ),
      'StatefulSet',
      'demo-tikv',
    );
    const names = sts.spec.template.spec.containers.map((c: any) => c.name);
    expect(names).toEqual(['tikv', 'agent']);
    const tikv = container(sts, 'tikv');
    expect(tikv.image).toBe('pingcap/tikv:v8.5.7');
    expect(tikv.env.map((e: any) => e.name)).toContain('EXTRA');
    expect(tikv.env.map((e: any) => e.name)).toContain('CAPACITY');
    expect(tikv.volumeMounts).toContainEqual({ name: 'extra', mountPath: '/extra' });
    expect(sts.spec.template.spec.volumes).toContainEqual({ name: 'extra', emptyDir: {} });
  });

  test("the instance label follows the TidbCluster's own instance label", () => {
    const objects = render(cluster({}, { labels: { 'app.kubernetes.io/instance': 'shared' } }));
    expect(find(objects, 'StatefulSet', 'demo-pd').spec.selector.matchLabels['app.kubernetes.io/instance']).toBe('shared');
  });

  test('preferIPv6 asks every Service for dual stack', () => {
    const objects = render(cluster({ preferIPv6: true }));
    for (const svc of objects.filter((o) => o.kind === 'Service')) expect(svc.spec.ipFamilyPolicy).toBe('PreferDualStack');
  });

  test('output is deterministic and ordered by kind (budgets, RBAC and ConfigMaps, Services, workloads), discovery first', () => {
    const a = render(cluster({ tidb: { replicas: 1, service: { type: 'ClusterIP' } } }));
    const b = render(cluster({ tidb: { replicas: 1, service: { type: 'ClusterIP' } } }));
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    expect(a.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'PodDisruptionBudget/demo-pd',
      'PodDisruptionBudget/demo-tikv',
      'PodDisruptionBudget/demo-tidb',
      'ServiceAccount/demo-discovery',
      'ConfigMap/demo-pd',
      'ConfigMap/demo-tikv',
      'ConfigMap/demo-tidb',
      'ConfigMap/demo-volume-sizes',
      'Role/demo-discovery',
      'RoleBinding/demo-discovery',
      'Service/demo-discovery',
      'Service/demo-pd',
      'Service/demo-pd-peer',
      'Service/demo-tikv-peer',
      'Service/demo-tidb-peer',
      'Service/demo-tidb',
      'Deployment/demo-discovery',
      'StatefulSet/demo-pd',
      'StatefulSet/demo-tikv',
      'StatefulSet/demo-tidb',
    ]);
  });

  test('objects carry no namespace when the cluster has none and none is given', () => {
    const objects = render(cluster({}, { namespace: undefined }));
    expect(objects.every((o) => o.metadata.namespace === undefined)).toBe(true);
    expect(render(cluster({}, { namespace: undefined }), { namespace: 'given' }).every((o) => o.metadata.namespace === 'given')).toBe(true);
  });
});
