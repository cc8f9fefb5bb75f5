/**
 * Strict validation of rendered manifests against the full OpenAPI definitions of the Kubernetes
 * version they target (1.31 to 1.36, test/schemas), with the validator the CLI uses on the objects
 * it passes through (src/base/kube-schema.ts): unknown fields, wrong types and missing required
 * fields fail.
 */
import * as fs from 'fs';
import * as path from 'path';
import { OLDEST_KUBE_MINOR } from '../../src/tidbcluster/kube-version';
import { describeObject, KubeSchema, type K8sSchemaError, type SchemaNode } from '../../src/base/kube-schema';

export type { K8sSchemaError };

/** The target's minor version (31 for 1.31), or `1.NN` as the CLI takes it. */
export type KubeMinor = number | string;
/** The minors whose definitions test/schemas holds. */
export const SCHEMA_MINORS = [31, 32, 33, 34, 35, 36] as const;
const schemaFile = (minor: number) => path.resolve(__dirname, '..', 'schemas', `kubernetes-v1.${minor}-definitions.json`);

// Loaded once per process; jest gives each test file its own module registry, so once per test file.
const cached = new Map<number, KubeSchema>();

/** The full definitions of a version, as test/schemas holds them. */
export function fullSchema(kube: KubeMinor): KubeSchema {
  const minor = minorOf(kube);
  let found = cached.get(minor);
  if (!found) {
    const file = schemaFile(minor);
    const json = JSON.parse(fs.readFileSync(file, 'utf8')) as { definitions?: Record<string, SchemaNode> };
    if (!json.definitions) throw new Error(`${file}: no "definitions" object`);
    cached.set(minor, (found = new KubeSchema({ ...json.definitions, ...monitoringDefinitions() })));
  }
  return found;
}

/** Prometheus Operator's CRDs the monitoring objects are validated against (`scripts/gen-monitoring-crds.mjs`). */
export const MONITORING_CRDS_FILE = path.resolve(__dirname, '..', 'schemas', 'monitoring-crds.json');
const OBJECT_META = '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

/** A CRD's structural schema in the definitions' dialect: int-or-string, free-form and metadata as there. */
function fromCrdSchema(node: any, top = false): SchemaNode {
  if (node['x-kubernetes-int-or-string']) return { format: 'int-or-string' } as SchemaNode;
  if (node['x-kubernetes-preserve-unknown-fields'] && !node.properties) return {} as SchemaNode;
  const out: any = {};
  for (const key of ['type', 'format', 'enum', 'required']) if (node[key] !== undefined) out[key] = node[key];
  if (node.properties) {
    out.properties = Object.fromEntries(Object.entries(node.properties).map(([k, v]) => [k, top && k === 'metadata' ? { $ref: OBJECT_META } : fromCrdSchema(v)]));
  }
  if (node.items) out.items = fromCrdSchema(node.items);
  if (typeof node.additionalProperties === 'object') out.additionalProperties = fromCrdSchema(node.additionalProperties);
  return out as SchemaNode;
}

function monitoringDefinitions(): Record<string, SchemaNode> {
  const { crds } = JSON.parse(fs.readFileSync(MONITORING_CRDS_FILE, 'utf8')) as { crds: any[] };
  const out: Record<string, SchemaNode> = {};
  for (const crd of crds) {
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
  if (!(SCHEMA_MINORS as readonly number[]).includes(minor)) {
    throw new Error(`no Kubernetes schema for ${JSON.stringify(kube)}; test/schemas has 1.${SCHEMA_MINORS.join(', 1.')}`);
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
