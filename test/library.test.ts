/**
 * tidb-gitops as a cdk8s library: an app that catches a chart's error still synthesizes the others,
 * and nothing the API server would refuse, nor any empty file, is written by `app.synth()`.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Chart } from 'cdk8s';
import { parseAllDocuments } from 'yaml';
import { ApiRefusalError, checkTidbCluster, PdComponent, PdmsComponent, SpecError, TidbClusterChart } from '../src';
import type { TidbCluster } from '../src/tidbcluster/types';

const cluster = (name: string, extra: Record<string, unknown> = {}): TidbCluster =>
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
  }) as unknown as TidbCluster;

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
    cluster: cluster('second', { annotations: { a: 'x'.repeat(150_000) }, tidb: { baseImage: 'pingcap/tidb', replicas: 1, annotations: { b: 'y'.repeat(150_000) } } }),
  });
  let error: unknown;
  try {
    app.synth();
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(ApiRefusalError);
  expect((error as Error).message).toContain('StatefulSet second-tidb: spec.template.metadata.annotations: annotations take 293.0 KiB together');
  expect(existsSync(outdir) ? readdirSync(outdir) : []).toEqual([]);
});

test('the component constructs compose a chart of their own: PD and one micro-service', () => {
  const app = new App({ outdir });
  const resolved = checkTidbCluster({
    apiVersion: 'pingcap.com/v1alpha1',
    kind: 'TidbCluster',
    metadata: { name: 'own', namespace: 'db' },
    spec: { version: 'v8.5.7', pd: { replicas: 3, mode: 'ms', requests: { storage: '1Gi' } }, pdms: [{ name: 'tso', replicas: 2 }] },
  } as TidbCluster);
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
