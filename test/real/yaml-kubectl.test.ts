/**
 * One YAML reading, kubectl's. The reader (src/base/yaml/read.ts, scalar.ts) is checked against
 * kubectl's own reading (`kubectl label --local`, see support/kubectl-read.ts) on generated documents
 * full of the forms YAML 1.1 and 1.2 read differently: every document the reader accepts must read
 * exactly as kubectl reads it, and every refusal must be one kubectl shares or one that stops a silent
 * change (kubectl accepting it with another meaning). The fast path must agree with the full reader.
 */
import fc from 'fast-check';
import { fastLoadAll } from '../../src/base/yaml/fast-load';
import { aliasProblems } from '../../src/base/yaml/aliases';
import { readYaml, type ReadDocument } from '../../src/base/yaml/read';
import { readPlainScalar } from '../../src/base/yaml/scalar';
import { isTomlFloat } from '../../src/base/toml';
import { kubectlRead } from '../support/kubectl-read';
import { KUBECTL, requires } from '../support/requires';

const SEED = Number(process.env.YAML_SEED ?? 11);
const RUNS = Number(process.env.YAML_RUNS ?? 300);

/** Plain numbers and floats as JSON would hold them (TOML's float marker dropped). */
function plain(value: unknown): unknown {
  if (isTomlFloat(value)) return value.valueOf();
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  return value;
}

const accepted = (d: ReadDocument) => d.syntax.length === 0 && d.issues.length === 0;

describe('plain scalars, as kubectl resolves them', () => {
  test.each([
    ['010', 8, '10'],
    ['0o17', 15, undefined],
    ['0x1F', 31, undefined],
    ['-0x1F', -31, 'text'],
    ['0B101', 5, 'text'],
    ['1_000', 1000, 'text'],
    ['08', 8, undefined],
    ['+3', 3, undefined],
    ['.5_5', 0.55, 'text'],
    ['on', true, 'text'],
    ['N', false, 'text'],
    ['yes', true, 'text'],
    ['TRUE', true, undefined],
    ['~', null, undefined],
    ['1e400', '1e400', undefined],
    ['2026-11-20', '2026-11-20', undefined],
    ['190:20:30', '190:20:30', undefined],
    ['0x', '0x', undefined],
    ['9223372036854775808', 9223372036854775808, undefined],
    ['-9223372036854775809', -9223372036854775809, undefined],
  ])('%s', (text, value, differs) => {
    const read = readPlainScalar(text);
    expect(plain(read.value)).toEqual(value);
    expect(read.differsFrom12).toBe(differs);
    expect(read.refused).toBeUndefined();
  });

  test('1.0 and 1. stay floats for TOML; 08 is the integer 8', () => {
    expect(isTomlFloat(readPlainScalar('1.0').value)).toBe(true);
    expect(isTomlFloat(readPlainScalar('1.').value)).toBe(true);
    expect(readPlainScalar('08').value).toBe(8);
  });

  test.each(['.inf', '-.Inf', '.NaN', '0x10000000000000000'])('%s is refused with the reason', (text) => {
    expect(readPlainScalar(text).refused).toMatch(/JSON|64 bits/);
  });
});

