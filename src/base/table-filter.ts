/**
 * The table filter the TiDB tools share (BR's `--filter`), read to tell which tables a set of rules
 * selects. A rule is `[!]schema.table`; each part a plain name, wildcards (`*`, `?`, `[a-z]`, `[!a-z]`),
 * a name in `"…"` or `` `…` `` (a doubled quote is a quote), a character after `\`, or a regular
 * expression in `/…/`. The last rule that matches a table decides: it is selected unless that rule
 * starts with `!`; a table no rule matches is not. `#` starts a comment rule; `@file` (rules from a
 * file) cannot be read here. Names compare without regard to case, as BR compares them by default.
 */

/** A table by its schema and name. */
export interface TableName {
  readonly schema: string;
  readonly name: string;
}

interface Rule {
  readonly exclude: boolean;
  readonly schema: RegExp;
  readonly table: RegExp;
}

/** Rules read, or the first that cannot be and why. */
export type TableFilter = { readonly matches: (t: TableName) => boolean } | { readonly problem: string };

export function parseTableFilter(rules: readonly string[]): TableFilter {
  const parsed: Rule[] = [];
  for (const raw of rules) {
    const text = raw.trim();
    if (text === '' || text.startsWith('#')) continue;
    const rule = parseRule(text);
    if (typeof rule === 'string') return { problem: `the rule ${JSON.stringify(raw)} ${rule}` };
    parsed.push(rule);
  }
  return {
    matches: (t) => {
      for (let i = parsed.length - 1; i >= 0; i--) {
        const r = parsed[i];
        if (r.schema.test(t.schema) && r.table.test(t.name)) return !r.exclude;
      }
      return false;
    },
  };
}

function parseRule(text: string): Rule | string {
  if (text.startsWith('@')) return 'reads rules from a file, which cannot be read here';
  const exclude = text.startsWith('!');
  const body = exclude ? text.slice(1) : text;
  const schema = readPattern(body, 0, true);
  if (typeof schema === 'string') return schema;
  if (body[schema.end] !== '.') return 'has no dot between a schema and a table pattern';
  const table = readPattern(body, schema.end + 1, false);
  if (typeof table === 'string') return table;
  if (table.end !== body.length) return `has ${JSON.stringify(body.slice(table.end))} after its table pattern`;
  return { exclude, schema: schema.regex, table: table.regex };
}

/** One pattern from `at`, up to the dot (for a schema) or the end: as an anchored, case-blind RegExp. */
function readPattern(text: string, at: number, schema: boolean): { regex: RegExp; end: number } | string {
  if (text[at] === '/') {
    const close = text.indexOf('/', at + 1);
    if (close < 0) return 'has a regular expression that is never closed';
    try {
      // Unanchored, as a regular expression pattern is matched: it selects more, never less.
      return { regex: new RegExp(text.slice(at + 1, close), 'iu'), end: close + 1 };
    } catch (err) {
      return `has a regular expression JavaScript cannot read (${(err as Error).message})`;
    }
  }
  let source = '';
  let i = at;
  while (i < text.length && !(schema && text[i] === '.')) {
    const c = text[i];
    if (c === '"' || c === '`') {
      let j = i + 1;
      let name = '';
      for (;;) {
        if (j >= text.length) return 'has a quoted name that is never closed';
        if (text[j] === c) {
          if (text[j + 1] === c) {
            name += c;
            j += 2;
            continue;
          }
          break;
        }
        name += text[j++];
      }
      source += escapeRegex(name);
      i = j + 1;
    } else if (c === '\\') {
      if (i + 1 >= text.length) return 'ends with a backslash';
      source += escapeRegex(text[i + 1]);
      i += 2;
    } else if (c === '*') {
      source += '.*';
      i++;
    } else if (c === '?') {
      source += '.';
      i++;
    } else if (c === '[') {
      const close = text.indexOf(']', i + 2);
      if (close < 0) return 'has a character class that is never closed';
      const inner = text.slice(i + 1, close);
      source += inner.startsWith('!') ? `[^${escapeClass(inner.slice(1))}]` : `[${escapeClass(inner)}]`;
      i = close + 1;
    } else {
      source += escapeRegex(c);
      i++;
    }
  }
  if (source === '') return 'has an empty pattern';
  return { regex: new RegExp(`^(?:${source})$`, 'iu'), end: i };
}

const escapeRegex = (s: string): string => s.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');
/** A class's inside, its ranges kept: only what would end or change the class is escaped. */
const escapeClass = (s: string): string => s.replace(/[\\\]^[]/g, '\\$&');
