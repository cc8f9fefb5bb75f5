#!/usr/bin/env node
// Generates imports/k8s.ts: plain JSON-shaped TypeScript types for every
// definition of the newest supported Kubernetes (v1.36) OpenAPI (swagger 2.0) schema.
//
// Usage: node scripts/import-k8s.mjs [definitions.json] [output.ts]
//
// We deliberately emit data shapes (what appears in YAML) rather than cdk8s L1
// classes: the renderer builds plain objects and the tests validate them
// against the very same schema (test/support/k8s-schema.ts).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SCHEMA_FILE = 'kubernetes-v1.36-definitions.json';
// The repo keeps its own copy so generation does not depend on a sibling folder.
const DEFAULT_INPUTS = [
  join(REPO_ROOT, 'test', 'schemas', SCHEMA_FILE),
  resolve(REPO_ROOT, '..', 'shared', 'schemas', SCHEMA_FILE),
];
const DEFAULT_OUTPUT = join(REPO_ROOT, 'imports', 'k8s.ts');

// Packages whose types keep the bare name when a last segment is shared.
const PREFERRED_PACKAGES = [
  'io.k8s.api.core.v1',
  'io.k8s.api.apps.v1',
  'io.k8s.apimachinery.pkg.apis.meta.v1',
];

const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';
const INT_OR_STRING = 'io.k8s.apimachinery.pkg.util.intstr.IntOrString';

// Hand-picked aliases: the schema expresses these as oneOf / opaque values,
// which would otherwise come out as less useful types.
const FIXED_ALIASES = {
  [QUANTITY]: 'string',
  [INT_OR_STRING]: 'number | string',
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON': 'unknown',
};

// Names our own output relies on; a definition with one of these names would
// shadow it and silently change the meaning of the file.
const RESERVED_NAMES = new Set(['Record', 'Array', 'unknown', 'string', 'number', 'boolean']);

const VERSION_RE = /^v\d+(?:(?:alpha|beta)\d+)?$/;
const IDENTIFIER_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

function main() {
  const input = process.argv[2] ? resolve(process.argv[2]) : DEFAULT_INPUTS.find((p) => existsSync(p));
  if (!input) throw new Error(`the Kubernetes definitions were not found; tried ${DEFAULT_INPUTS.join(', ')}. Give the path of a ${SCHEMA_FILE}: node scripts/import-k8s.mjs FILE`);
  if (!existsSync(input)) throw new Error(`${input} does not exist`);
  const output = process.argv[3] ? resolve(process.argv[3]) : DEFAULT_OUTPUT;

  const definitions = readDefinitions(input);
  const names = assignNames(Object.keys(definitions));
  const source = renderFile(definitions, names);

  mkdirSync(dirname(output), { recursive: true });
  writeFileSync(output, source);
  console.log(`wrote ${relative(process.cwd(), output)} (${names.size} types from ${relative(process.cwd(), input)})`);
}

function readDefinitions(file) {
  const json = JSON.parse(readFileSync(file, 'utf8'));
  const definitions = json.definitions ?? json;
  if (!definitions || typeof definitions !== 'object') throw new Error(`${file}: no "definitions" object`);
  return definitions;
}

// ---------------------------------------------------------------------------
// Naming

const lastSegment = (key) => key.slice(key.lastIndexOf('.') + 1);
const packageOf = (key) => key.slice(0, key.lastIndexOf('.'));

/** Maps every definition key to a unique TypeScript name. */
function assignNames(keys) {
  const bySegment = new Map();
  for (const key of [...keys].sort()) {
    const segment = lastSegment(key);
    bySegment.set(segment, [...(bySegment.get(segment) ?? []), key]);
  }

  const names = new Map();
  for (const [segment, group] of bySegment) {
    const keeper = group.length === 1 ? group[0] : preferredKey(group);
    for (const key of group) names.set(key, key === keeper ? segment : packagePrefix(key) + segment);
  }
  assertUniqueNames(names);
  return names;
}

/** The first key (in PREFERRED_PACKAGES order) allowed to keep the bare name, if any. */
function preferredKey(group) {
  for (const pkg of PREFERRED_PACKAGES) {
    const key = group.find((k) => packageOf(k) === pkg);
    if (key) return key;
  }
  return undefined;
}

