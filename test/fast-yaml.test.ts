import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fastLoadAll } from '../src/base/yaml/fast-load';
import { slowLoadAll } from '../src/tidbcluster/load';

const root = join(__dirname, '..');

/** The fast path must read exactly what the full parser reads, types included (floats, ints, strings). */
function expectSameReading(text: string): void {
  expect(fastLoadAll(text)).toStrictEqual(slowLoadAll(text));
}

describe('fast YAML path', () => {
  test.each([
    ['golden inputs', join(root, 'test/golden/inputs')],
    ['operator examples', join(root, 'test/fixtures/examples')],
    ['bundled examples', join(root, 'examples')],
    ['bench input', join(root, 'bench')],
  ])('reads the %s exactly as the full parser does', (_name, dir) => {
    const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => /\.ya?ml$/.test(f));
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) expectSameReading(readFileSync(join(dir, f), 'utf8'));
  });

  test('resolves scalars as YAML 1.2 core: no underscores, binary, sexagesimal or timestamps', () => {
    const text = [
      'ints: [0, -7, +3, 0o17, 0x1F, 1_000, 0b101, 017, 190:20:30]',
      'floats: [1.0, 1.5, .5, -2.50, 1e3, 1E-3, .inf, -.Inf, .NaN, 1.0e2]',
      'words: [true, False, TRUE, yes, no, on, off, y, n, null, Null, ~, "", 2026-11-20, 2026-11-20T10:00:00Z]',
      'empty:',
      'merge:',
      '  <<: &base {a: 1, b: 2}',
      '  b: 3',
      'alias: *base',
      'block: |',
      '  line one',
      '  line two',
      '---',
      '---',
      '- plain list',
    ].join('\n');
    expectSameReading(text);
    const [doc] = fastLoadAll(text) as Record<string, unknown>[];
    expect(doc.ints).toEqual([0, -7, 3, 15, 31, '1_000', '0b101', 17, '190:20:30']);
    expect((doc.words as unknown[]).slice(-2)).toEqual(['2026-11-20', '2026-11-20T10:00:00Z']);
  });

  test('gives up on input it cannot read, leaving messages to the full parser', () => {
    expect(fastLoadAll('a: [b')).toBeUndefined();
    expect(fastLoadAll('a: 1\na: 2\n')).toBeUndefined();
  });
});
