/**
 * CREATE / ALTER / DROP RESOURCE GROUP as TiDB's parser reads them, per release, with TiDB's syntax
 * errors (1064). The grammar is pingcap/tidb pkg/parser/parser.y (`ResourceGroupOptionList`,
 * `DirectResourceGroupOption`, `DirectResourceGroupRunawayOption`, `WatchDurationOption`,
 * `ResourceGroupRunawayActionOption`, `DirectResourceGroupBackgroundOption`); which release parses
 * which alternative is in `RgGrammar` (sources beside each flag). Errors are worded as the lexer's
 * `Errorf` (pkg/parser/lexer.go: `line %d column %d near "%s"%s %s`) behind ErrParse's prefix.
 * Also: Go's time.ParseDuration and Duration.String for the millisecond values TiDB keeps.
 */

/** Which alternatives a release's parser has. */
export interface RgGrammar {
  /** `QUERY_LIMIT = (EXEC_ELAPSED=…, ACTION=…, WATCH=…)`: v7.2.0 (runaway queries, docs release-7.2.0). */
  readonly queryLimit: boolean;
  /** `WATCH … PLAN` and an optional `DURATION` (or `DURATION = UNLIMITED`): v7.3 on (v7.2 docs: DURATION required, EXACT|SIMILAR). */
  readonly watchPlan: boolean;
  /** `BURSTABLE [=] TRUE|FALSE|n`: v7.2 … v8.5 (docs v7.2 to v8.5 synopsis; gone from parser.y on master). */
  readonly burstableBool: boolean;
  /** `BURSTABLE [=] MODERATED|UNLIMITED|OFF` and `RU_PER_SEC = UNLIMITED`: parser.y on master, after v8.5. */
  readonly burstableModes: boolean;
  /** `PROCESSED_KEYS`, `RU` rules and `ACTION = SWITCH_GROUP(g)`: v8.4.0 (docs runaway queries page). */
  readonly runawayV84: boolean;
  /** `BACKGROUND = (TASK_TYPES=…, UTILIZATION_LIMIT=n)`: v7.4 on (docs v7.5 synopsis has it, v7.1 does not). */
  readonly background: boolean;
  /** `DEFAULT` (unquoted) as a group name: docs v7.5 synopsis `ResourceGroupName ::= Identifier | "DEFAULT"`; v7.1 Identifier only. */
  readonly defaultName: boolean;
}

export interface Runaway {
  execElapsedMs: number;
  processedKeys: number;
  ru: number;
  /** DRYRUN, COOLDOWN, KILL or SWITCH_GROUP; undefined when not given. */
  action?: string;
  switchGroup?: string;
  /** durationMs 0: unlimited. */
  watch?: { type: string; durationMs: number };
}

export interface Background {
  taskTypes: string[];
  utilizationLimit: number;
}

/** One DirectResourceGroupOption; `key` is its ast `Tp` (ast.CheckAppend refuses the same Tp twice). */
export type RgOption =
  | { readonly key: 'ru'; readonly value: number | 'UNLIMITED' }
  | { readonly key: 'priority'; readonly value: number }
  | { readonly key: 'burstable'; readonly burstLimit: number }
  | { readonly key: 'queryLimit'; readonly runaway?: Runaway }
  | { readonly key: 'background'; readonly background: Background };

export type RgStatement =
  | { readonly kind: 'create'; readonly ifNotExists: boolean; readonly name: string; readonly options: RgOption[] }
  | { readonly kind: 'alter'; readonly ifExists: boolean; readonly name: string; readonly options: RgOption[] }
  | { readonly kind: 'drop'; readonly ifExists: boolean; readonly name: string };

/** A statement TiDB's parser refuses: error 1064, SQLSTATE 42000. */
export class RgSyntaxError extends Error {}

interface Tok {
  readonly kind: 'word' | 'num' | 'str' | 'punct' | 'eof';
  readonly text: string;
  readonly upper: string;
  readonly quoted: boolean;
  readonly start: number;
  readonly end: number;
}

/** ErrParse's prefix (pkg/util/dbterror or pkg/parser: `syntaxErrorPrefix`). */
const SYNTAX_PREFIX =
  'You have an error in your SQL syntax; check the manual that corresponds to your TiDB version for the right syntax to use';

