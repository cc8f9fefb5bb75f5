/**
 * Adds one equality matcher (`label="value"`) to every vector and range-vector selector of a PromQL
 * expression, and changes nothing else: every byte outside the selectors' braces stays as it is,
 * and a bare metric name only gets `{label="value"}` appended. This is what scoping one cluster's
 * alert rules and dashboards to its own series needs, without a full PromQL parser.
 *
 * The grammar facts come from Prometheus's own parser, at v2.42.0 (the version of the promtool the
 * results are checked with), compared with its main branch:
 *   - promql/parser/lex.go — https://github.com/prometheus/prometheus/blob/v2.42.0/promql/parser/lex.go
 *   - promql/parser/generated_parser.y — https://github.com/prometheus/prometheus/blob/v2.42.0/promql/parser/generated_parser.y
 *
 * Lexer (lex.go):
 *   - An identifier outside braces is `[a-zA-Z_:][a-zA-Z0-9_:]*` (`lexKeywordOrIdentifier`); it is a
 *     keyword when its lower-cased spelling is in the `key` map (so `BY`, `Sum`, `BOOL` are keywords
 *     too): `and or unless atan2`, the aggregators `sum avg count min max group stddev stdvar topk
 *     bottomk count_values quantile`, `offset by without on ignoring group_left group_right bool`,
 *     the `@` preprocessors `start end`, and `inf`/`nan`, which are numbers.
 *   - Inside braces (`lexInsideBraces`) a label name is `[a-zA-Z_][a-zA-Z0-9_]*` (no colon, keywords
 *     are plain names), the operators are `=`, `!=`, `=~`, `!~`, and a `{` is an error.
 *   - Strings are in `"` or `'` with backslash escapes (a raw newline ends them as "unterminated
 *     quoted string"), or in back quotes without escapes. `#` starts a comment up to the end of the
 *     line, anywhere outside strings, inside braces too (in brackets, not before the duration, which
 *     the lexer reads right after `[` and its spaces). Spaces are ` \t\r\n`.
 *   - A number is decimal, hexadecimal (`0x1f`), with a fraction and an exponent (`1.5e-3`), or
 *     `.5`; digits followed by a unit (`smhdwy`, `ms`) are a duration (`1h30m`); `[` opens a range or
 *     a subquery (`[5m]`, `[5m:1m]`, `[5m:]`) holding only durations and `:`.
 * Parser (generated_parser.y):
 *   - `metric_identifier: AVG | BOTTOMK | BY | COUNT | COUNT_VALUES | GROUP | IDENTIFIER | LAND | LOR
 *     | LUNLESS | MAX | METRIC_IDENTIFIER | MIN | OFFSET | QUANTILE | STDDEV | STDVAR | SUM | TOPK |
 *     WITHOUT | START | END`: those keywords are metric names where an expression is expected
 *     (`sum`, `by{a="b"}`, `foo and and`, `rate(offset[5m])` all parse); `on`, `ignoring`,
 *     `group_left`, `group_right`, `bool`, `atan2`, `inf` and `nan` never are.
 *   - `function_call: IDENTIFIER function_call_body` and `aggregate_expr: aggregate_op
 *     [aggregate_modifier] function_call_body [aggregate_modifier]`: a name followed by `(` is a call
 *     (of a function, an aggregation, or `start()`/`end()` after `@`), never a selector, since a
 *     selector is never followed by `(`; an aggregator followed by `by (...)`/`without (...)` is an
 *     aggregation (`sum by (x) (...)`).
 *   - `grouping_labels: LEFT_PAREN grouping_label_list RIGHT_PAREN` after `by`, `without`, `on`,
 *     `ignoring`, and (optionally, `maybe_grouping_labels`) `group_left`/`group_right`: those
 *     parentheses hold label names, not expressions (`maybe_label` takes keywords as names too).
 *     After `group_left`/`group_right` a `(` is always that list (yacc shifts), so
 *     `a * on(x) group_left (b)` is an error rather than `(b)` being the right operand.
 *   - `offset_expr: expr OFFSET duration` and `step_invariant_expr: expr AT number | expr AT
 *     (START|END) ( )`: after an operand, `offset` and `@` are modifiers.
 *   - `label_matcher: IDENTIFIER match_op STRING`, and `label_matchers` allows a trailing comma and
 *     `{}`; a name may be followed by its braces after spaces or comments (`foo # c\n{a="b"}`).
 *
 * Decisions, from those facts:
 *   - The scan keeps one bit of state: whether an operand is expected (at the start, after `(`, `,`,
 *     an operator, `and`/`or`/`unless`/`atan2`, `bool`, `offset`, `@`, a modifier's label list) or an
 *     operator (after a selector, a number, a string, a duration, `)`, `]`, `}`). An identifier is a
 *     selector when an operand is expected, it is not followed by `(`, it is not `on`, `ignoring`,
 *     `group_left`, `group_right`, `bool`, `atan2`, `inf` or `nan`, it is not `start`/`end` after
 *     `@`, and it is not an aggregator followed by `by (`/`without (`. Where an operator is
 *     expected, `and`, `or`, `unless`, `offset`, `by`, `without` (and Prometheus 3's `smoothed`,
 *     `anchored`) are keywords; any other identifier there is not valid PromQL and is still taken
 *     as a metric name, so that nothing that could select series is left unscoped.
 *   - Every `{...}` outside strings, brackets and label lists is a selector's matchers: after a
 *     metric name, or alone.
 *   - An existing matcher of the label (`tidb_cluster=~"..."`, `tidb_cluster!="..."`) is replaced;
 *     further ones in the same braces are removed with their comma. The new matcher goes after the
 *     last matcher (after a trailing comma if there is one, before any comment), as `,label="value"`.
 *   - Grafana's variables (`$name`, `${name}`, `${name:format}`, `[[name]]`) are opaque values where
 *     they stand: in strings, as a duration (`[$__rate_interval]`, `offset ${__to:date:H}h`), a
 *     number (`> bool $threshold`), a label value, or in a label list (`by (le, $group)`). One
 *     glued to the letters or digits around it is one value with them (`${a}h${b}m`).
 *   - Prometheus 3 additions that cost nothing are understood: quoted label names and a quoted metric
 *     name inside braces (`{"a.b", "c"="d"}`), aggregators such as `limitk` (followed by `(`, so not
 *     selectors). Other 3.x syntax outside brackets (duration expressions, `fill` modifiers) is not.
 *   - Errors (an Error naming the line and column): a `)`, `]` or `}` without its opening one, an
 *     unclosed `(`, `[` or `{`, a `{` inside braces, a `[` inside brackets, an unterminated string;
 *     and a label that is not a valid label name, or `__name__`, which would set the name twice.
 */

