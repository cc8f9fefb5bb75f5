/**
 * The discovery Deployment that runs the companion controller: its objects and RBAC, the cluster
 * facts it gets in its env, image precedence, probes, security defaults, volumes, `spec.discovery`
 * settings and the fields refused there. Every render is checked against the Kubernetes 1.27 schema.
 */
import { App, Testing } from 'cdk8s';
import { version } from '../../../package.json';
import { TidbClusterChart } from '../../../src/render/chart';
import { CONTROLLER_REPOSITORY } from '../../../src/tidbcluster/defaults';
import { ANNOTATION, names, PORT, selectorLabels } from '../../../src/tidbcluster/names';
import { CONTROLLER_ENV } from '../../../src/tidbcluster/contract';
import { cluster, container, find, render, renderErrors, type Obj } from '../../support/render';

const LABELS = selectorLabels('demo', 'discovery');
const DEFAULT_IMAGE = `${CONTROLLER_REPOSITORY}:${version}`;
const deployment = (objects: Obj[]) => find(objects, 'Deployment', 'demo-discovery');
const podSpec = (objects: Obj[]) => deployment(objects).spec.template.spec;
const controller = (objects: Obj[]) => container(deployment(objects), 'discovery');
const clusterInfo = (objects: Obj[]) => JSON.parse(controller(objects).env.find((e: Obj) => e.name === CONTROLLER_ENV.cluster).value);
/** The demo cluster with `spec.discovery` (and other spec fields) set. */
const withDiscovery = (discovery: Obj, spec: Obj = {}, metadata: Obj = {}) => render(cluster({ discovery, ...spec }, metadata));

