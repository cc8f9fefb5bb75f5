/**
 * What the API server refuses in the Pod, container, claim and Service fields a TidbCluster passes
 * through is refused at render, with the path and line of the input (or, where only the rendered
 * objects show it, the rendered object and field). test/real/fuzz.test.ts checks the other direction
 * against a real API server: what is rendered, it accepts.
 */
import { stringify } from 'yaml';
import { renderClusters } from '../../../src/render/render';
import { loadTidbClusters } from '../../../src/tidbcluster/load';
import { cluster, render, type Obj } from '../../support/render';

/** The input errors of a cluster with `spec` merged in, one line each, and the input's lines. */
function inputErrors(spec: Obj): { errors: string[]; lines: string[] } {
  const text = stringify(cluster(spec));
  return { errors: loadTidbClusters(text, 'c.yaml', { kubeVersion: '1.32' }).errors.map((e) => e.message), lines: text.split('\n') };
}

/** The problems found in the rendered objects of an input that loads. */
function renderProblems(spec: Obj): string[] {
  const loaded = loadTidbClusters(stringify(cluster(spec)), 'c.yaml', { kubeVersion: '1.32' });
  expect(loaded.errors.map((e) => e.message)).toEqual([]);
  return renderClusters(loaded.clusters.map((c) => c.resolved)).flatMap((r) => r.problems);
}

const pd = (fields: Obj) => ({ pd: { replicas: 3, requests: { storage: '10Gi' }, ...fields } });

