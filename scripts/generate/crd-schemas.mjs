#!/usr/bin/env node
// Prepares the TidbCluster CRD's openAPIV3Schema for the run-time validator
// (src/tidbcluster/crd-schema.ts).
//
// Why: parsing the ~34k-line CRD YAML takes ~0.6 s and compiling it with a
// general JSON-schema library several seconds, far over the CLI's start-up
// budget. So we do the expensive part here, once, and commit the result:
//   * keep only the keywords validation needs (descriptions, defaults and
//     list/map-type hints are dropped);
//   * hash-cons identical subtrees (the CRD inlines Affinity, Container,
//     Volume, ... dozens of times) into a node table where child schemas are
//     node indexes, which shrinks the file by an order of magnitude.
// Output is deterministic: the same CRD always gives a byte-identical file.
//
// Usage: node scripts/generate/crd-schemas.mjs [--check | crd.yaml out.json]
// The CRDs are tidb-operator's manifests/crd/v1/pingcap.com_<kind>.yaml (release-1.x). Without
// arguments every CRD the project reads is prepared (TidbCluster, Backup, BackupSchedule, Restore, TidbInitializer, TidbMonitor),
// each read from ../shared/schemas/ next to the repository, or from the folder $TIDB_GITOPS_CRDS.
// --check writes nothing: it fails, naming them, when committed files differ from what the CRDs give.

import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { CORE_SCHEMA, loadAll } from 'js-yaml';
import { REPO_ROOT, sharedPath } from '../lib/upstream.js';

/** [CRD file name, generated file] for each kind the project reads. */
const TARGETS = [
  ['pingcap.com_tidbclusters.yaml', 'src/tidbcluster/generated/tidbcluster.schema.json'],
  ['pingcap.com_backups.yaml', 'src/backup/generated/backup.schema.json'],
  ['pingcap.com_backupschedules.yaml', 'src/backup/generated/backupschedule.schema.json'],
  ['pingcap.com_restores.yaml', 'src/backup/generated/restore.schema.json'],
  ['pingcap.com_tidbinitializers.yaml', 'src/initializer/generated/tidbinitializer.schema.json'],
  ['pingcap.com_tidbmonitors.yaml', 'src/monitoring/generated/tidbmonitor.schema.json'],
];

// Keywords whose values are plain data, copied as-is.
const VALUE_KEYWORDS = new Set([
  'type',
  'required',
  'pattern',
  'format',
  'enum',
  'nullable',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'x-kubernetes-int-or-string',
  'x-kubernetes-preserve-unknown-fields',
]);
// Keywords whose values are schemas (or maps/lists of schemas).
const SCHEMA_KEYWORDS = new Set(['properties', 'items', 'additionalProperties', 'anyOf']);
// CEL rules: only the shapes listed in celRule() are understood; any other rule stops the script.
const CEL_KEYWORD = 'x-kubernetes-validations';
// Keywords that do not affect validation.
const DROPPED_KEYWORDS = new Set([
  'description',
  'default',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
]);

/** Code-unit order, so sorting never depends on the machine's locale. */
function compareStrings(a, b) {
  return a < b ? -1 : a > b ? 1 : 0;
}

function readCrd(file) {
  // js-yaml with YAML 1.2's core schema: a fifth of the time the yaml package takes on these files.
  for (const value of loadAll(readFileSync(file, 'utf8'), undefined, { filename: file, schema: CORE_SCHEMA })) {
    if (value && value.kind === 'CustomResourceDefinition') return value;
  }
  throw new Error(`${file}: no CustomResourceDefinition document found`);
}

/**
 * Fails on keywords the run-time validator does not understand, so a CRD
 * upgrade that adds e.g. CEL rules cannot silently weaken validation.
 */
function checkKeywords(schema, where) {
  const unknown = Object.keys(schema).filter(
    (k) => !VALUE_KEYWORDS.has(k) && !SCHEMA_KEYWORDS.has(k) && !DROPPED_KEYWORDS.has(k) && k !== CEL_KEYWORD,
  );
  if (unknown.length > 0) {
    throw new Error(
      `unsupported schema keyword(s) ${unknown.join(', ')} at ${where || '(root)'}; ` +
        'teach scripts/generate/crd-schemas.mjs and src/tidbcluster/crd-schema.ts about them',
    );
  }
}

/**
 * A CEL rule as `[field, field it excludes, message]`. The CRDs use one shape,
 * `has(self.a) ? !has(self.b) : true` (a field and its replacement may not both be set); a rule of
 * any other shape stops the script rather than being dropped.
 */
function celRule(rule, where) {
  const m = /^has\(self\.(\w+)\) \? !has\(self\.(\w+)\) : true$/.exec(rule.rule ?? '');
  if (!m)
    throw new Error(
      `unsupported CEL rule ${JSON.stringify(rule.rule)} at ${where || '(root)'}; teach scripts/generate/crd-schemas.mjs about it`,
    );
  return [m[1], m[2], rule.message ?? `${m[1]} and ${m[2]} may not both be set`];
}

