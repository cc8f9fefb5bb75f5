/**
 * SqlUser, SqlRole and ResourceGroup documents beside a cluster, read and rendered as the CLI reads and renders them
 * (one pipeline, `readClusterInputs`), the objects checked against the schema of their Kubernetes version.
 */
import { stringify } from 'yaml';
import { readClusterInputs, type ClusterInputs } from '../../src/load/clusters';
import { renderClusters } from '../../src/render/render';
import { assertValidK8sObjects } from './k8s-schema';
import { cluster, find, type Obj } from './render';

export const sqlRole = (name: string, spec: Obj = {}, metadata: Obj = {}): Obj => ({
  apiVersion: 'tidb-gitops.io/v1alpha1',
  kind: 'SqlRole',
  metadata: { name, namespace: 'ns', ...metadata },
  spec: { cluster: { name: 'demo' }, ...spec },
});

export const sqlUser = (name: string, spec: Obj = {}, metadata: Obj = {}): Obj => ({
  apiVersion: 'tidb-gitops.io/v1alpha1',
  kind: 'SqlUser',
  metadata: { name, namespace: 'ns', ...metadata },
  spec: { cluster: { name: 'demo' }, passwordSecret: { name: `${name}-password`, key: 'password' }, ...spec },
});

export const resourceGroup = (name: string, spec: Obj = {}, metadata: Obj = {}): Obj => ({
  apiVersion: 'tidb-gitops.io/v1alpha1',
  kind: 'ResourceGroup',
  metadata: { name, namespace: 'ns', ...metadata },
  spec: { cluster: { name: 'demo' }, ruPerSecond: 1000, ...spec },
});

/** A cluster whose root password the controller logs in with (`<cluster>-init`). */
export const loginCluster = (spec: Obj = {}, metadata: Obj = {}): Obj =>
  cluster({ tidb: { replicas: 2, initializer: { createPassword: true } }, ...spec }, metadata);

export const yamlOf = (docs: Obj[]): string => docs.map((d) => stringify(d)).join('---\n');

/** Reads the documents as `render` does. */
export function read(docs: Obj[] | string): ClusterInputs {
  return readClusterInputs({ inputs: [{ file: 'in.yaml', text: typeof docs === 'string' ? docs : yamlOf(docs), explicit: true }] });
}

/** The problems of an input that must fail, one a line. */
export function errorsOf(docs: Obj[] | string): string[] {
  const r = read(docs);
  if (r.errors.length === 0) throw new Error('expected the input to be refused, but it was accepted');
  return r.errors;
}

/** Renders the input, refusing any problem, every object checked strictly. */
export function renderAccounts(docs: Obj[] | string, kubeVersion = '1.31'): Obj[] {
  const r = read(docs);
  if (r.errors.length > 0) throw new Error(r.errors.join('\n'));
  const objects = renderClusters(
    r.clusters.map((c) => c.resolved),
    r.clusters.map((c) => c.operations),
  ).flatMap((x) => x.objects);
  assertValidK8sObjects(objects, kubeVersion);
  return objects;
}

/** The cluster JSON the controller of `demo` is given. */
export function clusterJson(objects: Obj[], name = 'demo'): Obj {
  const env = find(objects, 'Deployment', `${name}-discovery`).spec.template.spec.containers[0].env;
  return JSON.parse(env.find((e: Obj) => e.name === 'TIDB_GITOPS_CLUSTER').value);
}
