/** The `tidb-gitops` command line: argument parsing and dispatch only. */
import { join } from 'node:path';
import { version } from '../../package.json';
import { argocdMain } from './argocd';
import { diffMain } from './diff';
import { initMain } from './init';
import { readStdinText } from '../base/inputs';
import { renderCommand, type Io } from './render';
import { parseRenderArgs, RENDER_USAGE } from './render-args';
import { unknownCommand } from './usage';

export { parseRenderArgs } from './render-args';

const USAGE = `Usage: tidb-gitops <command> [options]

Commands:
  init [NAME]          Start a repository here (or --dir DIR): a TidbCluster,
                       render settings, a pull-request check and an Argo CD
                       Application. See 'tidb-gitops init --help'.
  render PATH...       Render TidbCluster documents into Kubernetes manifests.
                       See 'tidb-gitops render --help'.
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

Options:
  -h, --help           Show this help.
  -v, --version        Show the version.
      --debug          On an internal error (a bug), also print where it happened.

Each command's exit status is in its help.
`;

/** Commands that parse their own arguments; each returns the exit code. */
const SUBCOMMANDS: Record<string, (args: readonly string[], io: Io) => number> = {
  diff: diffMain,
  init: initMain,
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
  if (command !== 'render') return usageError(io, unknownCommand(command, COMMANDS));
  const parsed = parseRenderArgs(rest);
  if (typeof parsed === 'string') return usageError(io, parsed, 'tidb-gitops render --help');
  if (parsed.help) {
    io.stdout(RENDER_USAGE);
    return 0;
  }
  return renderCommand(parsed, io);
}

/** The commands, for the did-you-mean of an unknown one. */
const COMMANDS = ['render', 'controller', 'publish-monitoring', 'status', 'help', ...Object.keys(SUBCOMMANDS)];

function usageError(io: Io, message: string, help = 'tidb-gitops --help'): number {
  io.stderr(`tidb-gitops: ${message}\nRun '${help}' for usage.\n`);
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
    const controller = require(join(__dirname, 'tidb-gitops-controller.js')) as {
      run(args: readonly string[]): void;
      publish(args: readonly string[]): void;
    };
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
  process.exitCode = guarded(
    () =>
      main(
        argv.filter((a) => a !== '--debug'),
        io,
      ),
    io,
    debug,
  );
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
    io.stderr(
      `tidb-gitops: internal error: ${first}\nThis is a bug; please report it with the input that caused it.${debug ? '' : ' (--debug shows where it happened)'}\n`,
    );
    if (debug && err.stack) io.stderr(`${err.stack}\n`);
    return 1;
  }
}