/** Interns schemas into a table; identical subtrees share one index. */
class NodeTable {
  nodes = [];
  #index = new Map();

  intern(schema, where) {
    checkKeywords(schema, where);
    const node = {};
    for (const key of Object.keys(schema).sort(compareStrings)) {
      if (VALUE_KEYWORDS.has(key)) node[key] = this.#value(key, schema[key]);
      else if (SCHEMA_KEYWORDS.has(key)) node[key] = this.#children(key, schema[key], where);
      else if (key === CEL_KEYWORD) node.exclusive = schema[key].map((rule) => celRule(rule, where));
    }
    return this.#add(node);
  }

  #value(key, value) {
    // required is a set; sorting makes equal sets hash-cons together.
    return key === 'required' ? [...value].sort(compareStrings) : value;
  }

  #children(key, value, where) {
    switch (key) {
      case 'properties': {
        const out = {};
        for (const name of Object.keys(value).sort(compareStrings)) {
          out[name] = this.intern(value[name], `${where}.${name}`);
        }
        return out;
      }
      case 'anyOf':
        return value.map((s, i) => this.intern(s, `${where}.anyOf[${i}]`));
      case 'additionalProperties':
        return typeof value === 'boolean' ? value : this.intern(value, `${where}.*`);
      default: // items
        return this.intern(value, `${where}[]`);
    }
  }

  #add(node) {
    const key = JSON.stringify(node);
    let id = this.#index.get(key);
    if (id === undefined) {
      id = this.nodes.length;
      this.nodes.push(node);
      this.#index.set(key, id);
    }
    return id;
  }
}

/** One node per line: compact, yet diffs of the committed file stay readable. */
function render(header, root, nodes) {
  const head = JSON.stringify({ ...header, root }, null, 2).replace(/\n}$/, '');
  const body = nodes.map((n) => '    ' + JSON.stringify(n)).join(',\n');
  return `${head},\n  "nodes": [\n${body}\n  ]\n}\n`;
}

function main() {
  const args = process.argv.slice(2);
  const check = args.length === 1 && args[0] === '--check';
  if (args.length !== 0 && args.length !== 2 && !check) fail('usage: node scripts/generate/crd-schemas.mjs [--check | crd.yaml out.json]');
  const crdDir = () => process.env.TIDB_GITOPS_CRDS || sharedPath('schemas');
  const targets =
    args.length === 2
      ? [[path.resolve(args[0]), path.resolve(args[1])]]
      : TARGETS.map(([crd, out]) => [path.join(crdDir(), crd), path.join(REPO_ROOT, out)]);
  if (check) {
    const stale = targets.filter(([crdFile, outFile]) => !existsSync(outFile) || readFileSync(outFile, 'utf8') !== generate(crdFile));
    if (stale.length > 0)
      fail(
        `out of date with the CRDs, run \`node scripts/generate/crd-schemas.mjs\`: ${stale.map(([, out]) => path.relative(REPO_ROOT, out)).join(', ')}`,
      );
    return;
  }
  for (const [crdFile, outFile] of targets) {
    const text = generate(crdFile);
    mkdirSync(path.dirname(outFile), { recursive: true });
    writeFileSync(outFile, text);
    console.log(`wrote ${path.relative(process.cwd(), outFile) || outFile}: ${Buffer.byteLength(text)} bytes`);
  }
}

/** The prepared schema of the CRD in `crdFile`, as the committed file's text. */
function generate(crdFile) {
  if (!existsSync(crdFile)) {
    fail(
      `the CRD is not at ${crdFile}.\n` +
        'Give the folder that holds it: TIDB_GITOPS_CRDS=path/to/crds npm run gen, or one file:\n' +
        'node scripts/generate/crd-schemas.mjs path/to/pingcap.com_tidbclusters.yaml out.json\n' +
        "(the files are manifests/crd/v1/pingcap.com_<kind>.yaml of tidb-operator's release-1.x branch)",
    );
  }
  const source = readFileSync(crdFile);
  const crd = readCrd(crdFile);
  const version = crd.spec.versions[0];
  const table = new NodeTable();
  const root = table.intern(version.schema.openAPIV3Schema, '');
  const header = {
    generatedBy: 'node scripts/generate/crd-schemas.mjs',
    // Basename only: an absolute path would differ between machines.
    source: path.basename(crdFile),
    sourceSha256: createHash('sha256').update(source).digest('hex'),
    group: crd.spec.group,
    version: version.name,
    kind: crd.spec.names.kind,
  };
  return render(header, root, table.nodes);
}

/** A one-line reason on stderr and exit 1: these are a user's mistakes, not the script's bugs. */
function fail(message) {
  console.error(`gen-crd-schema: ${message}`);
  process.exit(1);
}

try {
  main();
} catch (e) {
  fail(e instanceof Error ? e.message : String(e));
}
