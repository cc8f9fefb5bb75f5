/**
 * injectMatcher / hasMatcherEverywhere (src/base/promql.ts): hand-written expressions for each part of
 * the grammar (selectors, functions, aggregations and their modifiers, binary operators and their
 * modifiers, keywords that are also metric names, offset and @, numbers, durations, strings,
 * comments, Grafana's variables), the errors, the escaping of values, and property-style round trips
 * on expressions generated from the grammar together with their expected injected text.
 *
 * The expressions are written here; none comes from another project's files. The seed is fixed,
 * so a failure repeats; `PROMQL_RUNS=N` and `PROMQL_SEED=S` explore further.
 */
import fc from 'fast-check';
import { hasMatcherEverywhere, injectMatcher } from '../../../src/base/promql';

const RUNS = Number(process.env.PROMQL_RUNS ?? 400);
const SEED = Number(process.env.PROMQL_SEED ?? 29);

/** Whether `output` is `input` with only `{m}`, `,m` or `m` inserted, and nothing else changed. */
function insertedOnly(input: string, output: string, m: string): boolean {
  let i = 0;
  let o = 0;
  while (o < output.length) {
    if (i < input.length && input[i] === output[o]) {
      i++;
      o++;
      continue;
    }
    const insert = [`{${m}}`, `,${m}`, m].find((x) => output.startsWith(x, o));
    if (!insert) return false;
    o += insert.length;
  }
  return i === input.length;
}

const L = 'tidb_cluster';
const V = 'x';
const M = 'tidb_cluster="x"';
const inject = (e: string) => injectMatcher(e, L, V);
const everywhere = (e: string) => hasMatcherEverywhere(e, L, V);

