/**
 * The HTTP the clients of the cluster's servers share: plain node:http(s), so that TLS client
 * certificates work without extra dependencies; every request has a timeout, and errors name the URL.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { join } from 'node:path';

/** A CA to trust and a client certificate with its key, PEM. */
export interface ClientTls {
  readonly ca: Buffer;
  readonly cert: Buffer;
  readonly key: Buffer;
}

/** The certificate files of a TLS client: `ca.crt`, `tls.crt`, `tls.key` in one directory. */
export function tlsFromDir(dir: string): ClientTls {
  return { ca: readFileSync(join(dir, 'ca.crt')), cert: readFileSync(join(dir, 'tls.crt')), key: readFileSync(join(dir, 'tls.key')) };
}

export interface HttpResult {
  readonly status: number;
  readonly body: string;
}

/** One HTTP request; resolves with any status, rejects on connection errors and timeouts. */
export function httpRequest(
  url: string,
  opts: { method?: string; body?: string; timeoutMs?: number; tls?: ClientTls } = {},
): Promise<HttpResult> {
  const u = new URL(url);
  const mod = u.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = mod.request(
      u,
      {
        method: opts.method ?? 'GET',
        headers: opts.body !== undefined ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(opts.body) } : {},
        timeout: opts.timeoutMs ?? 5000,
        agent: false,
        ...(u.protocol === 'https:' && opts.tls ? { ca: opts.tls.ca, cert: opts.tls.cert, key: opts.tls.key } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`timed out after ${opts.timeoutMs ?? 5000} ms`)));
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** What a probe of one Pod's server answered: `ok`, or what it said instead. */
export interface ProbeResult {
  readonly ok: boolean;
  readonly detail: string;
}

export interface StepOutcome {
  /** True when the node holds nothing any more and may be removed. */
  readonly done: boolean;
  /** What happened or what is awaited, in words for the status and logs. */
  readonly detail: string;
}

/** A request failed or was answered unexpectedly; the message carries the URL. */
export class GracefulError extends Error {
  constructor(
    message: string,
    readonly url: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

export interface RequestOptions {
  /** Client certificate, used with `https:` bases. */
  readonly tls?: ClientTls;
  /** Per request. @default 5000 */
  readonly timeoutMs?: number;
}

export const trimSlash = (base: string): string => base.replace(/\/+$/, '');

/** The first 200 characters of a body, on one line, for messages. */
export const snippet = (body: string): string => body.replace(/\s+/g, ' ').trim().slice(0, 200);

/** One request; connection errors and timeouts become a {@link GracefulError} with the URL. */
export async function send(method: string, url: string, opts: RequestOptions, body?: string): Promise<HttpResult> {
  try {
    return await httpRequest(url, { method, body, timeoutMs: opts.timeoutMs, tls: opts.tls });
  } catch (e) {
    throw new GracefulError(`${method} ${url}: ${(e as Error).message}`, url);
  }
}

/** Parses a JSON body or throws saying what was expected. */
export function parseJson(method: string, url: string, res: HttpResult, expected: string): unknown {
  try {
    return JSON.parse(res.body) as unknown;
  } catch {
    throw new GracefulError(`${method} ${url}: expected ${expected}, got HTTP ${res.status} "${snippet(res.body)}"`, url, res.status);
  }
}

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
