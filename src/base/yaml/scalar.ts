/**
 * What a YAML scalar means, the way kubectl reads it. kubectl (and the API server, for YAML bodies)
 * reads YAML with sigs.k8s.io/yaml, whose goyaml.v2 resolves plain scalars by YAML 1.1 rules as Go's
 * strconv parses them (goyaml.v2/resolve.go, sigs.k8s.io/yaml v1.4.0, as in Kubernetes 1.32):
 *
 * - `y`, `yes`, `on` and `n`, `no`, `off` (three casings each) are booleans besides `true`/`false`;
 * - integers take Go's prefixes: `010` is octal (8), `0b101`, `0o17`, `0x1F`, any of them signed, and
 *   underscores anywhere are dropped first (`1_000`);
 * - what fails as an integer but looks like a float is one (`08` is 8, `1.`, `.5_5` is 0.55);
 * - timestamps stay text, and so does anything else.
 *
 * The YAML 1.2 core schema (most other tools, and `yaml` by default) reads several of these forms
 * differently; {@link PlainScalar.differsFrom12} says so, for a warning. Pure functions, no I/O.
 */
import { tomlFloat, type TomlFloat } from '../toml';

/** What a plain scalar resolves to. */
export type ScalarKind = 'null' | 'bool' | 'int' | 'float' | 'str' | 'merge';

export interface PlainScalar {
  readonly kind: ScalarKind;
  /** The value: a float written with a fraction or an exponent and integral stays a float for TOML. */
  readonly value: null | boolean | number | string | TomlFloat;
  /** Why no JSON document (so no Kubernetes object) can hold it, e.g. `.inf`. @default undefined: one can */
  readonly refused?: string;
  /** An integer only an unsigned 64-bit integer holds (2^63 and up), which kubectl cannot take as a key. @default false */
  readonly unsigned64?: boolean;
  /** How a YAML 1.2 reader takes the same text, when that is something else (`'text'` for `on`). @default undefined: the same */
  readonly differsFrom12?: string;
}

const FIRST: Record<string, 'S' | 'D' | 'M' | '.'> = { '+': 'S', '-': 'S', '.': '.', '~': 'M' };
for (const c of '0123456789') FIRST[c] = 'D';
for (const c of 'yYnNtTfFoO') FIRST[c] = 'M';

const WORDS = new Map<string, PlainScalar>();
const word = (kind: ScalarKind, value: PlainScalar['value'], texts: string, refused?: string) => {
  for (const t of texts.split(' ')) WORDS.set(t, { kind, value, ...(refused && { refused }) });
};
word('bool', true, 'y Y yes Yes YES true True TRUE on On ON');
word('bool', false, 'n N no No NO false False FALSE off Off OFF');
word('null', null, '~ null Null NULL');
const NOT_JSON = 'JSON, and so Kubernetes, has no infinite or not-a-number value';
word('float', NaN, '.nan .NaN .NAN', NOT_JSON);
word('float', Infinity, '.inf .Inf .INF +.inf +.Inf +.INF', NOT_JSON);
word('float', -Infinity, '-.inf -.Inf -.INF', NOT_JSON);
word('merge', '<<', '<<');

const EMPTY: PlainScalar = { kind: 'null', value: null };

/** goyaml.v2's `yamlStyleFloat`. */
const YAML_STYLE_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
/** YAML 1.2 core: the words and numbers a 1.2 reader would not take as the same value. */
const CORE_12_INT = /^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$/;
const CORE_12_FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/;
const CORE_12_WORDS = new Set(
  'true True TRUE false False FALSE ~ null Null NULL .nan .NaN .NAN .inf .Inf .INF +.inf +.Inf +.INF -.inf -.Inf -.INF'.split(' '),
);

/** The reading of a plain (unquoted, untagged) scalar. */
export function readPlainScalar(text: string): PlainScalar {
  if (text === '') return EMPTY;
  const hint = FIRST[text[0]];
  if (hint === undefined) return { kind: 'str', value: text };
  const known = WORDS.get(text);
  if (known) return CORE_12_WORDS.has(text) || known.kind === 'merge' ? known : { ...known, differsFrom12: 'text' };
  let read: PlainScalar | undefined;
  if (hint === '.') read = goFloat(text);
  else if (hint !== 'M') read = number(text);
  if (!read) return { kind: 'str', value: text };
  const as12 = core12Number(text);
  if (as12 === undefined) return { ...read, differsFrom12: 'text' };
  return as12 === numeric(read.value) ? read : { ...read, differsFrom12: String(as12) };
}

/** The number a YAML 1.2 core reader makes of `text`, if any. */
function core12Number(text: string): number | undefined {
  if (CORE_12_INT.test(text))
    return text.startsWith('0o') ? parseInt(text.slice(2), 8) : text.startsWith('0x') ? parseInt(text.slice(2), 16) : Number(text);
  if (CORE_12_FLOAT.test(text)) return Number(text);
  return undefined;
}

