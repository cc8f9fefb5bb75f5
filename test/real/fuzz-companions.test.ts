/**
 * The real API server as the oracle for the documents beside a cluster: Backups, BackupSchedules,
 * Restores, TidbMonitors, TidbInitializers and objects passed through, with generated values (valid
 * and not) in the fields that reach Kubernetes, rendered by `render` as a user runs it. Every render
 * that is accepted must be accepted by a real kube-apiserver (test/kube/) too, with a server dry run:
 *
 * - every object as `kubectl apply` creates it (with its last-applied annotation) and applied
 *   server-side as Flux applies it, and the Pods of its StatefulSets and Deployments;
 * - the Jobs that will be created from it later: a CronJob's Job (named as the CronJob controller
 *   names it), a one-shot operation's Job and a log backup's command Jobs from their ConfigMaps (named
 *   as the controller names them, after many retries), and the Pod of each of those Jobs with the labels
 *   the Job controller gives it.
 *
 * Anything refused there is a bug of the renderer: such an input syncs green and fails later.
 *
 * The seed is fixed; `FUZZ_REAL_RUNS=N` and `FUZZ_SEED=S` explore further.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { parseAllDocuments, stringify } from 'yaml';
import { renderCommand } from '../../src/cli/render';
import { LOG_COMMANDS, logCommandJobName, logCommandKey, OPERATION_KEY } from '../../src/tidbcluster/names';
import { resourcePath, type Obj } from '../kube/client';
import { realApiSuite } from '../kube/suite';
import {
  affinity,
  envVar,
  maybe,
  pick,
  podsAndClaims,
  podSecurityContext,
  record,
  resources,
  sometimes,
  toleration,
  volume,
  volumeMount,
} from '../support/fuzz-values';

const RUNS = Number(process.env.FUZZ_REAL_RUNS ?? 200);
const SEED = Number(process.env.FUZZ_SEED ?? 29);
const NAMESPACE = 'oracle-companions';

const suite = realApiSuite();
jest.setTimeout(600_000);

// ---- the documents beside a cluster, with values valid and not ----

/** A valid value six times in seven, else one of the mistakes: most documents render, each with few mistakes. */
const mostly = <T>(valid: fc.Arbitrary<T>, ...wrong: T[]) =>
  fc.oneof({ arbitrary: valid, weight: 6 }, { arbitrary: fc.constantFrom(...wrong), weight: 1 });
const name = mostly(pick('demo-nightly', 'pd', 'status', 'tikv', 'nightly', 'x-pd', 'volume-sizes'), 'a'.repeat(40), 'Bad_Name');
const labels = fc.dictionary(
  mostly(pick('app', 'team'), 'bad key', 'job-name', 'batch.kubernetes.io/job-name', `${'p'.repeat(254)}/k`),
  mostly(pick('x', 'nightly'), 'bad value!'),
  { maxKeys: 2 },
);
const secretName = mostly(pick('s3-secret', 'backup-secret'), 'S3_Secret', 'has space', 'a'.repeat(254));
const prefix = mostly(pick('demo', 'a/b', 'backups/2026'), 'p?x', 'p#y', '%2e%2e', 'run-{run}');
const bucket = mostly(pick('backups', 'tidb-backups'), 'a..b', 'b'.repeat(70), 'Upper');

/** One storage of each provider, complete, with its values valid or not. */
const storageOf = (provider: 's3' | 'gcs' | 'azblob' | 'local'): fc.Arbitrary<Obj> => {
  switch (provider) {
    case 's3':
      return fc
        .record({
          provider: pick('aws', 'ceph'),
          region: pick('us-west-2'),
          bucket,
          prefix,
          secretName,
          endpoint: mostly(pick('https://s3.us-west-2.amazonaws.com', 'http://minio.minio:9000'), 'http://has space'),
        })
        .map((s3) => ({ s3 }));
    case 'gcs':
      return fc.record({ projectId: pick('p'), bucket, prefix, secretName }).map((gcs) => ({ gcs }));
    case 'azblob':
      return fc
        .record({ container: mostly(pick('c', 'backups'), 'Bad_C'), prefix, secretName, storageAccount: pick('acct') })
        .map((azblob) => ({ azblob }));
    case 'local':
      return fc.tuple(prefix, mostly(pick('bk'), 'Bad_Vol'), mostly(pick('/bk'), 'rel')).map(([p, v, mountPath]) => ({
        local: { prefix: p, volume: { name: v, persistentVolumeClaim: { claimName: 'bk' } }, volumeMount: { name: v, mountPath } },
      }));
  }
};
const provider = pick<'s3' | 'gcs' | 'azblob' | 'local'>('s3', 'gcs', 'azblob', 'local');

