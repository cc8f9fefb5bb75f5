/**
 * TOML parsing, merging and encoding for component config files.
 *
 * The encoder reproduces the layout of BurntSushi/toml v0.3.1, which is what
 * tidb-operator v1 uses to write `config-file` (reference §1.7): sorted keys,
 * plain keys before sub-tables, two-space indentation per key-path level and a
 * blank line before each top-level table. Matching it byte for byte keeps the
 * RollingUpdate ConfigMap hash equal to the operator's for the same config.
 * Where v0.3.1 would write invalid TOML or panic (NaN, control characters,
 * arrays nested in arrays holding tables) we write valid TOML 1.0 instead.
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

/** A TOML document that could not be parsed. `line` and `column` are 1-based. */
export class TomlSyntaxError extends Error {
  constructor(
    readonly reason: string,
    readonly line: number,
    readonly column: number,
    sourceLine?: string,
  ) {
    super(syntaxMessage(reason, line, column, sourceLine));
    this.name = 'TomlSyntaxError';
  }
}

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

function syntaxMessage(reason: string, line: number, column: number, sourceLine?: string): string {
  const head = `TOML syntax error at line ${line}, column ${column}: ${reason}`;
  if (sourceLine === undefined) return head;
  return `${head}\n  ${sourceLine}\n  ${' '.repeat(Math.max(0, column - 1))}^`;
}

// ---------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------

/** The slice of @iarna/toml's internal parser class that we rely on. */
interface IarnaParser {
  state: { buf: string };
  char: number;
  line: number;
  col: number;
  pos: number;
  parse(text: string): void;
  finish(): unknown;
  return(value?: unknown): void;
  runOne(): unknown;
  atEndOfWord(): boolean;
  parseOnlyTimeFractionMaybe(): unknown;
}
type IarnaParserClass = new () => IarnaParser;

// The public `parse()` unboxes every number with valueOf(), which loses the
// float/integer distinction (1.0 -> 1). The parser class is exported, and
// every parsed value passes through its `return` method while still boxed
// and tagged, so a subclass can mark floats there.
const IarnaTomlParser = require('@iarna/toml/lib/toml-parser.js') as IarnaParserClass;

const PERIOD = 0x2e;
const COMMA = 0x2c;
const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;

class FloatKeepingParser extends IarnaTomlParser {
  override return(value?: unknown): void {
    super.return(this.markNumber(value));
  }

  /**
   * @iarna/toml 3.0.0 does not treat `,` `]` `}` as ending a value, so a date
   * or time directly followed by them (`[1979-05-27, 07:32:00]`) fails.
   */
  override atEndOfWord(): boolean {
    return super.atEndOfWord() || this.char === COMMA || this.char === CLOSE_BRACKET || this.char === CLOSE_BRACE;
  }

  /**
   * @iarna/toml 3.0.0 bug: a local time without fraction (`t = 07:32:00`)
   * swallows the character after it, so the next line fails to parse. The
   * base method returns without re-running the caller on the current
   * character; running it here is what its other `returnNow` paths do.
   */
  override parseOnlyTimeFractionMaybe(): unknown {
    const hasFraction = this.char === PERIOD;
    const result = super.parseOnlyTimeFractionMaybe();
    return hasFraction ? result : this.runOne();
  }

  private markNumber(value: unknown): unknown {
    // inf / nan are returned as plain numbers; every other number is boxed.
    if (typeof value === 'number') return Number.isFinite(value) ? value : new TomlFloat(value);
    const kind = iarnaNumberTag(value);
    if (kind === 'float') return keepFloat(value as object);
    if (kind === 'integer') this.checkIntegerRange(value as { value?: unknown });
    return value;
  }

  /** @iarna/toml wraps out-of-range integers to 64 bits silently; TOML says it is an error. */
  private checkIntegerRange(boxed: { value?: unknown }): void {
    if (typeof boxed.value !== 'bigint') return;
    let written: bigint;
    try {
      written = BigInt(this.state.buf);
    } catch {
      return;
    }
    if (written !== boxed.value) {
      const err = new Error('integer out of range (TOML integers must fit in 64 bits)');
      throw Object.assign(err, { line: this.line, col: this.col, pos: this.pos });
    }
  }
}

/** Reads the hidden `Symbol('type')` tag @iarna/toml puts on boxed numbers. */
function iarnaNumberTag(value: unknown): 'float' | 'integer' | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const typeSymbol = Object.getOwnPropertySymbols(value).find((s) => s.description === 'type');
  if (typeSymbol === undefined) return undefined;
  const tag = (value as Record<symbol, unknown>)[typeSymbol];
  if (typeof tag !== 'symbol') return undefined;
  return tag.description === 'float' || tag.description === 'integer' ? tag.description : undefined;
}

