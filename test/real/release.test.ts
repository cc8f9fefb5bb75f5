/**
 * The release, against real registries started here on loopback. The package: `npm publish` to a
 * Verdaccio registry, a second publish of the same version refused, then installed from it as users
 * do (`npm i -g`, `npx`) in empty folders. The images: built as an OCI layout by scripts/release/oci-image.sh
 * (umoci, no docker, no network) from the root filesystem of scripts/release/image-rootfs.sh, pushed with skopeo
 * to a Distribution registry (Debian's docker-registry), inspected there, pulled back into a fresh
 * layout, unpacked and run with chroot as the users and with the environment their configs name.
 *
 * Needs the built package (`npm run build`), the npm registry (for the Node.js binary), and for the
 * images root, chroot, umoci, skopeo and docker-registry (`bash scripts/test.sh` installs them; see
 * test/support/requires.ts for what a missing one does).
 */
import { execFileSync, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { buildImageRootfs } from '../support/image-rootfs';
import { startNpmRegistry, type NpmRegistry } from '../support/npm-registry';
import { startOciRegistry, type OciRegistry } from '../support/oci-registry';
import { chrootPath, CHROOT, OCI_TOOLS, requires } from '../support/requires';
import { TEST_DIR } from '../support/paths';

const root = join(TEST_DIR, '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const example = join(root, 'examples/basic/tidb-cluster.yaml');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';

/**
 * npm as on a machine of its own: none of the npm_* settings of an `npm test` around this run, a
 * cache of its own (so everything installed comes from the test's registry), and the user config given.
 */
function npmEnv(cache: string): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
  return { ...env, npm_config_cache: cache, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };
}
const failed = (what: string, r: SpawnSyncReturns<string>) =>
  new Error(`${what} exited ${r.status ?? r.signal}:\n${r.stdout}\n${r.stderr}`);

describe('the npm package, published to a registry (Verdaccio) and installed from it', () => {
  let tmp: string;
  let registry: NpmRegistry;
  let publisherrc: string;
  let userrc: string;
  let env: NodeJS.ProcessEnv;
  const publish = (...flags: string[]) =>
    // The build ran already (`npm test` runs it first), so the publish runs no script. No provenance:
    // that needs the release workflow's OIDC identity.
    spawnSync(
      npm,
      ['publish', '--ignore-scripts', '--access', 'public', '--registry', registry.url, '--userconfig', publisherrc, ...flags],
      { cwd: root, env, encoding: 'utf8' },
    );

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'tidb-gitops-release-npm-'));
    env = npmEnv(join(tmp, 'cache'));
    registry = await startNpmRegistry();
    const token = await registry.addUser('release', 'release-password');
    const host = registry.url.replace(/^http:/, '');
    publisherrc = join(tmp, 'publisher.npmrc');
    writeFileSync(publisherrc, `registry=${registry.url}\n${host}:_authToken=${token}\n`);
    // A user's machine knows the registry and no token.
    userrc = join(tmp, 'user.npmrc');
    writeFileSync(userrc, `registry=${registry.url}\n`);
  }, 60_000);
  afterAll(async () => {
    await registry?.stop();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  test(`npm publish publishes ${pkg.name}@${pkg.version}, and the registry serves it`, async () => {
    const r = publish();
    if (r.status !== 0) throw failed('npm publish', r);
    expect(r.stdout).toContain(`+ ${pkg.name}@${pkg.version}`);
    const { status, body: doc } = await registry.getJson(pkg.name);
    expect(status).toBe(200);
    expect(doc['dist-tags']).toEqual({ latest: pkg.version });
    expect(doc.versions[pkg.version].dist.tarball).toBe(`${registry.url}${pkg.name}/-/${pkg.name}-${pkg.version}.tgz`);
    expect(doc.versions[pkg.version].dependencies).toBeUndefined();
  }, 60_000);

  test('fails to publish the same version again: npm refuses, and with --force the registry does', () => {
    // npm (11) reads the versions the registry has and stops before uploading; an older npm uploads
    // and the registry answers as below.
    const again = publish();
    expect(again.status).not.toBe(0);
    expect(again.stderr).toMatch(
      new RegExp(
        `You cannot publish over the previously published versions: ${pkg.version.replace(/\./g, '\\.')}\\.|npm error code E40[39]\\b`,
      ),
    );
    // --force skips that check; the registry itself refuses the upload.
    const forced = publish('--force');
    expect(forced.status).not.toBe(0);
    expect(forced.stderr).toMatch(/npm error code E40[39]\b/);
  }, 60_000);

  test('npm i -g from an empty folder installs a CLI that prints its version and renders', () => {
    const cwd = join(tmp, 'empty-install');
    const prefix = join(tmp, 'global');
    mkdirSync(cwd);
    const r = spawnSync(npm, ['i', '-g', '--prefix', prefix, '--userconfig', userrc, pkg.name], { cwd, env, encoding: 'utf8' });
    if (r.status !== 0) throw failed('npm i -g', r);
    // The package alone: its optional peers stay out (the registry has none of them to give).
    expect(readdirSync(join(prefix, 'lib/node_modules'))).toEqual([pkg.name]);
    const bin = join(prefix, 'bin/tidb-gitops');
    expect(execFileSync(bin, ['--version'], { cwd, encoding: 'utf8' }).trim()).toBe(pkg.version);
    const rendered = spawnSync(bin, ['render', join(root, 'examples/basic')], { cwd, encoding: 'utf8' });
    if (rendered.status !== 0) throw failed('tidb-gitops render', rendered);
    const kinds = parseAllDocuments(rendered.stdout).map((d) => d.toJS().kind);
    expect(kinds).toContain('StatefulSet');
  }, 120_000);

  test('npx --yes runs it from another empty folder', () => {
    const cwd = join(tmp, 'empty-npx');
    mkdirSync(cwd);
    const r = spawnSync(npx, ['--yes', '--userconfig', userrc, pkg.name, '--version'], { cwd, env, encoding: 'utf8' });
    if (r.status !== 0) throw failed('npx', r);
    expect(r.stdout.trim()).toBe(pkg.version);
    // npx installed it into its own folder of the cache, from the test's registry.
    const [dir] = readdirSync(join(tmp, 'cache/_npx'));
    const lock = JSON.parse(readFileSync(join(tmp, 'cache/_npx', dir, 'node_modules/.package-lock.json'), 'utf8'));
    expect(lock.packages[`node_modules/${pkg.name}`].resolved).toBe(`${registry.url}${pkg.name}/-/${pkg.name}-${pkg.version}.tgz`);
  }, 120_000);
});

