/**
 * tidb-gitops as a cdk8s library: an app that catches a chart's error still synthesizes the others,
 * and nothing the API server would refuse, nor any empty file, is written by `app.synth()`, however
 * the constructs are composed and patched; a TidbCluster sits in a chart of the app's own, with
 * handles to its objects; the app reads its inputs and settings as the CLI does.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiObject, App, Chart, JsonPatch } from 'cdk8s';
import { parseAllDocuments } from 'yaml';
import {
  ApiRefusalError,
  checkTidbCluster,
  InputError,
  loadClusterInputs,
  PdComponent,
  PdmsComponent,
  SpecError,
  TidbCluster,
  TidbClusterChart,
  TidbComponent,
} from '../../../src';
import type { TidbClusterManifest } from '../../../src';
import { TEST_DIR } from '../../support/paths';

const cluster = (name: string, extra: Record<string, unknown> = {}): TidbClusterManifest =>
  ({
    apiVersion: 'pingcap.com/v1alpha1',
    kind: 'TidbCluster',
    metadata: { name },
    spec: {
      version: 'v8.5.2',
      pd: { baseImage: 'pingcap/pd', replicas: 1, requests: { storage: '1Gi' } },
      tikv: { baseImage: 'pingcap/tikv', replicas: 1, requests: { storage: '1Gi' } },
      tidb: { baseImage: 'pingcap/tidb', replicas: 1 },
      ...extra,
    },
  }) as unknown as TidbClusterManifest;

let outdir: string;
beforeEach(() => {
  outdir = mkdtempSync(join(tmpdir(), 'tidb-gitops-lib-'));
});
afterEach(() => rmSync(outdir, { recursive: true, force: true }));

test('a SpecError caught by the app leaves no file behind at app.synth()', () => {
  const app = new App({ outdir });
  let error: unknown;
  try {
    new TidbClusterChart(app, 'broken', { cluster: cluster('broken', { pd: { replicas: 'three' } }) });
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(SpecError);
  expect((error as SpecError).message).toContain('spec.pd.replicas');
  new TidbClusterChart(app, 'good', { cluster: cluster('good') });
  app.synth();
  expect(readdirSync(outdir)).toEqual(['good.k8s.yaml']);
  const objects = parseAllDocuments(readFileSync(join(outdir, 'good.k8s.yaml'), 'utf8')).map((d) => d.toJS());
  expect(objects.find((o) => o.kind === 'StatefulSet')?.metadata.name).toBe('good-pd');
  expect(app.charts).toHaveLength(1);
});

test('a chart the API server would refuse stops app.synth() before any file is written', () => {
  const app = new App({ outdir });
  new TidbClusterChart(app, 'first', { cluster: cluster('first') });
  // Each map is within 256 KiB; merged on the TiDB Pods they are not.
  new TidbClusterChart(app, 'second', {
    cluster: cluster('second', {
      annotations: { a: 'x'.repeat(150_000) },
      tidb: { baseImage: 'pingcap/tidb', replicas: 1, annotations: { b: 'y'.repeat(150_000) } },
    }),
  });
  let error: unknown;
  try {
    app.synth();
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(ApiRefusalError);
  expect((error as Error).message).toContain(
    'StatefulSet second-tidb: spec.template.metadata.annotations: annotations take 293.0 KiB together',
  );
  expect(existsSync(outdir) ? readdirSync(outdir) : []).toEqual([]);
});

test('the component constructs compose a chart of their own: PD and one micro-service', () => {
  const app = new App({ outdir });
  const resolved = checkTidbCluster({
    apiVersion: 'pingcap.com/v1alpha1',
    kind: 'TidbCluster',
    metadata: { name: 'own', namespace: 'db' },
    spec: { version: 'v8.5.7', pd: { replicas: 3, mode: 'ms', requests: { storage: '1Gi' } }, pdms: [{ name: 'tso', replicas: 2 }] },
  } as TidbClusterManifest);
  const chart = new Chart(app, 'own', { disableResourceNameHashes: true });
  new PdComponent(chart, 'pd', { cluster: resolved });
  new PdmsComponent(chart, 'tso', { cluster: resolved, pdms: resolved.tso! });
  const objects = chart.toJson() as { kind: string; metadata: { name: string } }[];
  expect(objects.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
    'ConfigMap/own-pd',
    'ConfigMap/own-tso',
    'Service/own-pd',
    'Service/own-pd-peer',
    'Service/own-tso',
    'Service/own-tso-peer',
    'StatefulSet/own-pd',
    'StatefulSet/own-tso',
  ]);
});

describe('TidbCluster, a construct for a chart of ones own', () => {
  const render = (file: string, args: string[] = []) =>
    parseAllDocuments(
      execFileSync(process.execPath, [join(TEST_DIR, '../bin/tidb-gitops.js'), 'render', ...args, file], { encoding: 'utf8' }),
    ).map((d) => d.toJS());
  const example = join(TEST_DIR, '../examples/basic/tidb-cluster.yaml');
  const key = (o: any) => `${o.kind}/${o.metadata.name}`;

  test('beside other objects in one chart: one file, the objects the CLI renders', () => {
    const app = new App({ outdir });
    const chart = new Chart(app, 'databases', { disableResourceNameHashes: true });
    new ApiObject(chart, 'namespace', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'tidb' } });
    const [input] = loadClusterInputs([example], { namespace: 'tidb' }).clusters;
    const basic = new TidbCluster(chart, 'basic', input);
    expect(basic.node.scope).toBe(chart);
    app.synth();
    expect(readdirSync(outdir)).toEqual(['databases.k8s.yaml']);
    const objects = parseAllDocuments(readFileSync(join(outdir, 'databases.k8s.yaml'), 'utf8')).map((d) => d.toJS());
    const cli = render(example, ['-n', 'tidb']);
    expect(objects.map(key).sort()).toEqual([...cli.map(key), 'Namespace/tidb'].sort());
    for (const o of cli) expect(objects.find((s) => key(s) === key(o))).toEqual(o);
  });

  test("a cluster without a namespace takes its chart's, as from kubectl apply -n", () => {
    const chart = new Chart(new App({ outdir }), 'databases', { namespace: 'tidb', disableResourceNameHashes: true });
    new TidbCluster(chart, 'basic', loadClusterInputs([example]).clusters[0]);
    const objects = chart.toJson();
    expect(objects.length).toBe(render(example).length);
    expect(objects.filter((o: any) => o.metadata.namespace !== 'tidb')).toEqual([]);
  });

  test('handles reach each component object; a JSON patch shows in the output and in the volume sizes', () => {
    const app = new App({ outdir });
    const chart = new Chart(app, 'db', { disableResourceNameHashes: true });
    const one = new TidbCluster(chart, 'one', {
      cluster: cluster('one', { tidb: { baseImage: 'pingcap/tidb', replicas: 1, service: { type: 'ClusterIP' } } }),
      namespace: 'db',
    });
    const two = new TidbCluster(chart, 'two', { cluster: cluster('two'), namespace: 'db' });
    expect(one.tidb?.service?.metadata.name).toBe('one-tidb');
    expect(two.tidb?.service).toBeUndefined();
    expect([one.pd?.statefulSet.name, one.pd?.service.name, one.pd?.peerService.name, one.pd?.configMap.name]).toEqual([
      'one-pd',
      'one-pd',
      'one-pd-peer',
      'one-pd',
    ]);
    expect([one.tikv?.statefulSet.kind, one.discovery.deployment.name, one.volumeSizes.configMap.name]).toEqual([
      'StatefulSet',
      'one-discovery',
      'one-volume-sizes',
    ]);
    expect(one.tiflash).toBeUndefined();
    one.tidb!.service!.metadata.addAnnotation('service.beta.kubernetes.io/aws-load-balancer-type', 'nlb');
    one.tikv!.statefulSet.addJsonPatch(JsonPatch.replace('/spec/volumeClaimTemplates/0/spec/resources/requests/storage', '5Gi'));
    const objects = chart.toJson();
    const find = (k: string) => objects.find((o: any) => key(o) === k);
    expect(find('Service/one-tidb').metadata.annotations['service.beta.kubernetes.io/aws-load-balancer-type']).toBe('nlb');
    expect(find('StatefulSet/one-tikv').spec.volumeClaimTemplates[0].spec.resources.requests.storage).toBe('5Gi');
    const sizes = (name: string) => JSON.parse(find(`ConfigMap/${name}-volume-sizes`).data['sizes.json']);
    // Each cluster's sizes are its own StatefulSets', as patched.
    expect(sizes('one').tikv).toEqual({ tikv: '5Gi' });
    expect(sizes('two').tikv).toEqual({ tikv: '1Gi' });
  });

  test.each([
    ['in a TidbCluster', (chart: Chart) => new TidbCluster(chart, 'c', { cluster: cluster('c') }).tidb!.statefulSet],
    ['composed by hand', (chart: Chart) => new TidbComponent(chart, 'tidb', { cluster: checkTidbCluster(cluster('c')) }).statefulSet],
  ])('a patch the API server would refuse stops app.synth(), %s', (_, make) => {
    const app = new App({ outdir });
    const chart = new Chart(app, 'db', { disableResourceNameHashes: true });
    make(chart).addJsonPatch(JsonPatch.add('/spec/template/metadata/labels/team', 'database team'));
    expect(() => app.synth()).toThrow(ApiRefusalError);
    expect(() => chart.toJson()).toThrow(/StatefulSet c-tidb: spec\.template\.metadata\.labels\.team: .*database team/);
    expect(existsSync(outdir) ? readdirSync(outdir) : []).toEqual([]);
  });

  test('an app reads the inputs and their RenderSettings as the CLI does, and refuses what it refuses', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tidb-gitops-lib-in-'));
    try {
      writeFileSync(join(dir, 'basic.yaml'), readFileSync(example));
      writeFileSync(
        join(dir, 'settings.yaml'),
        'apiVersion: tidb-gitops.io/v1alpha1\nkind: RenderSettings\nnamespace: tidb\ncontrollerImage: registry.example.com/tidb-gitops:1\n',
      );
      const read = loadClusterInputs([dir], { env: { TIDB_GITOPS_KUBE_VERSION: '1.34' } });
      expect(read.settings).toEqual({ namespace: 'tidb', controllerImage: 'registry.example.com/tidb-gitops:1', kubeVersion: '1.34' });
      expect(read.clusters.map((c) => [c.resolved.namespace, c.resolved.discovery.image, c.resolved.kubeMinor])).toEqual([
        ['tidb', 'registry.example.com/tidb-gitops:1', 34],
      ]);
      // An option given beats the environment and the file.
      expect(loadClusterInputs([dir], { namespace: 'other' }).clusters[0].resolved.namespace).toBe('other');
      writeFileSync(join(dir, 'settings.yaml'), 'apiVersion: tidb-gitops.io/v1alpha1\nkind: RenderSettings\nnamespce: tidb\n');
      expect(() => loadClusterInputs([dir])).toThrow(InputError);
      expect(() => loadClusterInputs([dir])).toThrow(
        /settings\.yaml: document 1: namespce \(line 3\): unknown field; .*\n1 problem found$/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('given a resolved cluster, the options that resolve are an error of use', () => {
    const resolved = checkTidbCluster(cluster('c'));
    expect(() => new TidbCluster(new Chart(new App({ outdir }), 'x'), 'c', { resolved, namespace: 'db' })).toThrow(
      'TidbCluster: `namespace` applies when resolving',
    );
  });
});