import {
  AFTER_OPERAND,
  AGGREGATORS,
  BINARY_MODIFIERS,
  type Braces,
  checkLabel,
  fail,
  glued,
  isAlpha,
  isAlphaNumeric,
  isDigit,
  LABEL_LIST_KEYWORDS,
  quote,
  readBraces,
  skipBlank,
  skipBrackets,
  skipNumber,
  skipString,
  variableEnd,
} from './promql-lex';

type Token =
  | { readonly kind: 'word'; readonly start: number; readonly end: number; readonly word: string; readonly templated: boolean }
  | { readonly kind: 'braces'; readonly start: number; readonly end: number; readonly braces: Braces }
  | { readonly kind: 'value' | 'brackets' | '(' | ')' | ',' | '@' | 'op'; readonly start: number; readonly end: number };

/** The tokens of an expression, outside braces and brackets as lexStatements reads them. */
function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  const parens: number[] = [];
  let i = 0;
  for (;;) {
    i = skipBlank(text, i);
    if (i >= text.length) break;
    const start = i;
    const c = text[i];
    const variable = variableEnd(text, i);
    if (variable > 0) {
      i = glued(text, variable, false);
      tokens.push({ kind: 'value', start, end: i });
    } else if (c === '"' || c === "'" || c === '`') {
      i = skipString(text, i);
      tokens.push({ kind: 'value', start, end: i });
    } else if (isDigit(c) || (c === '.' && isDigit(text[i + 1]))) {
      i = skipNumber(text, i);
      tokens.push({ kind: 'value', start, end: i });
    } else if (isAlpha(c) || c === ':') {
      while (isAlphaNumeric(text[i]) || text[i] === ':') i++;
      const plain = i;
      i = glued(text, i, true);
      tokens.push({ kind: 'word', start, end: i, word: text.slice(start, i), templated: i !== plain });
    } else if (c === '{') {
      const braces = readBraces(text, i);
      i = braces.close + 1;
      tokens.push({ kind: 'braces', start, end: i, braces });
    } else if (c === '[') {
      i = skipBrackets(text, i);
      tokens.push({ kind: 'brackets', start, end: i });
    } else if (c === '(') {
      parens.push(i);
      tokens.push({ kind: '(', start, end: ++i });
    } else if (c === ')') {
      if (parens.pop() === undefined) fail(text, i, 'unbalanced ")" (no "(" before it)');
      tokens.push({ kind: ')', start, end: ++i });
    } else if (c === '}' || c === ']') {
      fail(text, i, `unbalanced ${JSON.stringify(c)} (no ${JSON.stringify(c === '}' ? '{' : '[')} before it)`);
    } else if (c === ',' || c === '@') {
      tokens.push({ kind: c, start, end: ++i });
    } else {
      // + - * / % ^ == != < <= > >=, and whatever else the lexer would refuse.
      i += /^(==|!=|<=|>=|=~|!~)/.test(text.slice(i, i + 2)) ? 2 : 1;
      tokens.push({ kind: 'op', start, end: i });
    }
  }
  if (parens.length > 0) fail(text, parens[parens.length - 1], 'unclosed "("');
  return tokens;
}

