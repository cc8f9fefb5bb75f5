/**
 * The lexical pieces of PromQL that `promql.ts` scans with, as Prometheus v2.42.0's lexer reads them
 * (`promql/parser/lex.go`: lexString, lexRawString, scanNumber, lexInsideBraces, lexDuration), and
 * Grafana's variables where they stand. See `promql.ts` for the grammar decisions.
 */
/** Where in `text` the character at `i` is, as `line:column` (1-based), as Prometheus reports it. */
export function where(text: string, i: number): string {
  let line = 1;
  let lineStart = 0;
  for (let j = 0; j < i && j < text.length; j++) {
    if (text[j] === '\n') {
      line++;
      lineStart = j + 1;
    }
  }
  return `${line}:${i - lineStart + 1}`;
}

export function fail(text: string, i: number, what: string): never {
  throw new Error(`PromQL: ${what} at ${where(text, i)} in ${JSON.stringify(text.length > 200 ? `${text.slice(0, 200)}...` : text)}`);
}

export const isSpace = (c: string | undefined) => c === ' ' || c === '\t' || c === '\n' || c === '\r';
export const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';
export const isAlpha = (c: string | undefined) => c !== undefined && (c === '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'));
export const isAlphaNumeric = (c: string | undefined) => isAlpha(c) || isDigit(c);

/** The lexer's `key` map: these spellings (case-insensitive) are keywords, never plain identifiers. */
export const AGGREGATORS = new Set([
  'sum',
  'avg',
  'count',
  'min',
  'max',
  'group',
  'stddev',
  'stdvar',
  'topk',
  'bottomk',
  'count_values',
  'quantile',
  'limitk',
  'limit_ratio',
]);
/** Keywords followed by a list of label names in parentheses (optional after `group_left`/`group_right`). */
export const LABEL_LIST_KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);
/** Keywords that are never a metric name (not in `metric_identifier`) and come before an operand. */
export const BINARY_MODIFIERS = new Set(['on', 'ignoring', 'group_left', 'group_right', 'bool']);
/** Keywords that, after an operand, are operators or modifiers (all may be metric names elsewhere). */
export const AFTER_OPERAND = new Map<string, 'operand' | 'operator'>([
  ['and', 'operand'],
  ['or', 'operand'],
  ['unless', 'operand'],
  ['offset', 'operand'], // a duration follows
  ['by', 'operator'],
  ['without', 'operator'],
  ['smoothed', 'operator'], // Prometheus 3
  ['anchored', 'operator'], // Prometheus 3
]);

/** The end of a Grafana variable starting at `i` (`$name`, `${...}`, `[[name]]`, `[[name:fmt]]`), or -1. */
export const VARIABLE = /\$\{[^}\n]*\}|\$\w+|\[\[\w+(?::\w+)?\]\]/y;
export function variableEnd(text: string, i: number): number {
  if (text[i] !== '$' && text[i] !== '[') return -1;
  VARIABLE.lastIndex = i;
  return VARIABLE.exec(text) ? VARIABLE.lastIndex : -1;
}

/** After a value or a variable, the letters, digits and `$` variables glued to it (`${h}h${m}m`). */
export function glued(text: string, i: number, colon: boolean): number {
  for (;;) {
    if (isAlphaNumeric(text[i]) || (colon && text[i] === ':')) i++;
    else if (text[i] === '$' && variableEnd(text, i) > 0) i = variableEnd(text, i);
    else return i;
  }
}

/** The index after the string starting at `i` (its quote), as lexString/lexRawString read it. */
export function skipString(text: string, i: number): number {
  const quote = text[i];
  let j = i + 1;
  for (;;) {
    if (j >= text.length) fail(text, i, `unterminated string (opened with ${quote})`);
    const c = text[j];
    if (c === quote) return j + 1;
    if (quote !== '`') {
      if (c === '\n') fail(text, i, `unterminated string (opened with ${quote}, a line ends before it closes)`);
      if (c === '\\') {
        if (j + 1 >= text.length) fail(text, i, `unterminated string (opened with ${quote})`);
        j++;
      }
    }
    j++;
  }
}

