/**
 * Strict validation of a Kubernetes object against the OpenAPI (swagger 2.0) definitions of one
 * Kubernetes version, roughly what `kubectl apply --validate=strict` does client-side: unknown
 * fields, wrong types and missing required fields fail. The definitions come from the caller: the
 * CLI's compact copy (`kube-schema-data.ts`), or the tests' full ones.
 */

import { closest } from './suggest';

export interface K8sSchemaError {
  path: string;
  message: string;
}

interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface SchemaNode {
  type?: string;
  format?: string;
  $ref?: string;
  enum?: unknown[];
  oneOf?: SchemaNode[];
  items?: SchemaNode;
  properties?: Record<string, SchemaNode>;
  additionalProperties?: SchemaNode | boolean;
  required?: string[];
  'x-kubernetes-group-version-kind'?: GroupVersionKind[];
}

/** The definitions of one Kubernetes version, indexed by group/version/kind. */
export class KubeSchema {
  private readonly byGvk = new Map<string, SchemaNode>();

  constructor(readonly definitions: Readonly<Record<string, SchemaNode>>) {
    for (const definition of Object.values(definitions)) {
      for (const gvk of definition['x-kubernetes-group-version-kind'] ?? [])
        this.byGvk.set(gvkKey(gvk.group, gvk.version, gvk.kind), definition);
    }
  }

  /** Whether the version serves this apiVersion and kind. */
  knows(apiVersion: string, kind: string): boolean {
    const slash = apiVersion.lastIndexOf('/');
    return this.byGvk.has(gvkKey(slash < 0 ? '' : apiVersion.slice(0, slash), apiVersion.slice(slash + 1), kind));
  }

  /**
   * Validates one object (it must carry apiVersion and kind); the definition is the one whose
   * x-kubernetes-group-version-kind matches (group "" for core). An unknown apiVersion/kind is an error.
   */
  validate(obj: unknown): K8sSchemaError[] {
    const errors: K8sSchemaError[] = [];
    index = this;
    const definition = definitionFor(obj, errors);
    if (definition) validateNode(obj, definition, '', errors);
    return errors;
  }

  /** @internal */
  lookup(key: string): SchemaNode | undefined {
    return this.byGvk.get(key);
  }
}

/** The schema being validated against (set by validate; validation is synchronous). */
let index: KubeSchema;

const REF_PREFIX = '#/definitions/';
const QUANTITY_REF = `${REF_PREFIX}io.k8s.apimachinery.pkg.api.resource.Quantity`;
// metav1.Time marshals its zero value as null, and the API server reads null back as zero: objects as
// stored carry `creationTimestamp: null` in embedded templates.
const TIME_REF = `${REF_PREFIX}io.k8s.apimachinery.pkg.apis.meta.v1.Time`;

// Kubernetes resource.Quantity grammar: sign, decimal number, then either a
// decimal exponent, a binary SI suffix (Ki..Ei) or a decimal SI suffix (m..E).
const QUANTITY_RE = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+|[KMGTPE]i|[mkMGTPE])?$/;
const BASE64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const DATE_TIME_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const IDENTIFIER_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

const gvkKey = (group: string, version: string, kind: string): string => `${group}/${version}/${kind}`;

// ---------------------------------------------------------------------------
// Top-level lookup

function definitionFor(obj: unknown, errors: K8sSchemaError[]): SchemaNode | undefined {
  if (!isPlainObject(obj)) {
    errors.push({ path: '', message: `expected a Kubernetes object, got ${describeValue(obj)}` });
    return undefined;
  }
  const { apiVersion, kind } = obj;
  if (typeof apiVersion !== 'string' || apiVersion === '') {
    errors.push({ path: 'apiVersion', message: 'missing apiVersion' });
  }
  if (typeof kind !== 'string' || kind === '') errors.push({ path: 'kind', message: 'missing kind' });
  if (typeof apiVersion !== 'string' || typeof kind !== 'string' || errors.length > 0) return undefined;

  // "v1" is the core group; "apps/v1" is group "apps", version "v1".
  const slash = apiVersion.lastIndexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const version = apiVersion.slice(slash + 1);
  const definition = index.lookup(gvkKey(group, version, kind));
  if (!definition) errors.push({ path: 'kind', message: `unknown apiVersion/kind ${apiVersion} ${kind}` });
  return definition;
}

