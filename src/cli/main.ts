/** The `tidb-gitops` command line: argument parsing and dispatch only. */
import { join } from 'node:path';
import { version } from '../../package.json';
import { argocdMain } from './argocd';
import { diffMain } from './diff';
import { DEFAULT_KUBE_VERSION, KUBE_RANGE, kubeVersionText, NEWEST_KUBE_MINOR, parseKubeVersion } from '../tidbcluster/kube-version';
import { readStdinText } from '../base/inputs';
import { renderCommand, type Io } from './render';
import { namespaceProblem, settingProblem, settingValue } from '../tidbcluster/settings';

const USAGE = `Usage: tidb-gitops <command> [options]

Commands:
  render PATH...       Render TidbCluster documents into Kubernetes manifests.
                       PATH is a file, a directory (searched recursively for
                       *.yaml and *.yml, hidden directories skipped) or - for
                       standard input. Other Kubernetes objects pass through
                       after the clusters' (validated for the target version,
                       namespaced like them); a Kustomization is skipped.
  controller [options] Run the companion controller of one cluster (what the
                       rendered <cluster>-discovery Deployment runs). See
                       'tidb-gitops controller --help'.
  publish-monitoring   Publish a cluster's alert rules and dashboards from
                       PingCAP's tidb-monitor-initializer files (what the
                       rendered <cluster>-monitoring-<hash> Job runs).
  diff OLD NEW         What merging a change would do to the clusters, as a
                       Markdown report. See 'tidb-gitops diff --help'.
  status [CLUSTER]     Where a running cluster stands, read from the API
                       server with your kubeconfig (also 'kubectl tidb-gitops
                       status'). See 'tidb-gitops status --help'.
  argocd ...           The Argo CD config-management plugin's commands. See
                       'tidb-gitops argocd --help'.

Options for render:
  -o, --output DIR     Write one file per cluster into DIR
                       (<name>.k8s.yaml, or <namespace>.<name>.k8s.yaml), and
                       _passthrough.k8s.yaml for other objects, instead of
                       printing one YAML stream. All files or none are written.
  -n, --namespace NS   Namespace for clusters whose metadata has none.
      --controller-image IMAGE
                       Image of the <cluster>-discovery Deployment (the
                       tidb-gitops controller) for clusters whose
                       spec.discovery names none.
      --kube-version VERSION
                       Kubernetes version to render for, ${KUBE_RANGE}
                       (default ${DEFAULT_KUBE_VERSION}). Newer versions render for
                       ${kubeVersionText(NEWEST_KUBE_MINOR)} with a note.
      --api-versions LIST
                       The API versions the target cluster serves,
                       comma-separated, as 'kubectl api-versions' prints them
                       (default: not known). Monitoring objects whose
                       Prometheus Operator CRDs are not listed are left out,
                       with a warning.
      --prune          With -o: also delete DIR/*.k8s.yaml files that no
                       input renders any more (a removed cluster).
      --check          With -o: write nothing; exit 3 when DIR differs from
                       what the inputs render (for CI: committed output
                       is stale).

  -h, --help           Show this help.
  -v, --version        Show the version.
      --debug          On an internal error (a bug), also print where it happened.

Manifests go to stdout only; notes and errors go to stderr.
Exit status: 0 rendered, 1 invalid input or output failure, 2 usage error,
3 (render --check) output out of date.
`;

/** Commands that parse their own arguments; each returns the exit code. */
const SUBCOMMANDS: Record<string, (args: readonly string[], io: Io) => number> = {
  diff: diffMain,
  argocd: argocdMain,
};

export function main(argv: readonly string[], io: Io): number {
  const [command, ...rest] = argv;
  if (command === undefined || command === '-h' || command === '--help' || command === 'help') {
    (command === undefined ? io.stderr : io.stdout)(USAGE);
    return command === undefined ? 2 : 0;
  }
  if (command === '-v' || command === '--version') {
    io.stdout(`${version}\n`);
    return 0;
  }
  if (Object.hasOwn(SUBCOMMANDS, command)) return SUBCOMMANDS[command](rest, io);
  if (command !== 'render') return usageError(io, `unknown command ${JSON.stringify(command)}`);
  const parsed = parseRenderArgs(rest);
  if (typeof parsed === 'string') return usageError(io, parsed);
  if (parsed.help) {
    io.stdout(USAGE);
    return 0;
  }
  return renderCommand(parsed, io);
}

interface ParsedRenderArgs {
  paths: string[];
  outDir?: string;
  namespace?: string;
  controllerImage?: string;
  kubeVersion?: string;
  apiVersions?: string;
  prune?: boolean;
  check?: boolean;
  help?: boolean;
}

