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
import { renderClusters } from '../../src/render/render';
import { loadTidbClusters } from '../../src/tidbcluster/load';
import { operatorExample } from '../../scripts/lib/upstream';
import { resourcePath, type Obj } from '../kube/client';
import { realApiSuite } from '../kube/suite';
import {
  affinity,
  containerSecurityContext,
  dnsConfig,
  envFrom,
  envVar,
  extraContainer,
  pick,
  podsAndClaims,
  podSecurityContext,
  record,
  resources,
  sometimes,
  storageVolume,
  toleration,
  volume,
  volumeMount,
} from '../support/fuzz-values';

const RUNS = Number(process.env.FUZZ_REAL_RUNS ?? 200);
const SEED = Number(process.env.FUZZ_SEED ?? 23);
const NAMESPACE = 'oracle';

const suite = realApiSuite();
jest.setTimeout(600_000);

const BASE = parse(readFileSync(operatorExample('basic'), 'utf8')) as Obj;

// ---- the cluster's own fields (values: test/support/fuzz-values.ts) ----

const SERVICE_FIELDS: Record<string, fc.Arbitrary<unknown>> = {
  externalTrafficPolicy: pick('Local', 'Cluster'),
  clusterIP: pick('None', '10.0.0.10', 'bad'),
  loadBalancerSourceRanges: fc.array(pick('10.0.0.0/8', ' 192.168.0.0/16 ', '2001:db8::/32', 'not-a-cidr'), { maxLength: 1 }),
  externalName: pick('db.example.com'),
  // Node ports within the API server's default --service-node-port-range (30000-32767).
  mysqlNodePort: pick(30001, 30003),
  statusNodePort: pick(30001, 30002),
  additionalPorts: fc.array(
    record({
      name: pick('extra', 'mysql-client', 'status'),
      port: pick(5000, 4000, 10080),
      targetPort: pick<number | string>(5000, 'extra'),
      protocol: pick('TCP', 'UDP'),
    }),
    { maxLength: 2 },
  ),
};
const service = fc
  .record({
    type: pick('ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'),
    rest: fc
      .uniqueArray(fc.constantFrom(...Object.keys(SERVICE_FIELDS)), { maxLength: 2 })
      .chain((keys) => fc.record(Object.fromEntries(keys.map((k) => [k, SERVICE_FIELDS[k]])))),
  })
  .map(({ type, rest }) => ({ type, ...rest }));

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
      const objects: Obj[] = rendered
        .flatMap((r) => r.objects as Obj[])
        .map((o) => ({ ...o, metadata: { ...o.metadata, namespace: NAMESPACE } }));
      const requests: Promise<void>[] = [];
      for (const o of [...objects, ...podsAndClaims(objects, NAMESPACE)]) {
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
        const lastApplied = {
          ...o,
          metadata: {
            ...o.metadata,
            annotations: { ...o.metadata.annotations, 'kubectl.kubernetes.io/last-applied-configuration': `${json}\n` },
          },
        };
        requests.push(
          dryRun(`${what} (client-side apply)`, 'POST', `${collection}?dryRun=All&fieldManager=kubectl-client-side-apply`, lastApplied),
        );
        requests.push(
          dryRun(
            `${what} (server-side apply)`,
            'PATCH',
            `${resourcePath(o.apiVersion, o.kind, NAMESPACE, o.metadata.name)}?dryRun=All&fieldManager=flux&force=true`,
            o,
            'application/apply-patch+yaml',
          ),
        );
      }
      await Promise.all(requests);
    }
    // eslint-disable-next-line no-console
    console.log(
      `oracle: ${cases.length} cases, ${accepted} rendered, ${checked.size} distinct objects dry-run on the API server, seed ${SEED}`,
    );
    expect(accepted).toBeGreaterThan(cases.length * 0.1);
    expect(refused).toEqual([]);
  });
});
