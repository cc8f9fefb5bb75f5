/**
 * Where the real Kubernetes control plane's binaries are: a directory holding `kube-apiserver`,
 * `kube-controller-manager` and `etcd` (the way controller-runtime's envtest reads
 * `KUBEBUILDER_ASSETS`). `TIDB_GITOPS_KUBE_ASSETS` names it; without it, `.kube-assets/` at the
 * repository root is used when it exists (`npm run kube-assets` fills it). `etcd` may also come
 * from PATH (Debian's `etcd-server` package installs `/usr/bin/etcd`).
 */
import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';

export const ASSETS_ENV = 'TIDB_GITOPS_KUBE_ASSETS';

export interface KubeAssets {
  readonly dir: string;
  readonly apiserver: string;
  readonly controllerManager: string;
  readonly etcd: string;
}

/** The binaries, or the reason the real-API suite cannot run here. */
export type AssetsLookup = { readonly assets: KubeAssets } | { readonly missing: string };

const executable = (file: string): boolean => {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const file = join(dir, name);
    if (dir && executable(file)) return file;
  }
  return undefined;
}

export function findKubeAssets(env: NodeJS.ProcessEnv = process.env): AssetsLookup {
  const fallback = resolve(__dirname, '../../.kube-assets');
  const dir = env[ASSETS_ENV] || (existsSync(fallback) ? fallback : undefined);
  if (!dir) {
    return { missing: `${ASSETS_ENV} is not set and ${fallback} does not exist (run \`npm run kube-assets\`, which unpacks them from ../shared/kube)` };
  }
  const apiserver = join(dir, 'kube-apiserver');
  const controllerManager = join(dir, 'kube-controller-manager');
  for (const f of [apiserver, controllerManager]) if (!executable(f)) return { missing: `${f} is missing or not executable` };
  const etcd = executable(join(dir, 'etcd')) ? join(dir, 'etcd') : onPath('etcd');
  if (!etcd) return { missing: `no etcd in ${dir} or on PATH (Debian: apt-get install etcd-server)` };
  return { assets: { dir, apiserver, controllerManager, etcd } };
}
