/**
 * What a newcomer runs into first: the repository layout the docs create (inputs in tidb-clusters/,
 * the committed output in dist/) rendered from its root, YAML mistakes named at their line in words,
 * and a version written without its `v`. The layout cases run the built CLI (`node scripts/build/bundle.mjs`
 * makes it); the rest read YAML text through the loader the CLI uses.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { readClusterInputs } from '../../../src/load/clusters';
import { TEST_DIR } from '../../support/paths';

const root = join(TEST_DIR, '..');
const BIN = join(root, 'bin/tidb-gitops.js');

/** A cluster that renders, 28 lines. */
const CLUSTER = `apiVersion: pingcap.com/v1alpha1
kind: TidbCluster
metadata:
  name: basic
  namespace: tidb
spec:
  version: v8.5.7
  timezone: UTC
  pvReclaimPolicy: Retain
  discovery: {}
  pd:
    baseImage: pingcap/pd
    replicas: 1
    requests:
      storage: "1Gi"
    config: {}
  tikv:
    baseImage: pingcap/tikv
    replicas: 1
    requests:
      storage: "1Gi"
    config: {}
  tidb:
    baseImage: pingcap/tidb
    replicas: 1
    service:
      type: ClusterIP
    config: {}
`;

let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'tidb-gitops-newcomer-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

let count = 0;
function repo(files: Record<string, string>): string {
  const dir = join(tmp, `repo-${++count}`);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

const cli = (cwd: string, args: string[]) =>
  spawnSync(process.execPath, [BIN, ...args], { cwd, encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } });

/** `Kind name` of every object of a stream. */
function objects(stdout: string): string[] {
  return parseAllDocuments(stdout).map((d) => {
    const o = d.toJS() as { kind: string; metadata: { name: string } };
    return `${o.kind} ${o.metadata.name}`;
  });
}

/** Every problem loading one file of YAML text gives, as the CLI prints it. */
function problems(text: string): string[] {
  return readClusterInputs({ inputs: [{ file: 'cluster.yaml', text, explicit: true }] }).errors.flatMap((e) => e.split('\n'));
}

