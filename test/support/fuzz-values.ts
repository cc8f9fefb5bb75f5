/**
 * Values for the fields the renderer passes through to Kubernetes, valid and not, for the real-API
 * fuzz suites (test/real/fuzz.test.ts, test/real/fuzz-companions.test.ts): what users write, and the
 * mistakes the API server refuses.
 */
import fc from 'fast-check';
import type { Obj } from '../kube/client';

export const pick = <T>(...values: T[]) => fc.constantFrom(...values);
export const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
/** Present in one case of three. */
export const sometimes = <T>(a: fc.Arbitrary<T>) => fc.oneof({ arbitrary: fc.constant(undefined), weight: 2 }, { arbitrary: a, weight: 1 });
export const record = <T extends Record<string, fc.Arbitrary<unknown>>>(r: T) => fc.record(r, { requiredKeys: [] });

export const quantity = pick('1', '0', '-1', '500m', '1Gi', '2Gi', '0.5', '100Mi', '1e3', '2', '4Gi');
export const labelKey = pick('dedicated', 'example.com/zone', 'bad key', '', 'kubernetes.io/hostname', 'tidb');

export const toleration = record({
  key: labelKey,
  operator: pick('Exists', 'Equal', 'In', ''),
  value: pick('', 'tidb', 'has space'),
  effect: pick('', 'NoSchedule', 'PreferNoSchedule', 'NoExecute', 'Bogus'),
  tolerationSeconds: pick(30, 0, -1),
});

export const resources = record({
  cpu: quantity,
  memory: quantity,
  'hugepages-2Mi': quantity,
  'example.com/gpu': pick('1', '0.5', '2'),
  weird: pick('1'),
  'ephemeral-storage': quantity,
});

export const fieldPath = pick(
  'metadata.name',
  'metadata.namespace',
  'status.podIP',
  'spec.nodeName',
  'spec.bogus',
  "metadata.labels['app']",
  'metadata.annotations',
  'status.hostIPs',
);
export const valueFrom = record({
  fieldRef: record({ fieldPath }),
  secretKeyRef: fc.record({ name: pick('s', ''), key: pick('k', 'bad/key') }),
  configMapKeyRef: fc.record({ name: pick('c'), key: pick('k') }),
  resourceFieldRef: record({ resource: pick('limits.cpu', 'requests.memory', 'cpu', 'limits.bogus') }),
});
export const envVar = record({ name: pick('A', 'B_1', '1BAD', 'has space', ''), value: pick('x', ''), valueFrom });
export const envFrom = record({
  prefix: pick('P_', '1BAD', ''),
  configMapRef: fc.record({ name: pick('c', '') }),
  secretRef: fc.record({ name: pick('s') }),
});

export const nodeSelectorRequirement = fc.record({
  key: labelKey,
  operator: pick('In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt', 'Near'),
  values: fc.array(pick('a', '1', 'x y'), { maxLength: 2 }),
});
export const term = fc.record({ matchExpressions: fc.array(nodeSelectorRequirement, { maxLength: 2 }) });
export const podTerm = fc.record({
  topologyKey: pick('kubernetes.io/hostname', '', 'bad key'),
  labelSelector: maybe(fc.record({ matchLabels: fc.dictionary(pick('app', 'bad key'), pick('x', 'bad value!'), { maxKeys: 1 }) })),
});
export const affinity = record({
  nodeAffinity: record({
    requiredDuringSchedulingIgnoredDuringExecution: fc.record({ nodeSelectorTerms: fc.array(term, { maxLength: 2 }) }),
    preferredDuringSchedulingIgnoredDuringExecution: fc.array(fc.record({ weight: pick(0, 1, 50, 100, 101), preference: term }), {
      maxLength: 2,
    }),
  }),
  podAntiAffinity: record({
    requiredDuringSchedulingIgnoredDuringExecution: fc.array(podTerm, { maxLength: 2 }),
    preferredDuringSchedulingIgnoredDuringExecution: fc.array(fc.record({ weight: pick(0, 1, 100, 101), podAffinityTerm: podTerm }), {
      maxLength: 2,
    }),
  }),
});

