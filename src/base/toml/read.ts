/**
 * Reading TOML: @iarna/toml's parser, kept from losing what the config means (a float stays a
 * float, a 64-bit overflow is an error) and with two of its 3.0.0 bugs mended; errors carry the line,
 * the column and plain words.
 */
import { isTomlTable, setOwn, TomlFloat, type TomlTable, type TomlValue } from './values';

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

function syntaxMessage(reason: string, line: number, column: number, sourceLine?: string): string {
  const head = `TOML syntax error at line ${line}, column ${column}: ${reason}`;
  if (sourceLine === undefined) return head;
  return `${head}\n  ${sourceLine}\n  ${' '.repeat(Math.max(0, column - 1))}^`;
}

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

/**
 * Keys that name a member every JavaScript object inherits. @iarna/toml looks keys up with `in`-like
 * reads, so `[constructor]` would write into the global `Object` and `[toString]` would fail deep in
 * the writer. No TiDB, TiKV, PD or TiFlash setting has such a name, so they are refused with their
 * place. (`__proto__` the parser keeps as an ordinary key.)
 */
const INHERITED_KEY = new RegExp(
  `(^|[\\[.,{]|\\s)\\s*(["']?)(${Object.getOwnPropertyNames(Object.prototype)
    .filter((k) => k !== '__proto__')
    .join('|')})\\2\\s*(?=[=.\\]])`,
  'm',
);

/** Parses a TOML document; throws TomlSyntaxError (with line/column and a plain-words message) on bad input. */
export function parseToml(text: string): TomlTable {
  if (typeof text !== 'string') throw new TypeError('parseToml expects a string');
  const inherited = INHERITED_KEY.exec(text);
  if (inherited) {
    const at = inherited.index + inherited[1].length + inherited[0].slice(inherited[1].length).search(/\S/);
    const before = text.slice(0, at).split(/\r?\n/);
    const line = before.length;
    throw new TomlSyntaxError(
      `the key ${JSON.stringify(inherited[3])} cannot be read: it names a member every JavaScript object has, and no setting has that name`,
      line,
      before[line - 1].length + 1,
      text.split(/\r?\n/)[line - 1],
    );
  }
  const parser = new FloatKeepingParser();
  let raw: unknown;
  try {
    parser.parse(text);
    raw = parser.finish();
  } catch (err) {
    throw toSyntaxError(err, text);
  }
  const deep = tooDeep(raw);
  if (deep) {
    const line = deepestLine(text);
    throw new TomlSyntaxError(
      `tables and arrays nest more than ${MAX_TOML_DEPTH} levels deep; no setting is that deep`,
      line,
      1,
      text.split(/\r?\n/)[line - 1],
    );
  }
  return normaliseParsed(raw) as TomlTable;
}

/** Levels of tables and arrays a config may nest (every walk after parsing recurses). */
export const MAX_TOML_DEPTH = 100;

/** Whether the parsed value nests deeper than {@link MAX_TOML_DEPTH}; walks without recursion. */
function tooDeep(root: unknown): boolean {
  const stack: [unknown, number][] = [[root, 1]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (value === null || typeof value !== 'object' || value instanceof Date || value instanceof TomlFloat) continue;
    if (depth > MAX_TOML_DEPTH) return true;
    for (const child of Object.values(value)) stack.push([child, depth + 1]);
  }
  return false;
}

/** The line most likely at fault: the one with the most dots, brackets or braces. */
function deepestLine(text: string): number {
  let best = 0;
  let line = 1;
  text.split(/\r?\n/).forEach((l, i) => {
    const n = (l.match(/[.[{]/g) ?? []).length;
    if (n > best) {
      best = n;
      line = i + 1;
    }
  });
  return line;
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
    .replace(
      /Unknown character "(\d+)"/,
      (_m, code: string) => `unexpected character ${JSON.stringify(String.fromCodePoint(Number(code)))}`,
    );
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