/** Reserved words that cannot name a group unquoted (a subset of parser.y's ReservedKeyword list). */
const RESERVED = new Set(
  'ADD ALL ALTER AND AS ASC BY CREATE DEFAULT DELETE DESC DROP EXISTS FALSE FOR FROM GROUP IF IN INDEX INSERT INTO IS KEY KILL LIKE LIMIT NOT NULL ON OR ORDER SELECT SET TABLE TRUE UPDATE USE WHERE WITH'.split(
    ' ',
  ),
);

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', b: '\b', '0': '\0', Z: '\x1a' };

function tokenize(sql: string): Tok[] {
  const toks: Tok[] = [];
  const push = (kind: Tok['kind'], text: string, start: number, end: number, quoted = false) =>
    toks.push({ kind, text, upper: text.toUpperCase(), quoted, start, end });
  let i = 0;
  while (i < sql.length) {
    const c = sql[i];
    if (/\s/.test(c)) i++;
    else if (sql.startsWith('/*', i)) i = sql.indexOf('*/', i + 2) < 0 ? sql.length : sql.indexOf('*/', i + 2) + 2;
    else if (sql.startsWith('-- ', i) || c === '#') i = sql.indexOf('\n', i) < 0 ? sql.length : sql.indexOf('\n', i);
    else if (c === "'" || c === '"' || c === '`') {
      let text = '';
      let j = i + 1;
      for (; j < sql.length; j++) {
        if (sql[j] === c && sql[j + 1] === c) text += sql[++j];
        else if (sql[j] === c) break;
        else if (sql[j] === '\\' && c !== '`') text += ESCAPES[sql[++j]] ?? sql[j];
        else text += sql[j];
      }
      if (j >= sql.length) throw syntaxError(sql, i, sql.length);
      push(c === '`' ? 'word' : 'str', text, i, j + 1, c === '`');
      i = j + 1;
    } else if (/[0-9]/.test(c)) {
      const m = /^[0-9]+(\.[0-9]+)?(?![A-Za-z_$])/.exec(sql.slice(i)) ?? /^[0-9A-Za-z_$]+/.exec(sql.slice(i))!;
      push(/^[0-9.]+$/.test(m[0]) ? 'num' : 'word', m[0], i, i + m[0].length);
      i += m[0].length;
    } else if (/[A-Za-z_$@]/.test(c)) {
      const m = /^@{0,2}[A-Za-z0-9_$.]*/.exec(sql.slice(i))!;
      push('word', m[0], i, i + m[0].length);
      i += m[0].length;
    } else {
      push('punct', c, i, i + 1);
      i++;
    }
  }
  push('eof', '', sql.length, sql.length);
  return toks;
}

/** TiDB's 1064: the line and column just past the offending token, and the text from its start. */
function syntaxError(sql: string, start: number, end: number, extra = ''): RgSyntaxError {
  const before = sql.slice(0, end);
  const line = before.split('\n').length;
  const col = end - (before.lastIndexOf('\n') + 1);
  return new RgSyntaxError(`${SYNTAX_PREFIX} line ${line} column ${col} near "${sql.slice(start)}"${extra} `);
}

/** Go's time.ParseDuration, to whole milliseconds (Duration.Milliseconds truncates); throws Go's error text. */
export function parseGoDuration(s: string): number {
  const quoted = JSON.stringify(s);
  const units: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, μs: 1e-3, ms: 1, s: 1e3, m: 6e4, h: 3.6e6 };
  let rest = s;
  let sign = 1;
  if (rest[0] === '-' || rest[0] === '+') {
    sign = rest[0] === '-' ? -1 : 1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') throw new Error(`time: invalid duration ${quoted}`);
  let total = 0;
  while (rest !== '') {
    const num = /^([0-9]*)(\.[0-9]*)?/.exec(rest)!;
    if (num[0] === '' || num[0] === '.') throw new Error(`time: invalid duration ${quoted}`);
    rest = rest.slice(num[0].length);
    const unit = /^[^0-9.]*/.exec(rest)![0];
    if (unit === '') throw new Error(`time: missing unit in duration ${quoted}`);
    if (!(unit in units)) throw new Error(`time: unknown unit ${JSON.stringify(unit)} in duration ${quoted}`);
    total += Number(`0${num[0]}`) * units[unit];
    rest = rest.slice(unit.length);
  }
  return sign * Math.trunc(total + 1e-9);
}

/** Go's Duration.String for a whole number of milliseconds: `0s`, `500ms`, `15s`, `1m0s`, `1h0m0s`, `1.5s`. */
export function goDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (ms < 0) return `-${goDuration(-ms)}`;
  if (ms < 1000) return `${ms}ms`;
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = (ms % 60_000) / 1000;
  return `${h ? `${h}h` : ''}${h || m ? `${m}m` : ''}${s}s`;
}

