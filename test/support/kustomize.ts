/**
 * Real Kustomize, as built into kubectl (`kubectl kustomize DIR`): the tool an Argo CD installation's
 * overlay goes through (the control plane's kubectl: test/kube/path-setup.ts).
 */
import { spawnSync } from 'node:child_process';
import { parseAllDocuments } from 'yaml';

export interface KustomizeResult {
  readonly status: number | null;
  readonly stderr: string;
  readonly objects: Record<string, any>[];
}

/** Builds the kustomization in `dir` and returns its objects, or kustomize's error. */
export function kustomizeBuild(dir: string): KustomizeResult {
  const r = spawnSync('kubectl', ['kustomize', dir], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (r.error) throw r.error;
  const objects = r.status === 0 ? parseAllDocuments(r.stdout).map((d) => d.toJS() as Record<string, any>) : [];
  return { status: r.status, stderr: r.stderr, objects };
}