/** Pod fields of a Backup, a schedule's template or a Restore. */
const POD_FIELDS: Record<string, fc.Arbitrary<unknown>> = {
  tolerations: fc.array(toleration, { maxLength: 2 }),
  resources: record({ requests: resources, limits: resources }),
  env: fc.array(envVar, { maxLength: 2 }),
  affinity,
  podSecurityContext,
  serviceAccount: mostly(pick('tidb-backup-manager'), 'Bad_SA'),
  priorityClassName: pick('Bad_Class'),
  additionalVolumes: fc.array(volume, { maxLength: 2 }),
  additionalVolumeMounts: fc.array(volumeMount, { maxLength: 2 }),
  toolImage: mostly(pick('pingcap/br:v8.5.7'), 'Pingcap/BR', 'br image'),
};
/** Pod fields in one document of three, a field or two at a time (their values are often wrong). */
const podFields = fc.oneof(
  { arbitrary: fc.constant({}), weight: 2 },
  {
    arbitrary: fc
      .uniqueArray(fc.constantFrom(...Object.keys(POD_FIELDS)), { minLength: 1, maxLength: 2 })
      .chain((keys) => fc.record(Object.fromEntries(keys.map((k) => [k, POD_FIELDS[k]])))),
    weight: 1,
  },
);
const backupBr = fc.record(
  { concurrency: mostly(pick(4, 8), -4), timeAgo: mostly(pick('1h', '30m'), '1d'), checksum: fc.boolean() },
  { requiredKeys: [] },
);
const time = mostly(
  pick('2026-01-02 03:04:05+08:00', '439280000000000000'),
  '2026-02-30 00:00:00+00:00',
  '2026-01-02 24:00:00+00:00',
  '2026-13-01 00:00:00+00:00',
  '1969-12-31 00:00:00+00:00',
  '2026-01-02 03:04:05+99:99',
  '18446744073709551616',
);

/** A snapshot backup's spec (a Backup, a schedule's backupTemplate). */
const snapshotSpec = fc
  .tuple(podFields, provider.chain(storageOf), backupBr)
  .map(([pod, s, br]) => ({ ...pod, ...s, br: { cluster: 'demo', ...br } }));
/** A log backup's spec, with a truncation point sometimes. */
const logSpec = fc.tuple(podFields, provider.chain(storageOf), sometimes(time)).map(([pod, s, until]) => ({
  ...pod,
  ...s,
  backupMode: 'log',
  br: { cluster: 'demo' },
  ...(until !== undefined && { logTruncateUntil: until }),
}));

const meta = (n: string, l: Record<string, string>) => ({ name: n, namespace: NAMESPACE, ...(Object.keys(l).length > 0 && { labels: l }) });
const backup: fc.Arbitrary<Obj> = fc
  .tuple(name, labels, fc.oneof({ arbitrary: snapshotSpec, weight: 3 }, { arbitrary: logSpec, weight: 1 }))
  .map(([n, l, spec]) => ({ apiVersion: 'pingcap.com/v1alpha1', kind: 'Backup', metadata: meta(n, l), spec }));
const schedule: fc.Arbitrary<Obj> = fc
  .tuple(
    name,
    labels,
    snapshotSpec,
    maybe(logSpec.map(({ logTruncateUntil: _, ...rest }) => rest)),
    mostly(pick('0 2 * * *', '*/5 * * * *'), '61 * * * *'),
  )
  .map(([n, l, tpl, log, cron]) => ({
    apiVersion: 'pingcap.com/v1alpha1',
    kind: 'BackupSchedule',
    metadata: meta(n, l),
    spec: { schedule: cron, maxReservedTime: '72h', backupTemplate: tpl, ...(log && { logBackupTemplate: log }) },
  }));
