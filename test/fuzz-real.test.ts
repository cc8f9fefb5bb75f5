/**
 * The real API server as the oracle: clusters whose components carry generated values in the fields
 * the renderer passes through to Kubernetes (tolerations, resources, env, affinity, security contexts,
 * DNS, extra containers, volumes and mounts, storage, Services), rendered in process. Every render that
 * is accepted must be accepted by a real kube-apiserver (v1.32, test/kube/) too, with a server dry run:
 *
 * - every object created as `kubectl apply` creates it (with its last-applied annotation) and applied
 *   server-side as Flux applies it;
 * - a Pod built from every Pod template the way the StatefulSet and ReplicaSet controllers build it
 *   (the claims' volumes added), and a claim from every claim template.
 *
 * Anything refused there is a bug of the renderer: the API server does not check a StatefulSet's Pod
 * template when the StatefulSet is applied, so such a cluster syncs green and never gets a Pod.
 *
 * The seed is fixed; `FUZZ_REAL_RUNS=N` and `FUZZ_SEED=S` explore further.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { parse } from 'yaml';
import { renderClusters } from '../src/render/render';
import { loadTidbClusters } from '../src/tidbcluster/load';
import { operatorExample } from '../scripts/upstream';
import { resourcePath, type Obj } from './kube/client';
import { realApiSuite } from './kube/suite';

const RUNS = Number(process.env.FUZZ_REAL_RUNS ?? 200);
const SEED = Number(process.env.FUZZ_SEED ?? 23);
const NAMESPACE = 'oracle';

const suite = realApiSuite();
jest.setTimeout(600_000);

const BASE = parse(readFileSync(operatorExample('basic'), 'utf8')) as Obj;

// ---- values for the fields the renderer passes through, valid and not ----

const pick = <T>(...values: T[]) => fc.constantFrom(...values);
const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
/** Present in one case of three. */
const sometimes = <T>(a: fc.Arbitrary<T>) => fc.oneof({ arbitrary: fc.constant(undefined), weight: 2 }, { arbitrary: a, weight: 1 });
const record = <T extends Record<string, fc.Arbitrary<unknown>>>(r: T) => fc.record(r, { requiredKeys: [] });

const quantity = pick('1', '0', '-1', '500m', '1Gi', '2Gi', '0.5', '100Mi', '1e3', '2', '4Gi');
const labelKey = pick('dedicated', 'example.com/zone', 'bad key', '', 'kubernetes.io/hostname', 'tidb');

const toleration = record({
  key: labelKey,
  operator: pick('Exists', 'Equal', 'In', ''),
  value: pick('', 'tidb', 'has space'),
  effect: pick('', 'NoSchedule', 'PreferNoSchedule', 'NoExecute', 'Bogus'),
  tolerationSeconds: pick(30, 0, -1),
});

const resources = record({ cpu: quantity, memory: quantity, 'hugepages-2Mi': quantity, 'example.com/gpu': pick('1', '0.5', '2'), weird: pick('1'), 'ephemeral-storage': quantity });

const fieldPath = pick('metadata.name', 'metadata.namespace', 'status.podIP', 'spec.nodeName', 'spec.bogus', "metadata.labels['app']", 'metadata.annotations', 'status.hostIPs');
const valueFrom = record({
  fieldRef: record({ fieldPath }),
  secretKeyRef: fc.record({ name: pick('s', ''), key: pick('k', 'bad/key') }),
  configMapKeyRef: fc.record({ name: pick('c'), key: pick('k') }),
  resourceFieldRef: record({ resource: pick('limits.cpu', 'requests.memory', 'cpu', 'limits.bogus') }),
});
const envVar = record({ name: pick('A', 'B_1', '1BAD', 'has space', ''), value: pick('x', ''), valueFrom });
const envFrom = record({ prefix: pick('P_', '1BAD', ''), configMapRef: fc.record({ name: pick('c', '') }), secretRef: fc.record({ name: pick('s') }) });

