/**
 * The images' root filesystem, assembled outside a container as the Dockerfile assembles it: by
 * scripts/release/image-rootfs.sh, from the Node.js release and package the Dockerfile pins (NODE_RUNTIME,
 * the npm registry's node-linux-<arch>), checked against the integrity it pins.
 * Needs the built package (`npm run build`) and the npm registry.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '../..');

const dockerfileArg = (name: string): string => {
  const value = new RegExp(`^ARG ${name}=(\\S+)$`, 'm').exec(readFileSync(join(root, 'Dockerfile'), 'utf8'))?.[1];
  if (value === undefined) throw new Error(`the Dockerfile has no ARG ${name}`);
  return value;
};

/** The Node.js release the images ship (the Dockerfile's NODE_RUNTIME). */
export function imageNodeVersion(): string {
  return dockerfileArg('NODE_RUNTIME');
}

/** Fills `<dir>/rootfs` (after unpacking node into `<dir>/package`) and returns its path. */
export function buildImageRootfs(dir: string): string {
  const arch = process.arch === 'arm64' ? 'arm64' : 'x64';
  const packed = execFileSync('npm', ['pack', '--silent', `node-linux-${arch}@${imageNodeVersion()}`], { cwd: dir, encoding: 'utf8' })
    .trim()
    .split('\n')
    .at(-1)!;
  const integrity = `sha512-${createHash('sha512')
    .update(readFileSync(join(dir, packed)))
    .digest('base64')}`;
  const pinned = dockerfileArg(arch === 'x64' ? 'NODE_INTEGRITY_AMD64' : 'NODE_INTEGRITY_ARM64');
  if (integrity !== pinned) throw new Error(`${packed}: integrity ${integrity}, the Dockerfile pins ${pinned}`);
  execFileSync('tar', ['xzf', packed], { cwd: dir });
  const rootfs = join(dir, 'rootfs');
  const r = spawnSync('sh', [join(root, 'scripts/release/image-rootfs.sh'), join(dir, 'package/bin/node'), root, rootfs], {
    encoding: 'utf8',
  });
  if (r.status !== 0 || r.stderr !== '') throw new Error(`scripts/release/image-rootfs.sh failed (${r.status}):\n${r.stderr}`);
  return rootfs;
}
