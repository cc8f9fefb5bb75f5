/**
 * Passwords kept out of what is said about a SQL statement. A server's error can quote the statement
 * it refused: MySQL and MariaDB say `... near '<the rest of it, cut at 80 characters>' at line 1`,
 * TiDB `... near "<the rest of it>"`. The error of a statement that sets a password can thus carry the
 * password, whole or cut short, in the quoting the statement wrote it in.
 *
 * A password is a string literal in password position: after the first `IDENTIFIED` or `PASSWORD`
 * keyword, one that follows `BY`, `AS`, `PASSWORD`, `REPLACE`, `=` or `(` (a charset introducer such as
 * `_utf8mb4` between them): `IDENTIFIED BY '…'`, `IDENTIFIED WITH plugin BY|AS '…'`, `IDENTIFIED BY
 * PASSWORD '…'`, `PASSWORD('…')`, `SET PASSWORD … = '…'`, `REPLACE '…'`. User and host names stay.
 *
 * Hidden, in that order:
 * 1. the statement's passwords, as the statement writes them, wherever the text shows them, whole or
 *    cut short;
 * 2. the passwords the caller knows (a Secret's), as written in SQL (either quote, with or without
 *    backslash escapes), whole or cut, and then as they are, anywhere;
 * 3. the passwords the text itself quotes, up to the closing quote or, when none follows, to the end
 *    of the text: what it quotes of a statement the caller did not give.
 * The rest of the text stays as it is, so that the error still says what went wrong and where.
 */

/** What stands in for a hidden password. */
export const HIDDEN = '***';

/** Where the secrets of a text come from. */
export interface SqlSecrets {
  /** The statement the text speaks of. @default none */
  readonly statement?: string;
  /** Passwords to hide wherever they are (the Secrets' values). @default none */
  readonly known?: readonly string[];
}

/** The text with every password hidden (see the module's comment). */
export function hidePasswords(text: string, secrets: SqlSecrets = {}): string {
  const known = (secrets.known ?? []).filter((p) => p !== '');
  // A quote and one character is no password to look for: it would be found everywhere.
  const written = [...(secrets.statement === undefined ? [] : passwordLiterals(secrets.statement)), ...known.flatMap(writtenForms)].filter(
    (w) => w.length >= 3,
  );
  let out = hideSpans(
    text,
    [...new Set(written)].flatMap((w) => [...wholeAt(text, w), ...cutAt(text, w)]),
  );
  out = hideQuotedAfterKeyword(hideQuotedAfterKeyword(out, true), false);
  for (const p of [...new Set(known)].sort((a, b) => b.length - a.length)) out = out.split(p).join(HIDDEN);
  return out;
}

/**
 * The passwords of a statement, as written (quotes included), read both as the server reads them by
 * default and with `NO_BACKSLASH_ESCAPES`, where a backslash is no escape: the caller may not know the
 * session's mode.
 */
export function passwordLiterals(statement: string): string[] {
  const spans = [...passwordSpans(statement, true, false), ...passwordSpans(statement, false, false)];
  return [...new Set(spans.map(([start, end]) => statement.slice(start, end)))];
}

/**
 * Where the passwords of a SQL text are. `plainKeyword`: the first keyword is looked for in the plain
 * text, not as the SQL reads it; an error wraps what it quotes of a statement in quotes of its own.
 */