/** Makes the parser's unboxing step (`box.valueOf()`) yield a TomlFloat. */
function keepFloat(box: object): object {
  if (Object.prototype.hasOwnProperty.call(box, 'valueOf')) return box;
  const float = new TomlFloat(Number(box));
  Object.defineProperty(box, 'valueOf', { value: () => float });
  return box;
}

/** Parses a TOML document; throws TomlSyntaxError (with line/column and a plain-words message) on bad input. */
export function parseToml(text: string): TomlTable {
  if (typeof text !== 'string') throw new TypeError('parseToml expects a string');
  const parser = new FloatKeepingParser();
  let raw: unknown;
  try {
    parser.parse(text);
    raw = parser.finish();
  } catch (err) {
    throw toSyntaxError(err, text);
  }
  return normaliseParsed(raw) as TomlTable;
}

function toSyntaxError(err: unknown, text: string): Error {
  const e = err as { message?: unknown; line?: unknown; col?: unknown };
  if (typeof e?.line !== 'number' || typeof e.col !== 'number') return err as Error;
  const reason = plainReason(String(e.message ?? 'invalid TOML'));
  const sourceLine = text.split(/\r?\n/)[e.line];
  return new TomlSyntaxError(reason, e.line + 1, e.col + 1, sourceLine);
}

/** Turns @iarna/toml's terser messages into plain words. */
function plainReason(message: string): string {
  return message
    .replace(/^\[ParserError\]\s*/, '')
    .replace(/Unknown character "(\d+)"/, (_m, code: string) => `unexpected character ${JSON.stringify(String.fromCodePoint(Number(code)))}`);
}

/** Copies the parser's output into plain objects/arrays without its hidden symbol tags. */
function normaliseParsed(value: unknown): TomlValue {
  if (Array.isArray(value)) return value.map(normaliseParsed);
  if (isTomlTable(value)) {
    const out: TomlTable = {};
    for (const key of Object.keys(value)) setOwn(out, key, normaliseParsed(value[key]));
    return out;
  }
  return value as TomlValue;
}

// ---------------------------------------------------------------------------
// Type helpers
// ---------------------------------------------------------------------------

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

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Integral numbers that fit a TOML (64-bit) integer; larger ones can only be floats. */
function isIntegerNumber(n: number): boolean {
  return Number.isInteger(n) && Math.abs(n) < 2 ** 63;
}

// ---------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------

/** Encodes a table in the operator's layout (deterministic). An empty table gives "". */
export function encodeToml(table: TomlTable): string {
  if (!isTomlTable(table)) throw new TypeError('encodeToml expects a plain object');
  const out = new Output();
  writeTable(out, [], table);
  return out.text;
}

/** Accumulates output; `blankLine` only separates, it never starts the document. */
class Output {
  text = '';
  line(s: string): void {
    this.text += `${s}\n`;
  }
  blankLine(): void {
    if (this.text !== '') this.text += '\n';
  }
}

/** Sections are the values written under their own `[...]` / `[[...]]` headers. */
function isArrayOfTables(value: unknown): value is TomlTable[] {
  return Array.isArray(value) && value.length > 0 && value.every(isTomlTable);
}

function isSection(value: unknown): boolean {
  return isTomlTable(value) || isArrayOfTables(value);
}

/** Writes a table's body: key/values first, then sub-tables, each group in key order. */
function writeTable(out: Output, path: string[], table: TomlTable): void {
  const keys = sortedKeys(table);
  const indent = indentFor(path.length + 1);
  for (const key of keys.filter((k) => !isSection(table[k]))) {
    out.line(`${indent}${quoteKey(key)} = ${encodeInline(table[key], [...path, key])}`);
  }
  for (const key of keys.filter((k) => isSection(table[k]))) {
    writeSection(out, [...path, key], table[key]);
  }
}

function writeSection(out: Output, path: string[], value: TomlValue): void {
  const header = path.map(quoteKey).join('.');
  const indent = indentFor(path.length);
  if (isTomlTable(value)) {
    // Only top-level tables get a separating blank line (operator layout).
    if (path.length === 1) out.blankLine();
    out.line(`${indent}[${header}]`);
    writeTable(out, path, value);
    return;
  }
  // BurntSushi puts a blank line before every `[[...]]` header, at any depth.
  for (const item of value as TomlTable[]) {
    out.blankLine();
    out.line(`${indent}[[${header}]]`);
    writeTable(out, path, item);
  }
}

/** Two spaces per level below the top for a key path of the given length. */
function indentFor(pathLength: number): string {
  return '  '.repeat(Math.max(0, pathLength - 1));
}