const nodeSelectorRequirement = fc.record({ key: labelKey, operator: pick('In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt', 'Near'), values: fc.array(pick('a', '1', 'x y'), { maxLength: 2 }) });
const term = fc.record({ matchExpressions: fc.array(nodeSelectorRequirement, { maxLength: 2 }) });
const podTerm = fc.record({ topologyKey: pick('kubernetes.io/hostname', '', 'bad key'), labelSelector: maybe(fc.record({ matchLabels: fc.dictionary(pick('app', 'bad key'), pick('x', 'bad value!'), { maxKeys: 1 }) })) });
const affinity = record({
  nodeAffinity: record({
    requiredDuringSchedulingIgnoredDuringExecution: fc.record({ nodeSelectorTerms: fc.array(term, { maxLength: 2 }) }),
    preferredDuringSchedulingIgnoredDuringExecution: fc.array(fc.record({ weight: pick(0, 1, 50, 100, 101), preference: term }), { maxLength: 2 }),
  }),
  podAntiAffinity: record({
    requiredDuringSchedulingIgnoredDuringExecution: fc.array(podTerm, { maxLength: 2 }),
    preferredDuringSchedulingIgnoredDuringExecution: fc.array(fc.record({ weight: pick(0, 1, 100, 101), podAffinityTerm: podTerm }), { maxLength: 2 }),
  }),
});

const podSecurityContext = record({
  runAsUser: pick(1000, 0, -1),
  runAsGroup: pick(1000, -5),
  fsGroup: pick(2000, -1),
  runAsNonRoot: fc.boolean(),
  sysctls: fc.array(fc.record({ name: pick('net.core.somaxconn', 'bad name', 'kernel.shm_rmid_forced'), value: pick('1', '') }), { maxLength: 2 }),
  supplementalGroups: fc.array(pick(1, -1), { maxLength: 2 }),
});
const containerSecurityContext = record({
  privileged: fc.boolean(),
  allowPrivilegeEscalation: fc.boolean(),
  runAsUser: pick(1000, -1),
  capabilities: record({ add: fc.array(pick('NET_ADMIN', 'SYS_TIME'), { maxLength: 1 }) }),
  procMount: pick('Default', 'Unmasked', 'Bogus'),
});

const dnsConfig = record({
  nameservers: fc.array(pick('1.1.1.1', '2001:db8::1', 'not-an-ip'), { maxLength: 4 }),
  searches: fc.array(pick('svc.cluster.local', 'Bad_Domain', 'example.com'), { maxLength: 7 }),
  options: fc.array(record({ name: pick('ndots', ''), value: pick('2') }), { maxLength: 2 }),
});

const containerPort = record({ containerPort: pick(8080, 4000, 2379), name: pick('extra', 'server', 'client', 'Bad'), hostPort: pick(8080, 9090), protocol: pick('TCP', 'UDP', 'SCTP', 'HTTP') });
const extraContainer = record({
  name: pick('sidecar', 'pd', 'tikv', 'tidb', 'slowlog', 'init'),
  image: pick('busybox:1.36', '', ' busybox'),
  imagePullPolicy: pick('Always', 'Sometimes'),
  ports: fc.array(containerPort, { maxLength: 2 }),
  env: fc.array(envVar, { maxLength: 2 }),
  resources: record({ requests: resources, limits: resources }),
  volumeMounts: fc.array(fc.record({ name: pick('extra', 'config', 'missing'), mountPath: pick('/extra', '/etc/pd', 'relative') }), { maxLength: 2 }),
});
const volume = fc.record({ name: pick('extra', 'config', 'annotations', 'Bad_Name', 'startup-script'), emptyDir: maybe(fc.constant({})) });
const volumeMount = fc.record({ name: pick('extra', 'config', 'missing'), mountPath: pick('/extra', '/etc/pd', '/var/lib/tikv', '/etc/podinfo', 'relative', '/extra/') });

const storageVolume = record({ name: pick('raft', 'Bad_Name', 'pd', 'tikv', 'a'.repeat(60)), storageSize: pick('1Gi', '0', '-1Gi'), mountPath: pick('/var/lib/raft', '/var/lib/tikv', ''), storageClassName: pick('fast', 'Bad_Class') });

