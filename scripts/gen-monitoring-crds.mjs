#!/usr/bin/env node
// Writes the PodMonitor and PrometheusRule CRDs of Prometheus Operator, as the tests install them into
// the real API server, with every description dropped (the schema is the API; the prose is not ours).
//
// Usage: node scripts/gen-monitoring-crds.mjs [DIR]
// DIR holds monitoring.coreos.com_podmonitors.yaml and monitoring.coreos.com_prometheusrules.yaml (the
// `example/prometheus-operator-crd/` folder of prometheus-operator, at the release named below).
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RELEASE = 'v0.93.0';
const dir = process.argv[2];
if (!dir) {
  process.stderr.write(`usage: node scripts/gen-monitoring-crds.mjs DIR (prometheus-operator ${RELEASE} example/prometheus-operator-crd)\n`);
  process.exit(2);
}
const strip = (node) => {
  if (Array.isArray(node)) return node.map(strip);
  if (typeof node !== 'object' || node === null) return node;
  return Object.fromEntries(Object.entries(node).filter(([k]) => k !== 'description').map(([k, v]) => [k, strip(v)]));
};
const crds = ['podmonitors', 'prometheusrules'].map((plural) => {
  const crd = YAML.parse(readFileSync(path.join(dir, `monitoring.coreos.com_${plural}.yaml`), 'utf8'));
  return strip({ apiVersion: crd.apiVersion, kind: crd.kind, metadata: { name: crd.metadata.name }, spec: crd.spec });
});
const out = path.join(REPO_ROOT, 'test/schemas/monitoring-crds.json');
writeFileSync(out, `${JSON.stringify({ release: `prometheus-operator ${RELEASE}`, crds })}\n`);
process.stdout.write(`wrote ${path.relative(REPO_ROOT, out)}\n`);
