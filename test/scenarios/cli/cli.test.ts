import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { imageNote } from '../../support/cli-notes';
import { version } from '../../../package.json';
import { TEST_DIR } from '../../support/paths';

const root = join(TEST_DIR, '..');
const cli = (args: string[], input = '') =>
  spawnSync(process.execPath, [join(root, 'bin/tidb-gitops.js'), ...args], { cwd: root, input, encoding: 'utf8' });

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tidb-gitops-cli-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const basic = readFileSync(join(root, 'examples/basic/tidb-cluster.yaml'), 'utf8');

describe('tidb-gitops render', () => {
  test('prints only manifests on stdout, byte-identical across runs', () => {
    const a = cli(['render', 'examples/basic']);
    const b = cli(['render', 'examples/basic/tidb-cluster.yaml']);
    expect(a.status).toBe(0);
    expect(a.stderr).toBe(imageNote('basic'));
    expect(a.stdout).toBe(b.stdout);
    const docs = parseAllDocuments(a.stdout).map((d) => d.toJS());
    expect(docs).toHaveLength(20);
    expect(docs.every((d) => typeof d.apiVersion === 'string' && typeof d.kind === 'string')).toBe(true);
  });

  test('reads stdin with -', () => {
    const r = cli(['render', '-'], basic);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(cli(['render', 'examples/basic']).stdout);
  });

  test('walks directories recursively in sorted order; other objects pass through after the clusters', () => {
    const tree = join(dir, 'tree');
    mkdirSync(join(tree, 'b'), { recursive: true });
    writeFileSync(join(tree, 'b', 'one.yml'), basic.replace('name: basic', 'name: one'));
    writeFileSync(
      join(tree, 'a.yaml'),
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n---\n${basic.replace('name: basic', 'name: two')}\n---\n`,
    );
    writeFileSync(join(tree, 'notes.txt'), 'not yaml at all: [');
    const r = cli(['render', tree]);
    expect(r.status).toBe(0);
    expect(r.stderr).toBe(imageNote('two', 'one'));
    const docs = parseAllDocuments(r.stdout).map((d) => d.toJS());
    const names = docs.filter((d) => d.kind === 'StatefulSet').map((d) => d.metadata.name);
    expect(names).toEqual(['two-pd', 'two-tikv', 'two-tidb', 'one-pd', 'one-tikv', 'one-tidb']);
    expect(docs[docs.length - 1]).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } });
  });

  test('-o writes one file per cluster with the same content as stdout, and reports on stderr', () => {
    const out = join(dir, 'out');
    const r = cli(['render', 'examples/basic', '-o', out, '-n', 'db']);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`${imageNote('basic')}wrote ${out}/db.basic.k8s.yaml (20 objects)\n`);
    expect(readdirSync(out)).toEqual(['db.basic.k8s.yaml']);
    expect(readFileSync(join(out, 'db.basic.k8s.yaml'), 'utf8')).toBe(cli(['render', 'examples/basic', '--namespace=db']).stdout);
  });

  test('--check compares DIR with what the inputs render and writes nothing; --prune covers removed clusters', () => {
    const out = join(dir, 'check');
    const check = (...extra: string[]) => cli(['render', 'examples/basic', '-o', out, '-n', 'db', '--check', ...extra]);
    let r = check();
    expect([r.status, r.stderr]).toEqual([
      3,
      `${out}/db.basic.k8s.yaml: missing\n${out} is out of date: render it again and commit the result\n`,
    ]);
    expect(() => readdirSync(out)).toThrow();
    expect(cli(['render', 'examples/basic', '-o', out, '-n', 'db']).status).toBe(0);
    r = check();
    expect([r.status, r.stdout, r.stderr]).toEqual([0, '', `${out} is up to date (1 file)\n`]);
    writeFileSync(join(out, 'db.basic.k8s.yaml'), readFileSync(join(out, 'db.basic.k8s.yaml'), 'utf8').replace('v8.5', 'v8.4'));
    expect(check().stderr).toContain(`${out}/db.basic.k8s.yaml: differs from what the inputs render`);
    expect(check().status).toBe(3);
    // A cluster no longer in the inputs: stale only when --prune says DIR holds nothing else rendered.
    expect(cli(['render', 'examples/basic', '-o', out, '-n', 'db']).status).toBe(0);
    writeFileSync(join(out, 'db.gone.k8s.yaml'), 'kind: ConfigMap\n');
    writeFileSync(join(out, 'kustomization.yaml'), 'resources: []\n');
    expect(check().status).toBe(0);
    r = check('--prune');
    expect([r.status, r.stderr.split('\n')[0]]).toEqual([3, `${out}/db.gone.k8s.yaml: no input renders it any more`]);
    r = cli(['render', 'examples/basic', '-o', out, '-n', 'db', '--prune']);
    expect(r.stderr).toBe(
      `${imageNote('basic')}wrote ${out}/db.basic.k8s.yaml (20 objects)\ndeleted ${out}/db.gone.k8s.yaml (no input renders it any more)\n`,
    );
    expect(readdirSync(out).sort()).toEqual(['db.basic.k8s.yaml', 'kustomization.yaml']);
    expect(check('--prune').status).toBe(0);
    r = cli(['render', 'examples/basic', '--check']);
    expect([r.status, r.stderr.split('\n')[0]]).toEqual([2, 'tidb-gitops: --check needs -o DIR']);
  });

  test('--controller-image sets the discovery image of clusters that name none', () => {
    const image = (args: string[]) =>
      parseAllDocuments(cli(['render', 'examples/basic', ...args]).stdout)
        .map((d) => d.toJS())
        .find((d) => d.kind === 'Deployment').spec.template.spec.containers[0].image;
    expect(image(['--controller-image', 'registry.local/tidb-gitops:dev'])).toBe('registry.local/tidb-gitops:dev');
    expect(image(['--controller-image=registry.local/tidb-gitops:dev'])).toBe('registry.local/tidb-gitops:dev');
    expect(image([])).toBe(`ghcr.io/tidb-gitops/tidb-gitops:${version}`);
    const r = cli(['render', 'examples/basic', '--controller-image']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--controller-image needs an image');
  });

  test('--version and --help', () => {
    expect(cli(['--version']).stdout).toBe(`${version}\n`);
    const help = cli(['--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('render PATH...');
    expect(cli(['render', '--help']).stdout).toContain('--output DIR');
  });
});
