/**
 * Where the real Kubernetes control plane's binaries are: a directory holding `kube-apiserver`,
 * `kube-controller-manager`, `kubectl` and `etcd` (the way controller-runtime's envtest reads
 * `KUBEBUILDER_ASSETS`). `scripts/test-assets/kube-assets.sh` builds them from Go modules (test/kube/harness)
 * into `.kube-assets/` at the repository root, where they are found by themselves;
 * `TIDB_GITOPS_KUBE_ASSETS` names another directory.
 */
import { accessSync, constants, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const ASSETS_ENV = 'TIDB_GITOPS_KUBE_ASSETS';

/** `.kube-assets/` at the repository root. */
export const DEFAULT_ASSETS_DIR = resolve(__dirname, '../../.kube-assets');

export interface KubeAssets {
  readonly dir: string;
  readonly apiserver: string;
  readonly controllerManager: string;
  readonly kubectl: string;
  readonly etcd: string;
}

/** The binaries, or the reason the real-API suites cannot run here. */
export type AssetsLookup = { readonly assets: KubeAssets } | { readonly missing: string };

/** Whether `file` exists and may be run. */
export const executable = (file: string): boolean => {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/** The directory the binaries are in, when there is one. */
export function kubeAssetsDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env[ASSETS_ENV] || (existsSync(DEFAULT_ASSETS_DIR) ? DEFAULT_ASSETS_DIR : undefined);
}

export function findKubeAssets(env: NodeJS.ProcessEnv = process.env): AssetsLookup {
  const dir = kubeAssetsDir(env);
  if (!dir) return { missing: `${ASSETS_ENV} is not set and ${DEFAULT_ASSETS_DIR} does not exist` };
  const assets: KubeAssets = {
    dir,
    apiserver: join(dir, 'kube-apiserver'),
    controllerManager: join(dir, 'kube-controller-manager'),
    kubectl: join(dir, 'kubectl'),
    etcd: join(dir, 'etcd'),
  };
  for (const f of [assets.apiserver, assets.controllerManager, assets.kubectl, assets.etcd]) {
    if (!executable(f)) return { missing: `${f} is missing or not executable` };
  }
  return { assets };
}
