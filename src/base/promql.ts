/**
 * Adds a label matcher to every selector of a PromQL expression, leaving every other byte as it is:
 * what scoping one cluster's alert rules to its own series needs, without a PromQL parser.
 *
 * The grammar is Prometheus's (`promql/parser/lex.go`, `generated_parser.y`): an identifier
 * (`[a-zA-Z_:][a-zA-Z0-9_:]*`) is a metric name unless it is a keyword (`by`, `without`, `on`,
 * `ignoring`, `group_left`, `group_right`, `bool`, `and`, `or`, `unless`, `offset`, `atan2`), a
 * number (`Inf`, `NaN`), or followed by `(` (a function or an aggregation) or by `by`/`without` (an
 * aggregation written `sum by (x) (...)`); the label lists after `by`, `without`, `on`, `ignoring`,
 * `group_left` and `group_right` are names, not selectors; `[...]` holds a range or subquery
 * duration; strings are single, double (with escapes) or back quoted; `#` starts a comment. Grafana's
 * variables (`$name`, `${name}`, `[[name]]`) are taken as opaque where they stand.
 */

const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'atan2', 'inf', 'nan']);
const LABEL_LISTS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);
const IDENT_START = /[a-zA-Z_:]/;
const IDENT = /[a-zA-Z0-9_:]/;

/** A selector found: its braces (`open` at `{`, `close` after `}`), or the end of a bare metric name. */
interface Selector {
  readonly braces?: { readonly open: number; readonly close: number };
  readonly end?: number;
}

function skipString(text: string, i: number): number {
  const quote = text[i];
  let j = i + 1;
  while (j < text.length) {
    const c = text[j];
    if (c === '\\' && quote !== '`') j += 2;
    else if (c === quote) return j + 1;
    else j++;
  }
  throw new Error(`unterminated string starting at character ${i + 1}: ${text.slice(i, i + 20)}`);
}

function skipSpace(text: string, i: number): number {
  for (;;) {
    while (i < text.length && /\s/.test(text[i])) i++;
    if (text[i] === '#') {
      while (i < text.length && text[i] !== '\n') i++;
      continue;
    }
    return i;
  }
}

/** The index after the bracket closing the one at `i` (`{`, `[`, `(`), strings and nesting respected. */
function skipGroup(text: string, i: number): number {
  const close: Record<string, string> = { '{': '}', '[': ']', '(': ')' };
  const stack = [close[text[i]]];
  let j = i + 1;
  while (j < text.length) {
    const c = text[j];
    if (c === '"' || c === "'" || c === '`') j = skipString(text, j);
    else if (c in close) {
      stack.push(close[c]);
      j++;
    } else if (c === '}' || c === ']' || c === ')') {
      if (stack.pop() !== c) throw new Error(`unbalanced ${JSON.stringify(c)} at character ${j + 1}`);
      j++;
      if (stack.length === 0) return j;
    } else j++;
  }
  throw new Error(`unclosed ${JSON.stringify(text[i])} at character ${i + 1}`);
}

/**
 * A Grafana variable (`$name`, `${name:format}`) and what is written against it without a space
 * (`${__to:date:H}h`, `$interval0m`): one opaque token, as where it stands it is a duration or a number.
 */
function skipVariable(text: string, i: number): number {
  while (text[i] === '$') {
    i++;
    if (text[i] === '{') i = skipGroup(text, i);
    while (i < text.length && IDENT.test(text[i])) i++;
  }
  return i;
}

