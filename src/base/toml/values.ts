/**
 * TOML values as the project holds them: the value types, the float that stays a float, and what
 * every user of a config needs (kind, deep copy, merge, key paths, an editor, semantic equality).
 * Reading (`read.ts`) and writing (`write.ts`) sit on top of these.
 */

/**
 * A TOML float. JavaScript has one number type, so `1.0` and `1` are
 * indistinguishable once parsed; this wrapper keeps "float-ness" so that a
 * float is written back as `1.0`. Plain numbers are encoded as integers when
 * they are integral and as floats otherwise.
 */
export class TomlFloat {
  constructor(readonly value: number) {
    if (typeof value !== 'number') throw new TypeError('TomlFloat needs a number');
    Object.freeze(this);
  }
  valueOf(): number {
    return this.value;
  }
  toString(): string {
    return formatFloat(this.value);
  }
  /** Lets JSON/YAML dumps of a parsed config show the plain number. */
  toJSON(): number {
    return this.value;
  }
}

/** Marks a number (e.g. YAML `ratio: 1.0`, which YAML parsers return as 1) as a TOML float. */
export function tomlFloat(value: number): TomlFloat {
  return new TomlFloat(value);
}

export function isTomlFloat(value: unknown): value is TomlFloat {
  return value instanceof TomlFloat;
}

/**
 * Values a TOML document can hold.
 * - `number`: integer if integral (and below 2^63 in magnitude), float otherwise
 * - `bigint`: integer (TOML integers beyond 2^53 are parsed as bigint)
 * - `TomlFloat`: always a float
 * - `Date`: offset date-time, or a local date / time / date-time when it
 *   carries @iarna/toml's `isDate` / `isTime` / `isFloating` marker
 */
export type TomlPrimitive = string | number | bigint | boolean | Date | TomlFloat;
export type TomlValue = TomlPrimitive | TomlValue[] | TomlTable;
export interface TomlTable {
  [key: string]: TomlValue;
}

export type TomlKind = 'string' | 'integer' | 'float' | 'boolean' | 'datetime' | 'array' | 'table';

/** A value that TOML cannot represent; `path` names where it is. */
export class TomlEncodeError extends Error {
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super(`cannot write config key "${path}" as TOML: ${reason}`);
    this.name = 'TomlEncodeError';
  }
}

