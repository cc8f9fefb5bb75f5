/**
 * The images. The Dockerfile's stages are checked as text; the root filesystem both images are made
 * of is assembled by the script the Dockerfile runs (scripts/release/image-rootfs.sh), from the same Node.js
 * 24 release as the pinned base image (the official linux build, from the npm registry's
 * node-linux-<arch> package), and run with chroot as the images' users: size, contents, and the
 * commands the controller Deployment and the Argo CD plugin run. Building the images from the
 * Dockerfile needs a container registry; `scripts/release/images.sh` does that where one is reachable, and
 * test/real/release.test.ts makes them from this root filesystem with umoci. Needs the built
 * package (`npm run build`), root for chroot, and the npm registry.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { buildImageRootfs } from '../../support/image-rootfs';
import { chrootPath, CHROOT, requires } from '../../support/requires';
import { TEST_DIR } from '../../support/paths';

jest.setTimeout(120_000);

const root = join(TEST_DIR, '..');
const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
// Node.js 26 alone, stripped, is 117 MB (24.18: 110 MB).
const SIZE_LIMIT = 130e6;

interface Stage {
  name: string;
  from: string;
  lines: string[];
}
const stages = dockerfile
  .replace(/\\\n/g, ' ')
  .split('\n')
  .filter((l) => l.trim() !== '' && !l.trim().startsWith('#'))
  .reduce<Stage[]>((acc, line) => {
    const from = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?/i.exec(line);
    if (from) acc.push({ name: from[2] ?? '', from: from[1], lines: [] });
    else if (acc.length > 0) acc[acc.length - 1].lines.push(line);
    return acc;
  }, []);
const stage = (name: string) => stages.find((s) => s.name === name)!;
/** A stage's instructions with those of the stages it is built FROM. */
const chain = (name: string): string[] => {
  const s = stage(name);
  return [...(stages.some((b) => b.name === s.from) ? chain(s.from) : []), ...s.lines];
};
const nodeImage = /^ARG NODE_IMAGE=(\S+)$/m.exec(dockerfile)?.[1] ?? '';

describe('Dockerfile', () => {
  test('builds on Node.js 24, pinned by digest, and ships Node.js 26, pinned by version and integrity', () => {
    expect(nodeImage).toMatch(/^node:24[\w.-]*@sha256:[0-9a-f]{64}$/);
    expect(dockerfile).toMatch(/^ARG NODE_RUNTIME=26\.\d+\.\d+$/m);
    expect(dockerfile).toMatch(/^ARG NODE_INTEGRITY_AMD64=sha512-[\w+/]{86}==$/m);
    expect(dockerfile).toMatch(/^ARG NODE_INTEGRITY_ARM64=sha512-[\w+/]{86}==$/m);
    expect(stages.filter((s) => s.from !== 'scratch' && !stages.some((b) => b.name === s.from)).map((s) => s.from)).toEqual([
      '${NODE_IMAGE}',
      '${NODE_IMAGE}',
    ]);
  });

  test('the images are FROM scratch with the assembled root filesystem, no npm and no node_modules', () => {
    expect(stage('runtime').from).toBe('scratch');
    expect(stage('runtime').lines).toContain('COPY --from=rootfs /rootfs /');
    for (const image of ['argocd-cmp', 'controller']) {
      const lines = chain(image);
      expect(lines.filter((l) => /\bnp[mx]\b|node_modules/.test(l))).toEqual([]);
      expect(lines.filter((l) => l.startsWith('COPY --from=')).every((l) => l.startsWith('COPY --from=rootfs '))).toBe(true);
      expect(lines.filter((l) => l.startsWith('RUN'))).toEqual([]);
    }
    expect(stage('rootfs').lines.join('\n')).toContain('image-rootfs /node/package/bin/node /app /rootfs');
  });

  test('the plugin image runs as 999 with HOME=/tmp and plugin.yaml where the CMP server reads it', () => {
    const cmp = chain('argocd-cmp');
    expect(cmp).toContain('COPY argocd/plugin.yaml /home/argocd/cmp-server/config/plugin.yaml');
    expect(cmp).toContain('ENV HOME=/tmp');
    expect(cmp.filter((l) => l.startsWith('USER '))).toEqual(['USER 999:999']);
  });

  test('the controller image is the default (last) stage, as user 65532', () => {
    expect(stages.at(-1)!.name).toBe('controller');
    const controller = chain('controller');
    expect(controller.filter((l) => l.startsWith('USER '))).toEqual(['USER 65532:65532']);
    expect(controller).toContain('ENTRYPOINT ["tidb-gitops"]');
    expect(controller).toContain('CMD ["controller"]');
    expect(controller.join('\n')).not.toContain('argocd');
  });
});

const CHROOT_BIN = chrootPath();
const describeRootfs = requires(CHROOT).describe;

