/** `tidb-gitops render PATH... [-o DIR] [-n NAMESPACE] [--controller-image IMAGE] [--kube-version V]` */
import { realpathSync } from 'node:fs';
import { dirname, resolve, sep } from 'node:path';
import type { LoadedCluster } from '../tidbcluster/load';
import { kubeVersionNote, readClusterInputs } from '../load/clusters';
import { renderClusters, renderProblems } from '../render/render';
import { parseKubeVersion } from '../tidbcluster/kube-version';
import { readInputs } from '../base/inputs';
import { leftoverFiles, staleFiles, writeFilesAtomically } from './write';
import { DEFAULTS } from '../tidbcluster/defaults';
import { collisions, passThrough, PASSTHROUGH_FILE } from '../render/passthrough';
import { budgetOverlaps } from '../render/budget-overlap';
import { inputsOf, reserveNames } from '../render/reserved-names';
import { toYamlStream } from '../render/output';
import { OLDEST_KUBE_MINOR } from '../tidbcluster/kube-version';
import type { RenderSettings } from '../tidbcluster/settings';

export interface RenderOptions {
  readonly paths: readonly string[];
  readonly outDir?: string;
  readonly namespace?: string;
  /** Image of the discovery Deployment where `spec.discovery` names none. @default this release's image */
  readonly controllerImage?: string;
  /** The Kubernetes version to render for (checked by the caller). @default 1.31, the oldest supported */
  readonly kubeVersion?: string;
  /** The API versions the target serves, comma-separated (checked by the caller). @default not known */
  readonly apiVersions?: string;
  /** With `outDir`: also delete `*.k8s.yaml` files there that no input renders any more. @default false */
  readonly prune?: boolean;
  /** With `outDir`: write nothing; exit 3 if the files there differ from what would be written. @default false */
  readonly check?: boolean;
  /** How the user names another controller image, for the note on the default one. @default '--controller-image' */
  readonly controllerImageSetting?: string;
  /**
   * Settings below the environment and the inputs' RenderSettings (Argo CD's destination namespace and
   * Kubernetes version). @default none
   */
  readonly fallback?: RenderSettings;
}

/** Exit status of `render --check` when the output directory is not what the inputs render. */
export const EXIT_STALE = 3;

