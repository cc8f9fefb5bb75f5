/**
 * The layout of src/: folders are layers, and a file never imports one above it; no import circle;
 * no file a reader must scroll; each rule written in one place; components laid out alike; tests laid
 * out as the sources are. Read from the sources themselves (relative imports, type-only ones
 * included), so a change that breaks the layout fails here with the import or the line that breaks it.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { circles, foundOutside, importGraph, layerBreaks, layerOf, longFiles } from '../support/import-graph';
import { TEST_DIR } from '../support/paths';

const SRC = path.join(TEST_DIR, '..', 'src');

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
  // Beside the cluster: SqlUser and SqlRole documents (the accounts the controller keeps), their schema, links and privileges.
  'database',
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

/**
 * Rules written once: code matching `pattern` may only be in `homes` (paths under src/, or under
 * `under` where given; none: nowhere but comments). A second copy of a rule fails here with its file
 * and line.
 */
const ONE_PLACE: readonly {
  readonly rule: string;
  readonly homes: readonly string[];
  readonly pattern: RegExp;
  readonly under?: string;
}[] = [
  {
    rule: 'the edit distance behind every did-you-mean',
    homes: ['base/suggest.ts'],
    pattern: /function\s+(editDistance|closest\w*)\b|editDistance\(/,
  },
  {
    rule: 'how many Up TiKV stores a store removal must leave (replication.max-replicas)',
    homes: ['controller/plan/store-safety.ts'],
    pattern: /[<>]=?\s*[\w.]*maxReplicas\b|\bmaxReplicas\s*[<>]|engine\s*!==?\s*'tiflash'/,
  },
  {
    rule: 'why a plan waits is its code, never its reason matched with a pattern',
    homes: [],
    pattern: /\.(test|exec)\((p\.)?reason\)|\breason\.(match|search)\(/,
  },
  {
    rule: "what to read from PD is the planner's to say (plan/probes.ts), not the reconciler's",
    homes: [],
    pattern: /targetReplicas\(|scal(ing|es)In\b/i,
    under: 'controller/reconcile',
  },
  {
    rule: 'the names the renderer and the controller share',
    homes: ['tidbcluster/names.ts'],
    pattern: /\}-peer\b|`backup-\$\{|`backup-log-|'batch\.kubernetes\.io\/job-name'/,
  },
  {
    rule: 'the contract between the renderer and the controller',
    homes: ['tidbcluster/contract/cluster-info.ts', 'tidbcluster/contract/settings.ts', 'tidbcluster/contract/monitoring.ts'],
    pattern:
      /\b(interface|type)\s+(ComponentSettings|ControllerClusterInfo|InitializerInfo|BackupRetentionInfo|MonitoringPublishInfo)\s*[={<]|'TIDB_GITOPS_(CLUSTER|MONITORING)'/,
  },
  { rule: 'readers named for what they read (no two readInputs)', homes: [], pattern: /\breadInputs\b/ },
];

/** The component constructs: each extends one base and keeps its config and script context alike. */
const COMPONENT_FILES = ['pd', 'pdms', 'tikv', 'tidb', 'tiflash', 'ticdc', 'pump', 'tiproxy'];

describe('one rule, one place', () => {
  test.each(ONE_PLACE.map((r) => [r.rule, r] as const))('%s', (_, r) => {
    expect(foundOutside(path.join(SRC, r.under ?? ''), r.pattern, r.homes)).toEqual([]);
  });

  test.each(COMPONENT_FILES)('render/%s.ts extends the component base; its config and script context sit in config/ and scripts/', (c) => {
    expect(fs.readFileSync(path.join(SRC, 'render', `${c}.ts`), 'utf8')).toMatch(/extends ComponentConstruct\b/);
    expect(fs.existsSync(path.join(SRC, 'render/config', `${c}.ts`))).toBe(true);
    expect(fs.readFileSync(path.join(SRC, 'render/scripts', `${c}.ts`), 'utf8')).toMatch(/ScriptContext\b/);
  });
});

describe('the layout of test/', () => {
  const TEST = TEST_DIR;
  const testFiles = (dir: string): string[] =>
    fs
      .readdirSync(dir, { withFileTypes: true, recursive: true })
      .filter((e) => e.isFile() && e.name.endsWith('.test.ts'))
      .map((e) => path.relative(TEST, path.join(e.parentPath, e.name)));

  test('every test is a unit test, a scenario or a real-server suite, each a Jest project of its own', () => {
    const projects = (require(path.join(TEST, '..', 'jest.config.js')) as { projects: { displayName: string; roots: string[] }[] })
      .projects;
    expect(projects.map((p) => [p.displayName, p.roots])).toEqual([
      ['unit', ['<rootDir>/test/unit']],
      ['scenarios', ['<rootDir>/test/scenarios']],
      ['real', ['<rootDir>/test/real']],
    ]);
    expect(testFiles(TEST).filter((f) => !/^(unit|scenarios|real)\//.test(f))).toEqual([]);
  });

  test('unit tests sit where their module sits: test/unit/<folder> is a folder of src/ (or of the repository: argocd, docs, scripts, test/support)', () => {
    const folders = [...new Set(testFiles(path.join(TEST, 'unit')).map((f) => path.dirname(path.relative('unit', f))))].filter(
      (d) => d !== '.',
    );
    const elsewhere = { docs: 'docs', scripts: 'scripts', support: 'test/support' } as Record<string, string>;
    const missing = folders.filter(
      (d) => !fs.existsSync(path.join(SRC, d)) && !(d in elsewhere && fs.existsSync(path.join(TEST, '..', elsewhere[d]))),
    );
    expect(missing).toEqual([]);
  });
});

describe('the formatting', () => {
  test('every source, test and script is as the formatter writes it (biome.json; `npm run format` rewrites them)', () => {
    const root = path.join(TEST_DIR, '..');
    const r = spawnSync(process.execPath, [require.resolve('@biomejs/biome/bin/biome'), 'format', '--colors=off', '--max-diagnostics=20'], {
      cwd: root,
      encoding: 'utf8',
    });
    const unformatted = [...`${r.stdout}${r.stderr}`.matchAll(/^(\S+\.(?:ts|mjs|js)) format\b/gm)].map((m) => m[1]);
    expect({ status: r.status, unformatted }).toEqual({ status: 0, unformatted: [] });
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
      expect(layerBreaks(graph, ['low', 'high', 'side', 'other'], [['side', 'other']])).toEqual([
        'low/a.ts -> high/b.ts',
        'side/c.ts -> other/d.ts',
      ]);
      expect(circles(graph).sort()).toEqual([
        ['high/b.ts', 'low/a.ts'],
        ['other/d.ts', 'other/e.ts'],
      ]);
      expect(longFiles(root, 10)).toEqual(['other/e.ts: 12']);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