function numeric(value: PlainScalar['value']): number | undefined {
  return typeof value === 'number' ? value : value !== null && typeof value === 'object' ? value.valueOf() : undefined;
}

/** An integer, or a float that failed as one (the 'D' and 'S' branch of goyaml.v2's resolve). */
function number(text: string): PlainScalar | undefined {
  const plain = text.replaceAll('_', '');
  const int = goInt(plain);
  if (int !== undefined) return int;
  if (YAML_STYLE_FLOAT.test(plain)) {
    // -0.0 is 0 once through JSON and the API server (an integer 0 there).
    const v = Number(plain) + 0;
    // strconv.ParseFloat fails out of range, and then the text stays text.
    if (Number.isFinite(v)) return { kind: 'float', value: Number.isInteger(v) && /[.eE]/.test(plain) ? tomlFloat(v) : v };
  }
  return undefined;
}

const DIGITS: Record<number, RegExp> = { 2: /^[01]+$/, 8: /^[0-7]*$/, 10: /^[0-9]+$/, 16: /^[0-9a-fA-F]+$/ };

const PREFIX: Record<number, string> = { 2: '0b', 8: '0o', 10: '', 16: '0x' };

/**
 * strconv.ParseInt(s, 0, 64), then strconv.ParseUint (which takes no sign). Beyond both, decimal text
 * goes on to be a float; other text kubectl 1.32 keeps as text and later releases as a big number,
 * so it is refused.
 */
function goInt(s: string): PlainScalar | undefined {
  let body = s;
  const signed = body[0] === '+' || body[0] === '-';
  if (signed) body = body.slice(1);
  let base = 10;
  if (body[0] === '0') {
    const p = body[1]?.toLowerCase();
    if (body.length >= 3 && (p === 'b' || p === 'o' || p === 'x')) {
      base = p === 'b' ? 2 : p === 'o' ? 8 : 16;
      body = body.slice(2);
    } else {
      base = 8;
      body = body.slice(1);
    }
  }
  if (!DIGITS[base].test(body)) return undefined;
  const magnitude = body === '' ? 0n : BigInt(PREFIX[base] + body);
  const value = s[0] === '-' ? -magnitude : magnitude;
  const fits = (value >= -(2n ** 63n) && value < 2n ** 63n) || (!signed && value < 2n ** 64n);
  if (fits) return { kind: 'int', value: Number(value), ...(value >= 2n ** 63n && { unsigned64: true }) };
  if (base === 10) return undefined;
  return {
    kind: 'int',
    value: Number(value),
    refused: 'it does not fit in 64 bits, and kubectl releases read it differently (as text or as a number)',
  };
}

/** strconv.ParseFloat for text that starts with '.', e.g. `.5` or `.5_5` (underscores between digits). */
function goFloat(text: string): PlainScalar | undefined {
  if (!/^\.[0-9_]*[0-9][0-9_]*(?:[eE][-+]?[0-9][0-9_]*)?$/.test(text) || !underscoresBetweenDigits(text)) return undefined;
  const v = Number(text.replaceAll('_', '')) + 0;
  return Number.isFinite(v) ? { kind: 'float', value: Number.isInteger(v) ? tomlFloat(v) : v } : undefined;
}

/** strconv's underscoreOK for decimal text: every `_` has a digit on each side. */
function underscoresBetweenDigits(text: string): boolean {
  return !/(?:^|[^0-9])_|_(?:[^0-9]|$)/.test(text);
}

/** The tags kubectl resolves a scalar against, and the kind each wants. */
const TAGGED: Record<string, ScalarKind> = {
  'tag:yaml.org,2002:int': 'int',
  'tag:yaml.org,2002:float': 'float',
  'tag:yaml.org,2002:bool': 'bool',
  'tag:yaml.org,2002:null': 'null',
};

/**
 * A scalar with an explicit core tag (`!!int "010"`), as goyaml.v2 resolves it: the text is read as
 * if plain and must come out as the tag's kind (an integer may be a float). Undefined for a tag that
 * is not one of `!!int`, `!!float`, `!!bool` and `!!null`.
 */
export function readTaggedScalar(tag: string, text: string): PlainScalar | { error: string } | undefined {
  const want = TAGGED[tag];
  if (!want) return undefined;
  const read = readPlainScalar(text);
  if (read.kind === want) return read;
  // An integer is taken as a float, unless only an unsigned 64-bit integer holds it.
  if (want === 'float' && read.kind === 'int' && !read.unsigned64)
    return { ...read, kind: 'float', value: tomlFloat(read.value as number) };
  return {
    error: `!!${want} cannot hold ${JSON.stringify(text)} (kubectl reads it as ${read.kind === 'str' ? 'text' : `a ${read.kind}`})`,
  };
}