/** [expression, expected result] pairs: each shows one rule of the grammar. */
const CASES: [string, string, string][] = [
  // Selectors.
  ['bare metric name', 'up', `up{${M}}`],
  ['braces after a name', 'foo{a="b"}', `foo{a="b",${M}}`],
  ['range selector', 'rate(foo{a="b"}[1m])', `rate(foo{a="b",${M}}[1m])`],
  ['bare name with a range', 'rate(foo[1m])', `rate(foo{${M}}[1m])`],
  ['braces only', '{__name__=~"a.*"}', `{__name__=~"a.*",${M}}`],
  ['empty braces', 'foo{}', `foo{${M}}`],
  ['trailing comma', 'foo{a="b",}', `foo{a="b",${M}}`],
  ['trailing comma and spaces', 'foo{ a="b" , }', `foo{ a="b" ,${M} }`],
  ['spaces kept', 'foo{ a = "b" }', `foo{ a = "b",${M} }`],
  ['space between name and braces', 'foo {a="b"}', `foo {a="b",${M}}`],
  ['comment between name and braces', 'foo # c\n{a="b"}', `foo # c\n{a="b",${M}}`],
  ['comment inside braces', 'foo{a="b" # last\n}', `foo{a="b",${M} # last\n}`],
  ['comment after a comma', 'foo{a="b", # more\n}', `foo{a="b",${M} # more\n}`],
  ['only a comment in braces', 'foo{ # none\n}', `foo{${M} # none\n}`],
  ['metric name with colons', 'job:tidb_query:rate5m', `job:tidb_query:rate5m{${M}}`],
  ['name starting with a colon', ':foo:bar', `:foo:bar{${M}}`],
  ['every match operator', 'foo{a="1",b!="2",c=~"3",d!~"4"}', `foo{a="1",b!="2",c=~"3",d!~"4",${M}}`],
  ['single and back quotes', "foo{a='b',c=`d`}", `foo{a='b',c=\`d\`,${M}}`],
  ['braces in values', 'foo{a="}{,", b=\'"}\'}', `foo{a="}{,", b='"}',${M}}`],
  ['escaped quote in value', 'foo{a="x\\"}"}', `foo{a="x\\"}",${M}}`],
  ['keyword as label name', 'foo{by="1",offset="2",on="3"}', `foo{by="1",offset="2",on="3",${M}}`],
  // Existing matchers of the label.
  ['existing equality', 'foo{tidb_cluster="y"}', `foo{${M}}`],
  ['existing regex', 'foo{a="b",tidb_cluster=~"$tidb_cluster"}', `foo{a="b",${M}}`],
  ['existing negative', 'foo{tidb_cluster!="y", a="b"}', `foo{${M}, a="b"}`],
  ['existing, several', 'foo{tidb_cluster=~"a", b="c", tidb_cluster!="z"}', `foo{${M}, b="c"}`],
  ['existing, single quoted', "foo{tidb_cluster='y'}", `foo{${M}}`],
  ['label with the name as a prefix', 'foo{tidb_cluster_id="1"}', `foo{tidb_cluster_id="1",${M}}`],
  // Subqueries, offset and @.
  ['subquery', 'max_over_time(rate(x[1m])[5m:1m])', `max_over_time(rate(x{${M}}[1m])[5m:1m])`],
  ['subquery without step', 'max_over_time(x[5m:])', `max_over_time(x{${M}}[5m:])`],
  ['subquery of a paren', 'min_over_time((a - b)[1h:5m])', `min_over_time((a{${M}} - b{${M}})[1h:5m])`],
  ['spaces in a range', 'rate(foo[ 5m ])', `rate(foo{${M}}[ 5m ])`],
  ['offset', 'foo offset 5m', `foo{${M}} offset 5m`],
  ['negative offset', 'foo offset -1h30m', `foo{${M}} offset -1h30m`],
  ['range then offset', 'rate(foo[5m] offset 1d)', `rate(foo{${M}}[5m] offset 1d)`],
  ['@ start()', 'foo @ start()', `foo{${M}} @ start()`],
  ['@ end() and offset', 'foo{a="b"} @ end() offset 5m', `foo{a="b",${M}} @ end() offset 5m`],
  ['@ a timestamp', 'rate(foo[5m] @ 1609746000)', `rate(foo{${M}}[5m] @ 1609746000)`],
  ['OFFSET in capitals', 'foo OFFSET 5m', `foo{${M}} OFFSET 5m`],
  // Functions.
  ['function of a function', 'abs(ceil(foo))', `abs(ceil(foo{${M}}))`],
  ['function without arguments', 'time() - process_start_time_seconds', `time() - process_start_time_seconds{${M}}`],
  ['vector(1)', 'vector(1)', 'vector(1)'],
  ['space before the call parenthesis', 'rate (foo[5m])', `rate (foo{${M}}[5m])`],
  [
    'histogram_quantile',
    'histogram_quantile(0.99, sum(rate(d_bucket[5m])) by (le))',
    `histogram_quantile(0.99, sum(rate(d_bucket{${M}}[5m])) by (le))`,
  ],
  ['label_replace strings', 'label_replace(up, "a", "$1", "b", "(.*)")', `label_replace(up{${M}}, "a", "$1", "b", "(.*)")`],
  ['label_join', 'label_join(up{job="j"}, "d", ",", "a", "b")', `label_join(up{job="j",${M}}, "d", ",", "a", "b")`],
  ['absent', 'absent(nonexistent{job="myjob"})', `absent(nonexistent{job="myjob",${M}})`],
  ['unknown function name still a call', 'my_func(foo)', `my_func(foo{${M}})`],
  // Aggregations.
  ['sum by prefix', 'sum by (instance) (rate(x[5m]))', `sum by (instance) (rate(x{${M}}[5m]))`],
  ['sum by postfix', 'sum(rate(x[5m])) by (instance, job)', `sum(rate(x{${M}}[5m])) by (instance, job)`],
  ['without', 'avg without (cpu) (node_cpu)', `avg without (cpu) (node_cpu{${M}})`],
  ['capitals', 'SUM(foo) BY (type, instance) > 0', `SUM(foo{${M}}) BY (type, instance) > 0`],
  [
    'keywords as grouping labels',
    'sum by (by, on, offset, bool, group_left, le) (foo)',
    `sum by (by, on, offset, bool, group_left, le) (foo{${M}})`,
  ],
  ['trailing comma in a label list', 'sum by (a,) (foo)', `sum by (a,) (foo{${M}})`],
  ['empty label list', 'sum without () (foo)', `sum without () (foo{${M}})`],
  ['topk', 'topk(5, foo)', `topk(5, foo{${M}})`],
  ['bottomk by', 'bottomk by (a) (3, foo)', `bottomk by (a) (3, foo{${M}})`],
  ['quantile', 'quantile(0.9, foo) without (a)', `quantile(0.9, foo{${M}}) without (a)`],
  ['count_values', 'count_values("x", foo)', `count_values("x", foo{${M}})`],
  ['group', 'group(foo) by (a)', `group(foo{${M}}) by (a)`],
  ['comment between aggregator and body', 'sum # c (\n(foo)', `sum # c (\n(foo{${M}})`],
  // Binary operators and their modifiers.
  ['arithmetic', 'a + b - c * d / e % f ^ g', `a{${M}} + b{${M}} - c{${M}} * d{${M}} / e{${M}} % f{${M}} ^ g{${M}}`],
  ['comparisons', 'a == b != c < d > e <= f >= g', `a{${M}} == b{${M}} != c{${M}} < d{${M}} > e{${M}} <= f{${M}} >= g{${M}}`],
  ['set operators', 'foo and bar or baz unless qux', `foo{${M}} and bar{${M}} or baz{${M}} unless qux{${M}}`],
  ['atan2', 'a atan2 b', `a{${M}} atan2 b{${M}}`],
  ['bool', 'a > bool 0', `a{${M}} > bool 0`],
  ['BOOL before a variable', 'a > BOOL $threshold', `a{${M}} > BOOL $threshold`],
  ['on and group_left', 'a * on(x) group_left(y) b', `a{${M}} * on(x) group_left(y) b{${M}}`],
  ['ignoring and group_right without labels', 'a / ignoring (x) group_right b', `a{${M}} / ignoring (x) group_right b{${M}}`],
  ['bool on group_left', 'a > bool on (a) group_left b', `a{${M}} > bool on (a) group_left b{${M}}`],
  ['group_left with an empty list', 'a * on() group_left() b', `a{${M}} * on() group_left() b{${M}}`],
  ['unless on()', 'foo unless on() bar', `foo{${M}} unless on() bar{${M}}`],
  ['unary minus', '-foo + -(bar)', `-foo{${M}} + -(bar{${M}})`],
  // Keywords that are metric names where an operand is expected (metric_identifier).
  ['sum as a metric', 'sum', `sum{${M}}`],
  ['sum as a metric with braces', 'sum{a="b"} + 1', `sum{a="b",${M}} + 1`],
  ['by as a metric', 'by', `by{${M}}`],
  ['by as a metric in a range', 'rate(by[5m])', `rate(by{${M}}[5m])`],
  ['without as a metric', 'foo + without', `foo{${M}} + without{${M}}`],
  ['offset as a metric', 'offset offset 5m', `offset{${M}} offset 5m`],
  ['and as a metric', 'foo and and', `foo{${M}} and and{${M}}`],
  ['or as a metric with braces', 'foo or or{a="b"}', `foo{${M}} or or{a="b",${M}}`],
  ['and as a metric in parentheses', '(and)', `(and{${M}})`],
  ['start and end as metrics', 'start + end', `start{${M}} + end{${M}}`],
  ['start as a metric in a subquery', 'max_over_time(start[5m:])', `max_over_time(start{${M}}[5m:])`],
  ['count_values as a metric', 'count_values[5m]', `count_values{${M}}[5m]`],
  ['keyword prefixes are names', 'bool_total + on_x + sum_y + offset2', `bool_total{${M}} + on_x{${M}} + sum_y{${M}} + offset2{${M}}`],
  ['selector braces after a set operator', 'foo and {a="b"}', `foo{${M}} and {a="b",${M}}`],
  // Numbers, durations, strings, comments.
  ['numbers', '1e3 + 0x1f + .5 + 1.5e-3 + 1E+3 + Inf + NaN + -inf', '1e3 + 0x1f + .5 + 1.5e-3 + 1E+3 + Inf + NaN + -inf'],
  ['numbers next to selectors', 'foo * 1e3 > 0x10', `foo{${M}} * 1e3 > 0x10`],
  ['a string expression', '"up"', '"up"'],
  ['a raw string with a backslash', 'label_replace(up, "a", `\\d`, "b", "")', `label_replace(up{${M}}, "a", \`\\d\`, "b", "")`],
  ['a string with an escaped quote and metric-like text', 'count_values("up\\" foo", bar)', `count_values("up\\" foo", bar{${M}})`],
  ['a comment with a selector in it', 'foo # up{a="b"} rate(x[5m])\n+ bar', `foo{${M}} # up{a="b"} rate(x[5m])\n+ bar{${M}}`],
  ['a comment at the end', 'foo # end', `foo{${M}} # end`],
  ['a comment with an open parenthesis', 'sum( # (\nfoo)', `sum( # (\nfoo{${M}})`],
  ['multi-line', 'sum(\n  rate(foo[5m])\n)\n/\nsum(bar)', `sum(\n  rate(foo{${M}}[5m])\n)\n/\nsum(bar{${M}})`],
  ['no selector', '1 + 2 * time()', '1 + 2 * time()'],
  ['empty', '', ''],
  // Grafana's variables.
  ['rate interval', 'rate(foo{instance=~"$instance"}[$__rate_interval])', `rate(foo{instance=~"$instance",${M}}[$__rate_interval])`],
  ['interval and subquery', 'max_over_time(foo[$__range:$__interval])', `max_over_time(foo{${M}}[$__range:$__interval])`],
  ['[[name]] in a range', 'rate(foo[[[interval]]])', `rate(foo{${M}}[[[interval]]])`],
  ['${name} in values', 'foo{k8s_cluster="${k8s_cluster}", tidb_cluster="$tidb_cluster"}', `foo{k8s_cluster="\${k8s_cluster}", ${M}}`],
  ['variable as a value', 'foo{a=$a}', `foo{a=$a,${M}}`],
  ['variable in a label list', 'sum(rate(foo[1m])) by (le, $additional_groupby)', `sum(rate(foo{${M}}[1m])) by (le, $additional_groupby)`],
  [
    'variables glued into a duration',
    'foo[1d] offset ${__to:date:H}h${__to:date:m}m',
    `foo{${M}}[1d] offset \${__to:date:H}h\${__to:date:m}m`,
  ],
  ['variable as a number', 'topk($n, foo) > $threshold', `topk($n, foo{${M}}) > $threshold`],
  ['[[name]] as a number', 'foo > [[threshold]]', `foo{${M}} > [[threshold]]`],
];

