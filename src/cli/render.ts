/** `tidb-gitops render PATH... [-o DIR] [-n NAMESPACE] [--controller-image IMAGE] [--kube-version V]` */
import { realpathSync } from 'node:fs';
import { dirname, resolve, sep } from 'node:path';
import type { LoadedCluster } from '../tidbcluster/load';
import { kubeVersionNote, readClusterInputs } from '../load/clusters';
import { renderClusters, renderProblems } from '../render/render';
import { parseKubeVersion } from '../tidbcluster/kube-version';
import { readInputFiles, type InputFiles } from '../base/inputs';
import { leftoverFiles, writeFilesAtomically } from './write';
import { DEFAULTS } from '../tidbcluster/defaults';
import { names, PORT } from '../tidbcluster/names';
import { collisions, passThrough, PASSTHROUGH_FILE } from '../render/passthrough';
import { budgetOverlaps } from '../render/budget-overlap';
import { inputsOf, reserveNames } from '../render/reserved-names';
import { toYamlStream } from '../render/output';
import { OLDEST_KUBE_MINOR } from '../tidbcluster/kube-version';
import type { RenderSettings } from '../tidbcluster/settings';
import { Reporter, workflowCommand, ANNOTATION_TITLE, type OutputFormat } from './format';
import { objectName, staleReport, type StaleFile } from './stale';

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
  /** How problems, warnings and `--check`'s findings are reported on stderr (see format.ts). @default 'text' */
  readonly format?: OutputFormat;
  /** With `check`: also print which objects differ and the unified diff of each stale file (text format). @default false */
  readonly verbose?: boolean;
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
  const format = opts.format ?? 'text';
  const read = readInputFiles(opts.paths, io.readStdin);
  const report = new Reporter(format, io.stderr, new Set([...opts.paths, ...read.inputs.map((i) => i.file)]));
  const { code, ...fields } = render(opts, io, read, report);
  if (format === 'json') io.stderr(report.json({ command: opts.check ? 'render --check' : 'render', exitCode: code, ...fields }));
  return code;
}

/** What the JSON document says besides the problems: the output directory and its files. */
interface RenderResult {
  readonly code: number;
  readonly directory?: string;
  readonly files?: readonly { readonly file: string; readonly status: 'written' | 'deleted'; readonly objects?: number }[];
  readonly stale?: readonly StaleFile[];
}

function render(opts: RenderOptions, io: Io, read: InputFiles, report: Reporter): RenderResult {
  // Command line, then environment, then the inputs' RenderSettings, then the caller's fallback.
  const {
    clusters,
    others,
    documents,
    settings,
    errors: readErrors,
    skipped,
    renderedFiles,
    warnings,
  } = readClusterInputs(
    { inputs: read.inputs, errors: read.errors },
    {
      namespace: opts.namespace,
      controllerImage: opts.controllerImage,
      kubeVersion: opts.kubeVersion,
      apiVersions: opts.apiVersions,
      env: io.env ?? {},
      ...(opts.fallback && { fallback: opts.fallback }),
    },
  );
  const note = kubeVersionNote(settings.kubeVersion);
  if (note) report.note(note);
  for (const line of skipped) report.note(line);
  // Rendered output met in the output directory is what render writes there, not an input in it.
  const outputErrors =
    opts.outDir === undefined
      ? []
      : inputsInOutput(
          read.inputs.filter((i) => !renderedFiles.includes(i.file)),
          opts.outDir,
        );
  const errors = [...readErrors.slice(0, read.errors.length), ...outputErrors, ...readErrors.slice(read.errors.length)];
  const messages = [...errors];
  const target = settings.kubeVersion === undefined ? undefined : parseKubeVersion(settings.kubeVersion);
  const passed = passThrough(others, {
    namespace: settings.namespace,
    kubeMinor: target && 'minor' in target ? target.minor : OLDEST_KUBE_MINOR,
  });
  messages.push(...passed.errors);
  if (messages.length === 0 && clusters.length === 0) messages.push('no TidbCluster document found in the inputs');
  // Only valid input is rendered; what the API server would refuse in the result counts as bad input too.
  const rendered =
    messages.length === 0
      ? renderClusters(
          clusters.map((c) => c.resolved),
          clusters.map((c) => c.operations),
        )
      : [];
  messages.push(...renderProblems(rendered, clusters, documents));
  if (messages.length === 0) {
    const from = (i: number) => `rendered from ${clusters[i].source.file}: document ${clusters[i].source.document}`;
    const sets = rendered.map((r, i) => ({
      objects: r.objects,
      from: from(i),
      cluster: clusters[i].resolved,
      ...inputsOf(r.origins, clusters[i], documents),
    }));
    const reserved = reserveNames(sets);
    messages.push(...reserved.collisions, ...collisions(reserved.names, passed.objects));
    messages.push(
      ...budgetOverlaps(
        rendered.map((r, i) => ({ objects: r.objects, from: from(i) })),
        passed.objects,
      ),
    );
  }
  if (messages.length > 0) {
    for (const m of messages) report.error(m);
    report.line(`${countProblems(messages)} found; nothing was rendered`);
    return { code: 1 };
  }
  for (const c of clusters) {
    const w = pdWarning(c);
    if (w) report.warning(w);
  }
  for (const line of warnings) report.warning(line);
  // Said only when nothing names an image: a flag, the environment or a RenderSettings document.
  const imageNote = settings.controllerImage === undefined ? defaultImageNote(clusters, opts.controllerImageSetting) : undefined;
  if (imageNote && !opts.check) report.note(imageNote);
  const extra = passed.objects.map((p) => p.object);
  if (opts.outDir === undefined) {
    io.stdout(rendered.map((r) => r.yaml).join('') + toYamlStream(extra));
    return { code: 0 };
  }
  const dir = opts.outDir.replace(/\/$/, '');
  const files = rendered.map((r) => ({ name: r.fileName, content: r.yaml, count: r.objects.length }));
  if (extra.length > 0) files.push({ name: PASSTHROUGH_FILE, content: toYamlStream(extra), count: extra.length });
  const leftovers = opts.prune
    ? leftoverFiles(
        opts.outDir,
        files.map((f) => f.name),
      )
    : [];
  if (opts.check) return checkOutput(opts, dir, files, leftovers, report);
  try {
    writeFilesAtomically(opts.outDir, files, leftovers);
  } catch (e) {
    report.error((e as Error).message);
    report.line('nothing was written');
    return { code: 1, directory: dir, files: [] };
  }
  for (const f of files) report.line(`wrote ${dir}/${f.name} (${f.count} objects)`);
  for (const f of leftovers) report.line(`deleted ${dir}/${f} (no input renders it any more)`);
  return {
    code: 0,
    directory: dir,
    files: [
      ...files.map((f) => ({ file: `${dir}/${f.name}`, status: 'written' as const, objects: f.count })),
      ...leftovers.map((f) => ({ file: `${dir}/${f}`, status: 'deleted' as const })),
    ],
  };
}