/** Encodes a value written after `key = ` (or inside an inline array/table). */
function encodeInline(value: unknown, path: string[]): string {
  switch (typeof value) {
    case 'string':
      return quoteString(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      return isIntegerNumber(value) ? BigInt(value).toString() : formatFloat(value);
    case 'bigint':
      return encodeBigInt(value, path);
  }
  if (value instanceof TomlFloat) return formatFloat(value.value);
  if (value instanceof Date) return formatDate(value, path);
  if (Array.isArray(value)) return `[${value.map((v, i) => encodeInline(v, indexPath(path, i))).join(', ')}]`;
  if (isTomlTable(value)) return encodeInlineTable(value, path);
  throw new TomlEncodeError(formatPath(path), describeUnsupported(value));
}

function encodeBigInt(value: bigint, path: string[]): string {
  if (value < INT64_MIN || value > INT64_MAX) {
    throw new TomlEncodeError(formatPath(path), `integer ${value} does not fit in 64 bits`);
  }
  return value.toString();
}

/** Tables inside arrays that are not arrays of tables (mixed or nested) are written inline. */
function encodeInlineTable(table: TomlTable, path: string[]): string {
  const keys = sortedKeys(table);
  if (keys.length === 0) return '{}';
  const parts = keys.map((k) => `${quoteKey(k)} = ${encodeInline(table[k], [...path, k])}`);
  return `{ ${parts.join(', ')} }`;
}

function describeUnsupported(value: unknown): string {
  if (value === null) return 'null has no TOML equivalent (remove the key or give it a value)';
  if (value === undefined) return 'the value is undefined (remove the key or give it a value)';
  if (typeof value === 'object') {
    const name = (value as object).constructor?.name ?? 'object';
    return `a ${name} is not a TOML value (use plain objects, arrays, strings, numbers, booleans or dates)`;
  }
  return `a ${typeof value} is not a TOML value`;
}

/**
 * Go's strconv.FormatFloat(f, 'f', -1, 64) plus ".0" when there is no decimal
 * point: shortest round-trip digits, never an exponent. Non-finite values use
 * TOML's spelling (v0.3.1 would write the invalid "NaN.0" / "+Inf.0").
 */
function formatFloat(n: number): string {
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
interface TomlDateMarkers {
  isDate?: boolean;
  isTime?: boolean;
  isFloating?: boolean;
}

/**
 * Offset date-times are written in UTC like Go's time.Time ("...T15:04:05Z"),
 * with milliseconds only when present so they still round-trip.
 */
function formatDate(date: Date, path: string[]): string {
  const time = date.getTime();
  const year = date.getUTCFullYear();
  if (Number.isNaN(time) || year < 0 || year > 9999) {
    throw new TomlEncodeError(formatPath(path), 'the date is invalid or outside years 0000-9999');
  }
  const markers = date as Date & TomlDateMarkers;
  const day = `${pad(year, 4)}-${pad(date.getUTCMonth() + 1, 2)}-${pad(date.getUTCDate(), 2)}`;
  const ms = date.getUTCMilliseconds();
  const clock = `${pad(date.getUTCHours(), 2)}:${pad(date.getUTCMinutes(), 2)}:${pad(date.getUTCSeconds(), 2)}${ms ? `.${pad(ms, 3)}` : ''}`;
  if (markers.isDate === true) return day;
  if (markers.isTime === true) return clock;
  if (markers.isFloating === true) return `${day}T${clock}`;
  return `${day}T${clock}Z`;
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

const BARE_KEY = /^[A-Za-z0-9_-]+$/;

function quoteKey(key: string): string {
  return BARE_KEY.test(key) ? key : quoteString(key);
}

const SHORT_ESCAPES: Record<string, string> = {
  '"': '\\"',
  '\\': '\\\\',
  '\b': '\\b',
  '\t': '\\t',
  '\n': '\\n',
  '\f': '\\f',
  '\r': '\\r',
};

/** TOML basic string: quotes, backslashes and control characters escaped. */
function quoteString(s: string): string {
  const escaped = s.replace(/["\\\u0000-\u001f\u007f]/g, (c) => SHORT_ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`);
  return `"${escaped}"`;
}

/** Go's sort.Strings order: UTF-8 byte order, not JavaScript's UTF-16 order. */
function sortedKeys(table: TomlTable): string[] {
  return Object.keys(table).sort((a, b) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));
}

function indexPath(path: string[], index: number): string[] {
  const copy = [...path];
  copy[copy.length - 1] = `${copy[copy.length - 1] ?? ''}[${index}]`;
  return copy;
}

/** Human-readable key path for error messages, e.g. `log.file.max-backups`. */
function formatPath(path: string[]): string {
  return path.join('.');
}

// ---------------------------------------------------------------------------
// Tables: merge, paths, equality
// ---------------------------------------------------------------------------

/** Defines an own property; plain assignment would treat `__proto__` specially. */
function setOwn(table: TomlTable, key: string, value: TomlValue): void {
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
      throw new TomlEncodeError(formatPath([...path]), `"${where}" already holds a value of type ${tomlKindOf(next) ?? 'unknown'}, not a table`);
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