describe('discovery objects', () => {
  const objects = render(cluster());

  test('ServiceAccount, Role, RoleBinding, Service and Deployment, all <cluster>-discovery with the four labels', () => {
    for (const kind of ['ServiceAccount', 'Role', 'RoleBinding', 'Service', 'Deployment']) {
      const o = find(objects, kind, 'demo-discovery');
      expect(o.metadata).toEqual({ name: 'demo-discovery', namespace: 'ns', labels: LABELS });
    }
    expect(LABELS['app.kubernetes.io/component']).toBe('discovery');
    expect(names.discovery('demo')).toBe('demo-discovery');
  });

  test('Role: exactly the verbs the controller uses, state ConfigMap, volume sizes and Lease by name', () => {
    expect(find(objects, 'Role', 'demo-discovery').rules).toEqual([
      { apiGroups: ['apps'], resources: ['statefulsets'], verbs: ['get', 'list', 'watch', 'patch', 'create', 'delete'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch', 'patch', 'delete'] },
      // The readiness gate's condition (tidb-gitops.io/serving) of the PD, TiKV and TiDB Pods.
      { apiGroups: [''], resources: ['pods/status'], verbs: ['patch'] },
      { apiGroups: [''], resources: ['persistentvolumeclaims'], verbs: ['get', 'list', 'watch', 'patch', 'delete'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['create', 'list', 'delete'] },
      { apiGroups: [''], resources: ['configmaps'], resourceNames: ['demo-status'], verbs: ['get', 'patch', 'update'] },
      { apiGroups: [''], resources: ['configmaps'], resourceNames: ['demo-volume-sizes'], verbs: ['get'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: ['demo-discovery'], verbs: ['get', 'update'] },
      { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
      // The runs and log backup commands it records and creates; with no backup document too, for the
      // stop of a log backup whose document left Git.
      { apiGroups: ['batch'], resources: ['jobs'], verbs: ['list', 'create'] },
    ]);
    expect(names.status('demo')).toBe('demo-status');
    expect(names.lease('demo')).toBe('demo-discovery');
  });

  test('RoleBinding: the ServiceAccount in the cluster namespace gets the Role', () => {
    const rb = find(objects, 'RoleBinding', 'demo-discovery');
    expect(rb.subjects).toEqual([{ kind: 'ServiceAccount', name: 'demo-discovery', namespace: 'ns' }]);
    expect(rb.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'demo-discovery' });
  });

  test('RoleBinding without a namespace: the subject names none (Kubernetes takes the binding namespace)', () => {
    const plain = render(cluster({}, { namespace: undefined }));
    expect(find(plain, 'RoleBinding', 'demo-discovery').subjects).toEqual([{ kind: 'ServiceAccount', name: 'demo-discovery' }]);
    const given = render(cluster({}, { namespace: undefined }), { namespace: 'given' });
    expect(find(given, 'RoleBinding', 'demo-discovery').subjects).toEqual([
      { kind: 'ServiceAccount', name: 'demo-discovery', namespace: 'given' },
    ]);
  });

  test('Service: ClusterIP, discovery 10261 and metrics 10263, selecting the pod template labels', () => {
    expect(find(objects, 'Service', 'demo-discovery').spec).toEqual({
      type: 'ClusterIP',
      ports: [
        { name: 'discovery', port: 10261, targetPort: 10261, protocol: 'TCP' },
        { name: 'metrics', port: 10263, targetPort: 10263, protocol: 'TCP' },
      ],
      selector: LABELS,
    });
    expect(PORT.discoveryMetrics).toBe(10263);
  });

  test('Deployment: one replica, Recreate, four-label selector, its own ServiceAccount', () => {
    const d = deployment(objects);
    expect(d.spec.replicas).toBe(1);
    expect(d.spec.strategy).toEqual({ type: 'Recreate' });
    expect(d.spec.selector).toEqual({ matchLabels: LABELS });
    expect(d.spec.template.metadata).toEqual({ labels: LABELS });
    expect(d.metadata.annotations).toBeUndefined();
    const spec = podSpec(objects);
    expect(spec.serviceAccountName).toBe('demo-discovery');
    expect(spec.automountServiceAccountToken).toBeUndefined();
    expect(spec.dnsPolicy).toBe('ClusterFirst');
    expect(spec.containers.map((c: Obj) => c.name)).toEqual(['discovery']);
  });

  test('container: tidb-gitops controller with both ports, env in order, HTTP probes, default resources', () => {
    const c = controller(objects);
    expect(c.image).toBe(DEFAULT_IMAGE);
    expect(c.imagePullPolicy).toBe('IfNotPresent');
    expect(c.command).toEqual(['tidb-gitops', 'controller']);
    expect(c.ports).toEqual([
      { name: 'discovery', containerPort: 10261, protocol: 'TCP' },
      { name: 'metrics', containerPort: 10263, protocol: 'TCP' },
    ]);
    expect(c.env.map((e: Obj) => e.name)).toEqual([
      'MY_POD_NAMESPACE',
      'MY_POD_NAME',
      'TZ',
      'TC_NAME',
      'TIDB_GITOPS_CLUSTER',
      'MALLOC_ARENA_MAX',
      'NODE_OPTIONS',
    ]);
    expect(c.env.slice(5)).toEqual([
      { name: 'MALLOC_ARENA_MAX', value: '2' },
      { name: 'NODE_OPTIONS', value: '--max-semi-space-size=1' },
    ]);
    expect(c.env.slice(0, 4)).toEqual([
      { name: 'MY_POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
      { name: 'MY_POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'TZ', value: 'UTC' },
      { name: 'TC_NAME', value: 'demo' },
    ]);
    expect(c.readinessProbe).toEqual({ httpGet: { path: '/readyz', port: 'metrics' }, periodSeconds: 5, failureThreshold: 3 });
    expect(c.livenessProbe).toEqual({
      httpGet: { path: '/healthz', port: 'metrics' },
      initialDelaySeconds: 10,
      periodSeconds: 10,
      failureThreshold: 3,
    });
    expect(c.resources).toEqual({ requests: { cpu: '50m', memory: '96Mi' }, limits: { memory: '256Mi' } });
    expect(c.volumeMounts).toEqual([{ name: 'tmp', mountPath: '/tmp' }]);
    expect(podSpec(objects).volumes).toEqual([{ name: 'tmp', emptyDir: {} }]);
  });

  test('TZ follows spec.timezone', () => {
    expect(controller(render(cluster({ timezone: 'Asia/Shanghai' }))).env[2]).toEqual({ name: 'TZ', value: 'Asia/Shanghai' });
  });

  test('rendered for every cluster, also one without PD', () => {
    const noPd = render(cluster({ pd: undefined, tidb: undefined }));
    expect(deployment(noPd).spec.replicas).toBe(1);
    expect(clusterInfo(noPd).components).toEqual(['tikv']);
  });
});

describe('TIDB_GITOPS_CLUSTER: what the controller knows about its cluster', () => {
  test('plain cluster: compact JSON with sorted keys', () => {
    const value = controller(render(cluster())).env.find((e: Obj) => e.name === 'TIDB_GITOPS_CLUSTER').value;
    expect(value).toBe(
      '{"acrossK8s":false,"cluster":null,"clusterDomain":"","components":["pd","tikv","tidb"],"discoveryMtls":false,"name":"demo","pdAddresses":[],"tls":false}',
    );
  });

  test('components in reconcile order', () => {
    const all = render(
      cluster({
        pump: { replicas: 1, requests: { storage: '1Gi' } },
        ticdc: { replicas: 1 },
        tiproxy: { replicas: 1 },
        tiflash: { replicas: 1, storageClaims: [{ resources: { requests: { storage: '1Gi' } } }] },
      }),
    );
    expect(clusterInfo(all).components).toEqual(['pd', 'tiproxy', 'tiflash', 'tikv', 'pump', 'tidb', 'ticdc']);
  });

  test('TLS and discovery mTLS', () => {
    const info = clusterInfo(render(cluster({ tlsCluster: { enabled: true, enableDiscoveryMTLS: true } })));
    expect(info).toMatchObject({ tls: true, discoveryMtls: true });
    expect(clusterInfo(render(cluster({ tlsCluster: { enabled: true } })))).toMatchObject({ tls: true, discoveryMtls: false });
    // mTLS counts only with TLS, as for the start scripts.
    expect(clusterInfo(render(cluster({ tlsCluster: { enableDiscoveryMTLS: true } })))).toMatchObject({ tls: false, discoveryMtls: false });
  });

  test('acrossK8s and clusterDomain', () => {
    const info = clusterInfo(render(cluster({ acrossK8s: true, clusterDomain: 'cluster.local' })));
    expect(info).toMatchObject({ acrossK8s: true, clusterDomain: 'cluster.local' });
  });

  test('heterogeneous cluster (spec.cluster): the joined cluster, its namespace defaulted to this one', () => {
    const spec = { pd: undefined, cluster: { name: 'base' } };
    expect(clusterInfo(render(cluster(spec))).cluster).toEqual({ name: 'base', namespace: 'ns', clusterDomain: '' });
    const full = { pd: undefined, cluster: { name: 'base', namespace: 'other', clusterDomain: 'east.local' } };
    expect(clusterInfo(render(cluster(full))).cluster).toEqual({ name: 'base', namespace: 'other', clusterDomain: 'east.local' });
    // No namespace anywhere: "" stands for the controller's own.
    const bare = render(cluster(spec, { namespace: undefined }));
    expect(clusterInfo(bare).cluster).toEqual({ name: 'base', namespace: '', clusterDomain: '' });
  });

  test('pdAddresses', () => {
    const pdAddresses = ['http://pd-0.other:2379', 'https://pd-1.other:2379'];
    expect(clusterInfo(render(cluster({ pdAddresses }))).pdAddresses).toEqual(pdAddresses);
  });
});

describe('controller image', () => {
  const imageOf = (objects: Obj[]) => controller(objects).image;

  test('spec.discovery.image, else spec.discovery.version on the default repository, else the option, else this release', () => {
    const options = { controllerImage: 'registry.local/tidb-gitops:dev' };
    expect(imageOf(render(cluster({ discovery: { image: 'mirror.local/tg:1.2.3' } }), options))).toBe('mirror.local/tg:1.2.3');
    expect(imageOf(render(cluster({ discovery: { version: 'v0.2.0' } }), options))).toBe(`${CONTROLLER_REPOSITORY}:v0.2.0`);
    expect(imageOf(render(cluster(), options))).toBe('registry.local/tidb-gitops:dev');
    expect(imageOf(render(cluster()))).toBe(DEFAULT_IMAGE);
    expect(DEFAULT_IMAGE).toBe(`ghcr.io/tidb-gitops/tidb-gitops:${version}`);
  });

  test('spec.version is TiDB`s, not the controller`s', () => {
    expect(imageOf(render(cluster({ version: 'v7.5.0' })))).toBe(DEFAULT_IMAGE);
  });

  test('pull policy: discovery, else cluster, else IfNotPresent', () => {
    expect(controller(render(cluster({ imagePullPolicy: 'Always' }))).imagePullPolicy).toBe('Always');
    expect(controller(withDiscovery({ imagePullPolicy: 'Never' }, { imagePullPolicy: 'Always' })).imagePullPolicy).toBe('Never');
  });

  test('TidbClusterChart takes controllerImage with a cluster, and refuses it with a resolved one', () => {
    const app = Testing.app();
    const chart = new TidbClusterChart(app, 'c', { cluster: cluster() as never, controllerImage: 'lib.local/tg:1' });
    const deploy = Testing.synth(chart).find((o: Obj) => o.kind === 'Deployment');
    expect(deploy.spec.template.spec.containers[0].image).toBe('lib.local/tg:1');
    expect(() => new TidbClusterChart(new App(), 'd', { resolved: chart.resolved, controllerImage: 'x' })).toThrow(
      'TidbClusterChart: `controllerImage` applies when resolving; pass it to loadTidbClusters or checkTidbCluster instead',
    );
  });
});

describe('spec.discovery settings', () => {
  test('pod settings fall back to the cluster`s, as for every component', () => {
    const spec = {
      nodeSelector: { disk: 'ssd', zone: 'a' },
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'tidb', effect: 'NoSchedule' }],
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'k', operator: 'Exists' }] }] },
        },
      },
      priorityClassName: 'high',
      imagePullSecrets: [{ name: 'pull' }],
      schedulerName: 'custom',
      labels: { team: 'db' },
      annotations: { owner: 'db' },
      topologySpreadConstraints: [{ topologyKey: 'topology.kubernetes.io/zone' }],
    };
    const objects = render(cluster(spec));
    const p = podSpec(objects);
    expect(p.nodeSelector).toEqual(spec.nodeSelector);
    expect(p.tolerations).toEqual(spec.tolerations);
    expect(p.affinity).toEqual(spec.affinity);
    expect(p.priorityClassName).toBe('high');
    expect(p.imagePullSecrets).toEqual([{ name: 'pull' }]);
    expect(p.schedulerName).toBe('custom');
    expect(p.topologySpreadConstraints).toEqual([
      {
        maxSkew: 1,
        topologyKey: 'topology.kubernetes.io/zone',
        whenUnsatisfiable: 'DoNotSchedule',
        labelSelector: { matchLabels: LABELS },
      },
    ]);
    expect(deployment(objects).spec.template.metadata).toEqual({ labels: { team: 'db', ...LABELS }, annotations: { owner: 'db' } });
    // The selector stays the four labels; the Service selects the pod template labels, user labels included.
    expect(deployment(objects).spec.selector.matchLabels).toEqual(LABELS);
    expect(find(objects, 'Service', 'demo-discovery').spec.selector).toEqual({ team: 'db', ...LABELS });
  });

  test('discovery settings win: maps merged, lists and objects replaced; the four labels always win', () => {
    const objects = withDiscovery(
      {
        nodeSelector: { zone: 'b' },
        tolerations: [{ key: 'controller', operator: 'Exists' }],
        labels: { role: 'controller', 'app.kubernetes.io/component': 'mine' },
        annotations: { owner: 'ops' },
        hostNetwork: true,
        priorityClassName: 'system-cluster-critical',
        terminationGracePeriodSeconds: 5,
        dnsConfig: { options: [{ name: 'ndots', value: '2' }] },
      },
      {
        nodeSelector: { disk: 'ssd', zone: 'a' },
        tolerations: [{ key: 'dedicated', operator: 'Exists' }],
        labels: { team: 'db' },
        annotations: { owner: 'db', a: '1' },
      },
    );
    const p = podSpec(objects);
    expect(p.nodeSelector).toEqual({ disk: 'ssd', zone: 'b' });
    expect(p.tolerations).toEqual([{ key: 'controller', operator: 'Exists' }]);
    expect(p.hostNetwork).toBe(true);
    expect(p.dnsPolicy).toBe('ClusterFirstWithHostNet');
    expect(p.dnsConfig).toEqual({ options: [{ name: 'ndots', value: '2' }] });
    expect(p.priorityClassName).toBe('system-cluster-critical');
    expect(p.terminationGracePeriodSeconds).toBe(5);
    expect(deployment(objects).spec.template.metadata).toEqual({
      labels: { team: 'db', role: 'controller', ...LABELS },
      annotations: { owner: 'ops', a: '1' },
    });
  });

  test('spec.serviceAccount is for the components: discovery keeps its own', () => {
    const objects = render(cluster({ serviceAccount: 'tidb' }));
    expect(podSpec(objects).serviceAccountName).toBe('demo-discovery');
    expect(find(objects, 'StatefulSet', 'demo-pd').spec.template.spec.serviceAccountName).toBe('tidb');
  });

  test('probes: readinessProbe and livenessProbe timing override ours', () => {
    const c = controller(
      withDiscovery({ readinessProbe: { initialDelaySeconds: 3, periodSeconds: 7 }, livenessProbe: { type: 'tcp', periodSeconds: 30 } }),
    );
    expect(c.readinessProbe).toEqual({
      httpGet: { path: '/readyz', port: 'metrics' },
      initialDelaySeconds: 3,
      periodSeconds: 7,
      failureThreshold: 3,
    });
    expect(c.livenessProbe).toEqual({
      httpGet: { path: '/healthz', port: 'metrics' },
      initialDelaySeconds: 10,
      periodSeconds: 30,
      failureThreshold: 3,
    });
  });

  test('resources: the user`s as given, the defaults only when neither requests nor limits is set', () => {
    expect(controller(withDiscovery({ requests: { cpu: '100m', memory: '512Mi' } })).resources).toEqual({
      requests: { cpu: '100m', memory: '512Mi' },
    });
    expect(controller(withDiscovery({ limits: { cpu: '1' } })).resources).toEqual({ limits: { cpu: '1' } });
  });

  test('security contexts: non-root defaults, the user`s replace them whole', () => {
    const defaults = render(cluster());
    expect(podSpec(defaults).securityContext).toEqual({
      runAsNonRoot: true,
      runAsUser: 65532,
      runAsGroup: 65532,
      fsGroup: 65532,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(controller(defaults).securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
    });
    const own = withDiscovery({ podSecurityContext: { runAsUser: 1000 }, securityContext: { readOnlyRootFilesystem: false } });
    expect(podSpec(own).securityContext).toEqual({ runAsUser: 1000 });
    expect(controller(own).securityContext).toEqual({ readOnlyRootFilesystem: false });
    // The cluster's pod security context is a default for discovery too.
    expect(podSpec(render(cluster({ podSecurityContext: { fsGroup: 2000 } }))).securityContext).toEqual({ fsGroup: 2000 });
  });

  test('TLS: the cluster client certificate; discovery mTLS: the certificate discovery serves', () => {
    const tls = render(cluster({ tlsCluster: { enabled: true, enableDiscoveryMTLS: true } }));
    expect(podSpec(tls).volumes).toEqual([
      { name: 'tmp', emptyDir: {} },
      { name: 'cluster-client-tls', secret: { secretName: 'demo-cluster-client-secret' } },
      { name: 'discovery-tls', secret: { secretName: 'demo-discovery-cluster-secret' } },
    ]);
    expect(controller(tls).volumeMounts).toEqual([
      { name: 'tmp', mountPath: '/tmp' },
      { name: 'cluster-client-tls', mountPath: '/var/lib/cluster-client-tls', readOnly: true },
      { name: 'discovery-tls', mountPath: '/var/lib/discovery-tls', readOnly: true },
    ]);
    const plainTls = render(cluster({ tlsCluster: { enabled: true } }));
    expect(podSpec(plainTls).volumes.map((v: Obj) => v.name)).toEqual(['tmp', 'cluster-client-tls']);
  });

  test('automountServiceAccountToken false: the token is projected into the controller only', () => {
    const objects = withDiscovery({
      automountServiceAccountToken: false,
      additionalContainers: [{ name: 'sidecar', image: 'busybox' }],
    });
    const p = podSpec(objects);
    expect(p.automountServiceAccountToken).toBe(false);
    expect(p.volumes).toContainEqual({
      name: 'kube-api-access',
      projected: {
        sources: [
          { serviceAccountToken: { path: 'token', expirationSeconds: 3607 } },
          { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
          { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
        ],
      },
    });
    expect(controller(objects).volumeMounts).toContainEqual({
      name: 'kube-api-access',
      mountPath: '/var/run/secrets/kubernetes.io/serviceaccount',
      readOnly: true,
    });
    expect(container(deployment(objects), 'sidecar').volumeMounts).toBeUndefined();
  });

  test('user env, envFrom, volumes, init and additional containers', () => {
    const objects = withDiscovery({
      env: [
        { name: 'LOG_LEVEL', value: 'debug' },
        { name: 'TC_NAME', value: 'not-taken' },
        { name: 'NODE_OPTIONS', value: '--max-old-space-size=200' },
      ],
      envFrom: [{ configMapRef: { name: 'extra' } }],
      additionalVolumes: [{ name: 'scratch', emptyDir: {} }],
      additionalVolumeMounts: [{ name: 'scratch', mountPath: '/scratch' }],
      initContainers: [{ name: 'wait', image: 'busybox', command: ['true'] }],
      additionalContainers: [
        { name: 'discovery', resources: { limits: { memory: '1Gi' } } },
        { name: 'sidecar', image: 'busybox' },
      ],
    });
    const c = controller(objects);
    // The user's NODE_OPTIONS replaces the rendered one; MALLOC_ARENA_MAX, which the user left alone, stays.
    expect(c.env.map((e: Obj) => e.name)).toEqual([
      'MY_POD_NAMESPACE',
      'MY_POD_NAME',
      'TZ',
      'TC_NAME',
      'TIDB_GITOPS_CLUSTER',
      'LOG_LEVEL',
      'NODE_OPTIONS',
      'MALLOC_ARENA_MAX',
    ]);
    expect(c.env[3]).toEqual({ name: 'TC_NAME', value: 'demo' });
    expect(c.env[6]).toEqual({ name: 'NODE_OPTIONS', value: '--max-old-space-size=200' });
    expect(c.envFrom).toEqual([{ configMapRef: { name: 'extra' } }]);
    expect(c.volumeMounts).toEqual([
      { name: 'tmp', mountPath: '/tmp' },
      { name: 'scratch', mountPath: '/scratch' },
    ]);
    expect(c.resources).toEqual({ requests: { cpu: '50m', memory: '96Mi' }, limits: { memory: '1Gi' } });
    const p = podSpec(objects);
    expect(p.volumes.map((v: Obj) => v.name)).toEqual(['tmp', 'scratch']);
    expect(p.initContainers.map((x: Obj) => x.name)).toEqual(['wait']);
    expect(p.containers.map((x: Obj) => x.name)).toEqual(['discovery', 'sidecar']);
  });

  test('preferIPv6: a dual-stack Service', () => {
    expect(find(render(cluster({ preferIPv6: true })), 'Service', 'demo-discovery').spec.ipFamilyPolicy).toBe('PreferDualStack');
  });

  test('sysctls in a pod security context stay there (no privileged init container for discovery)', () => {
    const objects = withDiscovery(
      { podSecurityContext: { sysctls: [{ name: 'net.core.somaxconn', value: '1024' }] } },
      { annotations: { 'tidb.pingcap.com/sysctl-init': 'true' } },
    );
    expect(podSpec(objects).initContainers).toBeUndefined();
    expect(podSpec(objects).securityContext.sysctls).toEqual([{ name: 'net.core.somaxconn', value: '1024' }]);
  });
});

describe('spec.discovery refusals', () => {
  test.each([
    [
      'statefulSetUpdateStrategy',
      { statefulSetUpdateStrategy: 'OnDelete' },
      'discovery runs as a Deployment, which has no such setting (tidb-operator ignored it too); remove it',
    ],
    [
      'podManagementPolicy',
      { podManagementPolicy: 'OrderedReady' },
      'discovery runs as a Deployment, which has no such setting (tidb-operator ignored it too); remove it',
    ],
    [
      'configUpdateStrategy',
      { configUpdateStrategy: 'RollingUpdate' },
      'discovery has no ConfigMap (tidb-operator ignored this field too); remove it',
    ],
    [
      'suspendAction',
      { suspendAction: { suspendStatefulSet: true } },
      'discovery runs as a Deployment, which suspendStatefulSet does not stop; remove it',
    ],
    [
      'readinessProbe.type',
      { readinessProbe: { type: 'command' } },
      'the controller is checked over HTTP (/readyz); only initialDelaySeconds and periodSeconds are taken',
    ],
    [
      'livenessProbe.type',
      { livenessProbe: { type: 'command' } },
      'the controller is checked over HTTP (/healthz); only initialDelaySeconds and periodSeconds are taken',
    ],
  ])('fails on spec.discovery.%s', (field, discovery, reason) => {
    expect(renderErrors(cluster({ discovery }))).toMatch(
      new RegExp(
        `^test\\.yaml: document 1: spec\\.discovery\\.${field.replace('.', '\\.')} \\(line \\d+\\): not supported yet: ${escape(reason)}$`,
      ),
    );
  });

  test('the off values are accepted', () => {
    const objects = withDiscovery({ suspendAction: { suspendStatefulSet: false }, readinessProbe: { type: 'tcp' } });
    expect(deployment(objects).spec.replicas).toBe(1);
    expect(render(cluster({ discovery: {} })).length).toBe(render(cluster()).length);
  });

  test('fails on a tidb-operator image: it has no tidb-gitops controller', () => {
    expect(renderErrors(cluster({ discovery: { image: 'pingcap/tidb-operator:v1.6.1' } }))).toMatch(
      new RegExp(
        '^test\\.yaml: document 1: spec\\.discovery\\.image \\(line \\d+\\): ' +
          escape(
            '"pingcap/tidb-operator:v1.6.1" is a tidb-operator image, which does not contain the tidb-gitops controller ' +
              '(tidb-operator ignored this field); remove it to use the tidb-gitops image, or name a tidb-gitops image',
          ) +
          '$',
      ),
    );
    expect(render(cluster({ discovery: { image: 'mirror.local/tidb-operator-tools/tidb-gitops:1' } })).length).toBeGreaterThan(0);
  });

  test('fails on requests.storage: nothing to size', () => {
    expect(renderErrors(cluster({ discovery: { requests: { storage: '1Gi' } } }))).toMatch(
      /^test\.yaml: document 1: spec\.discovery\.requests\.storage \(line \d+\): discovery has no volume for storage to size; remove it$/,
    );
  });

  test('fails on fields the CRD does not have for discovery, as unknown fields', () => {
    expect(renderErrors(cluster({ discovery: { replicas: 2 } }))).toContain('spec.discovery.replicas');
  });
});

describe('component settings carry the force-upgrade annotation', () => {
  const settingsOf = (objects: Obj[]) =>
    objects.filter((o) => o.kind === 'StatefulSet').map((o) => JSON.parse(o.metadata.annotations[ANNOTATION.settings]).forceUpgrade);

  test('"true" on the TidbCluster sets forceUpgrade on every component; anything else does not', () => {
    expect(settingsOf(render(cluster({}, { annotations: { 'tidb.pingcap.com/force-upgrade': 'true' } })))).toEqual([true, true, true]);
    expect(settingsOf(render(cluster({}, { annotations: { 'tidb.pingcap.com/force-upgrade': 'yes' } })))).toEqual([false, false, false]);
    expect(settingsOf(render(cluster()))).toEqual([false, false, false]);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
