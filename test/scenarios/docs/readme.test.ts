import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { TEST_DIR } from '../../support/paths';

const root = join(TEST_DIR, '..');

test('the generated sections of docs/reference.md (defaults, supported fields) match the code', () => {
  // scripts/generate/docs.mjs reads the built library, which `npm test` builds first.
  const r = spawnSync(process.execPath, [join(root, 'scripts/generate/docs.mjs'), '--check'], { encoding: 'utf8' });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
});

test('.ci/run runs the test command the README gives, which installs what the tests need and runs npm test', () => {
  expect(readFileSync(join(root, 'README.md'), 'utf8')).toMatch(/^bash scripts\/test\.sh\s/m);
  expect(readFileSync(join(root, '.ci/run'), 'utf8')).toMatch(/^exec bash scripts\/test\.sh$/m);
  const script = readFileSync(join(root, 'scripts/test.sh'), 'utf8');
  expect(script).toMatch(/^bash scripts\/test-assets\/kube-assets\.sh /m);
  expect(script.trimEnd().split('\n').at(-1)).toBe('npm test');
});

/** README.md and the documents under docs/, one after the other. */
const docs = (): string =>
  [
    'README.md',
    ...readdirSync(join(root, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ]
    .map((f) => readFileSync(join(root, f), 'utf8'))
    .join('\n');

/** The fenced block of the documentation that follows `marker` (a line of prose or the block's first line). */
function readmeBlock(marker: string): string {
  const readme = docs();
  const at = readme.indexOf(marker);
  expect(at).toBeGreaterThanOrEqual(0);
  const open = readme.lastIndexOf('```', at) > readme.lastIndexOf('\n\n', at) ? readme.lastIndexOf('```', at) : readme.indexOf('```', at);
  const start = readme.indexOf('\n', open) + 1;
  return readme.slice(start, readme.indexOf('```', start));
}

const cli = (args: string[], cwd = root) =>
  spawnSync(process.execPath, [join(root, 'bin/tidb-gitops.js'), ...args], { cwd, encoding: 'utf8' });

/** Every line of a README sample, but its `...` elisions, appears in `actual`, in order. */
function expectSampleOf(sample: string, actual: string): void {
  const lines = actual.split('\n');
  let at = 0;
  for (const line of sample.split('\n').filter((l) => l !== '' && l !== '...')) {
    const found = lines.indexOf(line, at);
    if (found < 0) throw new Error(`README sample line not in the real output (in order):\n${line}\n\nreal output:\n${actual}`);
    at = found + 1;
  }
}

test("README's input error example is what render prints for it", () => {
  const r = cli(['render', 'cluster.yaml'], join(root, 'test/fixtures/readme'));
  expect(r.status).toBe(1);
  expect(r.stdout).toBe('');
  expect(readmeBlock('all of them are reported at once')).toBe(r.stderr);
});

test("README's YAML 1.1 warning is what render prints for it", () => {
  const r = cli(['render', 'cluster.yaml'], join(root, 'test/fixtures/readme/yaml11'));
  expect(r.status).toBe(0);
  expectSampleOf(readmeBlock('error about that value says which reading it got'), r.stderr);
});

describe("README's impact report samples are what diff prints", () => {
  const base = readFileSync(join(root, 'examples/gitops/tidb-clusters/basic.yaml'), 'utf8');
  const report = (changed: string) => {
    const dir = mkdtempSync(join(tmpdir(), 'tidb-gitops-readme-'));
    try {
      mkdirSync(join(dir, 'old'));
      mkdirSync(join(dir, 'new'));
      writeFileSync(join(dir, 'old/basic.yaml'), base);
      writeFileSync(join(dir, 'new/basic.yaml'), changed);
      const r = cli(['diff', 'old', 'new'], dir);
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      return r.stdout;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  test('a version bump of the example cluster', () => {
    const bumped = base.replace('version: v8.5.7', 'version: v8.5.8');
    expect(bumped).not.toBe(base);
    expectSampleOf(readmeBlock('## tidb-gitops diff\n\n**1 cluster changed, 1 risk.**'), report(bumped));
  });

  test('a TiDB config change with a TiKV scale-in', () => {
    const changed = base
      .replace(/(  tikv:\n(?:    .*\n)*?    replicas: )3/, '$12')
      .replace(/(  tidb:\n(?:    .*\n)*?)    config: \{\}\n/, '$1    config:\n      log:\n        level: warn\n');
    expect(changed).toContain('        level: warn');
    expect(changed).toMatch(/tikv:\n(?: {4}.*\n)*? {4}replicas: 2/);
    expectSampleOf(readmeBlock('- **tidb/basic**: tidb rolling restart; tikv 3 -> 2; 3 risks'), report(changed));
  });
});

test('"What gets rendered" states the Role the controller gets, rule by rule', () => {
  const r = cli(['render', 'examples/basic']);
  const role = parseAllDocuments(r.stdout)
    .map((d) => d.toJS())
    .find((o) => o.kind === 'Role');
  const NAMES: Record<string, string> = {
    statefulsets: 'StatefulSets',
    pods: 'Pods',
    persistentvolumeclaims: 'PersistentVolumeClaims',
    configmaps: 'ConfigMaps',
    leases: 'Leases',
    events: 'Events',
    jobs: 'Jobs',
  };
  const byResource = new Map<string, string[]>();
  for (const rule of role.rules as { resources: string[]; verbs: string[]; resourceNames?: string[] }[]) {
    for (const resource of rule.resources) {
      const verbs = rule.verbs.join(', ');
      const part = rule.resourceNames
        ? `${verbs} of ${rule.resourceNames.map((n) => `\`${n.replace(/^basic-/, '<c>-')}\``).join(', ')}`
        : verbs;
      byResource.set(resource, [...(byResource.get(resource) ?? []), part]);
    }
  }
  // Resources granted the same verbs are named together.
  const groups = new Map<string, string[]>();
  for (const [resource, parts] of byResource)
    groups.set(parts.join(', and '), [...(groups.get(parts.join(', and ')) ?? []), NAMES[resource] ?? resource]);
  const summary = [...groups].map(([verbs, names]) => `${names.join(' and ')}: ${verbs}`).join('; ');
  expect(docs()).toContain(`Role and RoleBinding \`<c>-discovery\` (${summary})`);
});

test("the Backups section's schedule renders beside examples/basic as the CronJob it names", () => {
  const dir = mkdtempSync(join(tmpdir(), 'readme-backup-'));
  try {
    writeFileSync(join(dir, 'basic-backup.yaml'), readmeBlock('kind: BackupSchedule'));
    const r = cli(['render', join(root, 'examples/basic/tidb-cluster.yaml'), join(dir, 'basic-backup.yaml'), '-n', 'tidb']);
    expect(r.status).toBe(0);
    const cronJobs = parseAllDocuments(r.stdout)
      .map((d) => d.toJS())
      .filter((o) => o?.kind === 'CronJob');
    expect(cronJobs.map((o) => `${o.metadata.namespace}/${o.metadata.name}`)).toEqual(['tidb/backup-nightly']);
    expect(docs()).toContain('kubectl get jobs -n tidb -l\n  tidb.pingcap.com/backup-schedule=nightly');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('every link between the documents reaches a file, and a heading where it names one', () => {
  const files = [
    'README.md',
    ...readdirSync(join(root, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  const slug = (heading: string) =>
    heading
      .trim()
      .toLowerCase()
      .replace(/[^\w\- ]/g, '')
      .replace(/ /g, '-');
  const anchors = (file: string) => {
    const out = new Set<string>();
    let fenced = false;
    for (const line of readFileSync(join(root, file), 'utf8').split('\n')) {
      if (/^\s*```/.test(line)) fenced = !fenced;
      const m = /^#{1,6} (.*)/.exec(line);
      if (m && !fenced) out.add(slug(m[1]));
    }
    return out;
  };
  const broken: string[] = [];
  for (const file of files) {
    const text = readFileSync(join(root, file), 'utf8').replace(/```[\s\S]*?```/g, '');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target)) continue;
      const [path, anchor] = target.split('#');
      const to = path === '' ? file : join(file, '..', path).replace(/^\.\//, '');
      if (!existsSync(join(root, to))) broken.push(`${file}: ${target}: no file ${to}`);
      else if (anchor !== undefined && to.endsWith('.md') && !anchors(to).has(anchor))
        broken.push(`${file}: ${target}: no such heading in ${to}`);
    }
  }
  expect(broken).toEqual([]);
});