describe('documents', () => {
  const one = (text: string) => readYaml(text)[0];

  test('a merge sets its keys in order: before it replaced (with a note), after it kept; the first of a list wins', () => {
    const d = one('base: &b {a: 1, b: 1}\nother: &o {b: 2, c: 2}\nm:\n  a: 0\n  <<: [*b, *o]\n  c: 3\n');
    expect(accepted(d)).toBe(true);
    expect((d.value as Record<string, unknown>).m).toEqual({ a: 1, b: 1, c: 3 });
    expect(d.notes).toEqual([
      expect.objectContaining({ path: 'm.a', line: 4, message: expect.stringMatching(/merge on line 5 replaces this key/) }),
    ]);
  });

  test('repeated keys, keys that are not text, tags kubectl drops, and values JSON cannot hold are refused with path and line', () => {
    const d = one('a:\n  k: 1\n  k: 2\n');
    expect(d.issues).toEqual([
      expect.objectContaining({ path: 'a.k', line: 3, message: expect.stringMatching(/given twice.*first on line 2/) }),
    ]);
    const e = one('a:\n  y: 1\n  1: 2\n  ~: 3\n  b: !!binary aGk=\n  c: .inf\n  d: !!int x\n');
    expect(e.issues.map((i) => [i.path, i.line])).toEqual([
      ['a.y', 2],
      ['a["1"]', 3],
      ['a["~"]', 4],
      ['a.b', 5],
      ['a.c', 6],
      ['a.d', 7],
    ]);
    expect(e.issues[0].message).toMatch(/kubectl reads y as a boolean and makes it the key "true"/);
  });

  test('directives and content after --- are refused: kubectl cannot read them', () => {
    expect(readYaml('%YAML 1.1\n---\na: 010\n')[0].syntax[0]).toEqual(
      expect.objectContaining({ line: 1, message: expect.stringMatching(/%YAML directive/) }),
    );
    expect(readYaml('a: 1\n--- {b: 2}\n')[1].syntax[0]).toEqual(
      expect.objectContaining({ line: 2, message: expect.stringMatching(/only a comment after `---`/) }),
    );
    expect(readYaml('a: 1\n--- # fine\nb: 2\n').every(accepted)).toBe(true);
  });

  test('nesting beyond 100 levels is refused, not a crash, however it is written', () => {
    const deep = (n: number) => `a: ${'['.repeat(n)}${']'.repeat(n)}\n`;
    expect(accepted(one(deep(98)))).toBe(true);
    const indented = Array.from({ length: 2000 }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n');
    for (const text of [deep(100), deep(5000), `a:\n  ${'- '.repeat(5000)}1\n`, indented]) {
      expect(one(text).syntax[0].message).toMatch(/more than 100 levels deep/);
      expect(fastLoadAll(text)).toBeUndefined();
    }
    // Aliases nest too: every reader checks them first (`aliasProblems`), the fast path included.
    const chain = `a: &a0 [1]\n${Array.from({ length: 120 }, (_, i) => `b${i}: &a${i + 1} [*a${i}]`).join('\n')}\n`;
    expect(one(chain).syntax[0].message).toMatch(/more than 100 levels deep once its aliases are expanded/);
    // `b98: [*a98]` (line 100) is the first to go over: 1 + 1 + 99 levels.
    expect(aliasProblems(chain)).toEqual([expect.objectContaining({ line: 100 })]);
  });

  test('10,000 aliases in one document take time linear in their number', () => {
    const text = `list:\n${Array.from({ length: 10_000 }, (_, i) => `  - &a${i} {v: ${i}}`).join('\n')}\nrefs:\n${Array.from({ length: 10_000 }, (_, i) => `  - *a${i}`).join('\n')}\n`;
    // A reader that walks the document for every alias does 10^8 steps here (most of a minute).
    const d = one(text);
    expect(accepted(d)).toBe(true);
    expect((d.value as { refs: unknown[] }).refs[9_999]).toEqual({ v: 9_999 });
  });

  test('a mapping of 40,000 keys with one repeated key is read once, not once per key pair', () => {
    const keys = Array.from({ length: 40_000 }, (_, i) => `  k${i}: ${i}`);
    const d = one(`m:\n${keys.join('\n')}\n  k7: again\n`);
    expect(d.issues).toEqual([expect.objectContaining({ path: 'm.k7', line: 40_002 })]);
  });
});

// ---- generated documents, checked against kubectl ---------------------------------------------

const pick = <T>(...values: T[]) => fc.constantFrom(...values);

const WORDS = [
  'y',
  'Y',
  'yes',
  'Yes',
  'YES',
  'n',
  'N',
  'no',
  'NO',
  'on',
  'On',
  'ON',
  'off',
  'OFF',
  'true',
  'False',
  'TRUE',
  'null',
  'Null',
  'NULL',
  '~',
  'yEs',
  'oN',
  'nULL',
  '<<',
  '=',
  'Infinity',
  'NaN',
  'inf',
];
const SPECIAL = [
  '.inf',
  '-.Inf',
  '+.INF',
  '.nan',
  '.NaN',
  '.iNf',
  '.',
  '..5',
  '.e3',
  '._5',
  '.5_',
  '.5_5',
  '.5e3',
  '.5E-2_0',
  '2001-01-01',
  '2001-1-2 3:04:05',
  '12:30',
  '1:2',
  '0x',
  '0b',
  '0o',
  '+',
  '1e',
  '1e400',
  '1e-400',
];
const BIG = [
  '9223372036854775807',
  '9223372036854775808',
  '18446744073709551615',
  '18446744073709551616',
  '-9223372036854775808',
  '-9223372036854775809',
  '+18446744073709551615',
  '0x7FFFFFFFFFFFFFFF',
  '0xFFFFFFFFFFFFFFFF',
  '-0x8000000000000000',
  '99999999999999999999',
];

const numberText = fc
  .tuple(
    pick('', '', '+', '-'),
    fc.oneof(
      fc.stringMatching(/^[0-9]{1,4}$/),
      fc.stringMatching(/^0[0-9]{1,3}$/),
      fc.stringMatching(/^[0-9]_[0-9]{1,3}$/),
      fc.stringMatching(/^0[bBoOxX][0-9a-fA-F_]{1,4}$/),
    ),
    pick('', '', '', '.', '.5', '.0', '.5_0', '._5'),
    pick('', '', '', 'e3', 'E-2', 'e+1_0', 'e'),
  )
  .map((parts) => parts.join(''));

const scalarText = fc.oneof(pick(...WORDS), pick(...SPECIAL), pick(...BIG), numberText, fc.stringMatching(/^[a-z][a-z0-9.-]{0,6}$/));

/** A scalar as written: plain, quoted, or tagged. */
const written = fc.oneof(
  { weight: 6, arbitrary: scalarText },
  { weight: 1, arbitrary: scalarText.map((t) => JSON.stringify(t)) },
  { weight: 1, arbitrary: scalarText.map((t) => `'${t}'`) },
  {
    weight: 1,
    arbitrary: fc.tuple(pick('!!str', '!!int', '!!float', '!!bool', '!!null', '!'), scalarText).map(([tag, t]) => `${tag} ${t}`),
  },
);

/** A small mapping body, one key per line, at `indent`. */
const body = (indent: string) =>
  fc
    .array(
      fc.oneof(
        { weight: 5, arbitrary: written.map((v) => `k: ${v}`) },
        { weight: 2, arbitrary: fc.array(written, { minLength: 1, maxLength: 4 }).map((vs) => `k: [${vs.join(', ')}]`) },
        { weight: 1, arbitrary: fc.tuple(scalarText, written).map(([k, v]) => `${k}: ${v}`) },
      ),
      { minLength: 1, maxLength: 6 },
    )
    .map((lines) => lines.map((l, i) => indent + l.replace(/^k:/, `k${i}:`)).join('\n'));

const document = fc
  .tuple(body('    '), body('    '), pick('none', 'before', 'after', 'list'), fc.boolean())
  .map(([a, b, merge, trailingSeparator]) => {
    const merges: Record<string, string[]> = {
      none: [],
      before: ['    k0: explicit', '    <<: *base'],
      after: ['    <<: *base', '    k0: explicit'],
      list: ['    <<: [*base, *other]'],
    };
    const m = merges[merge];
    return [
      'spec:',
      '  base: &base',
      a,
      '  other: &other',
      b,
      '  merged:',
      ...(m.length > 0 ? m : ['    k: none']),
      trailingSeparator ? '--- # next' : '',
    ].join('\n');
  });

/** Refusals kubectl shares (it cannot read the document either). */
const KUBECTL_REFUSES = /JSON, and so Kubernetes|cannot read a null one|!!\w+ cannot hold|kubectl cannot read/;

requires(KUBECTL).describe('what kubectl reads', () => {
  const docs = fc
    .sample(document, { seed: SEED, numRuns: RUNS })
    .map((spec, i) => `apiVersion: v1\nkind: Probe\nmetadata:\n  name: p${i}\n${spec}\n`);
  const readings = docs.map((text) => readYaml(text));

  test(`every generated document the reader accepts reads exactly as kubectl reads it (${RUNS} documents, seed ${SEED})`, () => {
    const ok = docs.filter((_, i) => readings[i].every(accepted));
    // Enough of both kinds to mean something.
    expect(ok.length).toBeGreaterThan(RUNS / 5);
    expect(ok.length).toBeLessThan(RUNS);
    const ours = ok.flatMap((text) =>
      readYaml(text)
        .filter((d) => d.value !== null)
        .map((d) => plain(d.value)),
    );
    expect(kubectlRead(ok.join('---\n'))).toEqual(ours);
  });

  test('every refusal is one kubectl shares or one that stops a silent change', () => {
    const refused = docs
      .map((text, i) => ({ text, issues: readings[i].flatMap((d) => [...d.syntax, ...d.issues]) }))
      .filter((r) => r.issues.length > 0);
    // One kubectl run per refusal costs time: a few of each reason.
    const byReason = new Map<string, { text: string; shared: boolean; issues: string[] }>();
    for (const r of refused) {
      const shared = r.issues.some((i) => KUBECTL_REFUSES.test(i.message));
      const reason = r.issues[0].message.replace(/[\d"'`].*$/, '');
      if (!byReason.has(`${shared}:${reason}`))
        byReason.set(`${shared}:${reason}`, { text: r.text, shared, issues: r.issues.map((i) => i.message) });
    }
    expect(byReason.size).toBeGreaterThan(3);
    for (const { text, shared, issues } of byReason.values()) {
      let kubectlError: string | undefined;
      try {
        kubectlRead(text);
      } catch (e) {
        kubectlError = String((e as { stderr?: string }).stderr ?? e);
      }
      // Refused for a reason kubectl shares: kubectl fails too. Otherwise kubectl reads it, silently.
      expect({ text, issues, kubectlError, kubectlFails: kubectlError !== undefined }).toEqual({
        text,
        issues,
        kubectlError,
        kubectlFails: shared,
      });
    }
  });

  test('the fast path reads every generated document as the full reader does, or leaves it to it', () => {
    let fast = 0;
    docs.forEach((text, i) => {
      const got = fastLoadAll(text);
      if (got === undefined) return;
      fast++;
      expect(readings[i].every((d) => accepted(d) && d.notes.length === 0)).toBe(true);
      expect(got).toStrictEqual(readings[i].map((d) => d.value));
    });
    expect(fast).toBeGreaterThan(0);
  });

  test('a key kubectl turns into text becomes the key the message names', () => {
    for (const [key, shown] of [
      ['y', 'true'],
      ['off', 'false'],
      ['010', '8'],
      ['1.5', '1.5'],
      ['18446744073709551616', '1.8446744e+19'],
      ['1e6', '1e+06'],
      ['123456.0', '123456'],
      ['0.00001', '1e-05'],
      ['.001', '0.001'],
      ['-2.5e-3', '-0.0025'],
    ]) {
      const text = `apiVersion: v1\nkind: Probe\nmetadata:\n  name: p\nspec:\n  ${key}: 1\n`;
      expect(readYaml(text)[0].issues[0].message).toContain(`makes it the key "${shown}"`);
      expect(kubectlRead(text)[0].spec).toEqual({ [shown]: 1 });
    }
  });
});