describeRootfs('the image root filesystem (scripts/release/image-rootfs.sh, with chroot)', () => {
  let tmp: string;
  let rootfs: string;
  const run = (user: string, args: string[], env: Record<string, string> = {}, cwd = '/') =>
    spawnSync(
      CHROOT_BIN!,
      [
        `--userspec=${user}`,
        rootfs,
        '/usr/local/bin/node',
        '-e',
        `process.chdir(${JSON.stringify(cwd)}); require('child_process').execFileSync('/usr/local/bin/tidb-gitops', ${JSON.stringify(args)}, { stdio: 'inherit' })`,
      ],
      {
        encoding: 'utf8',
        env: { PATH: '/usr/local/bin', ...env },
      },
    );

  beforeAll(() => {
    tmp = mkdtempSync(join(tmpdir(), 'tidb-gitops-image-'));
    rootfs = buildImageRootfs(tmp);
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  const files = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? files(join(dir, e.name)) : [relative(rootfs, join(dir, e.name))],
    );

  test(`holds Node.js, its libraries, the bundles and the plugin files, and is at most ${SIZE_LIMIT / 1e6} MB`, () => {
    const all = files(rootfs).sort();
    const size = all.reduce((sum, f) => sum + statSync(join(rootfs, f)).size, 0);
    console.log(`image root filesystem: ${size} bytes (${(size / 1e6).toFixed(1)} MB) in ${all.length} files`);
    expect(size).toBeLessThanOrEqual(SIZE_LIMIT);
    expect(all.filter((f) => !/^(lib|lib64|usr\/lib)\//.test(f))).toEqual([
      'app/LICENSE',
      'app/argocd/health/configmap.lua',
      'app/argocd/health/cronjob.lua',
      'app/argocd/health/statefulset.lua',
      'app/argocd/plugin.yaml',
      'app/lib/THIRD-PARTY-NOTICES.txt',
      'app/lib/config-schemas/pd.json',
      'app/lib/config-schemas/tidb.json',
      'app/lib/config-schemas/tikv.json',
      'app/lib/tidb-gitops-controller.js',
      'app/lib/tidb-gitops-status.js',
      'app/lib/tidb-gitops.js',
      'etc/group',
      'etc/passwd',
      'usr/local/bin/node',
      'usr/local/bin/tidb-gitops',
      'usr/local/share/doc/node/LICENSE',
    ]);
    // Only the shared libraries node loads: libc and friends (Node.js 26 adds libatomic), no shell, no tools.
    expect(
      all
        .filter((f) => /^(lib|lib64|usr\/lib)\//.test(f))
        .every((f) => /\/(ld-linux[\w.-]*|lib(c|m|dl|pthread|stdc\+\+|gcc_s|atomic)\.so[\d.]*)$/.test(f)),
    ).toBe(true);
    expect(existsSync(join(rootfs, 'bin/sh'))).toBe(false);
    expect(statSync(join(rootfs, 'tmp')).mode & 0o1777).toBe(0o1777);
  });

  test('as the controller user (65532): --version, controller --help, and a render byte-identical to the CLI here', () => {
    const version = run('65532:65532', ['--version']);
    expect(version.stderr).toBe('');
    expect(version.stdout.trim()).toBe(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version);
    const help = run('65532:65532', ['controller', '--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('Usage: tidb-gitops controller');
    mkdirSync(join(rootfs, 'tmp/in'), { recursive: true });
    cpSync(join(root, 'examples/basic/tidb-cluster.yaml'), join(rootfs, 'tmp/in/tidb-cluster.yaml'));
    const inImage = run('65532:65532', ['render', '/tmp/in/tidb-cluster.yaml', '--controller-image', 'registry.example.com/tg:1']);
    expect(inImage.status).toBe(0);
    const here = execFileSync(
      process.execPath,
      [
        join(root, 'bin/tidb-gitops.js'),
        'render',
        join(root, 'examples/basic/tidb-cluster.yaml'),
        '--controller-image',
        'registry.example.com/tg:1',
      ],
      { encoding: 'utf8' },
    );
    expect(inImage.stdout).toBe(here);
    rmSync(join(rootfs, 'tmp/in'), { recursive: true });
  });

  test('as the plugin user (999): argocd generate renders an app directory, install-patch finds its files', () => {
    const app = join(rootfs, 'tmp/app');
    mkdirSync(app, { recursive: true });
    cpSync(join(root, 'examples/basic/tidb-cluster.yaml'), join(app, 'tidb-cluster.yaml'));
    spawnSync('chown', ['-R', '999:999', app]);
    const generate = run(
      '999:999',
      ['argocd', 'generate'],
      { HOME: '/tmp', ARGOCD_APP_NAMESPACE: 'tidb', KUBE_VERSION: '1.33', PARAM_CONTROLLER_IMAGE: 'registry.example.com/tg:1' },
      '/tmp/app',
    );
    expect(generate.status).toBe(0);
    const objects = parseAllDocuments(generate.stdout).map((d) => d.toJS());
    expect(objects).toHaveLength(20);
    expect(objects.every((o) => o.metadata.namespace === 'tidb')).toBe(true);
    const patch = run('999:999', ['argocd', 'install-patch'], { HOME: '/tmp' });
    expect(patch.status).toBe(0);
    expect(patch.stdout).toContain(readFileSync(join(root, 'argocd/health/statefulset.lua'), 'utf8').split('\n')[0]);
    rmSync(app, { recursive: true });
  });
});