/** Returns the parsed options, or an error message. */
export function parseRenderArgs(args: readonly string[]): ParsedRenderArgs | string {
  const out: ParsedRenderArgs = { paths: [] };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const [flag, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    // A value that looks like an option is a missing value (`-n -o DIR`), not a strange namespace.
    const value = () => {
      const v = inline ?? args[++i];
      return v !== undefined && v.startsWith('-') && v !== '-' && inline === undefined ? undefined : v;
    };
    switch (flag) {
      case '-o':
      case '--output': {
        const v = value();
        if (!v) return `${flag} needs a directory`;
        out.outDir = v;
        break;
      }
      case '-n':
      case '--namespace': {
        const v = value();
        if (!v) return `${flag} needs a namespace`;
        const problem = namespaceProblem(v);
        if (problem) return `${flag}: ${problem}`;
        out.namespace = v;
        break;
      }
      case '--controller-image': {
        const v = value();
        if (!v) return `${flag} needs an image`;
        out.controllerImage = v;
        break;
      }
      case '--kube-version': {
        const v = value();
        if (!v) return `${flag} needs a version, such as ${DEFAULT_KUBE_VERSION}`;
        const target = parseKubeVersion(v);
        if ('error' in target) return `${flag}: ${target.error}`;
        out.kubeVersion = v;
        break;
      }
      case '--api-versions': {
        const v = value();
        if (!v) return `${flag} needs a comma-separated list, such as "$(kubectl api-versions | paste -sd, -)"`;
        const problem = settingProblem('apiVersions', v);
        if (problem) return `${flag}: ${problem}`;
        out.apiVersions = settingValue('apiVersions', v);
        break;
      }
      case '--prune':
        out.prune = true;
        break;
      case '--check':
        out.check = true;
        break;
      case '-h':
      case '--help':
        out.help = true;
        break;
      default:
        if (arg.startsWith('-') && arg !== '-') return `unknown option ${JSON.stringify(arg)}`;
        out.paths.push(arg);
    }
  }
  if (out.paths.length === 0 && !out.help) return 'render needs at least one PATH (a file, a directory, or - for stdin)';
  if ((out.prune || out.check) && out.outDir === undefined) return `${out.check ? '--check' : '--prune'} needs -o DIR`;
  return out;
}

function usageError(io: Io, message: string): number {
  io.stderr(`tidb-gitops: ${message}\nRun 'tidb-gitops --help' for usage.\n`);
  return 2;
}

/** Process entry: real stdio, exit code through process.exitCode so stdout is flushed. */
export function run(): void {
  const argv = process.argv.slice(2);
  if (argv[0] === 'status') {
    // Its own bundle too: the Kubernetes client is for reading the cluster, never for rendering.
    (require(join(__dirname, 'tidb-gitops-status.js')) as { status(args: readonly string[]): void }).status(argv.slice(1));
    return;
  }
  if (argv[0] === 'controller' || argv[0] === 'publish-monitoring') {
    // A bundle of its own (with the Kubernetes client), loaded only here so rendering stays fast.
    const controller = require(join(__dirname, 'tidb-gitops-controller.js')) as { run(args: readonly string[]): void; publish(args: readonly string[]): void };
    if (argv[0] === 'controller') controller.run(argv.slice(1));
    else controller.publish(argv.slice(1));
    return;
  }
  // --debug anywhere: an unexpected failure prints its stack too.
  const debug = argv.includes('--debug');
  const io: Io = {
    stdout: (s) => process.stdout.write(s),
    stderr: (s) => process.stderr.write(s),
    readStdin: () => readStdinText(),
    env: process.env,
  };
  process.exitCode = guarded(() => main(argv.filter((a) => a !== '--debug'), io), io, debug);
}

/**
 * Runs a command; an exception nobody expected (a bug: every input problem is a message with its
 * path) ends as one line, exit 1, with the stack only under --debug. Output is written only when a
 * command completes, so nothing half-done reaches stdout.
 */
export function guarded(command: () => number, io: Io, debug: boolean): number {
  try {
    return command();
  } catch (e) {
    const err = e instanceof Error ? e : new Error(String(e));
    const first = err.message.split('\n')[0];
    io.stderr(`tidb-gitops: internal error: ${first}\nThis is a bug; please report it with the input that caused it.${debug ? '' : ' (--debug shows where it happened)'}\n`);
    if (debug && err.stack) io.stderr(`${err.stack}\n`);
    return 1;
  }
}
