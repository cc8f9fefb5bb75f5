/**
 * `--format text|json|github` of render, render --check and diff; render --check's object summary
 * and unified diff (-v); render's own help; did-you-mean for unknown commands and options; when the
 * default controller image note is said. The CLI runs in process.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runMain, tempFiles } from '../../support/cli-run';
import { annotation, escapeData, escapeProperty, parseProblem, workflowCommand } from '../../../src/cli/format';
import { objectDifferences } from '../../../src/cli/stale';
import { unifiedDiff } from '../../../src/cli/text-diff';
import { DEFAULT_CONTROLLER_IMAGE, imageNote } from '../../support/cli-notes';
import { TEST_DIR } from '../../support/paths';

const root = join(TEST_DIR, '..');
const basic = readFileSync(join(root, 'examples/basic/tidb-cluster.yaml'), 'utf8');
const readme = join(root, 'test/fixtures/readme/cluster.yaml');

const run = runMain;
const { file, dir: tmpDir } = tempFiles('tidb-gitops-formats-');

describe('--format for input problems', () => {
  test('text is the default, byte for byte', () => {
    const plain = run(['render', readme]);
    expect(run(['render', readme, '--format', 'text'])).toEqual(plain);
    expect(plain.code).toBe(1);
    expect(plain.stderr).toBe(
      `${readme}: document 1: spec.pd.requests.storage (line 10): expected a Kubernetes quantity such as 10Gi or 500m, got "ten"\n` +
        `${readme}: document 1: spec.tikv.replicas (line 12): required field is missing\n` +
        `${readme}: document 1: spec.tikv.replica (line 14): unknown field; did you mean replicas?\n` +
        '3 problems found; nothing was rendered\n',
    );
  });

  test('json: one document on stderr with every error in its parts, stdout empty', () => {
    const r = run(['render', readme, '--format=json']);
    expect([r.code, r.stdout]).toEqual([1, '']);
    const doc = JSON.parse(r.stderr);
    expect(doc).toMatchObject({ command: 'render', exitCode: 1, warnings: [], notes: [] });
    expect(doc.errors).toEqual([
      expect.objectContaining({
        severity: 'error',
        file: readme,
        document: 1,
        path: 'spec.pd.requests.storage',
        line: 10,
        message: 'expected a Kubernetes quantity such as 10Gi or 500m, got "ten"',
      }),
      expect.objectContaining({ file: readme, path: 'spec.tikv.replicas', line: 12, message: 'required field is missing' }),
      expect.objectContaining({ file: readme, path: 'spec.tikv.replica', line: 14, message: 'unknown field; did you mean replicas?' }),
    ]);
    expect(doc.errors[2].text).toBe(`${readme}: document 1: spec.tikv.replica (line 14): unknown field; did you mean replicas?`);
  });

  test('github: one ::error per problem at its file and line, then the summary', () => {
    const r = run(['render', readme, '--format', 'github']);
    expect(r.code).toBe(1);
    expect(r.stderr.split('\n')).toEqual([
      `::error file=${readme},line=10,title=tidb-gitops::spec.pd.requests.storage: expected a Kubernetes quantity such as 10Gi or 500m, got "ten"`,
      `::error file=${readme},line=12,title=tidb-gitops::spec.tikv.replicas: required field is missing`,
      `::error file=${readme},line=14,title=tidb-gitops::spec.tikv.replica: unknown field; did you mean replicas?`,
      '3 problems found; nothing was rendered',
      '',
    ]);
  });

  test('warnings are ::warning annotations and JSON warnings; manifests still go to stdout', () => {
    const input = file('warn/cluster.yaml', basic.replace(/(tidb:\n(?:.*\n)*?\s+replicas: )1/, '$1010'));
    const text = run(['render', input, '--controller-image', 'example.com/c:1']);
    expect(text.code).toBe(0);
    const line = text.stderr.split('\n')[0];
    expect(line).toMatch(/^.*cluster\.yaml: document 1: spec\.tidb\.replicas \(line \d+\): warning: 010 is read as 8/);
    const github = run(['render', input, '--controller-image', 'example.com/c:1', '--format', 'github']);
    expect(github.stdout).toBe(text.stdout);
    expect(github.stderr).toMatch(
      new RegExp(`^::warning file=${input.replace(/[/.]/g, '\\$&')},line=\\d+,title=tidb-gitops::spec\\.tidb\\.replicas: 010 is read as 8`),
    );
    const json = JSON.parse(run(['render', input, '--controller-image', 'example.com/c:1', '--format', 'json']).stderr);
    expect(json.errors).toEqual([]);
    expect(json.warnings).toEqual([
      expect.objectContaining({
        severity: 'warning',
        file: input,
        path: 'spec.tidb.replicas',
        message: expect.stringMatching(/^010 is read as 8/),
      }),
    ]);
  });

  test('a problem that names no document: the file when it is an input, else the whole line', () => {
    const missing = join(tmpDir(), 'nowhere.yaml');
    const json = JSON.parse(run(['render', missing, '--format', 'json']).stderr);
    expect(json.errors[0]).toMatchObject({ file: missing, message: 'no such file or directory' });
    expect(parseProblem('TIDB_GITOPS_KUBE_VERSION: Kubernetes 1.2 is not supported', 'error')).toEqual({
      severity: 'error',
      message: 'TIDB_GITOPS_KUBE_VERSION: Kubernetes 1.2 is not supported',
      text: 'TIDB_GITOPS_KUBE_VERSION: Kubernetes 1.2 is not supported',
    });
    expect(parseProblem('a.yaml: document 2: metadata.labels["x: y"] (line 5): bad key', 'error')).toMatchObject({
      file: 'a.yaml',
      document: 2,
      path: 'metadata.labels["x: y"]',
      line: 5,
      message: 'bad key',
    });
    expect(parseProblem('a.yaml: document 1: (yaml) (line 3): not valid YAML: x', 'error')).toMatchObject({
      file: 'a.yaml',
      line: 3,
      message: 'not valid YAML: x',
    });
    expect(parseProblem('a.yaml: document 1: warning: spec.pd is not set', 'error')).toMatchObject({
      severity: 'warning',
      file: 'a.yaml',
      message: 'spec.pd is not set',
    });
    // A long word that is no path after all is given up on at once, not after trying every split of it.
    const long = `a.yaml: document 1: ${'a'.repeat(200_000)} b: x`;
    const started = Date.now();
    expect(parseProblem(long, 'error')).toMatchObject({ file: 'a.yaml', message: `${'a'.repeat(200_000)} b: x` });
    expect(Date.now() - started).toBeLessThan(1000);
  });
});

describe('workflow commands', () => {
  test('escape %, CR and LF in the message, and also : and , in properties', () => {
    expect(escapeData('100% done,\r\nnext: a')).toBe('100%25 done,%0D%0Anext: a');
    expect(escapeProperty('dir/a:b,c%.yaml')).toBe('dir/a%3Ab%2Cc%25.yaml');
    expect(workflowCommand('error', { file: 'x,y.yaml', line: 3, title: 'tidb-gitops' }, 'first line, 50%\nsecond')).toBe(
      '::error file=x%2Cy.yaml,line=3,title=tidb-gitops::first line, 50%25%0Asecond',
    );
    const p = parseProblem('odd, name.yaml: document 2: spec.config (line 7): a message with 5% and, a comma', 'error');
    expect(annotation({ ...p, message: `${p.message}\nand a second line` })).toBe(
      '::error file=odd%2C name.yaml,line=7,title=tidb-gitops::document 2: spec.config: a message with 5%25 and, a comma%0Aand a second line',
    );
  });
});

describe('render --check: which objects differ', () => {
  const out = () => join(tmpDir(), 'check-out');
  const args = (...extra: string[]) => [
    'render',
    join(root, 'examples/basic'),
    '-o',
    out(),
    '-n',
    'db',
    '--controller-image',
    'example.com/c:1',
    '--check',
    '--prune',
    ...extra,
  ];

  beforeAll(() => {
    expect(run(['render', join(root, 'examples/basic'), '-o', out(), '-n', 'db', '--controller-image', 'example.com/c:1']).code).toBe(0);
    const path = join(out(), 'db.basic.k8s.yaml');
    const text = readFileSync(path, 'utf8').replace('image: pingcap/pd:v8.5.7', 'image: pingcap/pd:v8.4.0');
    // The discovery Service taken out: the inputs render it, the committed file lacks it.
    const docs = text.split(/^---\n/m);
    const service = docs.findIndex((d) => d.startsWith('apiVersion: v1\nkind: Service\n') && d.includes('name: basic-discovery\n'));
    writeFileSync(
      path,
      [...docs.slice(0, service), ...docs.slice(service + 1)].join('---\n') +
        '---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: stray\n  namespace: db\n',
    );
    writeFileSync(join(out(), 'db.gone.k8s.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gone\n');
  });

  test('text without -v is what it always was', () => {
    const r = run(args());
    expect(r.code).toBe(3);
    expect(r.stderr).toBe(
      `${out()}/db.basic.k8s.yaml: differs from what the inputs render\n${out()}/db.gone.k8s.yaml: no input renders it any more\n${out()} is out of date: render it again and commit the result\n`,
    );
    expect(run(args('--format', 'text'))).toEqual(r);
  });

  test('-v lists the objects changed, added and removed, and the diff that makes the committed file the rendered one', () => {
    const r = run(args('-v'));
    expect(r.code).toBe(3);
    const lines = r.stderr.split('\n');
    expect(lines.slice(0, 4)).toEqual([
      `${out()}/db.basic.k8s.yaml: differs from what the inputs render`,
      '  Service db/basic-discovery: added',
      '  StatefulSet db/basic-pd: changed',
      '  ConfigMap db/stray: removed',
    ]);
    expect(lines).toContain(`--- ${out()}/db.basic.k8s.yaml`);
    expect(lines).toContain(`+++ ${out()}/db.basic.k8s.yaml (rendered)`);
    expect(lines).toContain('-          image: pingcap/pd:v8.4.0');
    expect(lines).toContain('+          image: pingcap/pd:v8.5.7');
    expect(lines).toContain(`${out()}/db.gone.k8s.yaml: no input renders it any more`);
    expect(lines).toContain('  ConfigMap gone: removed');
    expect(lines).toContain('-kind: ConfigMap');
    expect(lines[lines.length - 2]).toBe(`${out()} is out of date: render it again and commit the result`);
    expect(run(['render', 'x.yaml', '-v'])).toMatchObject({ code: 2, stderr: expect.stringContaining('-v needs --check') });
  });

  test('json: each stale file with its status, first differing line and objects; the diff with -v', () => {
    const doc = JSON.parse(run(args('--format', 'json')).stderr);
    expect(doc).toMatchObject({ command: 'render --check', exitCode: 3, directory: out(), errors: [] });
    expect(doc.stale).toEqual([
      {
        file: `${out()}/db.basic.k8s.yaml`,
        status: 'changed',
        line: expect.any(Number),
        objects: [
          { kind: 'Service', namespace: 'db', name: 'basic-discovery', change: 'added' },
          { kind: 'StatefulSet', namespace: 'db', name: 'basic-pd', change: 'changed' },
          { kind: 'ConfigMap', namespace: 'db', name: 'stray', change: 'removed' },
        ],
      },
      { file: `${out()}/db.gone.k8s.yaml`, status: 'extra', line: 1, objects: [{ kind: 'ConfigMap', name: 'gone', change: 'removed' }] },
    ]);
    const verbose = JSON.parse(run(args('--format', 'json', '--verbose')).stderr);
    expect(verbose.stale[0].diff).toMatch(/^--- .*\n\+\+\+ .*\(rendered\)\n@@ -\d+,\d+ \+\d+,\d+ @@\n/);
    expect(applyDiff(readFileSync(join(out(), 'db.basic.k8s.yaml'), 'utf8'), verbose.stale[0].diff)).toBe(
      run(['render', join(root, 'examples/basic'), '-n', 'db', '--controller-image', 'example.com/c:1']).stdout,
    );
  });

  test('github: an ::error per stale file, naming its objects; with -v the diff in a group', () => {
    const r = run(args('--format', 'github'));
    const lines = r.stderr.split('\n');
    expect(lines[0]).toMatch(
      new RegExp(
        `^::error file=${out()}/db\\.basic\\.k8s\\.yaml,line=\\d+,title=tidb-gitops::differs from what the inputs render: Service db/basic-discovery added, StatefulSet db/basic-pd changed, ConfigMap db/stray removed$`,
      ),
    );
    expect(lines[1]).toBe(
      `::error file=${out()}/db.gone.k8s.yaml,line=1,title=tidb-gitops::no input renders it any more: ConfigMap gone removed`,
    );
    expect(lines[2]).toBe(`${out()} is out of date: render it again and commit the result`);
    const verbose = run(args('--format', 'github', '-v')).stderr;
    expect(verbose).toContain(`::group::diff of ${out()}/db.basic.k8s.yaml\n--- `);
    expect(verbose).toContain('+          image: pingcap/pd:v8.5.7\n');
    expect(verbose).toContain('::endgroup::\n');
  });

  test('an up-to-date directory', () => {
    const fresh = join(tmpDir(), 'fresh');
    expect(run(['render', join(root, 'examples/basic'), '-o', fresh, '--controller-image', 'example.com/c:1']).code).toBe(0);
    const doc = JSON.parse(
      run(['render', join(root, 'examples/basic'), '-o', fresh, '--controller-image', 'example.com/c:1', '--check', '--format', 'json'])
        .stderr,
    );
    expect(doc).toMatchObject({ command: 'render --check', exitCode: 0, stale: [] });
  });
});

/** Applies a unified diff's hunks to `text` (checking every kept and removed line). */
function applyDiff(text: string, diff: string): string {
  const old = text === '' ? [] : text.replace(/\n$/, '').split('\n');
  const out: string[] = [];
  let at = 0;
  const lines = diff.replace(/\n$/, '').split('\n').slice(2);
  for (let i = 0; i < lines.length; i++) {
    const h = /^@@ -(\d+),(\d+) \+\d+,\d+ @@$/.exec(lines[i]);
    if (!h) throw new Error(`not a hunk header: ${lines[i]}`);
    const start = Number(h[2]) === 0 ? Number(h[1]) : Number(h[1]) - 1;
    while (at < start) out.push(old[at++]);
    for (; i + 1 < lines.length && !lines[i + 1].startsWith('@@'); i++) {
      const l = lines[i + 1];
      if (l[0] === '+') out.push(l.slice(1));
      else {
        if (old[at] !== l.slice(1))
          throw new Error(`line ${at + 1} is ${JSON.stringify(old[at])}, the diff says ${JSON.stringify(l.slice(1))}`);
        if (l[0] === ' ') out.push(old[at]);
        at++;
      }
    }
  }
  while (at < old.length) out.push(old[at++]);
  return out.length === 0 ? '' : `${out.join('\n')}\n`;
}

