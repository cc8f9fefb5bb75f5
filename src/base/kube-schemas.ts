/**
 * The Kubernetes definitions of each supported minor, as `scripts/generate/kube-schemas.mjs` stores them
 * (`kube-schema-data.json`, beside this module and beside the bundles): read on first use only, so
 * a render that passes no object through never pays for them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { KubeSchema, type SchemaNode } from './kube-schema';

interface SchemaData {
  readonly minors: readonly number[];
  /** Per definition, its variants: a bit mask of the minors (bit i for `minors[i]`) and the definition. */
  readonly definitions: Readonly<Record<string, readonly (readonly [number, SchemaNode])[]>>;
}

let data: SchemaData | undefined;
const schemas = new Map<number, KubeSchema>();

/** The definitions of Kubernetes 1.`minor` (a supported one). */
export function kubeSchema(minor: number): KubeSchema {
  let schema = schemas.get(minor);
  if (schema) return schema;
  data ??= JSON.parse(readFileSync(join(__dirname, 'kube-schema-data.json'), 'utf8')) as SchemaData;
  const bit = data.minors.indexOf(minor);
  if (bit < 0) throw new Error(`no Kubernetes definitions for 1.${minor}; this release has 1.${data.minors.join(', 1.')}`);
  const definitions: Record<string, SchemaNode> = {};
  for (const [name, variants] of Object.entries(data.definitions)) {
    const found = variants.find(([mask]) => (mask & (1 << bit)) !== 0);
    if (found) definitions[name] = found[1];
  }
  schemas.set(minor, (schema = new KubeSchema(definitions)));
  return schema;
}