/** The index of the first character at or after `i` that is neither a space nor in a `#` comment. */
export function skipBlank(text: string, i: number): number {
  for (;;) {
    while (isSpace(text[i])) i++;
    if (text[i] !== '#') return i;
    while (i < text.length && text[i] !== '\n' && text[i] !== '\r') i++;
  }
}

/** A number or a duration at `i` (scanNumber, then the unit letters), with anything glued to it. */
export function skipNumber(text: string, i: number): number {
  let digits = isDigit;
  if (text[i] === '0' && (text[i + 1] === 'x' || text[i + 1] === 'X')) {
    i += 2;
    digits = (c) => c !== undefined && /[0-9a-fA-F]/.test(c);
  }
  while (digits(text[i])) i++;
  if (text[i] === '.') {
    i++;
    while (digits(text[i])) i++;
  }
  if (digits === isDigit && (text[i] === 'e' || text[i] === 'E')) {
    i++;
    if (text[i] === '+' || text[i] === '-') i++;
    while (isDigit(text[i])) i++;
  }
  return glued(text, i, false);
}

/** One piece of a matcher inside braces. */
export interface Piece {
  readonly kind: 'name' | 'string' | 'variable' | 'op' | 'other';
  readonly start: number;
  readonly end: number;
}

/** One matcher inside braces: the pieces between two commas. */
export interface Matcher {
  readonly start: number;
  readonly end: number;
  /** The comma before it, or -1 for the first one. */
  readonly commaBefore: number;
  /** Its label name (an identifier, or a quoted name in Prometheus 3), if it has one. */
  readonly label?: string;
  readonly op?: string;
  /** Its value, if it is a string. */
  readonly value?: string;
}

export interface Braces {
  /** Index of `{`. */
  readonly open: number;
  /** Index of `}`. */
  readonly close: number;
  readonly matchers: Matcher[];
  /** Where a new matcher goes: after the last matcher or comma, before trailing spaces and comments. */
  readonly insertAt: number;
  /** Whether a new matcher needs no comma before it (empty braces, or a trailing comma). */
  readonly bare: boolean;
}

/** The braces opening at `i`, read as lexInsideBraces does. */
export function readBraces(text: string, i: number): Braces {
  const matchers: Matcher[] = [];
  let pieces: Piece[] = [];
  let commaBefore = -1;
  let insertAt = i + 1;
  let bare = true;
  const close = () => {
    if (pieces.length === 0) return;
    const [first, second, third] = pieces;
    const op = second?.kind === 'op' ? text.slice(second.start, second.end) : undefined;
    // A string alone is Prometheus 3's quoted metric name (`{"a.b"}`), not a label.
    const label =
      first.kind === 'name'
        ? text.slice(first.start, first.end)
        : first.kind === 'string' && op
          ? unquote(text, first.start, first.end)
          : undefined;
    const value = op && third?.kind === 'string' ? unquote(text, third.start, third.end) : undefined;
    matchers.push({ start: first.start, end: pieces[pieces.length - 1].end, commaBefore, label, op, value });
    pieces = [];
  };
  let j = i + 1;
  for (;;) {
    j = skipBlank(text, j);
    if (j >= text.length) fail(text, i, 'unclosed "{"');
    const c = text[j];
    if (c === '}') {
      close();
      return { open: i, close: j, matchers, insertAt, bare };
    }
    if (c === ',') {
      close();
      commaBefore = j;
      insertAt = j + 1;
      bare = true;
      j++;
      continue;
    }
    if (c === '{') fail(text, j, 'unexpected "{" inside braces');
    let end: number;
    let kind: Piece['kind'];
    if (c === '$' && variableEnd(text, j) > 0) {
      kind = 'variable';
      end = glued(text, variableEnd(text, j), false);
    } else if (c === '"' || c === "'" || c === '`') {
      kind = 'string';
      end = skipString(text, j);
    } else if (isAlpha(c)) {
      kind = 'name';
      end = j + 1;
      while (isAlphaNumeric(text[end])) end++;
    } else if ((c === '=' || c === '!') && (text[j + 1] === '~' || (c === '!' && text[j + 1] === '='))) {
      kind = 'op';
      end = j + 2;
    } else if (c === '=') {
      kind = 'op';
      end = j + 1;
    } else {
      kind = 'other';
      end = j + 1;
    }
    pieces.push({ kind, start: j, end });
    insertAt = end;
    bare = false;
    j = end;
  }
}

