import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fastLoadAll } from '../../../../src/base/yaml/fast-load';
import { slowLoadAll } from '../../../../src/tidbcluster/load';
import { SHARED_DIR } from '../../../../scripts/lib/upstream';
import { TEST_DIR } from '../../../support/paths';

const root = join(TEST_DIR, '..');

/** The fast path must read exactly what the full reader reads, types included (floats, ints, strings). */
function expectSameReading(text: string): void {
  const fast = fastLoadAll(text);
  expect(fast).toBeDefined();
  expect(fast).toStrictEqual(slowLoadAll(text));
}

describe('fast YAML path', () => {
  test.each([
    ['golden inputs', join(root, 'test/golden/inputs')],
    ['operator examples', join(SHARED_DIR, 'examples')],
    ['bundled examples', join(root, 'examples/basic')],
    ['bench input', join(root, 'bench')],
  ])('reads the %s exactly as the full reader does', (_name, dir) => {
    const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => /\.ya?ml$/.test(f));
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) expectSameReading(readFileSync(join(dir, f), 'utf8'));
  });

  test('resolves the scalars both YAML versions agree on as the full reader does', () => {
    const text = [
      'ints: [0, -7, +3, 0o17, 0x1F, 08, 190:20:30]',
      'floats: [1.0, 1.5, .5, -2.50, 1e3, 1E-3, 1.0e2, 1.]',
      'words: [true, False, TRUE, null, Null, ~, "", 2026-11-20, 2026-11-20T10:00:00Z, "on", \'010\']',
      'empty:',
      'alias: &base {a: 1, b: 2}',
      'again: *base',
      'block: |',
      '  line one',
      '  line two',
      '---',
      '---',
      '- plain list',
    ].join('\n');
    expectSameReading(text);
    const [doc] = fastLoadAll(text) as Record<string, unknown>[];
    expect(doc.ints).toEqual([0, -7, 3, 15, 31, 8, '190:20:30']);
    expect((doc.words as unknown[]).slice(-4)).toEqual(['2026-11-20', '2026-11-20T10:00:00Z', 'on', '010']);
  });

  test.each([
    ['a form YAML 1.2 reads differently', 'a: 010\n'],
    ['a YAML 1.1 boolean', 'a: on\n'],
    ['underscores', 'a: 1_000\n'],
    ['a value JSON cannot hold', 'a: .inf\n'],
    ['a merge', 'a: &x {b: 1}\nc:\n  <<: *x\n'],
    ['a key that is a number', 'a:\n  1: x\n'],
    ['a key that is a YAML 1.1 boolean', 'y: 1\n'],
    ['a flow mapping as a key', '{a: 1}: x\n'],
    ['an explicit key', '? a\n: 1\n'],
    ['a core tag the text does not fit as written', 'a: !!float "1"\n'],
    ['another tag', 'a: !!binary aGk=\n'],
    ['a directive', '%YAML 1.1\n---\na: 1\n'],
    ['content after ---', '--- {a: 1}\n'],
    ['a repeated key', 'a: 1\na: 2\n'],
    ['a syntax error', 'a: [b'],
  ])('leaves %s to the full reader', (_name, text) => {
    expect(fastLoadAll(text)).toBeUndefined();
  });
});
