/**
 * Writing TOML for component config files.
 *
 * The encoder reproduces the layout of BurntSushi/toml v0.3.1, which is what
 * tidb-operator v1 uses to write `config-file` (reference §1.7): sorted keys,
 * plain keys before sub-tables, two-space indentation per key-path level and a
 * blank line before each top-level table. Matching it byte for byte keeps the
 * RollingUpdate ConfigMap hash equal to the operator's for the same config.
 * Where v0.3.1 would write invalid TOML or panic (NaN, control characters,
 * arrays nested in arrays holding tables) we write valid TOML 1.0 instead.
 */
import {
  formatFloat,
  formatPath,
  INT64_MAX,
  INT64_MIN,
  isIntegerNumber,
  isTomlTable,
  TomlEncodeError,
  TomlFloat,
  type TomlDateMarkers,
  type TomlTable,
  type TomlValue,
} from './values';

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
  const escaped = s.replace(
    /["\\\u0000-\u001f\u007f]/g,
    (c) => SHORT_ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`,
  );
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