/** The index after the range or subquery brackets opening at `i` (durations, `:`, Grafana variables). */
export function skipBrackets(text: string, i: number): number {
  let j = i + 1;
  let parens = 0; // Prometheus 3's duration expressions: `[(5m + 1m)]`
  for (;;) {
    j = skipBlank(text, j);
    if (j >= text.length) fail(text, i, 'unclosed "["');
    const c = text[j];
    if (c === ']') return j + 1;
    const variable = variableEnd(text, j);
    if (variable > 0) j = variable;
    else if (c === '(') {
      parens++;
      j++;
    } else if (c === ')') {
      if (parens-- === 0) fail(text, j, 'unexpected ")" inside brackets (the "[" before it is not closed)');
      j++;
    } else if (c === '"' || c === "'" || c === '`') j = skipString(text, j);
    else if (c === '[') fail(text, j, 'unexpected "[" inside brackets');
    else if (c === '{' || c === '}') fail(text, j, `unexpected ${JSON.stringify(c)} inside brackets`);
    else j++;
  }
}

/** The value of the PromQL string literal `text[start, end)`, escapes decoded (lexEscape's set). */
export function unquote(text: string, start: number, end: number): string {
  const quote = text[start];
  const body = text.slice(start + 1, end - 1);
  if (quote === '`') return body;
  const bytes: number[] = [];
  const utf8 = (s: string) => bytes.push(...Buffer.from(s, 'utf8'));
  const simple: Record<string, string> = {
    a: '\x07',
    b: '\b',
    f: '\f',
    n: '\n',
    r: '\r',
    t: '\t',
    v: '\v',
    '\\': '\\',
    '"': '"',
    "'": "'",
  };
  for (let i = 0; i < body.length; ) {
    const cp = body.codePointAt(i)!;
    const ch = String.fromCodePoint(cp);
    if (ch !== '\\') {
      utf8(ch);
      i += ch.length;
      continue;
    }
    const e = body[i + 1];
    if (e in simple) {
      utf8(simple[e]);
      i += 2;
    } else if (e >= '0' && e <= '7') {
      bytes.push(parseInt(body.slice(i + 1, i + 4), 8) & 0xff);
      i += 4;
    } else if (e === 'x') {
      bytes.push(parseInt(body.slice(i + 2, i + 4), 16) & 0xff);
      i += 4;
    } else if (e === 'u' || e === 'U') {
      const n = e === 'u' ? 4 : 8;
      const code = parseInt(body.slice(i + 2, i + 2 + n), 16);
      utf8(Number.isFinite(code) && code <= 0x10ffff ? String.fromCodePoint(code) : '\ufffd');
      i += 2 + n;
    } else {
      // An escape the lexer refuses: keep it as written.
      utf8(`\\${e ?? ''}`);
      i += 2;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** `value` as a PromQL double-quoted string that the lexer reads back as `value`. */
export function quote(value: string): string {
  let out = '"';
  for (const ch of value) {
    const cp = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (cp < 0x20 || cp === 0x7f) out += `\\x${cp.toString(16).padStart(2, '0')}`;
    // The lexer refuses U+FFFD written out ("invalid UTF-8 rune"), but not escaped.
    else if (cp === 0xfffd) out += '\\ufffd';
    else if (cp >= 0xd800 && cp <= 0xdfff)
      throw new Error(`PromQL: the label value ${JSON.stringify(value)} has a lone UTF-16 surrogate, which is not valid UTF-8`);
    else out += ch;
  }
  return `${out}"`;
}

export function checkLabel(label: string): void {
  if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(label))
    throw new Error(`PromQL: ${JSON.stringify(label)} is not a label name ([a-zA-Z_][a-zA-Z0-9_]*)`);
  if (label === '__name__')
    throw new Error('PromQL: cannot inject a __name__ matcher (a selector with a metric name would have its name set twice)');
}
