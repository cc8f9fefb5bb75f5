import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { undocumentedDefaults } from '../../support/type-docs';
import { TEST_DIR } from '../../support/paths';

const ROOT = path.join(TEST_DIR, '..');

describe('doc comments of the library types', () => {
  test('every optional field of an exported type says its default', () => {
    const report = undocumentedDefaults(path.join(ROOT, 'src/index.ts'), path.join(ROOT, 'src'));
    expect(report.missing).toEqual([]);
    // The walk reaches the TidbCluster types, the resolved ones and the chart's props.
    expect(report.optional).toBeGreaterThan(250);
  });

  test('a field without @default, or with an empty one, is reported with its place', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'type-docs-'));
    try {
      fs.writeFileSync(
        path.join(dir, 'index.ts'),
        ["export * from './spec';", 'interface Hidden { notExported?: string }', 'export const hidden: Hidden = {};'].join('\n'),
      );
      fs.writeFileSync(
        path.join(dir, 'spec.ts'),
        [
          'export interface Spec {',
          '  /** @default 3 */',
          '  replicas?: number;',
          '  /** No tag. */',
          '  image?: string;',
          '  /** @default */',
          '  empty?: string;',
          '  nested: {',
          '    /** @default {} */',
          '    ok?: object;',
          '    bad?: number;',
          '  }[];',
          '  required: string;',
          '  method?(x?: number): void;',
          '}',
          'export type Alias = { flag?: boolean } | string;',
          'export class Props {',
          '  /** @default 1 */',
          '  readonly a?: number;',
          '  private b?: number;',
          '}',
        ].join('\n'),
      );
      const report = undocumentedDefaults(path.join(dir, 'index.ts'), dir);
      const base = path.basename(dir);
      expect(report.missing).toEqual([
        `${base}/spec.ts:5: Spec.image`,
        `${base}/spec.ts:7: Spec.empty`,
        `${base}/spec.ts:11: Spec.nested.bad`,
        `${base}/spec.ts:16: Alias.flag`,
      ]);
      expect(report.optional).toBe(7);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
