/**
 * The images' root filesystem, assembled outside a container as the Dockerfile assembles it: by
 * scripts/image-rootfs.sh, from the same Node.js 24 release as the pinned base image (named in the
 * Dockerfile's comment), as Node.js builds it for linux (the npm registry's node-linux-<arch> package).
 * Needs the built package (`npm run build`) and the npm registry.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '../..');

/** The Node.js release the Dockerfile's pinned base image carries. */
export function imageNodeVersion(): string {
  const version = /Node (24\.\d+\.\d+)/.exec(readFileSync(join(root, 'Dockerfile'), 'utf8'))?.[1];
  if (version === undefined) throw new Error('the Dockerfile names no Node.js 24 release (as "Node 24.x.y") in its comment');
  return version;
}

/** Fills `<dir>/rootfs` (after unpacking node into `<dir>/package`) and returns its path. */
export function buildImageRootfs(dir: string): string {
  const arch = process.arch === 'arm64' ? 'arm64' : 'x64';
  const packed = execFileSync('npm', ['pack', '--silent', `node-linux-${arch}@${imageNodeVersion()}`], { cwd: dir, encoding: 'utf8' }).trim().split('\n').at(-1)!;
  execFileSync('tar', ['xzf', packed], { cwd: dir });
  const rootfs = join(dir, 'rootfs');
  const r = spawnSync('sh', [join(root, 'scripts/image-rootfs.sh'), join(dir, 'package/bin/node'), root, rootfs], { encoding: 'utf8' });
  if (r.status !== 0 || r.stderr !== '') throw new Error(`scripts/image-rootfs.sh failed (${r.status}):\n${r.stderr}`);
  return rootfs;
}