const SERVICE_FIELDS: Record<string, fc.Arbitrary<unknown>> = {
  externalTrafficPolicy: pick('Local', 'Cluster'),
  clusterIP: pick('None', '10.0.0.10', 'bad'),
  loadBalancerSourceRanges: fc.array(pick('10.0.0.0/8', ' 192.168.0.0/16 ', '2001:db8::/32', 'not-a-cidr'), { maxLength: 1 }),
  externalName: pick('db.example.com'),
  // Node ports within the API server's default --service-node-port-range (30000-32767).
  mysqlNodePort: pick(30001, 30003),
  statusNodePort: pick(30001, 30002),
  additionalPorts: fc.array(record({ name: pick('extra', 'mysql-client', 'status'), port: pick(5000, 4000, 10080), targetPort: pick<number | string>(5000, 'extra'), protocol: pick('TCP', 'UDP') }), { maxLength: 2 }),
};
const service = fc.record({
  type: pick('ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'),
  rest: fc.uniqueArray(fc.constantFrom(...Object.keys(SERVICE_FIELDS)), { maxLength: 2 }).chain((keys) => fc.record(Object.fromEntries(keys.map((k) => [k, SERVICE_FIELDS[k]])))),
}).map(({ type, rest }) => ({ type, ...rest }));

/** One component's pass-through fields: a few at a time, so each case is about something. */
const FIELDS: Record<string, fc.Arbitrary<unknown>> = {
  tolerations: fc.array(toleration, { maxLength: 2 }),
  requests: resources,
  limits: resources,
  env: fc.array(envVar, { maxLength: 2 }),
  envFrom: fc.array(envFrom, { maxLength: 2 }),
  imagePullPolicy: pick('Always', 'IfNotPresent', 'Never', 'Sometimes'),
  dnsPolicy: pick('ClusterFirst', 'Default', 'None', 'ClusterFirstWithHostNet', 'Bogus'),
  dnsConfig,
  hostNetwork: fc.boolean(),
  affinity,
  podSecurityContext,
  securityContext: containerSecurityContext,
  schedulerName: pick('my-scheduler', 'Bad Name'),
  terminationGracePeriodSeconds: pick(30, 0, -1),
  additionalContainers: fc.array(extraContainer, { maxLength: 2 }),
  initContainers: fc.array(extraContainer, { maxLength: 1 }),
  additionalVolumes: fc.array(volume, { maxLength: 2 }),
  additionalVolumeMounts: fc.array(volumeMount, { maxLength: 2 }),
  storageClassName: pick('standard', 'Bad_Class', ''),
  storageVolumes: fc.array(storageVolume, { maxLength: 2 }),
  topologySpreadConstraints: fc.array(record({ topologyKey: pick('topology.kubernetes.io/zone', '', 'bad key') }), { maxLength: 2 }),
  priorityClassName: pick('Bad_Class', ''),
};
const componentPatch = fc
  .uniqueArray(fc.constantFrom(...Object.keys(FIELDS)), { minLength: 1, maxLength: 3 })
  .chain((keys) => fc.record(Object.fromEntries(keys.map((k) => [k, FIELDS[k]]))));

const casePatch = fc.record({
  component: pick('pd', 'tikv', 'tidb'),
  patch: componentPatch,
  storage: sometimes(pick('0', '-1Gi', '1Gi', '5Gi')),
  service: sometimes(service),
});

type Case = typeof casePatch extends fc.Arbitrary<infer T> ? T : never;

function clusterOf(c: Case): Obj {
  const cluster = structuredClone(BASE);
  cluster.metadata = { name: 'basic', namespace: NAMESPACE };
  const component = (cluster.spec[c.component] ??= {});
  Object.assign(component, structuredClone(c.patch));
  if (c.storage !== undefined && c.component !== 'tidb') component.requests = { ...component.requests, storage: c.storage };
  if (c.service !== undefined) cluster.spec.tidb.service = structuredClone(c.service);
  return cluster;
}

