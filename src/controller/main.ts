/**
 * `tidb-gitops controller`: the in-cluster companion of one rendered cluster (bundled on its own as
 * lib/tidb-gitops-controller.js, with the Kubernetes client).
 */
import { Manager } from './manager';
import { CONTROLLER_USAGE, parseControllerArgs } from './options';
import { Logger } from './runtime/log';

/** Runs the controller until SIGTERM or SIGINT; resolves with the exit code. */
export async function controllerMain(args: readonly string[]): Promise<number> {
  const parsed = parseControllerArgs(args, process.env);
  if (parsed.help) {
    process.stdout.write(CONTROLLER_USAGE);
    return 0;
  }
  if (parsed.startError) {
    process.stderr.write(`tidb-gitops controller: ${parsed.startError}\n`);
    return 1;
  }
  if (!parsed.options) {
    process.stderr.write(`tidb-gitops controller: ${parsed.error}\n\n${CONTROLLER_USAGE}`);
    return 2;
  }
  const { logLevel, ...options } = parsed.options;
  const log = new Logger(logLevel);
  let controller: Manager | undefined;
  try {
    controller = new Manager({ ...options, log });
    await controller.start();
  } catch (err) {
    log.error('could not start', { error: (err as Error).message });
    await controller?.stop().catch(() => {});
    return 1;
  }
  const started = controller;
  return new Promise((resolve) => {
    const shutdown = (signal: string) => {
      log.info('shutting down', { signal });
      void started.stop().then(() => resolve(0));
    };
    process.once('SIGTERM', () => shutdown('SIGTERM'));
    process.once('SIGINT', () => shutdown('SIGINT'));
  });
}

/** Bundle entry: `node lib/tidb-gitops-controller.js` runs with process arguments. */
export function run(args: readonly string[] = process.argv.slice(2)): void {
  void controllerMain(args).then((code) => process.exit(code));
}

/**
 * `tidb-gitops publish-monitoring`: the container of a cluster's monitoring Job. Loaded only here, so
 * that the controller, which runs for as long as the cluster does, never holds its YAML reader.
 */
export function publish(args: readonly string[]): void {
  void import('./publish-monitoring').then(({ publishMonitoring }) => publishMonitoring(args)).then((code) => process.exit(code));
}

if (require.main === module) run();