// ---------------------------------------------------------------------------
// Recursive validation

function validateNode(value: unknown, schema: SchemaNode, at: string, errors: K8sSchemaError[]): void {
  if (schema.$ref) {
    validateRef(value, schema.$ref, at, errors);
    return;
  }
  if (isAnyValue(schema)) return;
  if (value === null) {
    errors.push({ path: at, message: 'null is not allowed here' });
    return;
  }
  if (schema.format === 'int-or-string') {
    checkIntOrString(value, at, errors);
    return;
  }
  if (schema.oneOf) {
    checkOneOf(value, schema.oneOf, at, errors);
    return;
  }
  if (schema.enum && !schema.enum.includes(value)) {
    errors.push({ path: at, message: `${describeValue(value)} is not one of ${JSON.stringify(schema.enum)}` });
    return;
  }
  validateByType(value, schema, at, errors);
}

function validateRef(value: unknown, ref: string, at: string, errors: K8sSchemaError[]): void {
  const definition = ref.startsWith(REF_PREFIX) ? index.definitions[ref.slice(REF_PREFIX.length)] : undefined;
  if (!definition) throw new Error(`schema bug: dangling $ref ${ref}`);
  // The schema declares Quantity as string|number; its string grammar only
  // lives in the Go parser, so we re-check it here.
  if (ref === QUANTITY_REF) checkQuantity(value, at, errors);
  else if (ref === TIME_REF && value === null) return;
  else validateNode(value, definition, at, errors);
}

/** Definitions without any type info (e.g. apiextensions JSON) accept any value, null included. */
function isAnyValue(schema: SchemaNode): boolean {
  return !schema.type && !schema.properties && !schema.oneOf && !schema.format && !schema.enum;
}

function validateByType(value: unknown, schema: SchemaNode, at: string, errors: K8sSchemaError[]): void {
  switch (schema.type ?? (schema.properties ? 'object' : undefined)) {
    case 'object':
      return validateObject(value, schema, at, errors);
    case 'array':
      return validateArray(value, schema, at, errors);
    case 'string':
      return checkString(value, schema.format, at, errors);
    case 'integer':
      return checkInteger(value, schema.format, at, errors);
    case 'number':
      return check(typeof value === 'number' && Number.isFinite(value), 'number', value, at, errors);
    case 'boolean':
      return check(typeof value === 'boolean', 'boolean', value, at, errors);
    default:
      throw new Error(`schema bug: unsupported type ${String(schema.type)} at ${at}`);
  }
}

function validateObject(value: unknown, schema: SchemaNode, at: string, errors: K8sSchemaError[]): void {
  if (!isPlainObject(value)) {
    check(false, 'object', value, at, errors);
    return;
  }
  for (const name of schema.required ?? []) {
    if (value[name] === undefined) errors.push({ path: join(at, name), message: 'missing required field' });
  }
  for (const [key, child] of Object.entries(value)) {
    // Keys whose value is undefined vanish on serialisation, like in YAML output.
    if (child !== undefined) validateField(key, child, schema, at, errors);
  }
}

function validateField(key: string, value: unknown, schema: SchemaNode, at: string, errors: K8sSchemaError[]): void {
  const declared = schema.properties?.[key];
  const extra = schema.additionalProperties;
  if (declared) validateNode(value, declared, join(at, key), errors);
  else if (typeof extra === 'object') validateNode(value, extra, join(at, key), errors);
  // An object schema with neither properties nor additionalProperties is a free-form map.
  else if (schema.properties || extra === false) {
    errors.push({ path: join(at, key), message: unknownFieldMessage(key, schema.properties ?? {}) });
  }
}

