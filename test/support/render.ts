import { parse, stringify } from 'yaml';
import { loadTidbClusters } from '../../src/tidbcluster/load';
import { renderClusters } from '../../src/render/render';
import type { ResolveOptions } from '../../src/tidbcluster/resolve';
import { DEFAULT_KUBE_VERSION } from '../../src/tidbcluster/kube-version';
import { assertValidK8sObjects } from './k8s-schema';

export type Obj = Record<string, any>;

/** A minimal valid cluster; tests override what they look at. */
export function cluster(spec: Obj = {}, metadata: Obj = {}): Obj {
  return {
    apiVersion: 'pingcap.com/v1alpha1',
    kind: 'TidbCluster',
    metadata: { name: 'demo', namespace: 'ns', ...metadata },
    spec: {
      version: 'v8.5.7',
      pd: { replicas: 3, requests: { storage: '10Gi' } },
      tikv: { replicas: 3, requests: { storage: '100Gi' } },
      tidb: { replicas: 2 },
      ...spec,
    },
  };
}

/**
 * Renders one TidbCluster (object or YAML text) through the same path as the CLI, fails the test on
 * any input error, and checks every object strictly against the schema of its target Kubernetes
 * version (`options.kubeVersion`, else the default, 1.31).
 */
export function render(input: Obj | string, options: ResolveOptions = {}): Obj[] {
  const text = typeof input === 'string' ? input : toYaml(input);
  const loaded = loadTidbClusters(text, 'test.yaml', options);
  if (loaded.errors.length > 0) throw new Error(loaded.errors.map((e) => e.message).join('\n'));
  const rendered = renderClusters(loaded.clusters.map((c) => c.resolved));
  const problems = rendered.flatMap((r) => r.problems);
  if (problems.length > 0) throw new Error(`the API server would refuse the rendered objects:\n${problems.join('\n')}`);
  const objects = rendered.flatMap((r) => r.objects);
  assertValidK8sObjects(objects, options.kubeVersion ?? DEFAULT_KUBE_VERSION);
  return objects;
}

/** The error messages for an input that must fail. */
export function renderErrors(input: Obj | string, options: ResolveOptions = {}): string {
  const text = typeof input === 'string' ? input : toYaml(input);
  const loaded = loadTidbClusters(text, 'test.yaml', options);
  if (loaded.errors.length === 0) throw new Error('expected the input to be rejected, but it was accepted');
  return loaded.errors.map((e) => e.message).join('\n');
}

/** The one object of this kind and name (never by index). */
export function find(objects: Obj[], kind: string, name: string | RegExp): Obj {
  const hits = objects.filter((o) => o.kind === kind && (typeof name === 'string' ? o.metadata.name === name : name.test(o.metadata.name)));
  if (hits.length !== 1)
    throw new Error(`expected one ${kind} ${name}, found ${hits.length}: ${objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')}`);
  return hits[0];
}

export function container(sts: Obj, name: string): Obj {
  const c = [...(sts.spec.template.spec.initContainers ?? []), ...sts.spec.template.spec.containers].find((x: Obj) => x.name === name);
  if (!c) throw new Error(`no container ${name} in ${sts.metadata.name}`);
  return c;
}

export function env(c: Obj): Record<string, unknown> {
  return Object.fromEntries((c.env ?? []).map((e: Obj) => [e.name, e.value ?? e.valueFrom]));
}

export function tomlOf(cm: Obj): string {
  return cm.data['config-file'];
}

export { parse };

/**
 * An object as YAML text that kubectl (and so the renderer) reads back as the same object: YAML 1.1,
 * so strings such as "yes", "on" or "010" are quoted.
 */
export function toYaml(value: unknown): string {
  return stringify(value, { version: '1.1' });
}
