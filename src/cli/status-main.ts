/**
 * The entry of the `status` command's bundle (lib/tidb-gitops-status.js): loaded by `tidb-gitops status`
 * only, so that `render` never loads the Kubernetes client.
 */
import { statusMain } from './status';

export function status(args: readonly string[]): void {
  void statusMain(args, { stdout: (s) => process.stdout.write(s), stderr: (s) => process.stderr.write(s), env: process.env }).then(
    (code) => (process.exitCode = code),
    (e: Error) => {
      process.stderr.write(`tidb-gitops: internal error: ${e.message}\nThis is a bug; please report it.\n`);
      process.exitCode = 1;
    },
  );
}