/** The Pods the StatefulSet and ReplicaSet controllers would create, the claims the StatefulSet's templates make. */
function podsAndClaims(objects: readonly Obj[]): Obj[] {
  const out: Obj[] = [];
  for (const o of objects) {
    if (o.kind !== 'StatefulSet' && o.kind !== 'Deployment') continue;
    const name = `${o.metadata.name}-0`;
    const spec = structuredClone(o.spec.template.spec);
    for (const claim of o.spec.volumeClaimTemplates ?? []) {
      const claimName = `${claim.metadata.name}-${name}`;
      // The StatefulSet controller's updateStorage: a template's volume replaces one of the same name.
      spec.volumes = [...(spec.volumes ?? []).filter((v: Obj) => v.name !== claim.metadata.name), { name: claim.metadata.name, persistentVolumeClaim: { claimName } }];
      out.push({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: claimName, namespace: NAMESPACE, labels: o.spec.selector.matchLabels }, spec: claim.spec });
    }
    if (o.kind === 'StatefulSet') Object.assign(spec, { hostname: name, subdomain: o.spec.serviceName });
    out.push({ apiVersion: 'v1', kind: 'Pod', metadata: { ...o.spec.template.metadata, name, namespace: NAMESPACE }, spec });
  }
  return out;
}

suite.describeReal('the real API server accepts every render the renderer accepts', () => {
  test(`${RUNS} generated clusters, seed ${SEED}`, async () => {
    const admin = suite.cp().admin();
    await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
    // What the Pods name and admission looks up: the ServiceAccount of the controller.
    await admin.create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'basic-discovery', namespace: NAMESPACE } });

    const cases = fc.sample(casePatch, { numRuns: RUNS, seed: SEED });
    const refused: string[] = [];
    const checked = new Set<string>();
    let accepted = 0;
    const dryRun = async (what: string, method: string, path: string, body: Obj, contentType?: string) => {
      const res = await admin.request(method, path, { body, contentType });
      // The ServiceAccount made above exists already: its create is refused for that alone.
      if (res.status === 409 && res.body?.reason === 'AlreadyExists') return;
      if (res.status >= 300) refused.push(`${what}: HTTP ${res.status}: ${res.body?.message ?? res.text.slice(0, 300)}`);
    };
    for (const [i, c] of cases.entries()) {
      const text = JSON.stringify(clusterOf(c));
      const loaded = loadTidbClusters(text, `case-${i}.yaml`, { kubeVersion: suite.cp().kubeVersion });
      if (loaded.errors.length > 0) continue;
      const rendered = renderClusters(loaded.clusters.map((x) => x.resolved));
      if (rendered.some((r) => r.problems.length > 0)) continue;
      accepted++;
      const objects: Obj[] = rendered.flatMap((r) => r.objects as Obj[]).map((o) => ({ ...o, metadata: { ...o.metadata, namespace: NAMESPACE } }));
      const requests: Promise<void>[] = [];
      for (const o of [...objects, ...podsAndClaims(objects)]) {
        const json = JSON.stringify(o);
        if (checked.has(json)) continue;
        checked.add(json);
        const what = `case ${i} ${JSON.stringify(c)}\n  ${o.kind} ${o.metadata.name}`;
        const collection = resourcePath(o.apiVersion, o.kind, NAMESPACE);
        if (o.kind === 'Pod' || o.kind === 'PersistentVolumeClaim') {
          requests.push(dryRun(what, 'POST', `${collection}?dryRun=All`, o));
          continue;
        }
        // kubectl apply's create: the object with its last-applied annotation, which must fit in 256 KiB.
        const lastApplied = { ...o, metadata: { ...o.metadata, annotations: { ...o.metadata.annotations, 'kubectl.kubernetes.io/last-applied-configuration': `${json}\n` } } };
        requests.push(dryRun(`${what} (client-side apply)`, 'POST', `${collection}?dryRun=All&fieldManager=kubectl-client-side-apply`, lastApplied));
        requests.push(dryRun(`${what} (server-side apply)`, 'PATCH', `${resourcePath(o.apiVersion, o.kind, NAMESPACE, o.metadata.name)}?dryRun=All&fieldManager=flux&force=true`, o, 'application/apply-patch+yaml'));
      }
      await Promise.all(requests);
    }
    // eslint-disable-next-line no-console
    console.log(`oracle: ${cases.length} cases, ${accepted} rendered, ${checked.size} distinct objects dry-run on the API server, seed ${SEED}`);
    expect(accepted).toBeGreaterThan(cases.length * 0.1);
    expect(refused).toEqual([]);
  });
});
