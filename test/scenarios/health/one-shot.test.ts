/**
 * The health of a one-shot Backup's or Restore's ConfigMap, as Argo CD (argocd/health/configmap.lua,
 * run in a Lua VM as Argo CD runs it) and Flux (the example Kustomization's healthCheckExprs, run with
 * a real CEL implementation) see it: both agree on every phase the controller writes, and leave every
 * other ConfigMap healthy.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { CONFIGMAP_HEALTH_LUA, runHealth } from '../../support/argocd-lua';
import { TEST_DIR } from '../../support/paths';

type Obj = Record<string, any>;

const root = join(TEST_DIR, '..');
const kustomization = parse(readFileSync(join(root, 'examples/gitops/flux/tidb-clusters.yaml'), 'utf8'));
const exprs = kustomization.spec.healthCheckExprs.find((h: Obj) => h.apiVersion === 'v1' && h.kind === 'ConfigMap');

function flux(objects: readonly Obj[]): string[] {
  const r = spawnSync(process.execPath, [join(TEST_DIR, 'support/flux-cel.mjs')], {
    input: JSON.stringify({ exprs, objects }),
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout);
}

const configMap = (labels?: Obj, annotations?: Obj): Obj => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'restore-r', ...(labels && { labels }), ...(annotations && { annotations }) },
  data: {},
});
const op = { 'tidb-gitops.io/operation': 'restore-r' };

const CASES: [string, Obj, string, string, string][] = [
  ['any other ConfigMap', configMap(), 'Healthy', 'Current', ''],
  ['another ConfigMap with annotations', configMap({ app: 'x' }, { 'tidb-gitops.io/phase': 'Failed' }), 'Healthy', 'Current', ''],
  ['not taken up yet', configMap(op), 'Progressing', 'InProgress', 'waiting for the tidb-gitops controller to take it up'],
  [
    'waiting',
    configMap(op, {
      'tidb-gitops.io/phase': 'Waiting',
      'tidb-gitops.io/message': 'waiting: the cluster is not ready: 2 of 3 tikv Pods are ready',
    }),
    'Progressing',
    'InProgress',
    'waiting: the cluster is not ready: 2 of 3 tikv Pods are ready',
  ],
  [
    'running',
    configMap(op, { 'tidb-gitops.io/phase': 'Running', 'tidb-gitops.io/message': 'running since 2026-11-27T12:00:00Z' }),
    'Progressing',
    'InProgress',
    'running since 2026-11-27T12:00:00Z',
  ],
  [
    'complete',
    configMap(op, { 'tidb-gitops.io/phase': 'Complete', 'tidb-gitops.io/message': 'restored from s3://b/p' }),
    'Healthy',
    'Current',
    'restored from s3://b/p',
  ],
  [
    'failed',
    configMap(op, { 'tidb-gitops.io/phase': 'Failed', 'tidb-gitops.io/message': 'restore failed: x' }),
    'Degraded',
    'Failed',
    'restore failed: x',
  ],
  ['lost', configMap(op, { 'tidb-gitops.io/phase': 'Lost' }), 'Degraded', 'Failed', ''],
];

describe("a one-shot operation's ConfigMap", () => {
  const fluxResults = flux(CASES.map((c) => c[1]));
  test.each(CASES.map((c, i) => [c[0], c, i] as const))('%s', (_name, [, obj, argo, fluxStatus, message], i) => {
    const h = runHealth(obj, 'float', CONFIGMAP_HEALTH_LUA);
    expect(h).toEqual({ status: argo, message });
    expect(fluxResults[i]).toBe(fluxStatus);
  });
});