const restore: fc.Arbitrary<Obj> = fc.tuple(name, labels, podFields, provider, sometimes(time)).chain(([n, l, pod, p, ts]) =>
  fc.tuple(storageOf(p), storageOf(p)).map(([s, full]) => ({
    apiVersion: 'pingcap.com/v1alpha1',
    kind: 'Restore',
    metadata: meta(n, l),
    spec: {
      ...pod,
      ...s,
      br: { cluster: 'demo' },
      ...(ts !== undefined && { restoreMode: 'pitr', pitrRestoredTs: ts, pitrFullBackupStorageProvider: full }),
    },
  })),
);
const monitorPod = record({
  tolerations: fc.array(toleration, { maxLength: 1 }),
  nodeSelector: fc.dictionary(mostly(pick('disk', 'zone'), 'bad key'), mostly(pick('ssd'), 'bad value!'), { maxKeys: 1 }),
  podSecurityContext,
});
const monitor: fc.Arbitrary<Obj> = fc
  .tuple(labels, fc.oneof({ arbitrary: fc.constant({}), weight: 2 }, { arbitrary: monitorPod, weight: 1 }))
  .map(([l, pod]) => ({
    apiVersion: 'pingcap.com/v1alpha1',
    kind: 'TidbMonitor',
    metadata: meta('demo', l),
    spec: {
      clusters: [{ name: 'demo' }],
      initializer: { baseImage: 'pingcap/tidb-monitor-initializer', version: 'v8.5.7' },
      prometheus: { baseImage: 'prom/prometheus', version: 'v2.27.1' },
      reloader: { baseImage: 'pingcap/tidb-monitor-reloader', version: 'v1.0.1' },
      ...pod,
    },
  }));
const initializer: fc.Arbitrary<Obj> = fc
  .tuple(
    mostly(
      pick('CREATE DATABASE app;', "CREATE USER 'app'@'%';\nGRANT SELECT ON *.* TO 'app'@'%';"),
      'SELECT 1\\G',
      'DELIMITER //\nSELECT 1//',
      `INSERT INTO t VALUES ('${'x'.repeat(450 * 1024)}');`,
    ),
    fc.oneof(
      { arbitrary: fc.constant({}), weight: 2 },
      {
        arbitrary: record({
          tolerations: fc.array(toleration, { maxLength: 1 }),
          resources: record({ requests: resources, limits: resources }),
          serviceAccountName: mostly(pick('init'), 'Bad_SA'),
        }),
        weight: 1,
      },
    ),
  )
  .map(([sql, pod]) => ({
    apiVersion: 'pingcap.com/v1alpha1',
    kind: 'TidbInitializer',
    metadata: meta('init', {}),
    spec: { image: 'tnir/mysqlclient', cluster: { name: 'demo' }, passwordSecret: 'tidb-secret', initSql: sql, ...pod },
  }));
const passed: fc.Arbitrary<Obj> = fc.oneof(
  fc
    .tuple(
      mostly(pick('app-config', 'demo-pd', 'demo-status'), 'Bad_Name'),
      fc.dictionary(mostly(pick('key', 'a.b'), 'has space'), pick('v'), { maxKeys: 2 }),
      fc.boolean(),
    )
    .map(([n, data, ns]) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: n, ...(ns && { namespace: NAMESPACE }) },
      data,
    })),
  mostly(pick('db.example.com', '*.example.com'), 'bad_host.example.com').map((host) => ({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name: 'dashboard', namespace: NAMESPACE },
    spec: {
      rules: [
        {
          host,
          http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'demo-tidb', port: { number: 10080 } } } }] },
        },
      ],
    },
  })),
  mostly(pick('1Gi', '10Gi'), '-1Gi', '0.5').map((size) => ({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'bk', namespace: NAMESPACE },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: size } } },
  })),
  mostly(pick(1000), 2_000_000_000).map((value) => ({
    apiVersion: 'scheduling.k8s.io/v1',
    kind: 'PriorityClass',
    metadata: { name: 'tidb-high' },
    value,
  })),
);

const annotations = fc.oneof(
  { arbitrary: fc.constant({}), weight: 4 },
  { arbitrary: mostly(pick('true'), 'yes').map((v) => ({ 'tidb-gitops.io/monitoring': v })), weight: 1 },
  { arbitrary: fc.constant({ 'TIDB-GITOPS.IO/replace': 'tikv=0' }), weight: 1 },
  {
    arbitrary: mostly(pick('release=kube-prometheus-stack'), 'app.kubernetes.io/name=x', 'app.kubernetes.io/managed-by=x').map((v) => ({
      'tidb-gitops.io/monitoring': 'true',
      'tidb-gitops.io/monitoring-labels': v,
    })),
    weight: 1,
  },
);
const companionCase = fc.record({
  clusterName: mostly(pick('demo', 'backup', 'restore'), 'd'.repeat(40), 'backup-x'),
  annotations,
  documents: fc.array(fc.oneof(backup, schedule, restore, monitor, initializer, passed), { minLength: 1, maxLength: 3 }),
});
type Case = typeof companionCase extends fc.Arbitrary<infer T> ? T : never;

