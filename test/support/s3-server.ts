/**
 * A real S3-protocol server for tests: @20minutes/s3rver (npm) in a child process on loopback, with
 * the buckets asked for, its data in a temporary folder. Signature V4 is checked (keys
 * `S3RVER`/`S3RVER`; other keys get InvalidAccessKeyId, a wrong secret SignatureDoesNotMatch).
 *
 * A child process rather than in the test's own: a test that waits on a child process synchronously
 * would otherwise stall the server, and s3rver signs its ListObjectsV2 continuation tokens with a
 * cipher OpenSSL 3 keeps in its legacy provider, which only a process started with
 * `--openssl-legacy-provider` has.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface S3Server {
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string;
  stop(): Promise<void>;
}

const MAIN = `
const S3rver = require(process.env.S3RVER_MODULE);
const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: process.env.S3RVER_DIR,
  configureBuckets: JSON.parse(process.env.S3RVER_BUCKETS).map((name) => ({ name })) });
server.run().then((a) => process.stdout.write(a.port + '\\n'), (e) => { console.error(e); process.exit(1); });
process.on('SIGTERM', () => server.close().then(() => process.exit(0)));
`;

export async function startS3Server(buckets: readonly string[]): Promise<S3Server> {
  const dir = mkdtempSync(join(tmpdir(), 's3-server-'));
  const child: ChildProcess = spawn(process.execPath, ['--openssl-legacy-provider', '-e', MAIN], {
    env: { ...process.env, S3RVER_MODULE: require.resolve('@20minutes/s3rver'), S3RVER_DIR: dir, S3RVER_BUCKETS: JSON.stringify(buckets) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let errors = '';
  child.stderr!.on('data', (d) => (errors += d));
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /^(\d+)\n/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.on('exit', (code) => reject(new Error(`the S3 server exited (${code}): ${errors}`)));
  });
  return {
    endpoint: `http://127.0.0.1:${port}`,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
