// Run-time validation of TidbCluster documents against the CRD schema.
//
// The CRD's openAPIV3Schema is prepared at build time by
// scripts/generate/crd-schemas.mjs into a hash-consed node table (child schemas are
// node indexes). Interpreting that table directly keeps start-up in the
// low milliseconds, which a general JSON-schema compiler cannot do.
//
// Semantics follow what the Kubernetes API server (with
// `kubectl --validate=strict`) would report, phrased for humans editing YAML.

import schema from './generated/tidbcluster.schema.json';
import { joinKey } from '../base/path';
import { suggest } from '../base/suggest';

export interface SchemaIssue {
  path: string;
  message: string;
}

type SchemaType = 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';

/** One schema in the generated node table; child schemas are node indexes. */
interface SchemaNode {
  type?: string;
  // `| undefined` because tsc widens the JSON's differing property maps so.
  properties?: Record<string, number | undefined>;
  required?: string[];
  items?: number;
  additionalProperties?: number | boolean;
  anyOf?: number[];
  pattern?: string;
  format?: string;
  enum?: unknown[];
  nullable?: boolean;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  /** CEL rules of the shape `[field, field it excludes, message]` (see scripts/generate/crd-schemas.mjs). */
  exclusive?: string[][];
}

/** A CRD's schema as scripts/generate/crd-schemas.mjs prepares it. */
export interface CompactSchema {
  group: string;
  version: string;
  kind: string;
  root: number;
  nodes: SchemaNode[];
}

// Assigned without a cast so tsc checks the generated file against SchemaNode.
const compact: CompactSchema = schema;

/** What a document value is, in the vocabulary of schema types. */
type ValueKind = SchemaType | 'null' | 'other';

interface Context {
  nodes: SchemaNode[];
  issues: SchemaIssue[];
}

/**
 * Validates a parsed TidbCluster document against the CRD schema; returns
 * every issue found (never throws). Issues come in document order; an issue
 * about the document itself has the path "".
 */
export function validateTidbClusterSchema(doc: unknown): SchemaIssue[] {
  return validateSchema(compact, doc);
}

/** {@link validateTidbClusterSchema} for the document of any CRD the generator prepared. */
export function validateSchema(crd: CompactSchema, doc: unknown): SchemaIssue[] {
  const ctx: Context = { nodes: crd.nodes, issues: [] };
  try {
    checkIdentity(ctx, crd, doc);
    checkValue(ctx, crd.root, doc, '');
  } catch (err) {
    // A validator bug must surface as an issue, not crash the CLI.
    ctx.issues.push({ path: '', message: `internal validator error: ${String(err)}` });
  }
  return ctx.issues;
}

// ---------------------------------------------------------------------------
// apiVersion / kind

/**
 * The CRD schema only says apiVersion and kind are strings; the API server
 * additionally requires them to name this CRD, so check that here.
 */
function checkIdentity(ctx: Context, crd: CompactSchema, doc: unknown): void {
  if (kindOf(doc) !== 'object') return; // the root type check reports it
  const obj = doc as Record<string, unknown>;
  checkConstant(ctx, obj, 'apiVersion', `${crd.group}/${crd.version}`);
  checkConstant(ctx, obj, 'kind', crd.kind);
}

function checkConstant(ctx: Context, obj: Record<string, unknown>, key: string, want: string): void {
  if (!Object.hasOwn(obj, key)) {
    report(ctx, key, 'required field is missing');
  } else if (typeof obj[key] === 'string' && obj[key] !== want) {
    report(ctx, key, `expected ${want}, got ${describe(obj[key])}`);
  }
  // Non-string values are reported by the schema's own type check.
}

// ---------------------------------------------------------------------------
// Generic schema interpretation

function checkValue(ctx: Context, ref: number, value: unknown, path: string): void {
  const node = ctx.nodes[ref];
  const kind = kindOf(value);
  if (kind === 'null' && (node.nullable || isUnconstrained(node))) return;
  if (!checkShape(ctx, node, value, kind, path)) return;
  if (node.enum !== undefined && !node.enum.includes(value)) {
    report(ctx, path, `expected one of ${node.enum.map(formatEnumValue).join(', ')}, got ${describe(value)}`);
    return;
  }
  switch (kind) {
    case 'object':
      return checkObject(ctx, node, value as Record<string, unknown>, path);
    case 'array':
      return checkArray(ctx, node, value as unknown[], path);
    case 'string':
      return checkString(ctx, node, value as string, path);
    case 'integer':
    case 'number':
      return checkNumber(ctx, node, value as number, path);
  }
}

/** A schema with no type of any kind accepts every value, null included. */
function isUnconstrained(node: SchemaNode): boolean {
  return node.type === undefined && node.anyOf === undefined && !node['x-kubernetes-int-or-string'];
}

/**
 * Checks `type`, `anyOf` and int-or-string; returns false when the value has
 * the wrong shape, so that keyword checks for another shape are skipped.
 */