function inputsOf(c: Case): string {
  const cluster = {
    apiVersion: 'pingcap.com/v1alpha1',
    kind: 'TidbCluster',
    metadata: { name: c.clusterName, namespace: NAMESPACE, ...(Object.keys(c.annotations).length > 0 && { annotations: c.annotations }) },
    spec: {
      version: 'v8.5.0',
      pd: { replicas: 1, requests: { storage: '1Gi' } },
      tikv: { replicas: 1, requests: { storage: '1Gi' } },
      tidb: { replicas: 1, ...(!c.documents.some((d) => d.kind === 'TidbInitializer') && { initializer: { createPassword: true } }) },
    },
  };
  // The documents name the cluster `demo`: follow its name.
  const docs = c.documents.map((d) => JSON.parse(JSON.stringify(d).replaceAll('"demo"', JSON.stringify(c.clusterName))) as Obj);
  return [cluster, ...docs].map((d) => stringify(d)).join('---\n');
}

/** `render` as a user runs it: the objects, or undefined when it refuses the inputs. */
function render(text: string, dir: string): Obj[] | undefined {
  const file = join(dir, 'inputs.yaml');
  writeFileSync(file, text);
  let out = '';
  let err = '';
  const code = renderCommand(
    { paths: [file], kubeVersion: suite.cp().kubeVersion },
    { stdout: (s) => (out += s), stderr: (s) => (err += s), readStdin: () => '', env: {} },
  );
  // FUZZ_DEBUG=1 says why a case was refused: to see that the cases reach what they are about.
  if (process.env.FUZZ_DEBUG && code !== 0)
    console.log(
      err
        .split('\n')
        .filter((l) => !l.startsWith('note'))
        .slice(0, 2)
        .join('\n'),
    );
  if (code !== 0) return undefined;
  return parseAllDocuments(out)
    .map((d) => d.toJSON() as Obj)
    .filter((o) => o !== null);
}

/** The Job of a template (a CronJob's, a ConfigMap's) named as its controller names it. */
function jobOf(template: Obj, name: string): Obj {
  return { apiVersion: 'batch/v1', kind: 'Job', metadata: { ...template.metadata, name, namespace: NAMESPACE }, spec: template.spec };
}

/** The Jobs made later from what was rendered: from CronJobs, and from the controller's ConfigMaps. */
function laterJobs(objects: readonly Obj[]): Obj[] {
  const out: Obj[] = [];
  for (const o of objects) {
    // The CronJob controller: `<cronjob>-<scheduled time in minutes since the epoch>`.
    if (o.kind === 'CronJob') out.push(jobOf(o.spec.jobTemplate, `${o.metadata.name}-${Math.floor(Date.UTC(2100, 0, 1) / 60_000)}`));
    if (o.kind !== 'ConfigMap') continue;
    const data: Record<string, string> = o.data ?? {};
    if (data[OPERATION_KEY.job]) {
      const job = JSON.parse(data[OPERATION_KEY.job]) as Obj;
      out.push({ ...job, metadata: { ...job.metadata, namespace: NAMESPACE } });
    }
    for (const command of LOG_COMMANDS) {
      const text = data[logCommandKey(command)];
      if (!text) continue;
      const job = JSON.parse(text) as Obj;
      // After many retries: the name the controller gives the millionth run.
      out.push({ ...job, metadata: { ...job.metadata, name: logCommandJobName(job.metadata.name, 1_000_000), namespace: NAMESPACE } });
    }
  }
  return out;
}