/**
 * `io.k8s.api.events.v1` -> `EventsV1`, `io.k8s.api.flowcontrol.v1beta3` ->
 * `FlowcontrolV1Beta3`, `io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1`
 * -> `ApiextensionsV1`. Unversioned packages use their last segment.
 */
function packagePrefix(key) {
  const segments = packageOf(key).split('.');
  const last = segments[segments.length - 1];
  if (!VERSION_RE.test(last)) return pascal(last);
  return pascal(segments[segments.length - 2]) + pascal(last);
}

/** `v1beta3` -> `V1Beta3`, `kube-aggregator` -> `KubeAggregator`. */
function pascal(word) {
  return word
    .split(/[^A-Za-z0-9]+|(?<=\d)(?=[a-z])/)
    .filter(Boolean)
    .map((part) => part[0].toUpperCase() + part.slice(1))
    .join('');
}

function assertUniqueNames(names) {
  const owners = new Map();
  for (const [key, name] of names) {
    if (RESERVED_NAMES.has(name)) throw new Error(`${key}: name ${name} would shadow a built-in type`);
    if (owners.has(name)) throw new Error(`name clash: ${name} for ${owners.get(name)} and ${key}`);
    owners.set(name, key);
  }
}

// ---------------------------------------------------------------------------
// Rendering

function renderFile(definitions, names) {
  const entries = [...names].sort(([, a], [, b]) => (a < b ? -1 : a > b ? 1 : 0));
  const blocks = entries.map(([key, name]) => renderDefinition(key, name, definitions[key], names));
  return [
    '// Generated by `node scripts/import-k8s.mjs` from the newest supported Kubernetes (v1.36) OpenAPI schema.',
    '// DO NOT EDIT BY HAND: change the script and re-run it instead.',
    '/* eslint-disable */',
    '',
    blocks.join('\n\n'),
    '',
  ].join('\n');
}

function renderDefinition(key, name, schema, names) {
  const doc = `/** ${key} */`;
  const alias = FIXED_ALIASES[key];
  if (alias) return `${doc}\nexport type ${name} = ${alias};`;
  if (!schema.properties) return `${doc}\nexport type ${name} = ${typeOf(schema, names)};`;

  const required = new Set(schema.required ?? []);
  const fields = Object.keys(schema.properties)
    .sort()
    .map((prop) => renderField(prop, schema.properties[prop], required.has(prop), names));
  return `${doc}\nexport interface ${name} {\n${fields.join('\n')}\n}`;
}

function renderField(prop, schema, required, names) {
  const key = IDENTIFIER_RE.test(prop) ? prop : JSON.stringify(prop);
  return `  ${key}${required ? '' : '?'}: ${typeOf(schema, names)};`;
}

/** TypeScript type expression for a (property or definition) schema node. */
function typeOf(schema, names) {
  if (schema.$ref) return refName(schema.$ref, names);
  if (schema.format === 'int-or-string') return 'IntOrString';
  if (schema.oneOf) return unionOf(schema.oneOf, names);
  switch (schema.type) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'array':
      return arrayOf(schema.items ? typeOf(schema.items, names) : 'unknown');
    case 'object':
      return recordOf(schema, names);
    default:
      // No type at all means "any JSON value" (e.g. JSONSchemaPropsOrBool).
      return 'unknown';
  }
}

function refName(ref, names) {
  const key = ref.replace(/^#\/definitions\//, '');
  const name = names.get(key);
  if (!name) throw new Error(`dangling $ref ${ref}`);
  return name;
}

function unionOf(branches, names) {
  return [...new Set(branches.map((b) => typeOf(b, names)))].join(' | ');
}

// Wrap unions so `A | B[]` does not silently mean `A | (B[])`.
const arrayOf = (item) => (item.includes(' ') ? `Array<${item}>` : `${item}[]`);

function recordOf(schema, names) {
  const extra = schema.additionalProperties;
  if (extra && typeof extra === 'object') return `Record<string, ${typeOf(extra, names)}>`;
  return 'Record<string, unknown>';
}

try {
  main();
} catch (e) {
  console.error(`import-k8s: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
}