describe('unified diff', () => {
  test('applying it to the old text gives the new one, over generated texts', () => {
    let seed = 42;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let c = 0; c < 500; c++) {
      const a = Array.from({ length: random(40) }, () => `l${random(6)}`);
      const b = a.flatMap((l) =>
        random(5) === 0 ? [] : random(6) === 0 ? [l, `n${random(4)}`] : random(7) === 0 ? [`m${random(3)}`] : [l],
      );
      const [before, after] = [a, b].map((x) => (x.length ? `${x.join('\n')}\n` : ''));
      const diff = unifiedDiff(before, after, { from: 'a', to: 'b' });
      expect(before === after ? diff === '' : applyDiff(before, diff) === after).toBe(true);
    }
  });

  test('objects compare by kind, namespace and name, whatever the order of their keys', () => {
    const a = 'kind: ConfigMap\nmetadata: {name: x}\ndata: {a: "1", b: "2"}\n';
    const b = 'metadata: {name: x}\ndata: {b: "2", a: "1"}\nkind: ConfigMap\n';
    expect(objectDifferences(a, b)).toEqual([]);
    expect(objectDifferences(a, b.replace('"2"', '"3"'))).toEqual([{ kind: 'ConfigMap', name: 'x', change: 'changed' }]);
  });
});