describe('the repository layout the docs create', () => {
  test('render . in the example repository skips its committed dist/ with one note', () => {
    const dir = join(tmp, 'gitops');
    cpSync(join(root, 'examples/gitops'), dir, { recursive: true });
    const r = cli(dir, ['render', '.']);
    expect(r.stderr).not.toContain('rename');
    expect(r.status).toBe(0);
    expect(r.stderr).toContain('note: skipped dist/tidb.basic.k8s.yaml: rendered output (what render -o writes), not input\n');
    expect(r.stderr.match(/rendered output/g)).toHaveLength(1);
    const kinds = objects(r.stdout);
    expect(kinds.filter((k) => k === 'StatefulSet basic-pd')).toHaveLength(1);
    // What it renders is what dist/ holds, and the example's Flux objects besides.
    const committed = objects(readFileSync(join(dir, 'dist/tidb.basic.k8s.yaml'), 'utf8'));
    expect(kinds.filter((k) => committed.includes(k))).toEqual(committed);
  });

  test('render . -o dist there writes dist/ again: the output found in it is no input inside the output directory', () => {
    const dir = join(tmp, 'gitops-out');
    cpSync(join(root, 'examples/gitops'), dir, { recursive: true });
    const before = readFileSync(join(dir, 'dist/tidb.basic.k8s.yaml'), 'utf8');
    const r = cli(dir, ['render', '.', '-o', 'dist']);
    expect(r.stderr).not.toContain('inside the output directory');
    expect(r.status).toBe(0);
    expect(readFileSync(join(dir, 'dist/tidb.basic.k8s.yaml'), 'utf8')).toBe(before);
    expect(cli(dir, ['render', '.', '-o', 'dist', '--check']).status).toBe(0);
  });

  test("argocd generate, whose path is the Application's source directory, renders the same repository", () => {
    const dir = join(tmp, 'gitops-argocd');
    cpSync(join(root, 'examples/gitops'), dir, { recursive: true });
    const r = cli(dir, ['argocd', 'generate']);
    expect(r.status).toBe(0);
    expect(r.stderr).toContain('note: skipped dist/tidb.basic.k8s.yaml: rendered output');
    expect(objects(r.stdout).filter((k) => k === 'Deployment basic-discovery')).toHaveLength(1);
  });

  test('the objects kept beside a cluster, written to dist/_passthrough.k8s.yaml, are skipped with it', () => {
    const configMap = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n  namespace: tidb\ndata:\n  a: b\n';
    const dir = repo({ 'tidb-clusters/basic.yaml': CLUSTER, 'tidb-clusters/extra.yaml': configMap });
    expect(cli(dir, ['render', 'tidb-clusters', '-o', 'dist']).status).toBe(0);
    const r = cli(dir, ['render', '.']);
    expect(r.status).toBe(0);
    expect(r.stderr).toContain(
      'note: skipped dist/_passthrough.k8s.yaml, dist/tidb.basic.k8s.yaml: rendered output (what render -o writes), not input\n',
    );
    expect(objects(r.stdout).filter((k) => k === 'ConfigMap extra')).toHaveLength(1);
  });

  test('a rendered file named on the command line is refused, with what to name instead', () => {
    const dir = repo({ 'tidb-clusters/basic.yaml': CLUSTER });
    expect(cli(dir, ['render', 'tidb-clusters', '-o', 'dist']).status).toBe(0);
    const r = cli(dir, ['render', 'tidb-clusters', 'dist/tidb.basic.k8s.yaml']);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(
      'dist/tidb.basic.k8s.yaml: this file is output of tidb-gitops render, not an input (the StatefulSet basic-pd carries the annotation tidb-gitops.io/settings, ' +
        'which only the renderer writes): name the files or the directory holding the TidbCluster documents instead',
    );
    expect(r.stderr).not.toContain('rename');
  });

  test("a StatefulSet of the user's own beside the clusters is passed through, not taken for output", () => {
    const own =
      'apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: web\n  namespace: tidb\n  annotations:\n    team: a\nspec:\n  serviceName: web\n' +
      '  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: web\n        image: nginx:1.27\n';
    const r = cli(repo({ 'tidb-clusters/basic.yaml': CLUSTER, 'apps/web.k8s.yaml': own }), ['render', '.']);
    expect(r.status).toBe(0);
    expect(r.stderr).not.toContain('skipped');
    expect(objects(r.stdout)).toContain('StatefulSet web');
  });

  test('node_modules is not walked', () => {
    const dir = repo({ 'tidb-clusters/basic.yaml': CLUSTER, 'node_modules/some-package/fixture.yaml': CLUSTER });
    const r = cli(dir, ['render', '.']);
    expect(r.stderr).not.toContain('duplicate cluster');
    expect(r.status).toBe(0);
  });
});