export const podSecurityContext = record({
  runAsUser: pick(1000, 0, -1),
  runAsGroup: pick(1000, -5),
  fsGroup: pick(2000, -1),
  runAsNonRoot: fc.boolean(),
  sysctls: fc.array(fc.record({ name: pick('net.core.somaxconn', 'bad name', 'kernel.shm_rmid_forced'), value: pick('1', '') }), {
    maxLength: 2,
  }),
  supplementalGroups: fc.array(pick(1, -1), { maxLength: 2 }),
});
export const containerSecurityContext = record({
  privileged: fc.boolean(),
  allowPrivilegeEscalation: fc.boolean(),
  runAsUser: pick(1000, -1),
  capabilities: record({ add: fc.array(pick('NET_ADMIN', 'SYS_TIME'), { maxLength: 1 }) }),
  procMount: pick('Default', 'Unmasked', 'Bogus'),
});

export const dnsConfig = record({
  nameservers: fc.array(pick('1.1.1.1', '2001:db8::1', 'not-an-ip'), { maxLength: 4 }),
  searches: fc.array(pick('svc.cluster.local', 'Bad_Domain', 'example.com'), { maxLength: 7 }),
  options: fc.array(record({ name: pick('ndots', ''), value: pick('2') }), { maxLength: 2 }),
});

export const containerPort = record({
  containerPort: pick(8080, 4000, 2379),
  name: pick('extra', 'server', 'client', 'Bad'),
  hostPort: pick(8080, 9090),
  protocol: pick('TCP', 'UDP', 'SCTP', 'HTTP'),
});
export const extraContainer = record({
  name: pick('sidecar', 'pd', 'tikv', 'tidb', 'slowlog', 'init'),
  image: pick('busybox:1.36', '', ' busybox'),
  imagePullPolicy: pick('Always', 'Sometimes'),
  ports: fc.array(containerPort, { maxLength: 2 }),
  env: fc.array(envVar, { maxLength: 2 }),
  resources: record({ requests: resources, limits: resources }),
  volumeMounts: fc.array(fc.record({ name: pick('extra', 'config', 'missing'), mountPath: pick('/extra', '/etc/pd', 'relative') }), {
    maxLength: 2,
  }),
});
export const volume = fc.record({
  name: pick('extra', 'config', 'annotations', 'Bad_Name', 'startup-script'),
  emptyDir: maybe(fc.constant({})),
});
export const volumeMount = fc.record({
  name: pick('extra', 'config', 'missing'),
  mountPath: pick('/extra', '/etc/pd', '/var/lib/tikv', '/etc/podinfo', 'relative', '/extra/'),
});

export const storageVolume = record({
  name: pick('raft', 'Bad_Name', 'pd', 'tikv', 'a'.repeat(60)),
  storageSize: pick('1Gi', '0', '-1Gi'),
  mountPath: pick('/var/lib/raft', '/var/lib/tikv', ''),
  storageClassName: pick('fast', 'Bad_Class'),
});

/** The Pods the StatefulSet and ReplicaSet controllers would create, the claims the StatefulSet's templates make. */
export function podsAndClaims(objects: readonly Obj[], namespace: string): Obj[] {
  const out: Obj[] = [];
  for (const o of objects) {
    if (o.kind !== 'StatefulSet' && o.kind !== 'Deployment') continue;
    const name = `${o.metadata.name}-0`;
    const spec = structuredClone(o.spec.template.spec);
    for (const claim of o.spec.volumeClaimTemplates ?? []) {
      const claimName = `${claim.metadata.name}-${name}`;
      // The StatefulSet controller's updateStorage: a template's volume replaces one of the same name.
      spec.volumes = [
        ...(spec.volumes ?? []).filter((v: Obj) => v.name !== claim.metadata.name),
        { name: claim.metadata.name, persistentVolumeClaim: { claimName } },
      ];
      out.push({
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: claimName, namespace, labels: o.spec.selector.matchLabels },
        spec: claim.spec,
      });
    }
    if (o.kind === 'StatefulSet') Object.assign(spec, { hostname: name, subdomain: o.spec.serviceName });
    out.push({ apiVersion: 'v1', kind: 'Pod', metadata: { ...o.spec.template.metadata, name, namespace }, spec });
  }
  return out;
}