class Parser {
  private i = 0;
  private readonly toks: Tok[];

  constructor(
    private readonly sql: string,
    private readonly g: RgGrammar,
  ) {
    this.toks = tokenize(sql);
  }

  peek(k = 0): Tok {
    return this.toks[Math.min(this.i + k, this.toks.length - 1)];
  }

  fail(tok = this.peek(), extra = ''): never {
    throw syntaxError(this.sql, tok.start, tok.end, extra);
  }

  /** An error raised in a grammar action: the lexer stands on the lookahead token. */
  failAction(extra: string): never {
    this.fail(this.peek(), extra);
  }

  is(word: string, k = 0): boolean {
    const t = this.peek(k);
    return t.kind === 'word' && !t.quoted && t.upper === word;
  }

  isPunct(c: string): boolean {
    return this.peek().kind === 'punct' && this.peek().text === c;
  }

  word(...words: string[]): string {
    const t = this.peek();
    if (t.kind !== 'word' || t.quoted || !words.includes(t.upper)) this.fail();
    this.i++;
    return t.upper;
  }

  punct(c: string): void {
    if (!this.isPunct(c)) this.fail();
    this.i++;
  }

  eqOpt(): void {
    if (this.isPunct('=')) this.i++;
  }

  int(): number {
    const t = this.peek();
    if (t.kind !== 'num' || !/^[0-9]+$/.test(t.text)) this.fail();
    this.i++;
    return Number(t.text);
  }

  str(): string {
    const t = this.peek();
    if (t.kind !== 'str') this.fail();
    this.i++;
    return t.text;
  }

  name(): string {
    const t = this.peek();
    if (t.kind === 'word' && (t.quoted || (!RESERVED.has(t.upper) && !t.text.startsWith('@')))) {
      this.i++;
      return t.text;
    }
    if (this.g.defaultName && this.is('DEFAULT')) {
      this.i++;
      return t.text;
    }
    this.fail();
  }

  /** `[;]` then the end. */
  end(): void {
    if (this.isPunct(';')) this.i++;
    if (this.peek().kind !== 'eof') this.fail();
  }

  statement(): RgStatement | undefined {
    if (!['CREATE', 'ALTER', 'DROP'].some((w) => this.is(w)) || !this.is('RESOURCE', 1) || !this.is('GROUP', 2)) return undefined;
    const verb = this.word('CREATE', 'ALTER', 'DROP');
    this.i += 2;
    if (verb === 'CREATE') {
      const ifNotExists = this.is('IF') ? (this.word('IF'), this.word('NOT'), this.word('EXISTS'), true) : false;
      const name = this.name();
      return { kind: 'create', ifNotExists, name, options: this.options() };
    }
    const ifExists = this.is('IF') ? (this.word('IF'), this.word('EXISTS'), true) : false;
    const name = this.name();
    if (verb === 'ALTER') return { kind: 'alter', ifExists, name, options: this.options() };
    this.end();
    return { kind: 'drop', ifExists, name };
  }

  /** ResourceGroupOptionList: one or more options, spaces or commas between, each Tp once. */
  options(): RgOption[] {
    const list = [this.option()];
    while (this.peek().kind !== 'eof' && !this.isPunct(';')) {
      if (this.isPunct(',')) this.i++;
      const o = this.option();
      if (list.some((p) => p.key === o.key)) this.failAction('Dupliated options specified');
      list.push(o);
    }
    this.end();
    return list;
  }