/** A selector: its braces, or a bare metric name (ending at `end`). */
type Selector = { readonly braces: Braces } | { readonly nameEnd: number };

/** The index of the `)` closing the `(` token at `k`. */
function closingParen(tokens: Token[], k: number): number {
  let depth = 0;
  for (let m = k; m < tokens.length; m++) {
    if (tokens[m].kind === '(') depth++;
    else if (tokens[m].kind === ')' && --depth === 0) return m;
  }
  return tokens.length - 1; // not reached: tokenize checked the balance
}

/** Every selector of the expression, in order. */
function selectors(text: string): Selector[] {
  const tokens = tokenize(text);
  const out: Selector[] = [];
  let operand = true; // whether an operand is expected here
  let afterAt = false;
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k];
    const wasAfterAt = afterAt;
    afterAt = false;
    switch (t.kind) {
      case '(':
      case ',':
      case 'op':
        operand = true;
        continue;
      case '@':
        operand = true;
        afterAt = true;
        continue;
      case ')':
      case 'value':
      case 'brackets':
        operand = false;
        continue;
      case 'braces':
        out.push({ braces: t.braces });
        operand = false;
        continue;
      case 'word':
        break;
    }
    const next = tokens[k + 1];
    const word = t.templated ? '' : t.word.toLowerCase();
    if (LABEL_LIST_KEYWORDS.has(word) && next?.kind === '(') {
      // `by (a, b)`, `on (x)`, `group_left (y)`: label names, not expressions.
      k = closingParen(tokens, k + 1);
      if (word !== 'by' && word !== 'without') operand = true;
      continue;
    }
    if (BINARY_MODIFIERS.has(word) || word === 'atan2') {
      operand = true;
      continue;
    }
    if (word === 'inf' || word === 'nan') {
      operand = false;
      continue;
    }
    if (wasAfterAt && (word === 'start' || word === 'end')) continue;
    if (!operand) {
      const after = AFTER_OPERAND.get(word);
      if (after) {
        operand = after === 'operand';
        continue;
      }
      // Two operands in a row is not PromQL; take the name as a metric name all the same.
    }
    if (next?.kind === '(') {
      // A function call, an aggregation, or a preprocessor: never a selector.
      operand = true;
      continue;
    }
    if (AGGREGATORS.has(word) && next?.kind === 'word' && /^(by|without)$/i.test(next.word) && tokens[k + 2]?.kind === '(') {
      // `sum by (x) (...)`: the label list, then the body, follow.
      continue;
    }
    // A metric name: its braces (if any) are the next token, and are the selector.
    if (next?.kind !== 'braces') out.push({ nameEnd: t.end });
    operand = false;
  }
  return out;
}

/**
 * `expr` with the matcher `label="value"` in every vector and range-vector selector: appended to
 * the braces (`foo{a="b"}` → `foo{a="b",label="value"}`), added as braces after a bare metric name
 * (`up` → `up{label="value"}`), or replacing a matcher of that label already there. Every other byte
 * is kept. Throws on unbalanced parentheses, braces or brackets, an unterminated string, or a label
 * that is not a label name.
 */
export function injectMatcher(expr: string, label: string, value: string): string {
  checkLabel(label);
  const matcher = `${label}=${quote(value)}`;
  const edits: { start: number; end: number; text: string }[] = [];
  for (const s of selectors(expr)) {
    if ('nameEnd' in s) {
      edits.push({ start: s.nameEnd, end: s.nameEnd, text: `{${matcher}}` });
      continue;
    }
    const { matchers, insertAt, bare } = s.braces;
    const same = matchers.filter((m) => m.label === label);
    if (same.length === 0) {
      edits.push({ start: insertAt, end: insertAt, text: bare ? matcher : `,${matcher}` });
      continue;
    }
    edits.push({ start: same[0].start, end: same[0].end, text: matcher });
    for (const m of same.slice(1)) edits.push({ start: m.commaBefore, end: m.end, text: '' });
  }
  let out = '';
  let at = 0;
  for (const e of edits) {
    out += expr.slice(at, e.start) + e.text;
    at = e.end;
  }
  return out + expr.slice(at);
}

/**
 * Whether every selector of `expr` has the matcher `label="value"` (the value compared after its
 * escapes are decoded, in any quotes). An expression without selectors (`vector(1)`) has it
 * everywhere. Throws as injectMatcher does on a malformed expression.
 */
export function hasMatcherEverywhere(expr: string, label: string, value: string): boolean {
  return selectors(expr).every(
    (s) => 'braces' in s && s.braces.matchers.some((m) => m.label === label && m.op === '=' && m.value === value),
  );
}