export interface Io {
  readonly stdout: (s: string) => void;
  readonly stderr: (s: string) => void;
  readonly readStdin: () => string;
  /** The process environment, for commands that take settings from it. @default {} */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** Returns the exit code: 0 rendered, 1 bad input or output. Manifests go to stdout only. */
export function renderCommand(opts: RenderOptions, io: Io): number {
  const read = readInputs(opts.paths, io.readStdin);
  const outputErrors = opts.outDir === undefined ? [] : inputsInOutput(read.inputs, opts.outDir);
  // Command line, then environment, then the inputs' RenderSettings, then the caller's fallback.
  const { clusters, others, documents, settings, errors, skipped, warnings } = readClusterInputs(
    { inputs: read.inputs, errors: [...read.errors, ...outputErrors] },
    { namespace: opts.namespace, controllerImage: opts.controllerImage, kubeVersion: opts.kubeVersion, apiVersions: opts.apiVersions, env: io.env ?? {}, ...(opts.fallback && { fallback: opts.fallback }) },
  );
  const note = kubeVersionNote(settings.kubeVersion);
  if (note) io.stderr(`${note}\n`);
  for (const line of skipped) io.stderr(`${line}\n`);
  const messages = [...errors];
  const target = settings.kubeVersion === undefined ? undefined : parseKubeVersion(settings.kubeVersion);
  const passed = passThrough(others, { namespace: settings.namespace, kubeMinor: target && 'minor' in target ? target.minor : OLDEST_KUBE_MINOR });
  messages.push(...passed.errors);
  if (messages.length === 0 && clusters.length === 0) messages.push('no TidbCluster document found in the inputs');
  // Only valid input is rendered; what the API server would refuse in the result counts as bad input too.
  const rendered = messages.length === 0 ? renderClusters(clusters.map((c) => c.resolved), clusters.map((c) => c.operations)) : [];
  messages.push(...renderProblems(rendered, clusters, documents));
  if (messages.length === 0) {
    const from = (i: number) => `rendered from ${clusters[i].source.file}: document ${clusters[i].source.document}`;
    const sets = rendered.map((r, i) => ({ objects: r.objects, from: from(i), cluster: clusters[i].resolved, ...inputsOf(r.origins, clusters[i], documents) }));
    const reserved = reserveNames(sets);
    messages.push(...reserved.collisions, ...collisions(reserved.names, passed.objects));
    messages.push(...budgetOverlaps(rendered.map((r, i) => ({ objects: r.objects, from: from(i) })), passed.objects));
  }
  if (messages.length > 0) {
    io.stderr(`${messages.join('\n')}\n`);
    io.stderr(`${countProblems(messages)} found; nothing was rendered\n`);
    return 1;
  }
  for (const c of clusters) {
    const w = pdWarning(c);
    if (w) io.stderr(`${w}\n`);
  }
  for (const line of warnings) io.stderr(`${line}\n`);
  const imageNote = defaultImageNote(clusters, opts.controllerImageSetting);
  if (imageNote && !opts.check) io.stderr(`${imageNote}\n`);
  const extra = passed.objects.map((p) => p.object);
  if (opts.outDir === undefined) {
    io.stdout(rendered.map((r) => r.yaml).join('') + toYamlStream(extra));
    return 0;
  }
  const dir = opts.outDir.replace(/\/$/, '');
  const files = rendered.map((r) => ({ name: r.fileName, content: r.yaml, count: r.objects.length }));
  if (extra.length > 0) files.push({ name: PASSTHROUGH_FILE, content: toYamlStream(extra), count: extra.length });
  const leftovers = opts.prune ? leftoverFiles(opts.outDir, files.map((f) => f.name)) : [];
  if (opts.check) {
    const stale = staleFiles(opts.outDir, files, leftovers);
    const lines = [
      ...stale.changed.map((f) => `${dir}/${f}: differs from what the inputs render`),
      ...stale.missing.map((f) => `${dir}/${f}: missing`),
      ...stale.extra.map((f) => `${dir}/${f}: no input renders it any more`),
    ];
    if (lines.length === 0) {
      io.stderr(`${dir} is up to date (${files.length} file${files.length === 1 ? '' : 's'})\n`);
      return 0;
    }
    io.stderr(`${lines.join('\n')}\n${dir} is out of date: render it again and commit the result\n`);
    return EXIT_STALE;
  }
  try {
    writeFilesAtomically(opts.outDir, files, leftovers);
  } catch (e) {
    io.stderr(`${(e as Error).message}\nnothing was written\n`);
    return 1;
  }
  for (const f of files) io.stderr(`wrote ${dir}/${f.name} (${f.count} objects)\n`);
  for (const f of leftovers) io.stderr(`deleted ${dir}/${f} (no input renders it any more)\n`);
  return 0;
}

/**
 * Inputs inside the output directory: render would overwrite or prune them (an input named
 * `basic.k8s.yaml` there is replaced by the cluster's output), and the next run would read its own
 * output back as input.
 */
function inputsInOutput(inputs: readonly { file: string }[], outDir: string): string[] {
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return resolve(p);
    }
  };
  const out = real(outDir) + sep;
  // One lookup per directory: a tree of clusters has many files in few directories.
  const inside = new Map<string, boolean>();
  const isInside = (dir: string) => inside.get(dir) ?? inside.set(dir, (real(dir) + sep).startsWith(out)).get(dir)!;
  return inputs
    .filter((i) => i.file !== '<stdin>' && isInside(dirname(i.file)))
    .map((i) => `${i.file}: is inside the output directory ${outDir}, whose files render overwrites and prunes: keep the inputs outside it`);
}

/**
 * A cluster without PD and without `spec.cluster` is valid (the operator takes it too), but its
 * components can only work if a PD answers at `<cluster>-pd:2379`: say so instead of failing.
 */
export function pdWarning(c: LoadedCluster): string | undefined {
  const r = c.resolved;
  if (r.pd || r.joinCluster) return undefined;
  return (
    `${c.source.file}: document ${c.source.document}: warning: spec.pd is not set, so the components look for PD at ` +
    `${r.name}-pd:2379; set spec.pd, or spec.cluster to join another TidbCluster's PD`
  );
}

/** One line naming the clusters whose controller runs this release's default image, if any. */
export function defaultImageNote(clusters: readonly LoadedCluster[], setting = '--controller-image'): string | undefined {
  const names = clusters.filter((c) => c.resolved.discovery.image === DEFAULTS.controllerImage).map((c) => c.resolved.name);
  if (names.length === 0) return undefined;
  const which = names.length === 1 ? `cluster ${names[0]}` : `clusters ${names.join(', ')}`;
  return `note: ${which} will run the default controller image ${DEFAULTS.controllerImage}; to run your own build, set ${setting}`;
}

function countProblems(messages: readonly string[]): string {
  const n = messages.reduce((sum, m) => sum + m.split('\n').length, 0);
  return n === 1 ? '1 problem' : `${n} problems`;
}
