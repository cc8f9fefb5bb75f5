#!/usr/bin/env node
// Generates src/base/kube-schema-data.json: the Kubernetes OpenAPI definitions of every supported
// minor (1.31 to 1.36 from ../shared/schemas, 1.37 from the OpenAPI document of the k8s.io/kubernetes
// release test/kube/harness/go.mod requires; see scripts/lib/upstream.js), reduced to what validation reads
// (types, properties, items, required, enums, formats, references, group-version-kinds) and stored once
// where versions agree. The CLI validates the objects it passes through against it
// (src/base/kube-schema.ts).
//
// Usage: node scripts/generate/kube-schemas.mjs [output.json]
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kubeMinors, readKubeDefinitions, REPO_ROOT } from '../lib/upstream.js';

const MINORS = kubeMinors();
const KEEP = new Set([
  'type',
  'format',
  '$ref',
  'enum',
  'oneOf',
  'items',
  'properties',
  'additionalProperties',
  'required',
  'x-kubernetes-group-version-kind',
]);

function reduce(node, top) {
  if (Array.isArray(node)) return node.map((n) => reduce(n, false));
  if (typeof node !== 'object' || node === null) return node;
  const out = {};
  for (const key of Object.keys(node).sort()) {
    if (!KEEP.has(key) || (key === 'x-kubernetes-group-version-kind' && !top)) continue;
    const value = node[key];
    if (key === 'x-kubernetes-group-version-kind') out[key] = value.map(({ group, version, kind }) => ({ group, version, kind }));
    else if (key === 'properties')
      out[key] = Object.fromEntries(
        Object.keys(value)
          .sort()
          .map((k) => [k, reduce(value[k], false)]),
      );
    else out[key] = reduce(value, false);
  }
  return out;
}

const definitions = {};
MINORS.forEach((minor, bit) => {
  const defs = readKubeDefinitions(minor);
  for (const name of Object.keys(defs).sort()) {
    const node = reduce(defs[name], true);
    const text = JSON.stringify(node);
    const variants = (definitions[name] ??= []);
    const same = variants.find((v) => JSON.stringify(v[1]) === text);
    if (same) same[0] |= 1 << bit;
    else variants.push([1 << bit, node]);
  }
});
const out = process.argv[2] ?? join(REPO_ROOT, 'src', 'base', 'kube-schema-data.json');
writeFileSync(out, `${JSON.stringify({ minors: MINORS, definitions })}\n`);
console.log(`wrote ${out}`);
