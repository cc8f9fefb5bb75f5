/**
 * The schemas of the project's own kinds are written by hand (they have no CRD), in the node-table
 * form `validateSchema` reads. This builds one: each call adds a node and gives its index; `document`
 * wraps a spec in the apiVersion, kind and metadata every kind has.
 */
import type { CompactSchema } from '../tidbcluster/crd-schema';

type SchemaNode = CompactSchema['nodes'][number];

/** A Secret's name (a DNS subdomain) and one of its keys, as Kubernetes takes them. */
export const SECRET_NAME = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
export const SECRET_KEY = '^[-._a-zA-Z0-9]+$';

export class SchemaBuilder {
  readonly nodes: SchemaNode[] = [];

  add(n: SchemaNode): number {
    return this.nodes.push(n) - 1;
  }

  /** A non-empty string, with a pattern, an enum or a length when given. */
  str(extra: Partial<SchemaNode> = {}): number {
    return this.add({ type: 'string', minLength: 1, ...extra });
  }

  bool(): number {
    return this.add({ type: 'boolean' });
  }

  obj(properties: Record<string, number>, required: string[] = []): number {
    return this.add({ type: 'object', properties, ...(required.length > 0 && { required }) });
  }

  list(items: number): number {
    return this.add({ type: 'array', items });
  }

  /** `spec.cluster`: the TidbCluster a document is tied to. */
  cluster(): number {
    return this.obj({ name: this.str(), namespace: this.str() }, ['name']);
  }

  /** A Secret's name. */
  secretName(): number {
    return this.str({ pattern: SECRET_NAME, maxLength: 253 });
  }

  /** A key of a Secret. */
  secretKey(): number {
    return this.str({ pattern: SECRET_KEY, maxLength: 253 });
  }

  /** The whole document of `kind`: apiVersion, kind, metadata and this spec. */
  document(kind: string, spec: number): CompactSchema {
    const stringMap = this.add({ type: 'object', additionalProperties: this.add({ type: 'string' }) });
    const metadata = this.obj({ name: this.str(), namespace: this.str(), labels: stringMap, annotations: stringMap }, ['name']);
    const text = this.add({ type: 'string' });
    const root = this.obj({ apiVersion: text, kind: text, metadata, spec }, ['apiVersion', 'kind', 'metadata', 'spec']);
    return { group: 'tidb-gitops.io', version: 'v1alpha1', kind, root, nodes: this.nodes };
  }
}