describe('YAML mistakes, at their line, in words', () => {
  const withLine = (n: number, from: string, to: string) => {
    const lines = CLUSTER.split('\n');
    expect(lines[n - 1]).toContain(from);
    lines[n - 1] = lines[n - 1].replace(from, to);
    return lines.join('\n');
  };

  test('an unclosed single quote on line 7 of 28 is reported at line 7, not at the end of the file', () => {
    expect(problems(withLine(7, 'v8.5.7', "'v8.5.7"))).toEqual([
      "cluster.yaml: document 1: (yaml) (line 7): not valid YAML: the quote ' that starts on line 7 is never closed: end the value with ' on its line, or write it without quotes",
    ]);
  });

  test('an unclosed double quote that runs on to the next line is reported where it starts', () => {
    expect(problems(withLine(4, 'name: basic', '"name: basic'))).toEqual([
      'cluster.yaml: document 1: (yaml) (line 4): not valid YAML: the quote " that starts on line 4 is never closed: end the value with " on its line, or write it without quotes',
    ]);
  });

  test('a key without its colon among other keys', () => {
    expect(problems(withLine(13, 'replicas: 1', 'replicas 1'))).toEqual([
      'cluster.yaml: document 1: (yaml) (line 13): not valid YAML: a key needs a colon and a space after it: write "replicas: 1"',
    ]);
    expect(problems(withLine(13, 'replicas: 1', 'replicas:1'))).toEqual([
      'cluster.yaml: document 1: (yaml) (line 13): not valid YAML: a key needs a colon and a space after it: write "replicas: 1"',
    ]);
  });

  test('a key without its colon, alone in its mapping (valid YAML: the mapping reads as text)', () => {
    expect(problems(withLine(27, 'type: ClusterIP', 'type ClusterIP'))).toEqual([
      'cluster.yaml: document 1: spec.tidb.service (line 27): expected a mapping, got "type ClusterIP": a key needs a colon and a space after it ("type: ClusterIP")',
    ]);
  });

  test('a tab used for indentation', () => {
    expect(problems(withLine(13, '    replicas', '\treplicas'))).toEqual([
      'cluster.yaml: document 1: (yaml) (line 13): not valid YAML: a tab is used for indentation here: YAML indents with spaces only; replace the tab with spaces',
    ]);
  });

  test('a list item among the keys of a mapping', () => {
    expect(problems(withLine(13, 'replicas: 1', '- replicas: 1'))).toEqual([
      'cluster.yaml: document 1: (yaml) (line 13): not valid YAML: a list item ("- ") among the keys of a mapping (line 12 holds a key at the same column): ' +
        'one level holds either keys or list items, not both; remove the "-", or put the list under a key of its own',
    ]);
  });

  test('a key of a list item written at the column of its "-"', () => {
    const text = withLine(27, 'type: ClusterIP', 'type: ClusterIP\n  tolerations:\n    - key: dedicated\n    effect: NoSchedule');
    expect(problems(text)).toEqual([
      'cluster.yaml: document 1: (yaml) (line 30): not valid YAML: a key at the column of the "-" that starts a list item on line 29: ' +
        'to put it in that item, indent it by 6 spaces, after the "- "; to end the list, indent it like the key that holds the list',
    ]);
  });

  test('a [ never closed, reported where it opens', () => {
    expect(problems(withLine(16, 'config: {}', 'config: {log: {level: info}'))).toEqual([
      'cluster.yaml: document 1: (yaml) (line 16): not valid YAML: the { that starts on line 16 is never closed: end the mapping with }',
    ]);
    expect(problems('a: [b\n')).toEqual([
      'cluster.yaml: document 1: (yaml) (line 1): not valid YAML: the [ that starts on line 1 is never closed: end the list with ]',
    ]);
  });

  test('a line indented deeper than the key before it, whose value is written', () => {
    expect(problems(withLine(14, '    requests:', '      requests:'))).toEqual([
      'cluster.yaml: document 1: (yaml) (line 14): not valid YAML: this line is indented deeper than the key on line 13, whose value is already written after it: line it up with the keys beside it',
    ]);
  });

  test('a value holding ": "', () => {
    expect(problems(withLine(8, 'timezone: UTC', 'timezone: zone: UTC'))).toEqual([
      'cluster.yaml: document 1: (yaml) (line 8): not valid YAML: the value "zone: UTC" holds ": ", which starts a mapping here: quote the value (\'zone: UTC\') if the colon is part of it',
    ]);
  });

  test('a key indented like no key around it', () => {
    expect(problems(withLine(13, '    replicas', '   replicas'))).toEqual([
      'cluster.yaml: document 1: (yaml) (line 13): not valid YAML: this line is indented by 3 spaces, unlike the lines it belongs with: ' +
        'the keys of one mapping, and the "-" of the items of one list, start at the same column',
    ]);
  });

  test.each([
    [
      'a backslash in a double-quoted value',
      'timezone: UTC',
      'timezone: "C:\\q"',
      'not valid YAML: \\q is no escape in a double-quoted ("...") value: write \\\\ for a backslash, or quote the value with \' instead',
    ],
    [
      'a value starting with @',
      'timezone: UTC',
      'timezone: @UTC',
      'not valid YAML: a value cannot start with @ unquoted: quote it ("@...")',
    ],
    [
      'a ] that closes nothing',
      'timezone: UTC',
      'timezone: ]UTC',
      'not valid YAML: a ] that closes nothing: remove it, or quote the value it is part of',
    ],
    [
      'text after a quoted value',
      'timezone: UTC',
      'timezone: "UTC"+8',
      'not valid YAML: something follows the end of a value on this line: a quoted value ends at its closing quote; remove what follows it, or quote the whole value',
    ],
  ])('%s', (_name, from, to, message) => {
    expect(problems(withLine(8, from, to))).toEqual([`cluster.yaml: document 1: (yaml) (line 8): ${message}`]);
  });

  test('each document of a stream says its own first mistake', () => {
    const text = `${withLine(7, 'v8.5.7', '"v8.5.7')}---\n${withLine(13, 'replicas: 1', 'replicas 1')}`;
    expect(problems(text)).toEqual([
      'cluster.yaml: document 1: (yaml) (line 7): not valid YAML: the quote " that starts on line 7 is never closed: end the value with " on its line, or write it without quotes',
      'cluster.yaml: document 2: (yaml) (line 42): not valid YAML: a key needs a colon and a space after it: write "replicas: 1"',
    ]);
  });
});