/** Every selector of the expression, in order. */
function selectors(text: string): Selector[] {
  const out: Selector[] = [];
  const parens: number[] = [];
  let i = 0;
  while (i < text.length) {
    i = skipSpace(text, i);
    if (i >= text.length) break;
    const c = text[i];
    if (c === '"' || c === "'" || c === '`') {
      i = skipString(text, i);
    } else if (c === '$') {
      i = skipVariable(text, i);
    } else if (c === '[') {
      i = skipGroup(text, i);
    } else if (c === '{') {
      const close = skipGroup(text, i);
      out.push({ braces: { open: i, close } });
      i = close;
    } else if (c === '(') {
      parens.push(i);
      i++;
    } else if (c === ')') {
      if (parens.pop() === undefined) throw new Error(`unbalanced ")" at character ${i + 1}`);
      i++;
    } else if (c === '}' || c === ']') {
      throw new Error(`unbalanced ${JSON.stringify(c)} at character ${i + 1}`);
    } else if (/[0-9.]/.test(c)) {
      // Numbers, hex, exponents (1e-3) and durations (5m, 1h30m).
      const start = i;
      i++;
      const hex = /^0[xX]/.test(text.slice(start, start + 2));
      while (i < text.length && (/[0-9a-zA-Z_.]/.test(text[i]) || (!hex && (text[i] === '+' || text[i] === '-') && /[eE]/.test(text[i - 1])))) i++;
    } else if (IDENT_START.test(c)) {
      const start = i;
      while (i < text.length && IDENT.test(text[i])) i++;
      const word = text.slice(start, i);
      const next = skipSpace(text, i);
      const lower = word.toLowerCase();
      if (LABEL_LISTS.has(lower)) {
        if (text[next] === '(') i = skipGroup(text, next);
      } else if (KEYWORDS.has(lower)) {
        // an operator, or a number
      } else if (text[next] === '(') {
        // a function or an aggregation
      } else if (/^(by|without)\b/i.test(text.slice(next)) && text.slice(next).replace(/^(by|without)\s*/i, '').startsWith('(')) {
        // `sum by (x) (...)`
      } else if (text[next] === '{') {
        const close = skipGroup(text, next);
        out.push({ braces: { open: next, close } });
        i = close;
      } else {
        out.push({ end: i });
      }
    } else {
      i++;
    }
  }
  if (parens.length > 0) throw new Error(`unclosed "(" at character ${parens[parens.length - 1] + 1}`);
  return out;
}

const quote = (v: string) => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;

/** The matchers inside braces: each one's span, and its label. */
function matchers(inner: string, offset: number): { label: string; start: number; end: number }[] {
  const out: { label: string; start: number; end: number }[] = [];
  let i = 0;
  while (i < inner.length) {
    i = skipSpace(inner, i);
    if (i >= inner.length) break;
    if (inner[i] === ',') {
      i++;
      continue;
    }
    const start = i;
    let label = '';
    if (inner[i] === '"' || inner[i] === "'" || inner[i] === '`') {
      const end = skipString(inner, i);
      label = inner.slice(i + 1, end - 1);
      i = end;
    } else {
      while (i < inner.length && IDENT.test(inner[i])) i++;
      label = inner.slice(start, i);
    }
    i = skipSpace(inner, i);
    while (i < inner.length && /[=!~]/.test(inner[i])) i++;
    i = skipSpace(inner, i);
    if (inner[i] === '"' || inner[i] === "'" || inner[i] === '`') i = skipString(inner, i);
    else if (inner[i] === '$') i = skipVariable(inner, i);
    else throw new Error(`expected a quoted value for label ${JSON.stringify(label)} at character ${offset + i + 1}`);
    out.push({ label, start: offset + start, end: offset + i });
  }
  return out;
}

/** `expr` with `label="value"` on every selector; an existing matcher of that label is replaced. */
export function injectMatcher(expr: string, label: string, value: string): string {
  const found = selectors(expr);
  const matcher = `${label}=${quote(value)}`;
  let out = '';
  let at = 0;
  for (const s of found) {
    if (!s.braces) {
      const end = s.end!;
      out += `${expr.slice(at, end)}{${matcher}}`;
      at = end;
      continue;
    }
    const { open, close } = s.braces;
    const inner = expr.slice(open + 1, close - 1);
    const existing = matchers(inner, open + 1).find((m) => m.label === label);
    if (existing) {
      out += `${expr.slice(at, existing.start)}${matcher}`;
      at = existing.end;
      continue;
    }
    const trimmed = inner.replace(/\s+$/, '');
    const sep = trimmed === '' || trimmed.endsWith(',') ? '' : ',';
    const insertAt = open + 1 + trimmed.length;
    out += `${expr.slice(at, insertAt)}${sep}${matcher}`;
    at = insertAt;
  }
  return out + expr.slice(at);
}

/** Whether every selector of `expr` has the matcher `label="value"`. */
export function hasMatcherEverywhere(expr: string, label: string, value: string): boolean {
  return selectors(expr).every((s) => {
    if (!s.braces) return false;
    const inner = expr.slice(s.braces.open + 1, s.braces.close - 1);
    return matchers(inner, 0).some((m) => m.label === label && inner.slice(m.start, m.end).replace(/^[^=!~]*=\s*/, '') === quote(value));
  });
}
