/**
 * Strict validation of rendered manifests against the full OpenAPI definitions of the Kubernetes
 * version they target (every supported minor; scripts/lib/upstream.js says where each is read from), with
 * the validator the CLI uses on the objects it passes through (src/base/kube-schema.ts): unknown
 * fields, wrong types and missing required fields fail. Prometheus Operator's PodMonitor and
 * PrometheusRule join every version's definitions.
 */
import * as fs from 'fs';
import { load } from 'js-yaml';
import { NEWEST_KUBE_MINOR, OLDEST_KUBE_MINOR } from '../../src/tidbcluster/kube-version';
import { describeObject, KubeSchema, type K8sSchemaError, type SchemaNode } from '../../src/base/kube-schema';
import { prometheusOperatorCrdFile, readKubeDefinitions } from '../../scripts/lib/upstream';

export type { K8sSchemaError };

/** The target's minor version (31 for 1.31), or `1.NN` as the CLI takes it. */
export type KubeMinor = number | string;
/** Every minor the release renders for, oldest first. */
export const SCHEMA_MINORS: readonly number[] = Array.from(
  { length: NEWEST_KUBE_MINOR - OLDEST_KUBE_MINOR + 1 },
  (_, i) => OLDEST_KUBE_MINOR + i,
);

// Loaded once per process; jest gives each test file its own module registry, so once per test file.
const cached = new Map<number, KubeSchema>();

/** The full definitions of a version, Prometheus Operator's CRDs among them. */
export function fullSchema(kube: KubeMinor): KubeSchema {
  const minor = minorOf(kube);
  let found = cached.get(minor);
  if (!found)
    cached.set(
      minor,
      (found = new KubeSchema({ ...(readKubeDefinitions(minor) as Record<string, SchemaNode>), ...monitoringDefinitions() })),
    );
  return found;
}

let crds: any[] | undefined;

/**
 * Prometheus Operator's PodMonitor and PrometheusRule CRDs, as its release ships them (read once): the
 * monitoring objects are validated against them, and the real-API suites install them.
 */
export function monitoringCrds(): any[] {
  crds ??= ['podmonitors', 'prometheusrules'].map((plural) => load(fs.readFileSync(prometheusOperatorCrdFile(plural), 'utf8')));
  return crds;
}

const OBJECT_META = '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

/** A CRD's structural schema in the definitions' dialect: int-or-string, free-form and metadata as there. */
export function fromCrdSchema(node: any, top = false): SchemaNode {
  if (node['x-kubernetes-int-or-string']) return { format: 'int-or-string' } as SchemaNode;
  if (node['x-kubernetes-preserve-unknown-fields'] && !node.properties) return {} as SchemaNode;
  const out: any = {};
  for (const key of ['type', 'format', 'enum', 'required']) if (node[key] !== undefined) out[key] = node[key];
  if (node.properties) {
    out.properties = Object.fromEntries(
      Object.entries(node.properties).map(([k, v]) => [k, top && k === 'metadata' ? { $ref: OBJECT_META } : fromCrdSchema(v)]),
    );
  }
  if (node.items) out.items = fromCrdSchema(node.items);
  if (typeof node.additionalProperties === 'object') out.additionalProperties = fromCrdSchema(node.additionalProperties);
  return out as SchemaNode;
}

function monitoringDefinitions(): Record<string, SchemaNode> {
  const out: Record<string, SchemaNode> = {};
  for (const crd of monitoringCrds()) {
    for (const v of crd.spec.versions) {
      if (!v.served) continue;
      const schema = fromCrdSchema(v.schema.openAPIV3Schema, true) as any;
      schema['x-kubernetes-group-version-kind'] = [{ group: crd.spec.group, version: v.name, kind: crd.spec.names.kind }];
      out[`${crd.spec.group}.${v.name}.${crd.spec.names.kind}`] = schema;
    }
  }
  return out;
}

/**
 * Validates one object (must carry apiVersion + kind); finds the definition by
 * x-kubernetes-group-version-kind (group "" for core, e.g. apiVersion "apps/v1"
 * -> group apps, version v1). Unknown apiVersion/kind is an error.
 */
export function validateK8sObject(obj: unknown, kube: KubeMinor = OLDEST_KUBE_MINOR): K8sSchemaError[] {
  return fullSchema(kube).validate(obj);
}

function minorOf(kube: KubeMinor): number {
  const minor = typeof kube === 'number' ? kube : Number(/^v?1\.(\d+)/.exec(kube)?.[1]);
  if (!SCHEMA_MINORS.includes(minor)) {
    throw new Error(`no Kubernetes schema for ${JSON.stringify(kube)}; this release renders for 1.${SCHEMA_MINORS.join(', 1.')}`);
  }
  return minor;
}

/** Throws an Error listing every problem (kind/name + path + message) if any object is invalid. */
export function assertValidK8sObjects(objs: unknown[], kube: KubeMinor = OLDEST_KUBE_MINOR): void {
  const problems: string[] = [];
  objs.forEach((obj, i) => {
    const label = describeObject(obj, i);
    for (const e of validateK8sObject(obj, kube)) problems.push(`  ${label}: ${e.path || '<root>'}: ${e.message}`);
  });
  if (problems.length > 0) {
    throw new Error(`${problems.length} Kubernetes 1.${minorOf(kube)} schema violation(s):\n${problems.join('\n')}`);
  }
}