  option(): RgOption {
    const g = this.g;
    if (this.is('RU_PER_SEC')) {
      this.i++;
      this.eqOpt();
      if (g.burstableModes && this.is('UNLIMITED')) return (this.i++, { key: 'ru', value: 'UNLIMITED' });
      return { key: 'ru', value: this.int() };
    }
    if (this.is('PRIORITY')) {
      this.i++;
      this.eqOpt();
      return { key: 'priority', value: { LOW: 1, MEDIUM: 8, HIGH: 16 }[this.word('LOW', 'MEDIUM', 'HIGH')]! };
    }
    if (this.is('BURSTABLE')) {
      this.i++;
      // Bare BURSTABLE: -1 (burst without limit) up to v8.5; MODERATED (-2) on master (pkg/ddl/resource_group.go).
      const bare = { key: 'burstable', burstLimit: g.burstableModes ? -2 : -1 } as const;
      const eq = this.isPunct('=');
      if (g.burstableModes && (eq || this.is('MODERATED') || this.is('UNLIMITED') || this.is('OFF'))) {
        this.eqOpt();
        return { key: 'burstable', burstLimit: { MODERATED: -2, UNLIMITED: -1, OFF: 0 }[this.word('MODERATED', 'UNLIMITED', 'OFF')]! };
      }
      if (g.burstableBool && (eq || this.is('TRUE') || this.is('FALSE') || this.peek().kind === 'num')) {
        this.eqOpt();
        // Boolean: TRUE, FALSE or a number (non-zero: true).
        const on = this.peek().kind === 'num' ? this.int() !== 0 : this.word('TRUE', 'FALSE') === 'TRUE';
        return { key: 'burstable', burstLimit: on ? -1 : 0 };
      }
      return bare;
    }
    if (g.queryLimit && this.is('QUERY_LIMIT')) {
      this.i++;
      this.eqOpt();
      if (this.is('NULL')) return (this.i++, { key: 'queryLimit' });
      this.punct('(');
      if (this.isPunct(')')) return (this.i++, { key: 'queryLimit' });
      return { key: 'queryLimit', runaway: this.runaway() };
    }
    if (g.background && this.is('BACKGROUND')) {
      this.i++;
      this.eqOpt();
      const background: Background = { taskTypes: [], utilizationLimit: 0 };
      if (this.is('NULL')) return (this.i++, { key: 'background', background });
      this.punct('(');
      const seen = new Set<string>();
      while (!this.isPunct(')')) {
        if (seen.size > 0 && this.isPunct(',')) this.i++;
        const w = this.word('TASK_TYPES', 'UTILIZATION_LIMIT');
        this.eqOpt();
        if (w === 'TASK_TYPES')
          background.taskTypes = this.str()
            .split(',')
            .map((s) => s.trim().toLowerCase())
            .filter(Boolean);
        else background.utilizationLimit = this.int();
        if (seen.has(w)) this.failAction('Dupliated background options specified');
        seen.add(w);
      }
      this.i++;
      return { key: 'background', background };
    }
    this.fail();
  }

  /** ResourceGroupRunawayOptionList up to and including ')'. */
  runaway(): Runaway {
    const r: Runaway = { execElapsedMs: 0, processedKeys: 0, ru: 0 };
    const seen = new Set<string>();
    while (!this.isPunct(')')) {
      if (seen.size > 0 && this.isPunct(',')) this.i++;
      const v84 = this.g.runawayV84;
      const w = this.word('EXEC_ELAPSED', 'ACTION', 'WATCH', ...(v84 ? ['PROCESSED_KEYS', 'RU'] : []));
      this.eqOpt();
      if (w === 'EXEC_ELAPSED') {
        const text = this.str();
        try {
          r.execElapsedMs = parseGoDuration(text);
        } catch (e) {
          this.failAction(`The EXEC_ELAPSED option is not a valid duration: ${(e as Error).message}`);
        }
      } else if (w === 'PROCESSED_KEYS') r.processedKeys = this.int();
      else if (w === 'RU') r.ru = this.int();
      else if (w === 'ACTION') {
        r.action = this.word('DRYRUN', 'COOLDOWN', 'KILL', ...(v84 ? ['SWITCH_GROUP'] : []));
        if (r.action === 'SWITCH_GROUP') {
          this.punct('(');
          r.switchGroup = this.name().toLowerCase();
          this.punct(')');
        }
      } else {
        const type = this.word('EXACT', 'SIMILAR', ...(this.g.watchPlan ? ['PLAN'] : []));
        let text = '';
        if (!this.g.watchPlan || this.is('DURATION')) {
          this.word('DURATION');
          this.eqOpt();
          if (this.g.watchPlan && this.is('UNLIMITED')) this.i++;
          else text = this.str().toLowerCase();
        }
        let durationMs = 0;
        try {
          if (text !== '' && text !== 'unlimited') durationMs = parseGoDuration(text);
        } catch (e) {
          this.failAction(`The WATCH DURATION option is not a valid duration: ${(e as Error).message}`);
        }
        r.watch = { type, durationMs };
      }
      // ast.CheckRunawayAppend: the same rule, ACTION or WATCH twice.
      if (seen.has(w)) this.failAction('Dupliated runaway options specified');
      seen.add(w);
    }
    this.i++;
    return r;
  }
}

/** The resource-group statement `sql` is, per `grammar`; undefined for any other statement; throws RgSyntaxError. */
export function parseResourceGroupStatement(sql: string, grammar: RgGrammar): RgStatement | undefined {
  return new Parser(sql, grammar).statement();
}