test("docs/reference.md's YAML mistakes sample is what render prints for it", () => {
  const reference = readFileSync(join(root, 'docs/reference.md'), 'utf8');
  const open = reference.indexOf('```', reference.indexOf('(`test/fixtures/newcomer/cluster.yaml`)'));
  const start = reference.indexOf('\n', open) + 1;
  const r = cli(join(root, 'test/fixtures/newcomer'), ['render', 'cluster.yaml']);
  expect(r.status).toBe(1);
  expect(r.stdout).toBe('');
  expect(reference.slice(start, reference.indexOf('```', start))).toBe(r.stderr);
});

describe('a version without its v', () => {
  test('spec.version: 8.5.8 is refused where it is written, with the tag meant', () => {
    expect(problems(CLUSTER.replace('version: v8.5.7', 'version: 8.5.8'))).toEqual([
      'cluster.yaml: document 1: spec.version (line 7): pingcap/pd:8.5.8 is no image PingCAP publishes: its release tags start with "v" (pingcap/pd:v8.5.8); write v8.5.8',
    ]);
  });

  test("a component's version, and PingCAP's images under a registry's name", () => {
    const text = CLUSTER.replace('    baseImage: pingcap/tikv\n', '    baseImage: docker.io/pingcap/tikv\n    version: "8.5.8"\n').replace(
      '    baseImage: pingcap/tidb\n',
      '    baseImage: uhub.service.ucloud.cn/pingcap/tidb\n    version: 8.5.8-pre\n',
    );
    expect(problems(text)).toEqual([
      'cluster.yaml: document 1: spec.tikv.version (line 19): docker.io/pingcap/tikv:8.5.8 is no image PingCAP publishes: its release tags start with "v" (docker.io/pingcap/tikv:v8.5.8); write v8.5.8',
      'cluster.yaml: document 1: spec.tidb.version (line 26): uhub.service.ucloud.cn/pingcap/tidb:8.5.8-pre is no image PingCAP publishes: its release tags start with "v" ' +
        '(uhub.service.ucloud.cn/pingcap/tidb:v8.5.8-pre); write v8.5.8-pre',
    ]);
  });

  test('images of ones own keep the tags they were built with', () => {
    const text = CLUSTER.replace('version: v8.5.7', 'version: 8.5.8').replace(
      /baseImage: pingcap\//g,
      'baseImage: registry.example.com/team/',
    );
    const read = readClusterInputs({ inputs: [{ file: 'cluster.yaml', text, explicit: true }] });
    expect(read.errors).toEqual([]);
    expect(read.clusters[0].resolved.pd?.image).toBe('registry.example.com/team/pd:8.5.8');
  });

  test('release tags with their v, and names such as latest, are taken', () => {
    for (const version of ['v8.5.8', 'latest', 'nightly', 'v8.5.0-pre']) {
      expect(problems(CLUSTER.replace('version: v8.5.7', `version: ${version}`))).toEqual([]);
    }
  });
});