function checkShape(ctx: Context, node: SchemaNode, value: unknown, kind: ValueKind, path: string): boolean {
  if (isIntOrString(node)) {
    if (kind === 'integer' || kind === 'string') return true;
    report(ctx, path, `expected ${intOrStringPhrase(node)}, got ${describe(value)}${quoteHint(node, value)}`);
    return false;
  }
  if (node.type !== undefined && !kindMatches(node.type, kind)) {
    report(ctx, path, `expected ${typePhrase(node.type)}, got ${describe(value)}`);
    return false;
  }
  if (node.anyOf !== undefined && !node.anyOf.some((ref) => passes(ctx, ref, value))) {
    report(ctx, path, `expected ${anyOfPhrase(ctx, node.anyOf)}, got ${describe(value)}`);
    return false;
  }
  return true;
}

/** Tries a schema without recording its issues (for anyOf branches). */
function passes(ctx: Context, ref: number, value: unknown): boolean {
  const scratch: Context = { nodes: ctx.nodes, issues: [] };
  checkValue(scratch, ref, value, '');
  return scratch.issues.length === 0;
}

function kindMatches(type: string, kind: ValueKind): boolean {
  return type === kind || (type === 'number' && kind === 'integer');
}

// ---------------------------------------------------------------------------
// Objects and arrays

function checkObject(ctx: Context, node: SchemaNode, obj: Record<string, unknown>, path: string): void {
  for (const key of node.required ?? []) {
    if (!Object.hasOwn(obj, key)) report(ctx, joinKey(path, key), 'required field is missing');
  }
  for (const key of Object.keys(obj)) {
    const childPath = joinKey(path, key);
    const ref = node.properties !== undefined && Object.hasOwn(node.properties, key) ? node.properties[key] : undefined;
    if (ref !== undefined) checkValue(ctx, ref, obj[key], childPath);
    else checkUndeclared(ctx, node, key, obj[key], childPath);
  }
  for (const [field, excluded, message] of node.exclusive ?? []) {
    if (Object.hasOwn(obj, field) && Object.hasOwn(obj, excluded)) report(ctx, joinKey(path, excluded), message);
  }
}

/** Free-form values (a config table): any shape, but no integer a reader has already rounded. */
function checkFreeForm(ctx: Context, value: unknown, path: string): void {
  if (typeof value === 'number') {
    if (Number.isInteger(value) && !Number.isSafeInteger(value))
      report(
        ctx,
        path,
        `expected an integer within ±${Number.MAX_SAFE_INTEGER}, the largest read exactly: beyond it digits are lost (write it in a TOML string, \`config: |\`, to keep every digit)`,
      );
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => checkFreeForm(ctx, v, `${path}[${i}]`));
  } else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) checkFreeForm(ctx, v, joinKey(path, k));
  }
}

/** A key not listed in `properties`: validate, accept or reject it. */
function checkUndeclared(ctx: Context, node: SchemaNode, key: string, value: unknown, path: string): void {
  const extra = node.additionalProperties;
  if (typeof extra === 'number') return checkValue(ctx, extra, value, path);
  if (extra === true || node['x-kubernetes-preserve-unknown-fields']) return checkFreeForm(ctx, value, path);
  // An object schema with neither properties nor additionalProperties (e.g.
  // metadata) is free-form; one that lists properties is a closed struct.
  if (extra === false || node.properties !== undefined) {
    const hint = suggest(key, Object.keys(node.properties ?? {}));
    report(ctx, path, hint === undefined ? 'unknown field' : `unknown field; did you mean ${hint}?`);
  }
}

function checkArray(ctx: Context, node: SchemaNode, list: unknown[], path: string): void {
  if (node.items === undefined) return;
  for (let i = 0; i < list.length; i++) checkValue(ctx, node.items, list[i], `${path}[${i}]`);
}

// ---------------------------------------------------------------------------
// Scalars

function checkString(ctx: Context, node: SchemaNode, text: string, path: string): void {
  if (node.pattern !== undefined && !matchesPattern(node.pattern, text)) {
    report(ctx, path, `expected ${patternPhrase(node.pattern)}, got ${describe(text)}`);
    return;
  }
  checkLength(ctx, node, text, path);
  if (node.format === 'date-time' && !DATE_TIME.test(text)) {
    report(ctx, path, `expected a date-time such as 2024-01-31T12:00:00Z, got ${describe(text)}`);
  }
}

function checkLength(ctx: Context, node: SchemaNode, text: string, path: string): void {
  if (node.minLength === undefined && node.maxLength === undefined) return;
  // Kubernetes counts characters (runes), not UTF-16 code units.
  const length = [...text].length;
  if (node.minLength !== undefined && length < node.minLength) {
    report(ctx, path, node.minLength === 1 ? 'must not be empty' : `must be at least ${node.minLength} characters long, got ${length}`);
  } else if (node.maxLength !== undefined && length > node.maxLength) {
    report(ctx, path, `must be at most ${node.maxLength} characters long, got ${length}`);
  }
}

