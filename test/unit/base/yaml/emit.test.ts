import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { emitYaml } from '../../../../src/base/yaml/emit';
import { TEST_DIR } from '../../../support/paths';

/** Both readers must get the input back: YAML 1.2 (this project) and 1.1 (Go's yaml.v2 lineage in kubectl). */
function roundTrip(value: unknown): void {
  const text = emitYaml(value);
  expect(parse(text)).toEqual(value);
  expect(parse(text, { version: '1.1' })).toEqual(value);
}

describe('emitYaml', () => {
  test.each([
    [
      'strings another type could claim',
      [
        'true',
        'yes',
        'No',
        'on',
        'OFF',
        'y',
        'null',
        '~',
        '123',
        '-1',
        '0x1F',
        '0o17',
        '017',
        '1_000',
        '1.5',
        '.5',
        '1e3',
        '.inf',
        '-.Inf',
        '.nan',
        '190:20:30',
        '2026-11-20',
        '=',
        '<<',
      ],
    ],
    [
      'strings with indicators',
      [
        '',
        ' lead',
        'trail ',
        '-',
        '- item',
        '--fail',
        '-c',
        ':x',
        'a: b',
        'a #b',
        'end:',
        '#c',
        '&a',
        '*a',
        '!t',
        '|',
        '>',
        "'q",
        '"q',
        '%d',
        '@x',
        '`x',
        '?',
        '[a]',
        '{a}',
        ',',
        'a,b',
        'http://x:1/y',
        'pingcap/pd:v8.5.7',
      ],
    ],
    ['control and unicode characters', ['tab\there', 'bell\u0007', 'nul\u0000', '\u2028', 'é ü 漢字', '\ud83d\ude00', 'cr\r\nlf']],
    [
      'multi-line strings',
      [
        'a\nb\n',
        'a\nb',
        'a\n\n',
        '\n',
        '\n\nx\n',
        '  indented\nx\n',
        'x\n  indented\n',
        'trailing space \nx\n',
        'tab\tin\nblock\n',
        '#!/bin/sh\nset -u\n\necho "$x" >&2\n',
      ],
    ],
    ['numbers and booleans', [0, -0.5, 1e21, 3, true, false, null]],
  ])('%s survive a round trip', (_name, values) => {
    for (const v of values as unknown[]) roundTrip({ v, list: [v], nested: { [String(v)]: v } });
  });

  test('empty collections, nesting, sequences of mappings and of sequences', () => {
    roundTrip({ a: {}, b: [], c: [{ x: 1, y: [1, 2] }, [], [[1], ['a']], {}], d: { e: { f: [{ g: { h: 'i' } }] } } });
    roundTrip([1, 'two', { three: 3 }]);
  });

  test('scripts and TOML are literal blocks', () => {
    expect(emitYaml({ data: { 'startup-script': '#!/bin/sh\necho hi\n' } })).toBe(
      'data:\n  startup-script: |\n    #!/bin/sh\n    echo hi\n',
    );
  });

  test('every golden file and dist/ file parses back to the objects it was emitted from', () => {
    const root = join(TEST_DIR, '..');
    const files = [
      ...readdirSync(join(root, 'test/golden'))
        .filter((f) => f.endsWith('.k8s.yaml'))
        .map((f) => join(root, 'test/golden', f)),
      ...readdirSync(join(root, 'dist')).map((f) => join(root, 'dist', f)),
    ];
    expect(files.length).toBeGreaterThan(2);
    for (const file of files) {
      for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) roundTrip(doc.toJS());
    }
  });
});

// ---- kubectl's own reader ------------------------------------------------------------------------
import fc from 'fast-check';
import { kubectlRead } from '../../../support/kubectl-read';
import { KUBECTL, requires } from '../../../support/requires';

/** Strings of any characters a UTF-8 file can hold (no lone surrogates), biased towards the awkward ones. */
const awkwardString = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.string({
    unit: fc.constantFrom(
      '\u0085',
      '\u007f',
      '\u0080',
      '\u009f',
      '\u2028',
      '\u2029',
      '\ufeff',
      '\ufffe',
      '\uffff',
      '\t',
      '\n',
      '\r',
      ' ',
      ':',
      '#',
      '"',
      "'",
      '\\',
      '-',
      'a',
      '\u0000',
      '\u001b',
      '\ud83d\ude00',
    ),
  }),
  fc.constantFrom('true', 'no', '~', '0x1F', '1e3', '2026-11-23', '<<', '=', '- a', 'a: b'),
);

const kubeLike = fc.record({
  apiVersion: fc.constant('v1'),
  kind: fc.constant('ConfigMap'),
  metadata: fc.record({
    name: fc.constant('x'),
    annotations: fc.dictionary(fc.string({ minLength: 1, maxLength: 20 }), awkwardString, { maxKeys: 4 }),
  }),
  data: fc.dictionary(awkwardString, awkwardString, { maxKeys: 4 }),
});

const describeKubectl = requires(KUBECTL).describe;
describeKubectl('what kubectl reads back', () => {
  test('C1 controls, DEL, NEL, separators, BOM and non-characters are escaped, and kubectl reads each back unchanged', () => {
    const value = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'x' },
      data: {
        nel: 'a\u0085b',
        del: 'a\u007fb',
        c1: '\u0080\u009f',
        ls: 'a\u2028b\u2029c',
        bom: '\ufeffx',
        nonchar: '\ufffe\uffff',
        emoji: '\ud83d\ude00',
        esc: '\u001b[0m',
      },
    };
    const text = emitYaml(value);
    // Nothing YAML 1.1 treats as a line break or refuses is left raw.
    expect(text).not.toMatch(/[\u007f-\u009f\u2028\u2029\ufeff\ufffe\uffff]/);
    expect(kubectlRead(`---\n${text}`)).toEqual([value]);
  });

  test('a key over 1024 characters takes the explicit `? key` form, which kubectl reads', () => {
    const long = 'k'.repeat(1100);
    const value = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { [long]: 'v', short: 'w' } };
    const text = emitYaml(value);
    expect(text).toContain(`  ? ${long}\n  : v\n`);
    expect(kubectlRead(`---\n${text}`)).toEqual([value]);
    roundTrip(value);
  });

  test('property: any keys and values of awkward characters read back the same (fixed seed, one kubectl run)', () => {
    const samples = fc.sample(kubeLike, { seed: 20261123, numRuns: 300 });
    const stream = samples.map((s) => `---\n${emitYaml(s)}`).join('');
    const read = kubectlRead(stream);
    expect(read).toEqual(samples);
    for (const s of samples.slice(0, 50)) roundTrip(s);
  });
});
