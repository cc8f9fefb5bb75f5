/** `tidb-gitops diff OLD NEW`: the impact report of a change, as Markdown for a pull request. */
import { buildModel } from '../diff/model';
import { compareModels, exitCodeFor } from '../diff/compare';
import { appliedOnto } from '../diff/live';
import { loadManifests } from '../diff/load';
import { toMarkdown } from '../diff/markdown';
import { readSide } from '../diff/sources';
import { DEFAULT_KUBE_VERSION, parseKubeVersion } from '../tidbcluster/kube-version';
import type { Io } from './render';
import { kubeVersionNote } from '../load/clusters';
import { layerSettings, namespaceProblem, settingsFromEnv, settingsFromInputs } from '../tidbcluster/settings';
import { ANNOTATION_TITLE, parseFormat, Reporter, workflowCommand, type OutputFormat } from './format';
import { unknownOption } from './usage';
import type { DiffReport } from '../diff/report';

export const DIFF_USAGE = `Usage: tidb-gitops diff [options] OLD NEW

Compare what two versions of the inputs render to, and print a Markdown
report: per cluster and component, rolling restarts (and the Pod template
fields that cause them), scaling, config keys, images, objects added, removed
or changed, and the risks a reviewer should weigh.

OLD and NEW are each
  PATH                 a file or a directory (searched recursively for *.yaml
                       and *.yml), or - for standard input;
  REV:PATH             PATH as it is in git revision REV, e.g.
                       origin/main:clusters or HEAD~1:./examples (./ is
                       relative to the current directory, as in git). A PATH
                       missing in REV counts as empty: everything is added.
An argument that exists on disk is a path. Documents may be TidbClusters
(rendered as 'render' does) or already rendered manifests, mixed.

OLD may also be what the cluster runs, as 'kubectl get ... -o yaml' prints it
(a List, with status and server fields): NEW is then compared as applying it
onto those objects would leave them, so defaults the API server filled in are
no change, and objects NEW leaves out are reported as kept, not removed.

Options:
  -n, --namespace NS   Namespace for clusters whose metadata has none.
      --controller-image IMAGE
                       Image of the <cluster>-discovery Deployment for
                       clusters whose spec.discovery names none.
      --kube-version VERSION
                       Kubernetes version to render TidbClusters for, on both
                       sides (default ${DEFAULT_KUBE_VERSION}; see 'render --help').
      --old-kube-version VERSION
                       The version for OLD's TidbClusters only (default: the
                       same as NEW): what changing the target does.
      --exit-code      Exit 0 when nothing changes, 3 when something changes
                       without risks, 4 when there is at least one risk.
      --format FORMAT  text (default: the Markdown report), json (the report,
                       errors and warnings as one JSON document on stdout) or
                       github (the Markdown report; errors, warnings and
                       risks as GitHub Actions annotations on stderr).
  -h, --help           Show this help.

The report goes to stdout; notes and errors go to stderr.
Exit status: 0 report printed, 1 invalid input, unreadable path or git
failure (nothing on stdout), 2 usage error; with --exit-code 0, 3 or 4 as
above instead of 0.
`;

export interface DiffOptions {
  readonly old: string;
  readonly new: string;
  /** Namespace for TidbClusters whose metadata has none. @default none */
  readonly namespace?: string;
  /** Image of the discovery Deployment where `spec.discovery` names none. @default this release's image */
  readonly controllerImage?: string;
  /** Kubernetes version for NEW's TidbClusters (and OLD's, unless `oldKubeVersion`). @default 1.31 */
  readonly kubeVersion?: string;
  /** Kubernetes version for OLD's TidbClusters. @default kubeVersion */
  readonly oldKubeVersion?: string;
  /** Exit 0 / 3 / 4 for no change / changes / changes with risks. @default false (exit 0 once the report is printed) */
  readonly exitCode?: boolean;
  /** How the report, problems and warnings are written (see format.ts). @default 'text' */
  readonly format?: OutputFormat;
}

/** Every option diff takes, for the did-you-mean of an unknown one. */
const DIFF_FLAGS = ['--namespace', '--controller-image', '--kube-version', '--old-kube-version', '--exit-code', '--format', '--help'];

export function diffMain(args: readonly string[], io: Io): number {
  const parsed = parseDiffArgs(args);
  if (parsed === 'help') {
    io.stdout(DIFF_USAGE);
    return 0;
  }
  if (typeof parsed === 'string') {
    io.stderr(`tidb-gitops diff: ${parsed}\nRun 'tidb-gitops diff --help' for usage.\n`);
    return 2;
  }
  return diffCommand(parsed, io);
}