describe('injectMatcher on hand-written expressions', () => {
  it.each(CASES)('%s', (_name, expr, expected) => {
    const out = inject(expr);
    expect(out).toBe(expected);
    expect(everywhere(out)).toBe(true);
    expect(inject(out)).toBe(out);
  });

  it('keeps every byte outside the added matchers', () => {
    for (const [, expr, expected] of CASES) {
      if (/tidb_cluster\s*[=!]/.test(expr)) continue; // replacements change the old matcher
      expect(insertedOnly(expr, expected, M)).toBe(true);
    }
  });

  it('escapes the value as a PromQL double-quoted string', () => {
    expect(injectMatcher('up', 'c', 'a"b\\c')).toBe('up{c="a\\"b\\\\c"}');
    expect(injectMatcher('up', 'c', 'line\nnext\ttab\r')).toBe('up{c="line\\nnext\\ttab\\r"}');
    expect(injectMatcher('up', 'c', '\x00\x1f\x7f')).toBe('up{c="\\x00\\x1f\\x7f"}');
    expect(injectMatcher('up', 'c', '\ufffd')).toBe('up{c="\\ufffd"}');
    expect(injectMatcher('up', 'c', 'ünï ✓ 𝄞 $1 ${x} `#`')).toBe('up{c="ünï ✓ 𝄞 $1 ${x} `#`"}');
    expect(injectMatcher('up', 'c', '')).toBe('up{c=""}');
    expect(() => injectMatcher('up', 'c', 'a\ud800b')).toThrow(/surrogate/);
  });

  it('refuses a label that is not a label name', () => {
    for (const bad of ['', '1a', 'a-b', 'a.b', 'a b', 'a:b', '"a"'])
      expect(() => injectMatcher('up', bad, 'x')).toThrow(/not a label name/);
    expect(() => injectMatcher('up', '__name__', 'x')).toThrow(/__name__/);
    expect(injectMatcher('up', '_a1', 'x')).toBe('up{_a1="x"}');
  });

  it('works with another label and value', () => {
    expect(injectMatcher('sum(rate(a{namespace="n"}[5m])) / b', 'namespace', 'ns-demo')).toBe(
      'sum(rate(a{namespace="ns-demo"}[5m])) / b{namespace="ns-demo"}',
    );
  });
});

