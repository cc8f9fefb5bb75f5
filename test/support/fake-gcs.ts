/**
 * A real Google Cloud Storage JSON API for tests: fake-gcs-server (github.com/fsouza/fake-gcs-server,
 * built by `scripts/test-assets/fake-gcs-server.sh` into `.test-assets/`, or the directory
 * `TIDB_GITOPS_TEST_ASSETS` names), in memory, over plain HTTP on loopback. It serves buckets and
 * objects as GCS does and checks no credentials: the tokens are checked by the token endpoint of
 * `google-token-server.ts`.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { executable } from '../kube/assets';
import { freePort } from '../sim/ports';

export const TEST_ASSETS_ENV = 'TIDB_GITOPS_TEST_ASSETS';
const DEFAULT_DIR = resolve(__dirname, '../../.test-assets');

/** The emulator's binary, or why there is none. */
export function findFakeGcsServer(env: NodeJS.ProcessEnv = process.env): { path: string } | { missing: string } {
  const dir = env[TEST_ASSETS_ENV] || DEFAULT_DIR;
  const path = join(dir, 'fake-gcs-server');
  if (executable(path)) return { path };
  return {
    missing: `${path} ${existsSync(path) ? 'is not executable' : 'does not exist'} (\`bash scripts/test-assets/fake-gcs-server.sh\` builds it)`,
  };
}

export interface FakeGcs {
  /** `http://127.0.0.1:<port>`, the JSON API's root. */
  readonly endpoint: string;
  /** Writes an object. */
  put(bucket: string, name: string, body?: string): Promise<void>;
  /** The names under `prefix`, read straight from the emulator (one page of up to 1,000). */
  names(bucket: string, prefix?: string): Promise<string[]>;
  stop(): Promise<void>;
}

export async function startFakeGcs(buckets: readonly string[]): Promise<FakeGcs> {
  const found = findFakeGcsServer();
  if ('missing' in found) throw new Error(found.missing);
  const port = await freePort();
  const child = spawn(
    found.path,
    ['-backend', 'memory', '-scheme', 'http', '-host', '127.0.0.1', '-port', String(port), '-log-level', 'error'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let errors = '';
  child.stderr!.on('data', (d) => (errors += d));
  const endpoint = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`fake-gcs-server exited (${child.exitCode}): ${errors}`);
    const up = await fetch(`${endpoint}/storage/v1/b`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`fake-gcs-server did not answer on ${endpoint}: ${errors}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const ok = async (what: string, res: Response) => {
    if (!res.ok) throw new Error(`${what}: HTTP ${res.status} ${await res.text()}`);
    return res;
  };
  const stop = async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
  };
  try {
    for (const name of buckets) {
      await ok(
        `create bucket ${name}`,
        await fetch(`${endpoint}/storage/v1/b?project=test`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name }),
        }),
      );
    }
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    endpoint,
    async put(bucket, name, body = 'x') {
      const url = `${endpoint}/upload/storage/v1/b/${encodeURIComponent(bucket)}/o?uploadType=media&name=${encodeURIComponent(name)}`;
      await ok(`put ${name}`, await fetch(url, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body }));
    },
    async names(bucket, prefix = '') {
      const res = await ok(
        'list',
        await fetch(`${endpoint}/storage/v1/b/${encodeURIComponent(bucket)}/o?prefix=${encodeURIComponent(prefix)}`),
      );
      return (((await res.json()) as { items?: { name: string }[] }).items ?? []).map((i) => i.name).sort();
    },
    stop,
  };
}