/** Returns the parsed options, `help`, or an error message. */
export function parseDiffArgs(args: readonly string[]): DiffOptions | 'help' | string {
  const paths: string[] = [];
  let namespace: string | undefined;
  let controllerImage: string | undefined;
  let exitCode = false;
  let format: OutputFormat | undefined;
  const versions: { kubeVersion?: string; oldKubeVersion?: string } = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--') {
      paths.push(...args.slice(i + 1));
      break;
    }
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    const value = () => (eq > 0 ? arg.slice(eq + 1) : args[++i]);
    switch (flag) {
      case '-n':
      case '--namespace':
        namespace = value();
        if (!namespace || (namespace.startsWith('-') && eq < 0)) return `${flag} needs a namespace`;
        if (namespaceProblem(namespace)) return `${flag}: ${namespaceProblem(namespace)}`;
        break;
      case '--controller-image':
        controllerImage = value();
        if (!controllerImage) return `${flag} needs an image`;
        break;
      case '--kube-version':
      case '--old-kube-version': {
        const v = value();
        if (!v) return `${flag} needs a version, such as ${DEFAULT_KUBE_VERSION}`;
        const target = parseKubeVersion(v);
        if ('error' in target) return `${flag}: ${target.error}`;
        versions[flag === '--kube-version' ? 'kubeVersion' : 'oldKubeVersion'] = v;
        break;
      }
      case '--exit-code':
        if (eq > 0) return `${flag} takes no value`;
        exitCode = true;
        break;
      case '--format': {
        const f = parseFormat(flag, value());
        if (typeof f !== 'string') return f.error;
        format = f;
        break;
      }
      case '-h':
      case '--help':
        return 'help';
      default:
        if (arg.startsWith('-') && arg !== '-') return unknownOption(arg, DIFF_FLAGS);
        paths.push(arg);
    }
  }
  if (paths.length !== 2) return `diff needs two arguments, OLD and NEW, got ${paths.length}`;
  if (paths[0] === '-' && paths[1] === '-') return 'only one of OLD and NEW can be - (standard input)';
  return { old: paths[0], new: paths[1], namespace, controllerImage, exitCode, ...versions, ...(format && { format }) };
}

/** Prints the report; returns the exit status (see DIFF_USAGE). */
export function diffCommand(opts: DiffOptions, io: Io): number {
  const format = opts.format ?? 'text';
  const out = new Reporter(format, io.stderr, new Set([opts.old, opts.new]));
  const sides = [
    { role: 'OLD', arg: opts.old },
    { role: 'NEW', arg: opts.new },
  ].map(({ role, arg }) => readSide(arg, { role, readStdin: io.readStdin, env: io.env ?? process.env }));
  const errors = sides.flatMap((s) => s.errors);
  const notes = sides.flatMap((s) => s.notes);
  // Each side renders with its own RenderSettings (a change of them is part of the change), under the
  // command line and the environment, as `render` does.
  const fromEnv = settingsFromEnv(io.env ?? process.env);
  errors.push(...fromEnv.errors);
  const options = sides.map((s, i) => {
    const fromInputs = settingsFromInputs(s.texts);
    errors.push(...fromInputs.errors);
    const flags = {
      namespace: opts.namespace,
      controllerImage: opts.controllerImage,
      kubeVersion: i === 0 ? (opts.oldKubeVersion ?? opts.kubeVersion) : opts.kubeVersion,
    };
    return layerSettings(flags, fromEnv.settings, fromInputs.settings);
  });
  for (const v of new Set(options.map((o) => o.kubeVersion))) {
    const note = kubeVersionNote(v);
    if (note) notes.push(note);
  }
  const loaded = errors.length > 0 ? [] : sides.map((s, i) => loadManifests(s.texts, options[i]));
  for (const l of loaded) {
    errors.push(...l.errors);
    notes.push(...l.notes);
  }
  for (const n of notes) out.note(n);
  if (errors.length > 0) {
    for (const e of errors) out.error(e);
    const count = out.errors.length;
    out.line(`${count === 1 ? '1 problem' : `${count} problems`} found; no report was made`);
    if (format === 'json') io.stdout(out.json({ command: 'diff', exitCode: 1, report: null }));
    return 1;
  }
  // Live objects on the OLD side: NEW is what applying it onto them leaves.
  const live = loaded[0].live;
  const after = live.size > 0 ? appliedOnto(loaded[0].objects, loaded[1].objects, new Set(live.keys())) : loaded[1].objects;
  const report = compareModels(buildModel(loaded[0].objects), buildModel(after), { live });
  const code = opts.exitCode ? exitCodeFor(report) : 0;
  if (format === 'json') {
    io.stdout(out.json({ command: 'diff', exitCode: code, report }));
    return code;
  }
  io.stdout(toMarkdown(report));
  if (format === 'github') for (const line of riskAnnotations(report)) io.stderr(`${line}\n`);
  return code;
}

/** One warning per risk, titled with its id, for the pull request's checks. */
function riskAnnotations(report: DiffReport): string[] {
  return report.clusters.flatMap((c) =>
    c.risks.map((r) =>
      workflowCommand('warning', { title: `${ANNOTATION_TITLE} ${r.id}` }, `${c.id || 'objects of no cluster'}: ${r.message}`),
    ),
  );
}
