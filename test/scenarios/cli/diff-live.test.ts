/**
 * `tidb-gitops diff LIVE NEW` where LIVE is what `kubectl get -o yaml` prints: a List, with status,
 * server metadata, owner references and the defaults the API server fills in.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { runMain, tempFiles } from '../../support/cli-run';
import { applied } from '../../../src/diff/live';
import { cluster, find, render, type Obj } from '../../support/render';

const run = runMain;
const { dir: tmpDir } = tempFiles('diff-live-');

const spec = cluster({ pd: { replicas: 3, requests: { storage: '10Gi' } } });

/** What the API server returns for an applied object: server metadata, status and defaults. */
function asStored(o: Obj, i: number): Obj {
  const live: Obj = structuredClone(o);
  live.metadata = {
    ...live.metadata,
    uid: `00000000-0000-0000-0000-${String(i).padStart(12, '0')}`,
    resourceVersion: String(1000 + i),
    generation: 2,
    creationTimestamp: '2026-11-01T10:00:00Z',
    managedFields: [
      { manager: 'kubectl-client-side-apply', operation: 'Update', apiVersion: o.apiVersion, fieldsType: 'FieldsV1', fieldsV1: {} },
    ],
    annotations: { ...(live.metadata.annotations ?? {}), 'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify(o) },
  };
  if (o.kind === 'StatefulSet') {
    live.spec.replicas = Number(o.metadata.annotations['tidb-gitops.io/replicas']);
    live.spec.updateStrategy = { type: 'RollingUpdate', rollingUpdate: { partition: live.spec.replicas } };
    live.spec.revisionHistoryLimit = 10;
    live.spec.persistentVolumeClaimRetentionPolicy = { whenDeleted: 'Retain', whenScaled: 'Retain' };
    const pod = live.spec.template.spec;
    pod.schedulerName = 'default-scheduler';
    pod.terminationGracePeriodSeconds ??= 30;
    pod.securityContext ??= {};
    for (const c of [...(pod.containers ?? []), ...(pod.initContainers ?? [])]) {
      c.terminationMessagePath = '/dev/termination-log';
      c.terminationMessagePolicy = 'File';
      c.imagePullPolicy ??= 'IfNotPresent';
      c.resources ??= {};
    }
    for (const v of pod.volumes ?? []) if (v.configMap) v.configMap.defaultMode = 420;
    live.status = { replicas: live.spec.replicas, readyReplicas: live.spec.replicas, currentRevision: 'x-1', updateRevision: 'x-1' };
  }
  if (o.kind === 'Service') {
    live.spec.clusterIP = live.spec.clusterIP ?? '10.96.0.10';
    live.spec.sessionAffinity = 'None';
    live.spec.ipFamilies = ['IPv4'];
    live.spec.ipFamilyPolicy = 'SingleStack';
    live.spec.internalTrafficPolicy = 'Cluster';
    for (const p of live.spec.ports) p.targetPort ??= p.port;
    live.status = { loadBalancer: {} };
  }
  return live;
}

function liveList(objects: Obj[]): string {
  return stringify({ apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items: objects.map(asStored) });
}

function files(live: string, tc: Obj = spec): [string, string] {
  const a = join(tmpDir(), `live-${Math.random().toString(36).slice(2)}.yaml`);
  const b = join(tmpDir(), `tc-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(a, live);
  writeFileSync(b, stringify(tc));
  return [a, b];
}

describe('diff with a live side', () => {
  test('what the API server adds (status, server metadata, defaults) is no change', () => {
    const r = run(['diff', '--exit-code', ...files(liveList(render(spec)))]);
    expect(r).toEqual({ code: 0, stdout: '## tidb-gitops diff\n\nNo changes to the rendered manifests.\n', stderr: '' });
  });

  test('a field the manifests set differently restarts the component, and only it; the others keep their Pods', () => {
    const r = run([
      'diff',
      ...files(
        liveList(render(spec)),
        cluster({ pd: { replicas: 3, requests: { storage: '10Gi' } }, tidb: { replicas: 2, version: 'v8.5.8' } }),
      ),
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('OLD is live (read from the API server)');
    expect(r.stdout).toContain('- **ns/demo**: tidb rolling restart; pd, tikv, discovery keep their Pods; 1 risk');
    expect(r.stdout).toContain('`containers[tidb].image`: `pingcap/tidb:v8.5.7` -> `pingcap/tidb:v8.5.8`');
    expect(r.stdout).toContain('Pods kept as they are (no template change once applied): PD, TiKV, Discovery.');
  });

  test('live objects the manifests leave out are kept, not removed, and no removal risk is raised', () => {
    const extra = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'demo-tidb-initializer',
        namespace: 'ns',
        labels: { 'app.kubernetes.io/instance': 'demo', 'app.kubernetes.io/component': 'initializer' },
      },
      data: { a: 'b' },
    };
    const r = run(['diff', ...files(liveList([...render(spec), extra]))]);
    expect(r.stdout).toContain(
      '- not in the new manifests, left as they are (applying neither changes nor deletes them; delete them once nothing uses them): ConfigMap `demo-tidb-initializer`',
    );
    expect(r.stdout).not.toMatch(/removed/);
  });

  test('owner references to a TidbCluster are a risk naming the objects; a Pod owned by its StatefulSet is not', () => {
    const objects = render(spec).map((o) => ({
      ...o,
      metadata: {
        ...o.metadata,
        ownerReferences: [
          { apiVersion: 'pingcap.com/v1alpha1', kind: 'TidbCluster', name: 'demo', uid: 'u', controller: true, blockOwnerDeletion: true },
        ],
      },
    }));
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'demo-pd-0',
        namespace: 'ns',
        labels: { 'app.kubernetes.io/instance': 'demo' },
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'demo-pd', uid: 'p', controller: true }],
      },
      spec: { containers: [] },
    };
    const [live, tc] = files(liveList([...objects, pod]));
    const r = run(['diff', '--exit-code', live, tc]);
    expect(r.code).toBe(4);
    expect(r.stdout).toContain(`- **owner-reference**: ${objects.length} objects are owned by TidbCluster demo (`);
    expect(r.stdout).not.toContain('Pod demo-pd-0');
  });

  test('a different claim template or selector is a blocking risk even though the rest merges', () => {
    const objects = render(spec);
    const tikv = find(objects, 'StatefulSet', 'demo-tikv');
    tikv.spec.volumeClaimTemplates[0].spec.storageClassName = 'local-ssd';
    find(objects, 'StatefulSet', 'demo-pd').spec.selector.matchLabels.extra = 'x';
    const r = run(['diff', '--exit-code', ...files(liveList(objects))]);
    expect(r.code).toBe(4);
    expect(r.stdout).toMatch(/\*\*pvc-template\*\*: StatefulSet demo-tikv/);
    expect(r.stdout).toMatch(/\*\*selector\*\*: StatefulSet demo-pd/);
  });

  test('a live TidbCluster in the List is noted and not rendered', () => {
    const tc = { ...spec, metadata: { ...spec.metadata, uid: 'tc-uid', resourceVersion: '7' }, status: {} };
    const r = run(['diff', ...files(stringify({ apiVersion: 'v1', kind: 'List', items: [tc, ...render(spec).map(asStored)] }))]);
    expect(r.stderr).toMatch(/document 1: item 1: skipped TidbCluster demo: read from the API server \(it is not rendered\)/);
    expect(r.stdout).toContain('No changes to the rendered manifests.');
  });
});

describe('applied: the object a manifest leaves when applied onto a live one', () => {
  const live = {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 's', labels: { a: '1', b: '2' } },
    spec: {
      selector: { matchLabels: { a: '1', b: '2' } },
      template: {
        spec: {
          containers: [
            {
              name: 'main',
              image: 'x:1',
              env: [
                { name: 'A', value: '1' },
                { name: 'B', value: '2' },
              ],
              terminationMessagePath: '/dev/termination-log',
            },
            { name: 'sidecar', image: 's:1' },
          ],
          tolerations: [{ key: 'k1' }, { key: 'k2' }],
        },
      },
    },
  };
  const desired = {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 's', labels: { a: '1' } },
    spec: {
      selector: { matchLabels: { a: '1' } },
      template: { spec: { containers: [{ name: 'main', image: 'x:2', env: [{ name: 'B', value: '3' }] }], tolerations: [{ key: 'k1' }] } },
    },
  };

  test('merges maps and named lists item by item, replaces other lists and the selector whole', () => {
    expect(applied(live, desired)).toEqual({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 's', labels: { a: '1', b: '2' } },
      spec: {
        selector: { matchLabels: { a: '1' } },
        template: {
          spec: {
            containers: [
              {
                name: 'main',
                image: 'x:2',
                env: [
                  { name: 'B', value: '3' },
                  { name: 'A', value: '1' },
                ],
                terminationMessagePath: '/dev/termination-log',
              },
              { name: 'sidecar', image: 's:1' },
            ],
            tolerations: [{ key: 'k1' }],
          },
        },
      },
    });
  });

  test('Service ports merge by port', () => {
    const svc = (ports: Obj[]) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'x' }, spec: { ports } });
    const out = applied(
      svc([
        { port: 2379, name: 'client', protocol: 'TCP', targetPort: 2379 },
        { port: 9, name: 'old' },
      ]),
      svc([{ port: 2379, name: 'client' }]),
    );
    expect((out.spec as Obj).ports).toEqual([
      { port: 2379, name: 'client', protocol: 'TCP', targetPort: 2379 },
      { port: 9, name: 'old' },
    ]);
  });
});