suite.describeReal('the real API server accepts every companion document the renderer accepts, and the Jobs made from it later', () => {
  test(`${RUNS} generated sets of documents, seed ${SEED}`, async () => {
    const admin = suite.cp().admin();
    await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
    // The ServiceAccounts the documents name are the user's to make, as with the operator.
    for (const sa of ['tidb-backup-manager', 'init'])
      await admin.create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: sa, namespace: NAMESPACE } });
    const dir = mkdtempSync(join(tmpdir(), 'fuzz-companions-'));
    const cases = fc.sample(companionCase, { numRuns: RUNS, seed: SEED });
    const refused: string[] = [];
    const checked = new Set<string>();
    const counts = { accepted: 0, objects: 0, jobs: 0 };
    const dryRun = async (what: string, method: string, path: string, body: Obj, contentType?: string): Promise<Obj | undefined> => {
      const res = await admin.request(method, path, { body, contentType });
      // The ServiceAccounts made above exist already: their create is refused for that alone.
      if (res.status === 409 && res.body?.reason === 'AlreadyExists') return undefined;
      if (res.status >= 300) refused.push(`${what}: HTTP ${res.status}: ${res.body?.message ?? res.text.slice(0, 300)}`);
      return res.status < 300 ? (res.body as Obj) : undefined;
    };
    try {
      for (const [i, c] of cases.entries()) {
        const objects = render(inputsOf(c), dir);
        if (!objects) continue;
        counts.accepted++;
        const what = (o: Obj) => `case ${i} ${JSON.stringify(c).slice(0, 600)}\n  ${o.kind} ${o.metadata.name}`;
        // What Pods of the render run as must exist, as it would in the namespace.
        for (const sa of objects.filter((o) => o.kind === 'ServiceAccount')) {
          await admin.request('POST', resourcePath('v1', 'ServiceAccount', NAMESPACE), {
            body: { ...sa, metadata: { name: sa.metadata.name, namespace: NAMESPACE } },
          });
        }
        const requests: Promise<unknown>[] = [];
        // The Prometheus Operator's kinds need its CRDs, which this control plane does not serve.
        const builtIn = objects.filter((o) => !String(o.apiVersion).startsWith('monitoring.coreos.com/'));
        for (const o of builtIn.map(
          (x): Obj => ({ ...x, metadata: { ...x.metadata, namespace: x.metadata.namespace === undefined ? undefined : NAMESPACE } }),
        )) {
          const json = JSON.stringify(o);
          if (checked.has(json)) continue;
          checked.add(json);
          counts.objects++;
          const ns = o.metadata.namespace === undefined ? undefined : NAMESPACE;
          const lastApplied = {
            ...o,
            metadata: {
              ...o.metadata,
              annotations: { ...o.metadata.annotations, 'kubectl.kubernetes.io/last-applied-configuration': `${json}\n` },
            },
          };
          requests.push(
            dryRun(
              `${what(o)} (client-side apply)`,
              'POST',
              `${resourcePath(o.apiVersion, o.kind, ns)}?dryRun=All&fieldManager=kubectl-client-side-apply`,
              lastApplied,
            ),
          );
          requests.push(
            dryRun(
              `${what(o)} (server-side apply)`,
              'PATCH',
              `${resourcePath(o.apiVersion, o.kind, ns, o.metadata.name)}?dryRun=All&fieldManager=flux&force=true`,
              o,
              'application/apply-patch+yaml',
            ),
          );
        }
        for (const o of podsAndClaims(objects, NAMESPACE)) {
          const json = JSON.stringify(o);
          if (checked.has(json)) continue;
          checked.add(json);
          requests.push(dryRun(what(o), 'POST', `${resourcePath(o.apiVersion, o.kind, NAMESPACE)}?dryRun=All`, o));
        }
        for (const job of laterJobs(objects)) {
          counts.jobs++;
          requests.push(
            dryRun(`${what(job)} (a Job made later)`, 'POST', `${resourcePath('batch/v1', 'Job', NAMESPACE)}?dryRun=All`, job).then(
              (made) => {
                if (!made) return;
                // Its Pod, with the labels the Job controller gave the template.
                const pod = {
                  apiVersion: 'v1',
                  kind: 'Pod',
                  metadata: { ...made.spec.template.metadata, name: `${made.metadata.name.slice(0, 57)}-abcde`, namespace: NAMESPACE },
                  spec: made.spec.template.spec,
                };
                return dryRun(`${what(job)} (its Pod)`, 'POST', `${resourcePath('v1', 'Pod', NAMESPACE)}?dryRun=All`, pod);
              },
            ),
          );
        }
        await Promise.all(requests);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // eslint-disable-next-line no-console
    console.log(
      `oracle: ${cases.length} cases, ${counts.accepted} rendered, ${counts.objects} distinct objects and ${counts.jobs} later Jobs dry-run on the API server, seed ${SEED}`,
    );
    expect(counts.accepted).toBeGreaterThan(cases.length * 0.1);
    expect(refused).toEqual([]);
  });
});