/** True for plain objects (the only objects that become TOML tables). */
export function isTomlTable(value: unknown): value is TomlTable {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** The TOML type a value is written as, or undefined if TOML cannot hold it. */
export function tomlKindOf(value: unknown): TomlKind | undefined {
  switch (typeof value) {
    case 'string':
      return 'string';
    case 'boolean':
      return 'boolean';
    case 'bigint':
      return 'integer';
    case 'number':
      return isIntegerNumber(value) ? 'integer' : 'float';
  }
  if (value instanceof TomlFloat) return 'float';
  if (value instanceof Date) return 'datetime';
  if (Array.isArray(value)) return 'array';
  if (isTomlTable(value)) return 'table';
  return undefined;
}

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

/** Integral numbers that fit a TOML (64-bit) integer; larger ones can only be floats. */
export function isIntegerNumber(n: number): boolean {
  return Number.isInteger(n) && Math.abs(n) < 2 ** 63;
}

/**
 * Go's strconv.FormatFloat(f, 'f', -1, 64) plus ".0" when there is no decimal
 * point: shortest round-trip digits, never an exponent. Non-finite values use
 * TOML's spelling (v0.3.1 would write the invalid "NaN.0" / "+Inf.0").
 */
export function formatFloat(n: number): string {
  if (Number.isNaN(n)) return 'nan';
  if (n === Infinity) return 'inf';
  if (n === -Infinity) return '-inf';
  const sign = n < 0 || Object.is(n, -0) ? '-' : '';
  const digits = expandExponent(String(Math.abs(n)));
  return sign + (digits.includes('.') ? digits : `${digits}.0`);
}

/** Rewrites JavaScript's exponent form ("1e+21", "1.5e-7") as a plain decimal. */
function expandExponent(s: string): string {
  const match = /^(\d+)(?:\.(\d+))?e([+-]\d+)$/.exec(s);
  if (match === null) return s;
  const [, intPart, fracPart = '', exp] = match;
  const allDigits = intPart + fracPart;
  const point = intPart.length + Number(exp);
  if (point <= 0) return `0.${'0'.repeat(-point)}${allDigits}`;
  if (point >= allDigits.length) return allDigits + '0'.repeat(point - allDigits.length);
  return `${allDigits.slice(0, point)}.${allDigits.slice(point)}`;
}

/** Local date/time markers set by @iarna/toml on the Date objects it returns. */
export interface TomlDateMarkers {
  /** A local date (`1979-05-27`). @default false */
  isDate?: boolean;
  /** A local time (`07:32:00`). @default false */
  isTime?: boolean;
  /** A local date-time, without an offset. @default false */
  isFloating?: boolean;
}

/** Human-readable key path for error messages, e.g. `log.file.max-backups`. */
export function formatPath(path: string[]): string {
  return path.join('.');
}

/** Defines an own property; plain assignment would treat `__proto__` specially. */
export function setOwn(table: TomlTable, key: string, value: TomlValue): void {
  Object.defineProperty(table, key, { value, enumerable: true, writable: true, configurable: true });
}

function hasOwn(table: TomlTable, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(table, key);
}

/** Deep copy of tables and arrays; scalars (including Date and TomlFloat) are shared. */
export function cloneTomlValue<T extends TomlValue>(value: T): T {
  if (Array.isArray(value)) return value.map(cloneTomlValue) as T;
  if (isTomlTable(value)) {
    const out: TomlTable = {};
    for (const key of Object.keys(value)) setOwn(out, key, cloneTomlValue(value[key]));
    return out as T;
  }
  return value;
}

/** Deep-merges `overlay` onto `base` (overlay wins; tables merge recursively; arrays are replaced; returns a new object). */
export function mergeTables(base: TomlTable, overlay: TomlTable): TomlTable {
  const out = cloneTomlValue(base);
  for (const key of Object.keys(overlay)) {
    const current = hasOwn(out, key) ? out[key] : undefined;
    const next = overlay[key];
    setOwn(out, key, isTomlTable(current) && isTomlTable(next) ? mergeTables(current, next) : cloneTomlValue(next));
  }
  return out;
}

/** The value at a key path such as ['security', 'ssl-ca'], or undefined. */
export function getPath(table: TomlTable, path: readonly string[]): TomlValue | undefined {
  let current: TomlValue = table;
  for (const key of path) {
    if (!isTomlTable(current) || !hasOwn(current, key)) return undefined;
    current = current[key];
  }
  return current;
}

export function hasPath(table: TomlTable, path: readonly string[]): boolean {
  return getPath(table, path) !== undefined;
}

/** Sets a key path like ['security','ssl-ca'] in a copy, creating missing tables. */
export function setPath(table: TomlTable, path: readonly string[], value: TomlValue): TomlTable {
  if (path.length === 0) throw new Error('setPath needs a non-empty key path');
  const out = cloneTomlValue(table);
  const parent = ensureParentTables(out, path);
  setOwn(parent, path[path.length - 1], cloneTomlValue(value));
  return out;
}

/** Removes a key path in a copy (no-op if absent). */
export function deletePath(table: TomlTable, path: readonly string[]): TomlTable {
  if (path.length === 0) throw new Error('deletePath needs a non-empty key path');
  const out = cloneTomlValue(table);
  const parent = getPath(out, path.slice(0, -1));
  if (isTomlTable(parent)) delete parent[path[path.length - 1]];
  return out;
}

/**
 * A copy of a table edited in place by dotted key paths (`security.ssl-ca`; no key the renderer writes
 * contains a dot). `set` always writes, `setDefault` only where the user wrote nothing.
 */
export class TomlEditor {
  readonly table: TomlTable;

  constructor(table: TomlTable) {
    this.table = cloneTomlValue(table);
  }

  get(key: string): TomlValue | undefined {
    return getPath(this.table, key.split('.'));
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  set(key: string, value: TomlValue): void {
    const path = key.split('.');
    setOwn(ensureParentTables(this.table, path), path[path.length - 1], value);
  }

  setDefault(key: string, value: TomlValue): void {
    if (!this.has(key)) this.set(key, value);
  }

  delete(key: string): void {
    const path = key.split('.');
    const parent = getPath(this.table, path.slice(0, -1));
    if (isTomlTable(parent)) delete parent[path[path.length - 1]];
  }
}

/** Walks to the table that will hold the last key, refusing to overwrite non-tables. */
function ensureParentTables(root: TomlTable, path: readonly string[]): TomlTable {
  let current = root;
  path.slice(0, -1).forEach((key, i) => {
    if (!hasOwn(current, key)) setOwn(current, key, {});
    const next = current[key];
    if (!isTomlTable(next)) {
      const where = formatPath(path.slice(0, i + 1));
      throw new TomlEncodeError(
        formatPath([...path]),
        `"${where}" already holds a value of type ${tomlKindOf(next) ?? 'unknown'}, not a table`,
      );
    }
    current = next;
  });
  return current;
}

/**
 * Semantic equality of TOML values: key order does not matter, integers and
 * floats are different types (as in the operator's Go maps: 1 != 1.0), a
 * number and a bigint with the same integer value are equal.
 */
export function tomlEqual(a: TomlValue, b: TomlValue): boolean {
  const kind = tomlKindOf(a);
  if (kind === undefined || kind !== tomlKindOf(b)) return false;
  switch (kind) {
    case 'integer':
      return BigInt(a as number | bigint) === BigInt(b as number | bigint);
    case 'float':
      return Object.is(Number(a), Number(b)) || Number(a) === Number(b);
    case 'datetime':
      return sameDate(a as Date, b as Date);
    case 'array':
      return sameArray(a as TomlValue[], b as TomlValue[]);
    case 'table':
      return sameTable(a as TomlTable, b as TomlTable);
    default:
      return a === b;
  }
}

function sameDate(a: Date & TomlDateMarkers, b: Date & TomlDateMarkers): boolean {
  const kind = (d: TomlDateMarkers) => `${d.isDate === true}${d.isTime === true}${d.isFloating === true}`;
  return a.getTime() === b.getTime() && kind(a) === kind(b);
}

function sameArray(a: TomlValue[], b: TomlValue[]): boolean {
  return a.length === b.length && a.every((v, i) => tomlEqual(v, b[i]));
}

function sameTable(a: TomlTable, b: TomlTable): boolean {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((k) => hasOwn(b, k) && tomlEqual(a[k], b[k]));
}