function validateArray(value: unknown, schema: SchemaNode, at: string, errors: K8sSchemaError[]): void {
  if (!Array.isArray(value)) {
    check(false, 'array', value, at, errors);
    return;
  }
  const items = schema.items;
  if (items) value.forEach((item, i) => validateNode(item, items, `${at}[${i}]`, errors));
}

// ---------------------------------------------------------------------------
// Scalars

function checkString(value: unknown, format: string | undefined, at: string, errors: K8sSchemaError[]): void {
  if (typeof value !== 'string') return check(false, 'string', value, at, errors);
  if (format === 'byte' && !BASE64_RE.test(value)) {
    errors.push({ path: at, message: 'expected base64-encoded data' });
  } else if (format === 'date-time' && !DATE_TIME_RE.test(value)) {
    errors.push({ path: at, message: `expected an RFC 3339 date-time, got ${JSON.stringify(value)}` });
  }
}

function checkInteger(value: unknown, format: string | undefined, at: string, errors: K8sSchemaError[]): void {
  if (typeof value !== 'number' || !Number.isInteger(value)) return check(false, 'integer', value, at, errors);
  if (format === 'int32' && (value < INT32_MIN || value > INT32_MAX)) {
    errors.push({ path: at, message: `${value} does not fit in int32` });
  }
}

function checkIntOrString(value: unknown, at: string, errors: K8sSchemaError[]): void {
  const ok = typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value));
  check(ok, 'integer or string', value, at, errors);
}

function checkQuantity(value: unknown, at: string, errors: K8sSchemaError[]): void {
  if (typeof value === 'number' && Number.isFinite(value)) return;
  if (typeof value !== 'string') return check(false, 'quantity (string or number)', value, at, errors);
  if (!QUANTITY_RE.test(value)) errors.push({ path: at, message: `invalid quantity ${JSON.stringify(value)}` });
}

/** Valid when any branch accepts the value (IntOrString, or oneOf used elsewhere). */
function checkOneOf(value: unknown, branches: SchemaNode[], at: string, errors: K8sSchemaError[]): void {
  const ok = branches.some((branch) => {
    const branchErrors: K8sSchemaError[] = [];
    validateNode(value, branch, at, branchErrors);
    return branchErrors.length === 0;
  });
  const expected = branches.map((b) => b.type ?? b.$ref ?? '?').join(' or ');
  check(ok, expected, value, at, errors);
}

function check(ok: boolean, expected: string, value: unknown, at: string, errors: K8sSchemaError[]): void {
  if (!ok) errors.push({ path: at, message: `expected ${expected}, got ${describeValue(value)}` });
}

// ---------------------------------------------------------------------------
// Formatting helpers

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `spec` + `replicas` -> `spec.replicas`; non-identifiers become `labels["app.kubernetes.io/name"]`. */
function join(at: string, key: string): string {
  if (!IDENTIFIER_RE.test(key)) return `${at}[${JSON.stringify(key)}]`;
  return at === '' ? key : `${at}.${key}`;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'object') return 'object';
  return `${typeof value} ${JSON.stringify(value)}`;
}

export function describeObject(obj: unknown, position: number): string {
  if (!isPlainObject(obj)) return `#${position}`;
  const meta = isPlainObject(obj.metadata) ? obj.metadata : {};
  const name = [meta.namespace, meta.name].filter((s) => typeof s === 'string').join('/');
  return `#${position} ${String(obj.kind ?? '?')} ${name || '<unnamed>'}`;
}

function unknownFieldMessage(key: string, declared: Record<string, SchemaNode>): string {
  // Within edit distance 2, to make typos obvious in failures.
  const suggestion = closest(key, Object.keys(declared), { ignoreCase: true, maxDistance: 2, transpositions: false });
  return `unknown field ${JSON.stringify(key)}${suggestion ? ` (did you mean ${JSON.stringify(suggestion)}?)` : ''}`;
}