const STALE_TEXT: Record<StaleFile['status'], string> = {
  changed: 'differs from what the inputs render',
  missing: 'missing',
  extra: 'no input renders it any more',
};

/** `render --check`: one line per stale file; which objects differ and the diff with `-v`, or as annotations. */
function checkOutput(
  opts: RenderOptions,
  dir: string,
  files: readonly { name: string; content: string }[],
  leftovers: readonly string[],
  report: Reporter,
): RenderResult {
  const stale = staleReport(opts.outDir!, files, leftovers, opts.verbose ?? false);
  if (stale.length === 0) {
    report.line(`${dir} is up to date (${files.length} file${files.length === 1 ? '' : 's'})`);
    return { code: 0, directory: dir, stale };
  }
  for (const s of stale) {
    const objects = s.objects.map((o) => `${objectName(o)} ${o.change}`);
    if (report.format === 'github') {
      const message = STALE_TEXT[s.status] + (objects.length > 0 ? `: ${objects.join(', ')}` : '');
      report.line(workflowCommand('error', { file: s.file, line: s.line, title: ANNOTATION_TITLE }, message));
      if (s.diff) report.line(`::group::diff of ${s.file}\n${s.diff}::endgroup::`);
      continue;
    }
    report.line(`${s.file}: ${STALE_TEXT[s.status]}`);
    if (opts.verbose) {
      for (const o of s.objects) report.line(`  ${objectName(o)}: ${o.change}`);
      if (s.diff) report.line(s.diff.replace(/\n$/, ''));
    }
  }
  report.line(`${dir} is out of date: render it again and commit the result`);
  return { code: EXIT_STALE, directory: dir, stale };
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
    .map(
      (i) => `${i.file}: is inside the output directory ${outDir}, whose files render overwrites and prunes: keep the inputs outside it`,
    );
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
    `${names.service(r.name, 'pd')}:${PORT.pdClient}; set spec.pd, or spec.cluster to join another TidbCluster's PD`
  );
}

/** How many clusters a note names before it counts the rest. */
const NAMES_SHOWN = 5;

/** One line naming the clusters whose controller runs this release's default image, if any. */
export function defaultImageNote(clusters: readonly LoadedCluster[], setting = '--controller-image'): string | undefined {
  const names = clusters.filter((c) => c.resolved.discovery.image === DEFAULTS.controllerImage).map((c) => c.resolved.name);
  if (names.length === 0) return undefined;
  const shown =
    names.length > NAMES_SHOWN ? `${names.slice(0, NAMES_SHOWN).join(', ')} and ${names.length - NAMES_SHOWN} more` : names.join(', ');
  const which = names.length === 1 ? `cluster ${names[0]}` : `clusters ${shown}`;
  return `note: ${which} will run the default controller image ${DEFAULTS.controllerImage}; to run your own build, set ${setting}`;
}

function countProblems(messages: readonly string[]): string {
  const n = messages.reduce((sum, m) => sum + m.split('\n').length, 0);
  return n === 1 ? '1 problem' : `${n} problems`;
}