const CHROOT_BIN = chrootPath();
/** The images are made in a chroot, as root, and pushed to and pulled from a real registry. */
const describeImages = requires(CHROOT, OCI_TOOLS).describe;

/** The image config the Dockerfile gives a target: its stage and those it is built FROM. */
function dockerfileConfig(target: string) {
  const text = readFileSync(join(root, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
  const stages = new Map<string, { from: string; lines: string[] }>();
  let current: string[] = [];
  for (const line of text.split('\n').map((l) => l.trim())) {
    const from = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?/i.exec(line);
    if (from) stages.set(from[2] ?? '', { from: from[1], lines: (current = []) });
    else if (line !== '' && !line.startsWith('#')) current.push(line);
  }
  const chain = (name: string): string[] => {
    const s = stages.get(name)!;
    return [...(stages.has(s.from) ? chain(s.from) : []), ...s.lines];
  };
  const config: { Env: string[]; User?: string; Entrypoint?: string[]; Cmd?: string[] } = { Env: [] };
  for (const line of chain(target)) {
    const [, op, rest] = /^(\w+)\s+(.*)$/.exec(line)!;
    if (op === 'ENV') config.Env.push(...rest.split(/\s+/));
    if (op === 'USER') config.User = rest;
    if (op === 'ENTRYPOINT') config.Entrypoint = JSON.parse(rest);
    if (op === 'CMD') config.Cmd = JSON.parse(rest);
  }
  return config;
}

describeImages('the images, built with umoci, pushed to a registry (docker-registry) with skopeo, pulled and run', () => {
  let tmp: string;
  let registry: OciRegistry;
  let repository: string;
  const IMAGES = [
    { target: 'controller', tag: pkg.version },
    { target: 'argocd-cmp', tag: `${pkg.version}-argocd-cmp` },
  ];
  const tool = (cmd: string, args: string[]) => {
    const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64e6 });
    if (r.status !== 0) throw failed(`${cmd} ${args.join(' ')}`, r);
    return r.stdout;
  };
  const inspect = (ref: string, ...flags: string[]) => JSON.parse(tool('skopeo', ['inspect', ...flags, ref]));
  /** Pulled back from the registry and unpacked: the bundle's root filesystem and the image config. */
  const pulled = new Map<string, { rootfs: string; config: any }>();

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'tidb-gitops-release-oci-'));
    const rootfs = buildImageRootfs(tmp);
    tool('bash', [join(root, 'scripts/release/oci-image.sh'), rootfs, join(tmp, 'layout')]);
    registry = await startOciRegistry();
    repository = `${registry.host}/tidb-gitops/tidb-gitops`;
  }, 120_000);
  afterAll(async () => {
    await registry?.stop();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  test('the layout holds both images, configured as the Dockerfile configures them', () => {
    for (const { target } of IMAGES) {
      const config = inspect(`oci:${join(tmp, 'layout')}:${target}`, '--config').config;
      expect(config).toEqual(dockerfileConfig(target));
    }
  });

  test('skopeo pushes both images; the registry lists their tags and reports their digests and configs', async () => {
    for (const { target, tag } of IMAGES) {
      const digestfile = join(tmp, `${target}.digest`);
      tool('skopeo', [
        'copy',
        '--dest-tls-verify=false',
        '--digestfile',
        digestfile,
        `oci:${join(tmp, 'layout')}:${target}`,
        `docker://${repository}:${tag}`,
      ]);
      const remote = inspect(`docker://${repository}:${tag}`, '--tls-verify=false');
      expect(remote.Digest).toBe(readFileSync(digestfile, 'utf8').trim());
      expect(remote.Os).toBe('linux');
      const config = inspect(`docker://${repository}:${tag}`, '--tls-verify=false', '--config').config;
      expect(config).toEqual(dockerfileConfig(target));
    }
    const tags = (await (await fetch(`http://${registry.host}/v2/tidb-gitops/tidb-gitops/tags/list`)).json()) as { tags: string[] };
    expect(tags.tags.sort()).toEqual(IMAGES.map((i) => i.tag).sort());
  }, 120_000);

  test('pulled back into a fresh layout, each unpacks with the config it was pushed with', () => {
    for (const { target, tag } of IMAGES) {
      const layout = join(tmp, `pulled-${target}`);
      tool('skopeo', ['copy', '--src-tls-verify=false', `docker://${repository}:${tag}`, `oci:${layout}:${target}`]);
      const config = inspect(`oci:${layout}:${target}`, '--config').config;
      expect(config).toEqual(dockerfileConfig(target));
      const bundle = join(tmp, `bundle-${target}`);
      tool('umoci', ['unpack', '--image', `${layout}:${target}`, bundle]);
      pulled.set(target, { rootfs: join(bundle, 'rootfs'), config });
    }
  }, 120_000);

  /** The image's command with other arguments, as its user and with its environment (and nothing else). */
  const runImage = (target: string, args: string[], input?: string) => {
    const image = pulled.get(target);
    if (!image) throw new Error(`${target} was not pulled`);
    const { rootfs, config } = image;
    const command = [...(config.Entrypoint ?? []), ...args];
    const env = Object.fromEntries(config.Env.map((e: string) => e.split(/=(.*)/s).slice(0, 2)));
    return spawnSync(CHROOT_BIN!, [`--userspec=${config.User}`, rootfs, ...command], { env, input, encoding: 'utf8' });
  };

  test('the controller image runs as 65532: --version, and render of standard input as the CLI here renders', () => {
    const version = runImage('controller', ['--version']);
    if (version.status !== 0) throw failed('the controller image --version', version);
    expect(version.stdout.trim()).toBe(pkg.version);
    const image = `${repository}:${pkg.version}`;
    const inImage = runImage('controller', ['render', '-', '--controller-image', image], readFileSync(example, 'utf8'));
    if (inImage.status !== 0) throw failed('the controller image render', inImage);
    const here = execFileSync(process.execPath, [join(root, 'bin/tidb-gitops.js'), 'render', '-', '--controller-image', image], {
      input: readFileSync(example),
      encoding: 'utf8',
    });
    expect(inImage.stdout).toBe(here);
    expect(inImage.stdout).toContain(`image: ${image}`);
  });

  test('the plugin image has plugin.yaml where the CMP server reads it, and runs install-patch as 999 with HOME=/tmp', () => {
    const { rootfs, config } = pulled.get('argocd-cmp')!;
    const plugin = join(rootfs, 'home/argocd/cmp-server/config/plugin.yaml');
    expect(readFileSync(plugin, 'utf8')).toBe(readFileSync(join(root, 'argocd/plugin.yaml'), 'utf8'));
    expect(statSync(join(rootfs, 'home/argocd')).uid).toBe(999);
    expect(config.Entrypoint).toBeUndefined();
    // The CMP server runs plugin.yaml's commands (tidb-gitops argocd ...) by the image's PATH.
    const patch = runImage('argocd-cmp', ['tidb-gitops', 'argocd', 'install-patch']);
    if (patch.status !== 0) throw failed('the plugin image argocd install-patch', patch);
    expect(patch.stdout).toContain('argocd-cmp');
  });
});