describe('diff --format', () => {
  let changed: string;
  beforeAll(() => {
    changed = file('diff-new/cluster.yaml', basic.replace('version: v8.5.7', 'version: v8.5.8'));
  });
  const base = () => join(root, 'examples/basic');

  test('text is the Markdown report as before; json is the report as data, with the exit code', () => {
    const text = run(['diff', base(), changed]);
    expect(run(['diff', base(), changed, '--format', 'text'])).toEqual(text);
    expect(text.stdout).toMatch(/^## tidb-gitops diff\n/);
    const r = run(['diff', '--exit-code', '--format', 'json', base(), changed]);
    expect(r.code).toBe(4);
    expect(r.stderr).toBe('');
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ command: 'diff', exitCode: 4, errors: [], report: { changed: true, riskCount: 3 } });
    expect(doc.report.clusters[0].risks.map((x: { id: string }) => x.id)).toEqual([
      'single-replica-restart',
      'single-replica-restart',
      'single-replica-restart',
    ]);
  });

  test('github: the Markdown report on stdout, a ::warning per risk on stderr', () => {
    const r = run(['diff', base(), changed, '--format', 'github']);
    expect(r.stdout).toBe(run(['diff', base(), changed]).stdout);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^::warning title=tidb-gitops single-replica-restart::basic: PD has one replica: /);
  });

  test('input errors: json on stdout with report null; github annotations', () => {
    const r = run(['diff', base(), readme, '--format', 'json']);
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ command: 'diff', exitCode: 1, report: null });
    expect(doc.errors.map((e: { line: number }) => e.line)).toEqual([10, 12, 14]);
    const g = run(['diff', base(), readme, '--format', 'github']);
    expect(g.stderr).toContain(
      `::error file=${readme},line=14,title=tidb-gitops::spec.tikv.replica: unknown field; did you mean replicas?\n3 problems found; no report was made\n`,
    );
  });
});

