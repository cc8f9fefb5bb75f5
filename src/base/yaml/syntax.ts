/**
 * YAML syntax errors in words a newcomer understands, at the line where the mistake is. The parser
 * says where it gave up ("Missing closing 'quote" at the end of the file, "Implicit map keys need to
 * be followed by map values"); what the user needs is where the mistake starts and what is probably
 * wrong: a quote or a bracket never closed, a key without its colon, a tab, a list item among keys.
 * One problem per document: after the first, the parser's reading of the lines that follow is a guess,
 * and its further errors mostly repeat the first.
 */
import { Parser, type LineCounter, type YAMLError } from 'yaml';

export interface SyntaxProblem {
  /** 1-based. */
  readonly line: number;
  readonly message: string;
}

/** The most telling of a document's syntax errors, or undefined when it has none. */
export function explainSyntax(text: string, errors: readonly YAMLError[], lines: LineCounter): SyntaxProblem | undefined {
  if (errors.length === 0) return undefined;
  const context = new Context(text, lines);
  const explained = errors.map((e) => context.explain(e));
  // The mistake comes first: an unclosed quote is found where the file ends, but is reported where it starts.
  const first = explained.reduce((best, p) => (p.offset < best.offset ? p : best));
  return { line: first.line, message: first.message };
}

/** Where a mistake starts (to find the first), its line, and what is wrong. */
interface Explained extends SyntaxProblem {
  readonly offset: number;
}

/**
 * `replicas 3` or `replicas:3`, text that reads as one value but was meant as a key and its value:
 * `replicas: 3`. Undefined for text that does not look so.
 */