function checkNumber(ctx: Context, node: SchemaNode, n: number, path: string): void {
  // Past 2^53 a JavaScript number (and YAML read into one) has already lost digits: 9007199254740993
  // reads as ...992. Refuse rather than render a value the user did not write.
  if (Number.isInteger(n) && !Number.isSafeInteger(n)) {
    report(ctx, path, `expected an integer within ±${Number.MAX_SAFE_INTEGER}, the largest read exactly: beyond it digits are lost`);
  } else if (node.minimum !== undefined && n < node.minimum) {
    report(ctx, path, `must be at least ${node.minimum}, got ${n}`);
  } else if (node.maximum !== undefined && n > node.maximum) {
    report(ctx, path, `must be at most ${node.maximum}, got ${n}`);
  } else {
    checkIntegerFormat(ctx, node.format, n, path);
  }
}

const INT_RANGES: Record<string, [number, number]> = {
  int32: [-2147483648, 2147483647],
  int64: [-9223372036854775808, 9223372036854775807],
};

/** The operator decodes into Go int32/int64 fields; larger values cannot load. */
function checkIntegerFormat(ctx: Context, format: string | undefined, n: number, path: string): void {
  const range = format !== undefined && Object.hasOwn(INT_RANGES, format) ? INT_RANGES[format] : undefined;
  if (range !== undefined && (n < range[0] || n > range[1])) {
    report(ctx, path, `must be between ${range[0]} and ${range[1]} (${format}), got ${n}`);
  }
}

// Lenient RFC 3339: Kubernetes also accepts minute precision and no zone.
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}(:?\d{2})?)?$/;

const patternCache = new Map<string, RegExp | null>();

/** Compiles each pattern once; a pattern JS cannot compile is not enforced. */
function matchesPattern(pattern: string, text: string): boolean {
  let re = patternCache.get(pattern);
  if (re === undefined) {
    try {
      re = new RegExp(pattern);
    } catch {
      re = null;
    }
    patternCache.set(pattern, re);
  }
  return re === null || re.test(text);
}

// ---------------------------------------------------------------------------
// Messages

const TYPE_PHRASES: Record<string, string> = {
  object: 'a mapping',
  array: 'a list',
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
};

function typePhrase(type: string): string {
  return Object.hasOwn(TYPE_PHRASES, type) ? TYPE_PHRASES[type] : `a value of type ${type}`;
}

const QUANTITY_PHRASE = 'a Kubernetes quantity such as 10Gi or 500m';

/** Kubernetes resource.Quantity patterns are recognised by their binary suffixes. */
function isQuantityPattern(pattern: string | undefined): boolean {
  return pattern !== undefined && pattern.includes('[KMGTPE]i');
}

function patternPhrase(pattern: string): string {
  return isQuantityPattern(pattern) ? QUANTITY_PHRASE : `a value matching ${pattern}`;
}

function isIntOrString(node: SchemaNode): boolean {
  return node['x-kubernetes-int-or-string'] === true;
}

function intOrStringPhrase(node: SchemaNode): string {
  return isQuantityPattern(node.pattern) ? QUANTITY_PHRASE : 'an integer or a string';
}

/** `cpu: 0.5` is a YAML float, which an int-or-string field rejects. */
function quoteHint(node: SchemaNode, value: unknown): string {
  return kindOf(value) === 'number' && isQuantityPattern(node.pattern) ? ` (quote it: "${String(value)}")` : '';
}

function anyOfPhrase(ctx: Context, refs: number[]): string {
  const types = refs.map((ref) => ctx.nodes[ref].type);
  if (types.every((t): t is string => t !== undefined)) return types.map(typePhrase).join(' or ');
  return 'a value matching one of the allowed forms';
}

function formatEnumValue(value: unknown): string {
  return typeof value === 'string' && value !== '' ? value : JSON.stringify(value);
}

const MAX_SHOWN = 60;

/** Renders a document value for a message: strings quoted, containers named. */
function describe(value: unknown): string {
  switch (kindOf(value)) {
    case 'string': {
      const text = value as string;
      return JSON.stringify(text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}…` : text);
    }
    case 'object':
      return 'a mapping';
    case 'array':
      return 'a list';
    case 'null':
      return 'null';
    case 'other':
      return `a value of type ${typeof value}`;
    default:
      return String(value);
  }
}

function kindOf(value: unknown): ValueKind {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return 'array';
  switch (typeof value) {
    case 'string':
      return 'string';
    case 'boolean':
      return 'boolean';
    case 'bigint':
      return 'integer';
    case 'number':
      return Number.isInteger(value) ? 'integer' : 'number';
    case 'object':
      return isPlainObject(value) ? 'object' : 'other';
    default:
      return 'other';
  }
}

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

// ---------------------------------------------------------------------------
// Paths

export { joinKey };

function report(ctx: Context, path: string, message: string): void {
  ctx.issues.push({ path, message });
}