describe('help and did-you-mean', () => {
  test("render --help prints render's own help; --help lists the commands", () => {
    const help = run(['render', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: tidb-gitops render PATH\.\.\. \[options\]\n/);
    expect(help.stdout).toContain('--format FORMAT');
    expect(run(['render', '-h']).stdout).toBe(help.stdout);
    const all = run(['--help']).stdout;
    expect(all).toContain("See 'tidb-gitops render --help'.");
    expect(all).not.toContain('--output DIR');
  });

  test('unknown commands, options and formats get a did-you-mean', () => {
    expect(run(['rendr', 'x']).stderr).toBe(
      'tidb-gitops: unknown command "rendr"; did you mean render?\nRun \'tidb-gitops --help\' for usage.\n',
    );
    expect(run(['dif', 'a', 'b']).stderr).toContain('unknown command "dif"; did you mean diff?');
    expect(run(['frobnicate']).stderr).toContain('unknown command "frobnicate"\n');
    expect(run(['--verison']).stderr).toContain('unknown option "--verison"; did you mean --version?');
    const r = run(['render', 'x.yaml', '--chek']);
    expect([r.code, r.stderr]).toEqual([
      2,
      'tidb-gitops: unknown option "--chek"; did you mean --check?\nRun \'tidb-gitops render --help\' for usage.\n',
    ]);
    expect(run(['render', 'x.yaml', '--namepsace=db']).stderr).toContain('unknown option "--namepsace=db"; did you mean --namespace?');
    expect(run(['diff', 'a', 'b', '--exit-cod']).stderr).toContain('unknown option "--exit-cod"; did you mean --exit-code?');
    expect(run(['render', 'x.yaml', '--format', 'jsn']).stderr).toContain(
      '--format: unknown format "jsn"; did you mean json? (formats: text, json, github)',
    );
    expect(run(['diff', 'a', 'b', '--format', 'yaml']).stderr).toContain('--format: unknown format "yaml" (formats: text, json, github)');
  });
});

describe('the default controller image note', () => {
  const settings = (image: string) => `apiVersion: tidb-gitops.io/v1alpha1\nkind: RenderSettings\ncontrollerImage: ${image}\n`;

  test('said when nothing names the image; not when a RenderSettings document names one, the default included', () => {
    const plain = file('note/plain/cluster.yaml', basic);
    expect(run(['render', plain]).stderr).toBe(imageNote('basic'));
    expect(JSON.parse(run(['render', plain, '--format', 'json']).stderr).notes).toEqual([imageNote('basic').trimEnd()]);
    const named = file('note/named/cluster.yaml', `${basic}---\n${settings(DEFAULT_CONTROLLER_IMAGE)}`);
    const r = run(['render', named]);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toContain(`image: ${DEFAULT_CONTROLLER_IMAGE}\n`);
    expect(run(['render', plain, '--controller-image', DEFAULT_CONTROLLER_IMAGE]).stderr).toBe('');
  });
});

describe("docs/reference.md's Output for CI samples are what render prints", () => {
  const reference = readFileSync(join(root, 'docs/reference.md'), 'utf8');
  /** The fenced block that follows the first line containing `marker`. */
  const block = (marker: string) => {
    const after = reference.slice(reference.indexOf(marker));
    return /```[a-z]*\n([\s\S]*?)```/.exec(after)![1];
  };
  const cli = (args: string[]) =>
    spawnSync(process.execPath, [join(root, 'bin/tidb-gitops.js'), ...args], { cwd: join(root, 'test/fixtures/readme'), encoding: 'utf8' });

  test('github', () => {
    expect(block('in a workflow step')).toBe(cli(['render', 'cluster.yaml', '--format', 'github']).stderr);
  });

  test('json, line by line in order (... stands for lines left out)', () => {
    const real = cli(['render', 'cluster.yaml', '--format', 'json']).stderr.split('\n');
    let at = 0;
    for (const line of block('and with `--format json`')
      .split('\n')
      .filter((l) => l !== '' && l !== '...')) {
      const found = real.indexOf(line, at);
      expect([line, found >= 0]).toEqual([line, true]);
      at = found + 1;
    }
  });
});