describe('injectMatcher errors', () => {
  const ERRORS: [string, RegExp][] = [
    ['(foo', /unclosed "\(" at 1:1/],
    ['sum(rate(foo[5m])', /unclosed "\(" at 1:4/],
    ['foo)', /unbalanced "\)" .* at 1:4/],
    ['foo{a="b"', /unclosed "\{" at 1:4/],
    ['foo}', /unbalanced "\}" .* at 1:4/],
    ['foo{a="b"}}', /unbalanced "\}"/],
    ['foo{a={b}}', /unexpected "\{" inside braces/],
    ['rate(foo[5m)', /unexpected "\)" inside brackets/],
    ['rate(foo[5m', /unclosed "\[" at 1:9/],
    ['foo]', /unbalanced "\]"/],
    ['foo[[5m]]x[', /unclosed "\["/],
    ['rate(foo[5m[1m]])', /unexpected "\[" inside brackets/],
    ['foo{a="b}', /unterminated string \(opened with "\) at 1:7/],
    ["foo{a='b}", /unterminated string \(opened with '\)/],
    ['foo{a=`b}', /unterminated string \(opened with `\)/],
    ['count_values("x, foo)', /unterminated string/],
    ['foo{a="b\\"}', /unterminated string/],
    ['foo{a="b\nc"}', /unterminated string .*a line ends/],
    ['a +\n  (b', /unclosed "\(" at 2:3/],
  ];
  it.each(ERRORS)('%j', (expr, message) => {
    expect(() => inject(expr)).toThrow(message);
    expect(() => everywhere(expr)).toThrow(message);
  });

  it('accepts a back-quoted string across lines, and brackets and braces in strings and comments', () => {
    expect(inject('label_replace(up, "a", `x\ny`, "b", "(")')).toBe(`label_replace(up{${M}}, "a", \`x\ny\`, "b", "(")`);
    expect(inject('foo # ) ] } { ( [ " \' `\n')).toBe(`foo{${M}} # ) ] } { ( [ " ' \`\n`);
  });
});

describe('hasMatcherEverywhere', () => {
  const HAS: [string, boolean][] = [
    [`up{${M}}`, true],
    ['up', false],
    [`up{${M}} + down`, false],
    [`up{${M}} + down{a="b"}`, false],
    ['up{tidb_cluster=~"x"}', false],
    ['up{tidb_cluster!="x"}', false],
    ['up{tidb_cluster="y"}', false],
    ['up{tidb_cluster="x "}', false],
    ["up{tidb_cluster='x'}", true],
    ['up{tidb_cluster=`x`}', true],
    ['up{tidb_cluster="\\x78"}', true],
    ['up{tidb_cluster="\\u0078"}', true],
    ['up{tidb_cluster="\\170"}', true],
    ['up{tidb_cluster=~"a", tidb_cluster="x"}', true],
    ['up{"tidb_cluster"="x"}', true],
    ['up{x="tidb_cluster"}', false],
    ['up{a="b", # tidb_cluster="x"\n}', false],
    [`sum by (tidb_cluster) (rate(up{${M}}[5m]))`, true],
    [`sum by (instance) (rate(up[5m])) > on(tidb_cluster) group_left b{${M}}`, false],
    [`label_replace(up{${M}}, "tidb_cluster", "y", "", "")`, true],
    ['vector(1) + time()', true],
    ['', true],
  ];
  it.each(HAS)('%j → %s', (expr, has) => {
    expect(everywhere(expr)).toBe(has);
  });

  it('compares decoded values', () => {
    expect(hasMatcherEverywhere('up{c="a\\"b"}', 'c', 'a"b')).toBe(true);
    expect(hasMatcherEverywhere("up{c='a\\'b'}", 'c', "a'b")).toBe(true);
    expect(hasMatcherEverywhere('up{c="\\u00fc\\U0001d11e\\t"}', 'c', 'ü𝄞\t')).toBe(true);
    expect(hasMatcherEverywhere('up{c="\\xc3\\xbc"}', 'c', 'ü')).toBe(true);
    expect(hasMatcherEverywhere('up{c="a\\\\b"}', 'c', 'a\\b')).toBe(true);
  });
});

// --- generator (from the grammar: each part renders its text and its expected injected text) ---

/** A generated expression: its text, the text expected after injecting `tidb_cluster="x"`, and what it is. */
interface Piece {
  readonly text: string;
  readonly injected: string;
  readonly type: 'vector' | 'scalar' | 'matrix';
  readonly selectors: number;
  /** Whether it has an operator at its top (so that a vector-matching neighbour or a `[` needs it in parentheses). */
  readonly binary?: boolean;
}

type Gen = fc.GeneratorValue;
type Part = string | Piece;

const oneOf = (...xs: unknown[]) => fc.constantFrom(...xs);
const pick = <T>(g: Gen, xs: readonly T[]): T => g(oneOf, ...xs) as T;
const chance = (g: Gen, p: number) => g(fc.integer, { min: 0, max: 99 }) < p * 100;

function join(type: Piece['type'], ...parts: Part[]): Piece {
  let text = '';
  let injected = '';
  let selectors = 0;
  for (const p of parts) {
    if (typeof p === 'string') {
      text += p;
      injected += p;
    } else {
      text += p.text;
      injected += p.injected;
      selectors += p.selectors;
    }
  }
  return { text, injected, type, selectors };
}

/** Optional blank: spaces, newlines, and comments holding brackets, braces and quotes. */
const blank = (g: Gen) => pick(g, ['', '', '', ' ', '  ', '\n  ', '\t', ' # note ) ] } { ( [ " \' `\n']);
/** Blank that separates two words. */
/** Blank without comments: the lexer reads a duration right after `[` and its spaces. */
const spaces = (g: Gen) => pick(g, ['', '', ' ', '\n ', '\t']);
const blank1 = (g: Gen) => pick(g, [' ', ' ', '\n', '  ', ' # c ( {\n']);
const cased = (g: Gen, word: string) => pick(g, [word, word, word.toUpperCase(), word[0].toUpperCase() + word.slice(1)]);

const METRICS = [
  'up',
  'tidb_server_handle_query_duration_seconds_bucket',
  'tikv_engine_size_bytes',
  'job:tikv_rate:sum5m',
  ':colon_first',
  // keywords that metric_identifier accepts where an operand is expected
  'sum',
  'by',
  'BY',
  'without',
  'offset',
  'and',
  'or',
  'unless',
  'count_values',
  'start',
  'end',
  'group',
  'topk',
  'Max',
  // names that only start like keywords
  'bool_total',
  'on_x',
  'inf_x',
  'nan2',
  'ignoring_total',
  'e',
  'x1e3',
  'group_left_x',
];
const LABELS = ['a', 'job', 'instance', 'le', 'by', 'offset', 'on', 'bool', 'sum', 'tidb_clusterx', 'Tidb_cluster', 'tidb_cluster'];
const VALUES = ['"v"', "'v'", '`v`', '"a\\"b"', '"x}{,y"', '"#"', '".+"', "'it\\'s'", '"\\u00fc"', '`\\d+`'];
const GRAFANA_VALUES = ['"$instance"', '"${k8s_cluster}"', '"$tidb_cluster"', '$value', '"[[inst]]"'];
const GROUPING = ['a', 'instance', 'le', 'by', 'on', 'offset', 'sum', 'atan2', 'and'];
/** Labels for group_left/group_right: none of GROUPING, since a label cannot be in on() and group_left() at once. */
const INCLUDE = ['extra', 'bool', 'group_left', 'start', 'Inf_x'];
const DURATIONS = ['5m', '1h30m', '30s', '1d', '100ms', '2w', '1y'];
const GRAFANA_DURATIONS = ['$__rate_interval', '$__interval', '[[interval]]', '${range}', '${h}h${m}m'];

/** A selector, with its braces or without, and what injection makes of it. */
function selector(g: Gen, grafana: boolean): Piece {
  const name = chance(g, 0.8) ? pick(g, METRICS) : '';
  if (name && chance(g, 0.4)) return { text: name, injected: `${name}{${M}}`, type: 'vector', selectors: 1 };
  const n = g(fc.integer, { min: name ? 0 : 1, max: 4 });
  const items: { label: string; text: string }[] = [];
  for (let i = 0; i < n; i++) {
    // A selector without a name needs a matcher that does not match the empty string.
    const label = !name && i === 0 ? 'job' : pick(g, LABELS);
    const op = !name && i === 0 ? '=' : pick(g, ['=', '!=', '=~', '!~']);
    const value = !name && i === 0 ? '"j"' : pick(g, grafana ? [...VALUES, ...GRAFANA_VALUES] : VALUES);
    items.push({ label, text: `${label}${blank(g)}${op}${blank(g)}${value}` });
  }
  const trailing = n > 0 && chance(g, 0.2);
  const lead = `${name}${name ? blank(g) : ''}{`;
  const leadBlank = blank(g);
  const tailBlank = `${trailing ? `${blank(g)},` : ''}${blank(g)}}`;
  let text = lead + leadBlank;
  // With no matcher, the new one goes right after "{".
  let injected = n === 0 ? `${lead}${M}${leadBlank}` : lead + leadBlank;
  let replaced = n === 0;
  items.forEach((item, i) => {
    const before = i === 0 ? '' : blank(g);
    const after = i === 0 ? '' : `,${blank(g)}`;
    text += `${before}${after}${item.text}`;
    if (item.label !== L) injected += `${before}${after}${item.text}`;
    else if (!replaced) {
      injected += `${before}${after}${M}`;
      replaced = true;
    } else injected += before; // a further matcher of the label goes, with its comma
  });
  if (!replaced) {
    if (trailing) {
      const [commaPart, rest] = [tailBlank.slice(0, tailBlank.indexOf(',') + 1), tailBlank.slice(tailBlank.indexOf(',') + 1)];
      text += tailBlank;
      injected += `${commaPart}${M}${rest}`;
      return { text, injected, type: 'vector', selectors: 1 };
    }
    injected += `,${M}`;
  }
  text += tailBlank;
  injected += tailBlank;
  return { text, injected, type: 'vector', selectors: 1 };
}

/** `p` in parentheses when it has an operator at its top (sometimes even when not). */
const paren = (g: Gen, p: Piece): Piece => (p.binary || chance(g, 0.2) ? join(p.type, '(', blank(g), p, blank(g), ')') : p);

const duration = (g: Gen, grafana: boolean) => pick(g, grafana && chance(g, 0.4) ? GRAFANA_DURATIONS : DURATIONS);

/** `offset` and `@` after a selector, a range or a subquery. */
function modifiers(g: Gen, p: Piece, grafana: boolean): Piece {
  const parts: Part[] = [p];
  if (chance(g, 0.3)) parts.push(blank1(g), cased(g, 'offset'), blank1(g), chance(g, 0.2) ? '-' : '', duration(g, grafana));
  if (chance(g, 0.2)) parts.push(blank(g), '@', blank(g), pick(g, ['start()', 'end()', '1609746000', 'END ( )']));
  return join(p.type, ...parts);
}

function labelList(g: Gen, grafana: boolean, pool = GROUPING): string {
  const n = g(fc.integer, { min: 0, max: 3 });
  const labels = Array.from({ length: n }, () => (grafana && chance(g, 0.2) ? '$additional_groupby' : pick(g, pool)));
  const trailing = n > 0 && chance(g, 0.15) ? ',' : '';
  return `(${blank(g)}${labels.join(`${blank(g)},${blank(g)}`)}${trailing}${blank(g)})`;
}

function scalar(g: Gen, depth: number, grafana: boolean): Piece {
  const kind = pick(g, depth > 0 ? ['number', 'number', 'time', 'scalar', 'paren', 'unary', 'binary'] : ['number', 'time']);
  switch (kind) {
    case 'time':
      return join('scalar', 'time', blank(g), '(', blank(g), ')');
    case 'scalar':
      return join('scalar', 'scalar(', vector(g, depth - 1, grafana), ')');
    case 'paren':
      return join('scalar', '(', blank(g), scalar(g, depth - 1, grafana), blank(g), ')');
    case 'unary':
      return { ...join('scalar', pick(g, ['-', '+']), blank(g), scalar(g, depth - 1, grafana)), binary: true };
    case 'binary':
      return {
        ...join(
          'scalar',
          scalar(g, depth - 1, grafana),
          blank(g),
          pick(g, ['+', '-', '*', '/', '%', '^']),
          blank(g),
          scalar(g, depth - 1, grafana),
        ),
        binary: true,
      };
    default:
      return join(
        'scalar',
        pick(
          g,
          grafana && chance(g, 0.2)
            ? ['$threshold', '${__to:date:H}']
            : ['1', '0.5', '.5', '1e3', '1E-3', '0x1f', '0X1F', 'Inf', 'NaN', 'inf', '42'],
        ),
      );
  }
}

function range(g: Gen, depth: number, grafana: boolean): Piece {
  if (depth > 0 && chance(g, 0.25)) {
    // A subquery of an instant vector expression.
    // Without parentheses, `[` would take only the last operand of an operator.
    const v = vector(g, depth - 1, grafana);
    const inner = v.binary || chance(g, 0.5) ? join('vector', '(', v, ')') : v;
    const step = chance(g, 0.5) ? duration(g, grafana) : '';
    return modifiers(g, join('matrix', inner, blank(g), '[', spaces(g), duration(g, grafana), ':', step, blank(g), ']'), grafana);
  }
  return modifiers(g, join('matrix', selector(g, grafana), blank(g), '[', spaces(g), duration(g, grafana), blank(g), ']'), grafana);
}

function vector(g: Gen, depth: number, grafana: boolean): Piece {
  const kinds = ['selector', 'selector', 'modified'];
  if (depth > 0)
    kinds.push('rangeFn', 'rangeFn', 'fn', 'agg', 'agg', 'aggParam', 'binary', 'binary', 'scalarBinary', 'paren', 'unary', 'special');
  const call = (name: string, ...args: Part[]) => join('vector', name, blank(g), '(', blank(g), ...args, blank(g), ')');
  switch (pick(g, kinds)) {
    case 'modified':
      return modifiers(g, selector(g, grafana), grafana);
    case 'rangeFn': {
      const fn = pick(g, [
        'rate',
        'irate',
        'increase',
        'delta',
        'max_over_time',
        'avg_over_time',
        'count_over_time',
        'absent_over_time',
        'changes',
        'resets',
      ]);
      if (chance(g, 0.15)) return call('quantile_over_time', scalar(g, 0, grafana), ',', blank(g), range(g, depth - 1, grafana));
      if (chance(g, 0.1)) return call('predict_linear', range(g, depth - 1, grafana), ',', blank(g), scalar(g, 0, grafana));
      return call(fn, range(g, depth - 1, grafana));
    }
    case 'fn': {
      const v = vector(g, depth - 1, grafana);
      switch (pick(g, ['simple', 'clamp', 'hq', 'replace', 'join', 'absent', 'vector'])) {
        case 'clamp':
          return call(pick(g, ['clamp_max', 'clamp_min']), v, ',', blank(g), scalar(g, 0, grafana));
        case 'hq':
          return call('histogram_quantile', scalar(g, 0, grafana), ',', blank(g), v);
        case 'replace':
          return call('label_replace', v, ', "dst", "$1", "src", ', pick(g, ['"(.*)"', "'(.*)'", '`(\\w+)`']));
        case 'join':
          return call('label_join', v, ', "dst", ",", "a", "b"');
        case 'absent':
          return call('absent', v);
        case 'vector':
          return call('vector', scalar(g, depth - 1, grafana));
        default:
          return call(pick(g, ['abs', 'ceil', 'floor', 'sqrt', 'exp', 'ln', 'log2', 'sort', 'sort_desc', 'timestamp', 'round']), v);
      }
    }
    case 'agg':
    case 'aggParam': {
      const param: Part[] = [];
      let op: string;
      if (chance(g, 0.5)) {
        op = cased(g, pick(g, ['sum', 'avg', 'max', 'min', 'count', 'group', 'stddev', 'stdvar']));
      } else {
        op = cased(g, pick(g, ['topk', 'bottomk', 'quantile', 'count_values']));
        param.push(op.toLowerCase() === 'count_values' ? pick(g, ['"value"', "'v'"]) : scalar(g, 0, grafana), ',', blank(g));
      }
      const body = join('vector', '(', blank(g), ...param, vector(g, depth - 1, grafana), blank(g), ')');
      const modifier = chance(g, 0.6) ? `${cased(g, pick(g, ['by', 'without']))}${blank(g)}${labelList(g, grafana)}` : '';
      if (modifier && chance(g, 0.5)) return join('vector', op, blank1(g), modifier, blank(g), body);
      return join('vector', op, blank(g), body, modifier ? blank(g) : '', modifier);
    }
    case 'binary': {
      const set = chance(g, 0.3);
      const comparison = !set && chance(g, 0.4);
      const op = set
        ? cased(g, pick(g, ['and', 'or', 'unless']))
        : comparison
          ? pick(g, ['==', '!=', '>', '<', '>=', '<='])
          : pick(g, ['+', '-', '*', '/', '%', '^', 'atan2']);
      let mods = '';
      let bareGroup = false;
      if (comparison && chance(g, 0.3)) mods += `${blank1(g)}${cased(g, 'bool')}`;
      if (chance(g, 0.5)) {
        mods += `${blank1(g)}${cased(g, pick(g, ['on', 'ignoring']))}${blank(g)}${labelList(g, grafana)}`;
        if (!set && chance(g, 0.4)) {
          bareGroup = chance(g, 0.5);
          mods += `${blank1(g)}${cased(g, pick(g, ['group_left', 'group_right']))}${bareGroup ? '' : `${blank(g)}${labelList(g, grafana, INCLUDE)}`}`;
        }
      }
      const wordOp = /^[a-z]/i.test(op);
      // Vector matching needs vectors on both sides, whatever the precedence of the operands' own operators.
      const side = (p: Piece) => (mods && !set ? paren(g, p) : p);
      const lhs = side(vector(g, depth - 1, grafana));
      // After a group_left without labels, a "(" would open its label list: the right side is a selector.
      const rhs = bareGroup ? selector(g, grafana) : side(vector(g, depth - 1, grafana));
      return { ...join('vector', lhs, wordOp ? blank1(g) : blank(g), op, mods, wordOp || mods ? blank1(g) : blank(g), rhs), binary: true };
    }
    case 'scalarBinary': {
      const op = pick(g, ['+', '-', '*', '/', '>', '<', '== bool', '> BOOL']);
      // In parentheses when it has an operator, so that no comparison ends up between two scalars.
      const v = paren(g, vector(g, depth - 1, grafana));
      const piece = chance(g, 0.5)
        ? join('vector', v, blank(g), op, blank1(g), scalar(g, depth - 1, grafana))
        : join('vector', scalar(g, depth - 1, grafana), blank(g), op, blank1(g), v);
      return { ...piece, binary: true };
    }
    case 'paren':
      return join('vector', '(', blank(g), vector(g, depth - 1, grafana), blank(g), ')');
    case 'unary':
      return { ...join('vector', pick(g, ['-', '+']), blank(g), vector(g, depth - 1, grafana)), binary: true };
    case 'special': {
      // A keyword-named metric right where an operand is expected, after each kind of operator.
      const name = pick(g, ['sum', 'by', 'without', 'offset', 'and', 'or', 'start', 'end', 'topk', 'count_values', 'group']);
      const named: Piece = chance(g, 0.4)
        ? { text: `${name}{a="b"}`, injected: `${name}{a="b",${M}}`, type: 'vector', selectors: 1 }
        : { text: name, injected: `${name}{${M}}`, type: 'vector', selectors: 1 };
      const op = pick(g, ['and', 'or', 'unless', '+', '/ on(a)', '> bool', '* ignoring(b) group_left', 'OR']);
      return { ...join('vector', paren(g, vector(g, depth - 1, grafana)), blank1(g), op, blank1(g), named), binary: true };
    }
    default:
      return selector(g, grafana);
  }
}

/** An expression of any type, for the properties. */
function expression(g: Gen, grafana: boolean): Piece {
  const depth = g(fc.integer, { min: 0, max: 4 });
  switch (g(fc.integer, { min: 0, max: 9 })) {
    case 0:
      return scalar(g, depth, grafana);
    case 1:
      return range(g, depth, grafana);
    default:
      return vector(g, depth, grafana);
  }
}

// --- end generator ---

/** Where `)`, `]` and `}` are in `text`, outside strings and comments. */
function codeClosers(text: string): number[] {
  const out: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '#') while (i < text.length && text[i] !== '\n') i++;
    else if (c === '"' || c === "'" || c === '`') {
      for (i++; text[i] !== c; i++) if (text[i] === '\\' && c !== '`') i++;
    } else if (c === ')' || c === ']' || c === '}') out.push(i);
  }
  return out;
}

describe('properties on generated expressions', () => {
  const params = { numRuns: RUNS, seed: SEED };
  for (const grafana of [false, true]) {
    const label = grafana ? 'with Grafana variables' : 'plain PromQL';
    it(`injects exactly the expected matchers (${label})`, () => {
      fc.assert(
        fc.property(fc.gen(), (g) => {
          const e = expression(g, grafana);
          expect(inject(e.text)).toBe(e.injected);
        }),
        params,
      );
    });
    it(`is idempotent, and the result has the matcher everywhere (${label})`, () => {
      fc.assert(
        fc.property(fc.gen(), (g) => {
          const e = expression(g, grafana);
          expect(everywhere(e.injected)).toBe(true);
          expect(inject(e.injected)).toBe(e.injected);
          if (e.selectors > 0 && !e.text.includes(L)) expect(everywhere(e.text)).toBe(false);
        }),
        params,
      );
    });
  }

  it('keeps every byte outside the selectors (another label, a value needing escapes)', () => {
    fc.assert(
      fc.property(fc.gen(), fc.string({ maxLength: 12 }), (g, value) => {
        const e = expression(g, false);
        const out = injectMatcher(e.text, 'scope', value);
        expect(hasMatcherEverywhere(out, 'scope', value)).toBe(true);
        // fc.string() is printable ASCII: only `"` and `\` need escapes.
        const m = `scope="${value.replace(/["\\]/g, '\\$&')}"`;
        expect(insertedOnly(e.text, out, m)).toBe(true);
        if (!e.text.includes(L)) expect(out).toBe(e.injected.split(M).join(m));
      }),
      params,
    );
  });

  it('throws, never returns, when a closing parenthesis, brace or bracket is removed', () => {
    fc.assert(
      fc.property(fc.gen(), fc.nat(), (g, n) => {
        const e = expression(g, false);
        const closers = codeClosers(e.text);
        fc.pre(closers.length > 0);
        const at = closers[n % closers.length];
        const broken = e.text.slice(0, at) + e.text.slice(at + 1);
        expect(() => inject(broken)).toThrow(/PromQL: (unclosed|unbalanced|unexpected)/);
      }),
      params,
    );
  });
});
