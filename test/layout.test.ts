/**
 * The layout of src/: folders are layers, and a file never imports one above it; no import circle;
 * no file a reader must scroll. Read from the sources themselves (relative imports, type-only ones
 * included), so a change that breaks the layout fails here with the import that breaks it.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { circles, importGraph, layerBreaks, layerOf, longFiles } from './support/import-graph';

const SRC = path.join(__dirname, '..', 'src');

/**
 * Bottom to top. A file may import its own folder and the folders listed before it; the entry files
 * at the top of src/ (index.ts, main.ts) may import anything.
 */
const LAYERS = [
  // What every layer shares: TOML, YAML, versions, quantities, name patterns, reading input files.
  'base',
  // The input: TidbCluster types, load, validate, defaults, resolve.
  'tidbcluster',
  // Beside the cluster: the TidbInitializer (root's password, users, the initial SQL).
  'initializer',
  // Beside the cluster: the TidbMonitor, and each cluster's monitoring.
  'monitoring',
  // Beside the cluster: Backup, BackupSchedule and Restore documents, their storage and BR's arguments.
  'backup',
  // The inputs read together: settings, clusters and the documents tied to them (no cdk8s).
  'load',
  // The manifests: one construct per component; config and scripts as pure functions.
  'render',
  // The pull-request impact report.
  'diff',
  // The companion controller, its own floors bottom to top.
  'controller/runtime',
  'controller/model',
  'controller/clients',
  'controller/records',
  'controller/view',
  'controller/plan',
  'controller/actions',
  'controller/reconcile',
  'controller/discovery',
  'controller',
  // Commands.
  'cli',
];

/** Layers that never see each other although neither is above the other in the list. */
const APART: readonly [string, string][] = [
  ['controller', 'render'],
  ['controller', 'diff'],
];

/** Longest a file may be. */
const MAX_LINES = 500;

describe('the layout of src/', () => {
  const graph = importGraph(SRC);

  test('every file is in a known layer', () => {
    const unknown = [...graph.keys()].filter((f) => layerOf(f, LAYERS) === undefined);
    expect(unknown).toEqual([]);
  });

  test('no file imports a layer above its own, or one it is kept apart from', () => {
    expect(layerBreaks(graph, LAYERS, APART)).toEqual([]);
  });

  test('no import circle', () => {
    expect(circles(graph)).toEqual([]);
  });

  test(`no file over ${MAX_LINES} lines`, () => {
    expect(longFiles(SRC, MAX_LINES)).toEqual([]);
  });
});

describe('the layout check itself', () => {
  test('finds an import that climbs, one between layers kept apart, a circle and a long file', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'layout-'));
    try {
      const write = (file: string, text: string) => {
        fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
        fs.writeFileSync(path.join(root, file), text);
      };
      write('low/a.ts', "import type { B } from '../high/b';\nexport const a = 1;\n");
      write('high/b.ts', "import { a } from '../low/a';\nexport type B = typeof a;\n");
      write('side/c.ts', "export { a } from '../low/a';\nimport '../other/d';\n");
      write('other/d.ts', "import { c } from './e';\nexport const d = c;\n");
      write('other/e.ts', `import { d } from './d';\nexport const c = 1;\n${'// line\n'.repeat(10)}`);
      write('other/generated/f.ts', "import '../../high/b';\n");
      write('index.ts', "export * from './high/b';\n");
      const graph = importGraph(root);
      expect([...graph.keys()].sort()).toEqual(['high/b.ts', 'index.ts', 'low/a.ts', 'other/d.ts', 'other/e.ts', 'side/c.ts']);
      expect(layerBreaks(graph, ['low', 'high', 'side', 'other'], [['side', 'other']])).toEqual(['low/a.ts -> high/b.ts', 'side/c.ts -> other/d.ts']);
      expect(circles(graph).sort()).toEqual([['high/b.ts', 'low/a.ts'], ['other/d.ts', 'other/e.ts']]);
      expect(longFiles(root, 10)).toEqual(['other/e.ts: 12']);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