export function keyWithoutColon(text: string): string | undefined {
  const m = LOOKS_LIKE_KEY.exec(text.trim().replace(/\s+#.*$/, ''));
  return m ? `${m[1]}: ${m[2]}` : undefined;
}

interface Token {
  readonly type: string;
  readonly offset: number;
  readonly source?: string;
  readonly start?: { readonly source?: string };
  readonly end?: readonly { readonly source?: string }[];
}

const KEY_LINE = /^(?:"[^"]*"|'[^']*'|[^\s"'#\-[{][^\s:#]*)\s*:(?:\s|$)/;
/** A field name, then a space or a colon without one, then a value. */
const LOOKS_LIKE_KEY = /^([A-Za-z_][\w./-]*)(?::(?=\S)|[ \t]+)(\S.*)$/;

class Context {
  private tokens?: Token[];
  private readonly textLines: string[];

  constructor(
    private readonly text: string,
    private readonly lines: LineCounter,
  ) {
    this.textLines = text.split('\n').map((l) => l.replace(/\r$/, ''));
  }

  explain(error: YAMLError): Explained {
    const offset = error.pos[0];
    const { line, col } = this.lines.linePos(offset);
    const message = error.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
    const problem = (at: number, words: string) => ({ offset, line: at, message: `not valid YAML: ${words}` });
    const quote = /^Missing closing (["'])quote/.exec(message);
    if (quote) return this.unclosedQuote(quote[1], offset, line);
    const flow = /^Flow (sequence|map)\b.* end with a ([\]}])/.exec(message);
    if (flow) return this.unclosedFlow(flow[1] === 'sequence' ? '[' : '{', flow[2], offset, line);
    if (error.code === 'TAB_AS_INDENT')
      return problem(line, 'a tab is used for indentation here: YAML indents with spaces only; replace the tab with spaces');
    if (error.code === 'BAD_DQ_ESCAPE') {
      const raw = /Invalid escape sequence (\S+)/.exec(message)?.[1] ?? 'this';
      return problem(
        line,
        `${raw} is no escape in a double-quoted ("...") value: write \\\\ for a backslash, or quote the value with ' instead`,
      );
    }
    const start = error.code === 'BAD_SCALAR_START' && /(?:indicator|reserved) (?:character )?(\S)$/.exec(message);
    if (start) return problem(line, `a value cannot start with ${start[1]} unquoted: quote it ("${start[1]}...")`);
    const header = /^Block scalar header includes extra characters: ([|>])/.exec(message);
    if (header)
      return problem(
        line,
        `a value cannot start with ${header[1]} and go on on its line (${header[1]} starts a block of the lines below it): quote the value`,
      );
    const closer = /^Unexpected flow-(seq|map)-end/.exec(message);
    if (closer)
      return problem(line, `a ${closer[1] === 'seq' ? ']' : '}'} that closes nothing: remove it, or quote the value it is part of`);
    if (/^Unexpected \S+ at node end/.test(message)) {
      return problem(
        line,
        'something follows the end of a value on this line: a quoted value ends at its closing quote; remove what follows it, or quote the whole value',
      );
    }
    const mix = this.listMix(line);
    if (mix) return problem(line, mix);
    const keyError = /^(Implicit map keys need to be followed by map values|Implicit keys need to be on a single line)/.test(message);
    // Found in a value, not at the start of its line: `a: b: c`, or the line after it indented too deep.
    if (/^Nested mappings are not allowed in compact mappings/.test(message) || (keyError && col - 1 > this.indentOf(line))) {
      return { offset, ...this.nestedMapping(offset, line, message) };
    }
    if (keyError) {
      const fix = keyWithoutColon(this.textLines[line - 1] ?? '');
      if (fix) return problem(line, `a key needs a colon and a space after it: write ${JSON.stringify(fix)}`);
    }
    if (/must start at the same column|Sequence item without - indicator/.test(message)) {
      const indent = this.indentOf(line);
      return problem(
        line,
        `this line is indented by ${indent} space${indent === 1 ? '' : 's'}, unlike the lines it belongs with: the keys of one mapping, and the "-" of the items of one list, start at the same column`,
      );
    }
    return problem(line, message);
  }

  /** The quoted value that is never closed: the last one opened with `q` before `offset`. */
  private unclosedQuote(q: string, offset: number, line: number): Explained {
    const token = this.lastOpen(
      (t) => t.type === (q === '"' ? 'double-quoted-scalar' : 'single-quoted-scalar') && !closedQuote(t.source ?? '', q),
      offset,
    );
    const start = token ? this.lines.linePos(token.offset).line : line;
    return {
      offset: token?.offset ?? offset,
      line: start,
      message: `not valid YAML: the quote ${q} that starts on line ${start} is never closed: end the value with ${q} on its line, or write it without quotes`,
    };
  }

  /** The `[` or `{` never closed, or a closed one whose lines are not indented enough. */
  private unclosedFlow(open: string, close: string, offset: number, line: number): Explained {
    const what = open === '[' ? 'list' : 'mapping';
    const token = this.lastOpen(
      (t) => t.type === 'flow-collection' && t.start?.source === open && !(t.end ?? []).some((e) => e.source === close),
      offset,
    );
    if (token) {
      const start = this.lines.linePos(token.offset).line;
      return {
        offset: token.offset,
        line: start,
        message: `not valid YAML: the ${open} that starts on line ${start} is never closed: end the ${what} with ${close}`,
      };
    }
    return {
      offset,
      line,
      message: `not valid YAML: a ${what} in ${open} ${close} that goes on to more lines must indent them deeper than its key: indent this line, or write the ${what} on one line`,
    };
  }

  /** `a: b: c`, or a line indented under a key whose value is already written. */
  private nestedMapping(offset: number, line: number, message: string): SyntaxProblem {
    const rest = (this.textLines[line - 1] ?? '').slice(this.lines.linePos(offset).col - 1);
    if (/:(\s|$)/.test(rest)) {
      const value = rest.replace(/\s+#.*$/, '').trim();
      return {
        line,
        message: `not valid YAML: the value ${JSON.stringify(value)} holds ": ", which starts a mapping here: quote the value ('${value}') if the colon is part of it`,
      };
    }
    const next = this.nextContentLine(line);
    if (next !== undefined) {
      return {
        line: next,
        message: `not valid YAML: this line is indented deeper than the key on line ${line}, whose value is already written after it: line it up with the keys beside it`,
      };
    }
    return { line, message: `not valid YAML: ${message}` };
  }

  /** A list item among keys, or a key among the items of a list. */
  private listMix(line: number): string | undefined {
    const text = this.textLines[line - 1] ?? '';
    const indent = this.indentOf(line);
    const body = text.slice(indent);
    const above = this.previousContentLine(line, indent);
    if (above === undefined || this.indentOf(above) !== indent) return undefined;
    const aboveBody = this.textLines[above - 1].slice(indent);
    const isItem = (s: string) => /^-(\s|$)/.test(s);
    if (isItem(body) && !isItem(aboveBody) && KEY_LINE.test(aboveBody)) {
      return `a list item ("- ") among the keys of a mapping (line ${above} holds a key at the same column): one level holds either keys or list items, not both; remove the "-", or put the list under a key of its own`;
    }
    if (!isItem(body) && isItem(aboveBody) && KEY_LINE.test(body)) {
      const inItem = indent + (/^-\s*/.exec(aboveBody)?.[0].length ?? 2);
      return (
        `a key at the column of the "-" that starts a list item on line ${above}: to put it in that item, indent it by ${inItem} spaces, ` +
        'after the "- "; to end the list, indent it like the key that holds the list'
      );
    }
    return undefined;
  }

  private indentOf(line: number): number {
    return /^ */.exec(this.textLines[line - 1] ?? '')![0].length;
  }

  private isContent(line: number): boolean {
    const t = (this.textLines[line - 1] ?? '').trim();
    return t !== '' && !t.startsWith('#');
  }

  /** The nearest line above `line` with something on it, indented at most `indent`. */
  private previousContentLine(line: number, indent: number): number | undefined {
    for (let l = line - 1; l >= 1; l--) {
      if (/^(---|\.\.\.)(\s|$)/.test(this.textLines[l - 1])) return undefined;
      if (this.isContent(l) && this.indentOf(l) <= indent) return l;
    }
    return undefined;
  }

  private nextContentLine(line: number): number | undefined {
    for (let l = line + 1; l <= this.textLines.length; l++)
      if (this.isContent(l)) return this.indentOf(l) > this.indentOf(line) ? l : undefined;
    return undefined;
  }

  /** The last token before `offset` (inclusive) that `match` takes. */
  private lastOpen(match: (t: Token) => boolean, offset: number): Token | undefined {
    this.tokens ??= collectTokens([...new Parser().parse(this.text)]);
    let found: Token | undefined;
    for (const t of this.tokens) if (t.offset <= offset && match(t) && (!found || t.offset > found.offset)) found = t;
    return found;
  }
}

/** Whether a quoted scalar's source ends with its closing quote (`''` and `\"` are escapes). */
function closedQuote(source: string, q: string): boolean {
  return q === '"' ? /^"(?:[^"\\]|\\[\s\S])*"$/.test(source) : /^'(?:[^']|'')*'$/.test(source);
}

/** Every token of the parser's syntax tree that has a type and an offset. */
function collectTokens(roots: unknown[]): Token[] {
  const out: Token[] = [];
  const stack = [...roots];
  while (stack.length > 0) {
    const node = stack.pop();
    if (Array.isArray(node)) stack.push(...node);
    else if (typeof node === 'object' && node !== null) {
      const t = node as Token;
      if (typeof t.type === 'string' && typeof t.offset === 'number') out.push(t);
      for (const v of Object.values(node)) if (typeof v === 'object' && v !== null) stack.push(v);
    }
  }
  return out;
}
