/**
 * How every document of the project's own kinds is read, in one place: its text checked for what
 * YAML must not hold, then its own refusals (fields refused with words of their own, which take the
 * place of the schema's words at the same path), its schema (unknown fields with a did-you-mean,
 * types, enums), its name and namespace, and last what spans fields (`resolve`), every problem at once.
 */
import { DNS1123_LABEL } from '../base/patterns';
import { unsafeTextIssues } from '../tidbcluster/check';
import { type CompactSchema, validateSchema } from '../tidbcluster/crd-schema';
import type { SpecIssue } from '../tidbcluster/errors';
import type { DocumentKind } from '../tidbcluster/load';

export interface OwnKind<D, V> {
  readonly kind: string;
  readonly schema: CompactSchema;
  /** Refusals with words of their own, checked before the schema. @default none */
  readonly refused?: (doc: Record<string, unknown>) => SpecIssue[];
  /** The document as kept, or what spans its fields. */
  readonly resolve: (doc: D) => { value?: V; issues: SpecIssue[] };
}

/** A reader of one of the project's kinds, for `parseDocuments`. */
export function ownKind<D, V>(k: OwnKind<D, V>): DocumentKind<V> {
  return {
    kind: k.kind,
    group: 'tidb-gitops.io',
    check(doc) {
      const unsafe = unsafeTextIssues(doc, k.kind);
      if (unsafe.length > 0) return unsafe;
      const own = k.refused?.(doc) ?? [];
      const taken = new Set(own.map((i) => i.path));
      const issues = [...own, ...validateSchema(k.schema, doc).filter((i) => !taken.has(i.path)), ...metadataIssues(doc.metadata)];
      if (issues.length > 0) return issues;
      return k.resolve(doc as unknown as D).issues;
    },
    read(doc) {
      const { value } = k.resolve(doc as unknown as D);
      if (!value) throw new Error(`${k.kind}: read() of a document check() refused`);
      return value;
    },
  };
}

/** A name and namespace Kubernetes takes: DNS labels. */
export function metadataIssues(metadata: unknown): SpecIssue[] {
  if (typeof metadata !== 'object' || metadata === null) return [];
  const { name, namespace } = metadata as Record<string, unknown>;
  const issues: SpecIssue[] = [];
  if (typeof name === 'string' && (name.length > 63 || !DNS1123_LABEL.test(name)))
    issues.push({
      path: 'metadata.name',
      message: `invalid name ${JSON.stringify(name)}: expected at most 63 lowercase letters, digits and '-'`,
    });
  if (typeof namespace === 'string' && (namespace.length > 63 || !DNS1123_LABEL.test(namespace)))
    issues.push({
      path: 'metadata.namespace',
      message: `invalid namespace ${JSON.stringify(namespace)}: expected a DNS label (lowercase letters, digits and '-')`,
    });
  return issues;
}

/**
 * Where a document stands and the cluster it names: its namespace (its own, else `render`'s
 * `--namespace`), and the cluster's (written, else the document's).
 */
export function placement(
  metadata: { readonly namespace?: string },
  cluster: { readonly name: string; readonly namespace?: string },
  options: { readonly namespace?: string },
): { namespace?: string; cluster: { name: string; namespace?: string } } {
  const namespace = metadata.namespace ?? options.namespace;
  const clusterNamespace = cluster.namespace ?? namespace;
  return {
    ...(namespace !== undefined && { namespace }),
    cluster: { name: cluster.name, ...(clusterNamespace !== undefined && { namespace: clusterNamespace }) },
  };
}