function passwordSpans(text: string, backslashEscapes: boolean, plainKeyword: boolean): [number, number][] {
  const spans: [number, number][] = [];
  let from = 0;
  let armed = false;
  if (plainKeyword) {
    const keyword = /\b(identified|password)\b/i.exec(text);
    if (!keyword) return [];
    from = keyword.index + keyword[0].length;
    armed = true;
  }
  let before = '';
  scan(text.slice(from), backslashEscapes, {
    word: (w) => {
      if (/^(identified|password)$/i.test(w)) armed = true;
      // A charset introducer stands between a keyword and its literal.
      if (!/^(_[a-z0-9]+|n)$/i.test(w)) before = w;
    },
    mark: (c) => (before = c),
    literal: (start, end) => {
      if (armed && /^(by|as|password|replace|=|\()$/i.test(before)) spans.push([from + start, from + end]);
      before = '';
    },
  });
  return spans;
}

/**
 * `value` as SQL may write it: in single or double quotes; its own quote doubled or after a backslash;
 * backslashes doubled or not; the other quote and the control characters escaped or not.
 */
function writtenForms(value: string): string[] {
  const forms = new Set<string>();
  for (const q of ["'", '"']) {
    const other = q === "'" ? '"' : "'";
    for (const quote of [`\\${q}`, q + q]) {
      for (const backslash of ['\\\\', '\\']) {
        for (const rest of [true, false]) {
          const body = [...value]
            .map((c) => (c === q ? quote : c === '\\' ? backslash : rest && (c === other || CONTROL[c]) ? `\\${CONTROL[c] ?? c}` : c))
            .join('');
          forms.add(`${q}${body}${q}`);
        }
      }
    }
  }
  return [...forms];
}

/** The letter after a backslash that SQL writes a control character as. */
const CONTROL: Record<string, string> = { '\0': '0', '\b': 'b', '\t': 't', '\n': 'n', '\r': 'r', '\x1a': 'Z' };

/** Where the written literal `w` is in the text, whole. */
function wholeAt(text: string, w: string): [number, number][] {
  const spans: [number, number][] = [];
  for (let i = text.indexOf(w); i >= 0; i = text.indexOf(w, i + 1)) spans.push([i, i + w.length]);
  return spans;
}

/**
 * Where a quoting in the text cut the written literal `w` short: a start of it (its quote and at
 * least one character) that runs to the end of the text, or to a quote that ends the quoting
 * (followed by a space or the end). The cut may fall in an escape, so the longest such start is
 * taken, not only the longest match.
 */
function cutAt(text: string, w: string): [number, number][] {
  const spans: [number, number][] = [];
  const head = w.slice(0, 2);
  for (let i = text.indexOf(head); i >= 0; i = text.indexOf(head, i + 1)) {
    let n = 2;
    let cut = endsQuoting(text, i + 2) ? 2 : 0;
    while (n < w.length && i + n < text.length && text[i + n] === w[n]) {
      n++;
      if (n < w.length && endsQuoting(text, i + n)) cut = n;
    }
    if (cut > 0) spans.push([i, i + cut]);
  }
  return spans;
}

/**
 * The text with each span hidden, overlapping ones as one: a literal read both with and without
 * backslash escapes is found twice, differently, and the two together cover it whatever the mode.
 */
function hideSpans(text: string, spans: readonly [number, number][]): string {
  const merged: [number, number][] = [];
  for (const [start, end] of [...spans].sort((a, b) => a[0] - b[0] || b[1] - a[1])) {
    const last = merged[merged.length - 1];
    if (last && start < last[1]) last[1] = Math.max(last[1], end);
    else merged.push([start, end]);
  }
  let out = '';
  let from = 0;
  for (const [start, end] of merged) {
    const q = text[start];
    const closed = end - start >= 2 && text[end - 1] === q;
    out += `${text.slice(from, start)}${q}${HIDDEN}${closed ? q : ''}`;
    from = end;
  }
  return out + text.slice(from);
}

/** Whether a quoting of the text may end at `j`: the end, or a quote before a space or the end. */
function endsQuoting(text: string, j: number): boolean {
  return j === text.length || (isQuote(text[j]) && (j + 1 === text.length || /\s/.test(text[j + 1])));
}

const isQuote = (c: string): boolean => c === "'" || c === '"';

/**
 * The text with the passwords it quotes itself hidden, each to its closing quote or the end of the
 * text. A mask already there stays as it is: its closing quote is no opening one.
 */
function hideQuotedAfterKeyword(text: string, backslashEscapes: boolean): string {
  const masked = text.replace(/(['"])\*\*\*\1/g, (m) => (m[0] === "'" ? SINGLE_MASK : DOUBLE_MASK));
  const out = hideSpans(masked, passwordSpans(masked, backslashEscapes, true));
  return out.split(SINGLE_MASK).join(`'${HIDDEN}'`).split(DOUBLE_MASK).join(`"${HIDDEN}"`);
}

/** Stand-ins for a hidden literal while the text is scanned (Unicode private use: in no error). */
const SINGLE_MASK = '\uE000';
const DOUBLE_MASK = '\uE001';

interface ScanHandlers {
  /** A bare word (a keyword or a name), outside quotes and comments. */
  readonly word: (w: string) => void;
  /** Any other character that is not a space. */
  readonly mark: (c: string) => void;
  /** A quoted string from `start` to `end` (its closing quote included, when it has one). */
  readonly literal: (start: number, end: number) => void;
}

/**
 * Walks SQL text as the server reads it: strings in `'` or `"` (a doubled quote is one quote, and,
 * with `backslashEscapes`, a backslash escapes the next character), names in backquotes, comments, and
 * bare words. A string that is never closed runs to the end of the text.
 */
function scan(text: string, backslashEscapes: boolean, on: ScanHandlers): void {
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === "'" || c === '"' || c === '`') {
      const start = i;
      i++;
      while (i < text.length) {
        if (backslashEscapes && text[i] === '\\' && c !== '`') {
          i += 2;
          continue;
        }
        if (text[i] === c) {
          if (text[i + 1] === c) {
            i += 2;
            continue;
          }
          i++;
          break;
        }
        i++;
      }
      i = Math.min(i, text.length);
      if (c !== '`') on.literal(start, i);
      continue;
    }
    if (c === '#' || (c === '-' && text[i + 1] === '-' && (i + 2 >= text.length || /\s/.test(text[i + 2])))) {
      while (i < text.length && text[i] !== '\n') i++;
      continue;
    }
    // `/*! … */` and TiDB's `/*T! … */` are read by the server: their content is scanned.
    if (c === '/' && text[i + 1] === '*' && text[i + 2] !== '!' && !(text[i + 2] === 'T' && text[i + 3] === '!')) {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 2;
      continue;
    }
    const word = /^[A-Za-z_][A-Za-z0-9_$]*/.exec(text.slice(i, i + 64));
    if (word) {
      on.word(word[0]);
      i += word[0].length;
      continue;
    }
    if (!/\s/.test(c)) on.mark(c);
    i++;
  }
}