test.each<[string, Obj, string]>([
  [
    'a toleration without a key needs Exists',
    pd({ tolerations: [{ operator: 'Equal', value: 'x' }] }),
    'spec.pd.tolerations[0].operator: a toleration without a key must have operator Exists',
  ],
  [
    'Exists takes no value',
    pd({ tolerations: [{ key: 'k', operator: 'Exists', value: 'v' }] }),
    'spec.pd.tolerations[0].value: a toleration with operator Exists has no value',
  ],
  [
    'tolerationSeconds needs NoExecute',
    pd({ tolerations: [{ key: 'k', effect: 'NoSchedule', tolerationSeconds: 30 }] }),
    'spec.pd.tolerations[0].effect: tolerationSeconds needs effect NoExecute',
  ],
  ['a negative request', pd({ requests: { storage: '10Gi', cpu: '-1' } }), 'spec.pd.requests.cpu: "-1" is negative'],
  [
    'a request above its limit',
    pd({ requests: { storage: '10Gi', memory: '2Gi' }, limits: { memory: '1Gi' } }),
    'spec.pd.requests.memory: the request "2Gi" is above the limit "1Gi"',
  ],
  [
    'huge pages alone',
    pd({ requests: { storage: '10Gi' }, limits: { 'hugepages-2Mi': '2Mi' } }),
    'spec.pd.limits: huge pages need a cpu or memory request or limit beside them',
  ],
  ['a resource name without a domain', pd({ limits: { gpu: '1' } }), 'spec.pd.limits.gpu: "gpu" is not a resource a container can ask for'],
  [
    'an extended resource requested without a limit',
    pd({ requests: { storage: '10Gi', 'example.com/gpu': '1' } }),
    'spec.pd.requests["example.com/gpu"]: example.com/gpu is requested, so it needs a limit too',
  ],
  ['a zero volume', pd({ requests: { storage: '0' } }), 'spec.pd.requests.storage: a volume of "0": its size must be above zero'],
  [
    'value and valueFrom',
    pd({ env: [{ name: 'A', value: 'x', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }] }),
    'spec.pd.env[0].value: an environment variable has either a value or valueFrom, not both',
  ],
  [
    'a field an env var cannot read',
    pd({ env: [{ name: 'A', valueFrom: { fieldRef: { fieldPath: 'spec.bogus' } } }] }),
    'spec.pd.env[0].valueFrom.fieldRef.fieldPath: "spec.bogus" is not a field an environment variable can read',
  ],
  ['envFrom without a source', pd({ envFrom: [{ prefix: 'P_' }] }), 'spec.pd.envFrom[0]: envFrom needs configMapRef or secretRef'],
  ['dnsPolicy None without nameservers', pd({ dnsPolicy: 'None' }), 'spec.pd.dnsPolicy: dnsPolicy None takes every setting from dnsConfig'],
  [
    'a nameserver that is no IP',
    pd({ dnsConfig: { nameservers: ['dns.example.com'] } }),
    'spec.pd.dnsConfig.nameservers[0]: "dns.example.com" is not an IP address',
  ],
  [
    'a preference of weight 0',
    pd({
      affinity: {
        podAntiAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 0, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname' } }],
        },
      },
    }),
    'weight: a preference weight is 1 to 100, got 0',
  ],
  [
    'a pod affinity term without a topologyKey',
    pd({
      affinity: {
        podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: '', labelSelector: { matchLabels: { a: 'b' } } }] },
      },
    }),
    'spec.pd.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: a pod affinity term needs a topologyKey',
  ],
  [
    'In without values',
    pd({
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: [] }] }],
          },
        },
      },
    }),
    'matchExpressions[0].values: operator In needs at least one value',
  ],
  [
    'a negative user ID',
    pd({ podSecurityContext: { runAsUser: -1 } }),
    'spec.pd.podSecurityContext.runAsUser: -1 is not a user or group ID',
  ],
  [
    'a sysctl name with a space',
    pd({ podSecurityContext: { sysctls: [{ name: 'net core', value: '1' }] } }),
    'spec.pd.podSecurityContext.sysctls[0].name: "net core" is not a sysctl name',
  ],
  [
    'privileged without privilege escalation',
    pd({ additionalContainers: [{ name: 'x', image: 'busybox', securityContext: { privileged: true, allowPrivilegeEscalation: false } }] }),
    'spec.pd.additionalContainers[0].securityContext.allowPrivilegeEscalation: a privileged container always can escalate privileges',
  ],
  [
    'a pull policy Kubernetes does not know',
    pd({ imagePullPolicy: 'Sometimes' }),
    'spec.pd.imagePullPolicy: expected Always, Never, IfNotPresent, got "Sometimes"',
  ],
  [
    'a storage volume whose claim name is too long once prefixed',
    { tikv: { replicas: 3, requests: { storage: '10Gi' }, storageVolumes: [{ name: 'a'.repeat(60), storageSize: '1Gi' }] } },
    `spec.tikv.storageVolumes[0].name: "tikv-${'a'.repeat(60)}" is not a valid volume name once prefixed`,
  ],
  [
    'two storage volumes of one name',
    {
      tikv: {
        replicas: 3,
        requests: { storage: '10Gi' },
        storageVolumes: [
          { name: 'raft', storageSize: '1Gi' },
          { name: 'raft', storageSize: '2Gi' },
        ],
      },
    },
    'spec.tikv.storageVolumes[1].name: two storage volumes are named raft; each needs its own name',
  ],
  [
    'hugepages that are not whole pages',
    pd({ requests: { storage: '10Gi', memory: '1Gi', 'hugepages-2Mi': '3Mi' }, limits: { 'hugepages-2Mi': '3Mi' } }),
    'spec.pd.requests.hugepages-2Mi: "3Mi" is not a whole number of 2Mi pages',
  ],
  [
    'two spread constraints over one key',
    pd({ topologySpreadConstraints: [{ topologyKey: 'zone' }, { topologyKey: 'zone' }] }),
    'spec.pd.topologySpreadConstraints[1].topologyKey: two constraints spread over zone; give each key once',
  ],
  [
    'a StorageClass name with capitals',
    pd({ storageClassName: 'Fast_SSD' }),
    'spec.pd.storageClassName: "Fast_SSD" is not a StorageClass name',
  ],
  [
    'a node port on a ClusterIP Service',
    { tidb: { replicas: 2, service: { type: 'ClusterIP', mysqlNodePort: 30001 } } },
    'spec.tidb.service.mysqlNodePort: a node port needs type NodePort or LoadBalancer, not ClusterIP',
  ],
  [
    'an external traffic policy on a ClusterIP Service',
    { tidb: { replicas: 2, service: { externalTrafficPolicy: 'Local' } } },
    'spec.tidb.service.externalTrafficPolicy: only a Service of type NodePort or LoadBalancer has an external traffic policy, not ClusterIP',
  ],
  [
    'a headless LoadBalancer',
    { tidb: { replicas: 2, service: { type: 'LoadBalancer', clusterIP: 'None' } } },
    'spec.tidb.service.clusterIP: clusterIP None (headless) is for type ClusterIP, not LoadBalancer',
  ],
])('%s is refused where it is written', (_name, spec, expected) => {
  const { errors, lines } = inputErrors(spec);
  // `<path> (line N): <why>`, and line N is where the field (or its parent, for a missing one) is written.
  const [path, why] = [expected.slice(0, expected.indexOf(': ')), expected.slice(expected.indexOf(': ') + 2)];
  const error = errors.find((e) => e.includes(`${path} (line `) && e.includes(why));
  expect(error ?? errors).toEqual(expect.stringMatching(/^c\.yaml: document 1: spec\./));
  // A mapping's line is that of its first entry, so the key may be on the line before.
  const n = Number(/\(line (\d+)\)/.exec(error!)![1]);
  const near = `${lines[n - 2]}\n${lines[n - 1]}`;
  const keys = path.split(/[.[\]"]+/).filter((k) => k !== '' && !/^\d+$/.test(k));
  expect(keys.slice(-2).some((k) => near.includes(k)) || /^\s*- /.test(lines[n - 1])).toBe(true);
});

test.each<[string, Obj, string]>([
  [
    'an additional volume named like a rendered one',
    pd({ additionalVolumes: [{ name: 'config', emptyDir: {} }] }),
    'StatefulSet demo-pd: spec.template.spec.volumes[3].name: two volumes are named config; give the additional one another name',
  ],
  [
    'an init container named like the main one',
    pd({ initContainers: [{ name: 'pd', image: 'busybox' }] }),
    'StatefulSet demo-pd: spec.template.spec.containers[0].name: two containers are named pd (init containers and containers share one set of names)',
  ],
  [
    'a mount of a volume the Pod does not have',
    pd({ additionalVolumeMounts: [{ name: 'missing', mountPath: '/x' }] }),
    'StatefulSet demo-pd: spec.template.spec.containers[0].volumeMounts[4].name: no volume of the Pod is named missing',
  ],
  [
    'a mount at a rendered path',
    pd({ additionalVolumes: [{ name: 'extra', emptyDir: {} }], additionalVolumeMounts: [{ name: 'extra', mountPath: '/etc/pd' }] }),
    'StatefulSet demo-pd: spec.template.spec.containers[0].volumeMounts[4].mountPath: two mounts of container pd are at /etc/pd',
  ],
  [
    'an additional Service port named like a rendered one',
    { tidb: { replicas: 2, service: { type: 'NodePort', additionalPorts: [{ name: 'mysql-client', port: 5000 }] } } },
    'Service demo-tidb: spec.ports[1].name: two ports of the Service are named mysql-client',
  ],
  [
    'two node ports the same',
    { tidb: { replicas: 2, service: { type: 'NodePort', mysqlNodePort: 30001, statusNodePort: 30001 } } },
    'Service demo-tidb: spec.ports[1].nodePort: two ports of the Service ask for node port 30001/TCP',
  ],
  [
    'an init container without an image',
    { tidb: { replicas: 1, initContainers: [{ name: 'sidecar', image: '' }] } },
    'StatefulSet demo-tidb: spec.template.spec.initContainers[0].image: container sidecar needs an image',
  ],
  [
    'a network sysctl with hostNetwork',
    pd({
      hostNetwork: true,
      podSecurityContext: {
        sysctls: [
          { name: 'kernel.shm_rmid_forced', value: '1' },
          { name: 'net.core.somaxconn', value: '1024' },
        ],
      },
    }),
    "StatefulSet demo-pd: spec.template.spec.securityContext.sysctls[1].name: net.core.somaxconn cannot be set with hostNetwork: the Pod shares the node's network namespace",
  ],
  [
    'a host port other than the container port with hostNetwork',
    pd({ hostNetwork: true, additionalContainers: [{ name: 'x', image: 'busybox', ports: [{ containerPort: 8080, hostPort: 9090 }] }] }),
    'StatefulSet demo-pd: spec.template.spec.containers[1].ports[0].hostPort: with hostNetwork the host port is the container port: 9090 is not 8080',
  ],
])('%s is refused in the rendered objects', (_name, spec, expected) => {
  expect(renderProblems(spec)).toContain(expected);
});

test('what the API server takes is taken: valid values in the same fields render', () => {
  const objects = render(
    cluster({
      pd: {
        replicas: 3,
        requests: { storage: '10Gi', cpu: '500m', memory: '1Gi', 'hugepages-2Mi': '4Mi', 'example.com/gpu': '1' },
        limits: { memory: '2Gi', 'hugepages-2Mi': '4Mi', 'example.com/gpu': '1' },
        tolerations: [{ operator: 'Exists' }, { key: 'dedicated', value: 'tidb', effect: 'NoExecute', tolerationSeconds: 30 }],
        env: [{ name: 'A', valueFrom: { fieldRef: { fieldPath: "metadata.labels['app.kubernetes.io/name']" } } }],
        envFrom: [{ configMapRef: { name: 'c' } }, { prefix: 'S_', secretRef: { name: 's' } }],
        dnsPolicy: 'None',
        dnsConfig: {
          nameservers: ['10.0.0.10', '2001:db8::1'],
          searches: ['svc.cluster.local.'],
          options: [{ name: 'ndots', value: '2' }],
        },
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchExpressions: [{ key: 'cpus', operator: 'Gt', values: ['4'] }] }],
            },
          },
        },
        podSecurityContext: { runAsUser: 0, fsGroup: 2000, sysctls: [{ name: 'net.core.somaxconn', value: '1024' }] },
        additionalVolumes: [{ name: 'extra', emptyDir: {} }],
        additionalVolumeMounts: [{ name: 'extra', mountPath: '/extra' }],
        storageClassName: 'fast-ssd',
      },
      tidb: {
        replicas: 2,
        service: {
          type: 'LoadBalancer',
          mysqlNodePort: 30001,
          statusNodePort: 30002,
          externalTrafficPolicy: 'Local',
          loadBalancerSourceRanges: ['10.0.0.0/8'],
        },
      },
    }),
    { kubeVersion: '1.32' },
  );
  expect(objects.find((o) => o.kind === 'Service' && o.metadata.name === 'demo-tidb')?.spec.externalTrafficPolicy).toBe('Local');
});

test('an object too large for client-side apply is refused with its size; one just under the limit renders', () => {
  const big = (n: number) => ({ tidb: { replicas: 2, config: { labels: { note: 'x'.repeat(n) } } } });
  expect(renderProblems(big(300_000))).toEqual([
    expect.stringMatching(
      /^ConfigMap demo-tidb(-[0-9a-f]+)?: the object takes 29\d\.\d KiB: too large for client-side apply \(kubectl apply, Argo CD's default\), which keeps it in an annotation of at most 256\.0 KiB/,
    ),
  ]);
  expect(renderProblems(big(200_000))).toEqual([]);
});
