/**
 * A real Azure Blob Storage API for tests: Azurite's Blob service (npm `azurite`) in a child process
 * on loopback, in memory, its account the emulator's well-known `devstoreaccount1`. It checks Shared
 * Key signatures and SAS tokens as Azure does; {@link accountSas} makes the tokens.
 */
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sharedKeySignature } from '../../src/controller/clients/azure-blob';

/** The emulator's account and key, published with it ("Use Azurite for local Azure Storage development"). */
export const AZURITE_ACCOUNT = 'devstoreaccount1';
export const AZURITE_KEY = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';

/** Azurite's Blob service program, or why there is none. */
export function findAzurite(): { path: string } | { missing: string } {
  try {
    const path = require.resolve('azurite/dist/src/blob/main.js');
    return existsSync(path) ? { path } : { missing: `${path} does not exist` };
  } catch {
    return { missing: 'the npm package azurite is not installed (`npm ci` installs it)' };
  }
}

export interface Azurite {
  /** The account's Blob service URL: `http://127.0.0.1:<port>/devstoreaccount1`. */
  readonly endpoint: string;
  createContainer(name: string): Promise<void>;
  put(container: string, name: string, body?: string): Promise<void>;
  /** The blob names under `prefix`, read straight from the emulator (one page of up to 5,000). */
  names(container: string, prefix?: string): Promise<string[]>;
  stop(): Promise<void>;
}

export async function startAzurite(containers: readonly string[] = []): Promise<Azurite> {
  const found = findAzurite();
  if ('missing' in found) throw new Error(found.missing);
  const dir = mkdtempSync(join(tmpdir(), 'azurite-'));
  const args = [
    found.path,
    '--blobHost',
    '127.0.0.1',
    '--blobPort',
    '0',
    '--inMemoryPersistence',
    '--extentMemoryLimit',
    '64',
    '--disableTelemetry',
    '--silent',
  ];
  const child = spawn(process.execPath, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let errors = '';
  child.stderr!.on('data', (d) => (errors += d));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /successfully listens on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`Azurite exited (${code}): ${errors}${out}`)));
  });
  const endpoint = `http://127.0.0.1:${port}/${AZURITE_ACCOUNT}`;
  const signed = async (method: string, path: string, query: Record<string, string>, body?: string) => {
    const url = new URL(`${endpoint}${path}`);
    url.search = new URLSearchParams(query).toString();
    const headers: Record<string, string> = { 'x-ms-date': new Date().toUTCString(), 'x-ms-version': '2023-11-03' };
    if (body !== undefined)
      Object.assign(headers, {
        'content-length': String(Buffer.byteLength(body)),
        'content-type': 'application/octet-stream',
        'x-ms-blob-type': 'BlockBlob',
      });
    headers.authorization = `SharedKey ${AZURITE_ACCOUNT}:${sharedKeySignature(AZURITE_ACCOUNT, AZURITE_KEY, method, url, headers)}`;
    const res = await fetch(url, { method, headers, ...(body !== undefined && { body }) });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${url.pathname}: HTTP ${res.status} ${text}`);
    return text;
  };
  const blobPath = (container: string, name: string) => `/${container}/${name.split('/').map(encodeURIComponent).join('/')}`;
  const azurite: Azurite = {
    endpoint,
    createContainer: async (name) => void (await signed('PUT', `/${name}`, { restype: 'container' })),
    put: async (container, name, body = 'x') => void (await signed('PUT', blobPath(container, name), {}, body)),
    async names(container, prefix = '') {
      const xml = await signed('GET', `/${container}`, { restype: 'container', comp: 'list', prefix });
      return [...xml.matchAll(/<Blob>\s*<Name>([^<]*)<\/Name>/g)].map((m) => m[1]).sort();
    },
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    for (const c of containers) await azurite.createContainer(c);
  } catch (e) {
    await azurite.stop();
    throw e;
  }
  return azurite;
}

/**
 * An account SAS for the Blob service (version 2019-12-12, "Create an account SAS"): the
 * permissions given (`r` read, `l` list, `d` delete...) on containers and objects, until `expiry`.
 */
export function accountSas(permissions: string, expiry: Date, key = AZURITE_KEY): string {
  const fields = { sv: '2019-12-12', ss: 'b', srt: 'co', sp: permissions, se: expiry.toISOString().replace(/\.\d{3}Z$/, 'Z') };
  const toSign = [AZURITE_ACCOUNT, fields.sp, fields.ss, fields.srt, '', fields.se, '', '', fields.sv, ''].join('\n');
  const sig = createHmac('sha256', Buffer.from(key, 'base64')).update(toSign, 'utf8').digest('base64');
  return new URLSearchParams({ ...fields, sig }).toString();
}
