/**
 * A real npm registry for tests: Verdaccio (a devDependency) in a child process on 127.0.0.1, on a
 * port the OS picks, its storage and users in a temporary folder. It has no uplinks, so it serves only
 * what was published to it and nothing leaves the machine: anyone reads, a registered user publishes,
 * and a version once published cannot be published again, as on the public registry.
 *
 * A child process rather than the test's own: the test runs npm synchronously, which would stall a
 * server in its own event loop.
 *
 * The test's own requests (the readiness check, adduser, reading a package document) each go over a
 * connection of their own, closed after the answer, never over a kept-alive one: Verdaccio closes a
 * connection idle for 6 s (Node's keep-alive timeout and its buffer), and a test that blocks its event
 * loop on npm for that long sees neither the close nor its own pool's idle timeout before it sends the
 * next request down the dead connection. fetch's pool did exactly that when `npm publish` took over
 * 6 s on a loaded machine ("fetch failed", cause "other side closed").
 *
 * package.json's `overrides` entry is for Verdaccio: its verdaccio-audit asks for node-fetch by the
 * dist-tag `cjs`, which a registry mirror may not carry; the override names that release (2.7.0).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pollUntil, startLogged } from './poll';

export interface NpmRegistry {
  /** `http://127.0.0.1:<port>/` */
  readonly url: string;
  /** Registers a user (npm adduser's request) and returns the token npm publishes with. */
  addUser(name: string, password: string): Promise<string>;
  /** GETs `path` (relative to `url`, e.g. a package's name) and parses the JSON answer. */
  getJson(path: string): Promise<{ status: number; body: any }>;
  stop(): Promise<void>;
}

const MAIN = `
const { runServer } = require(process.env.VERDACCIO_MODULE);
runServer(process.env.VERDACCIO_CONFIG).then((app) => {
  const server = app.listen(0, '127.0.0.1', () => process.stdout.write('listening on ' + server.address().port + '\\n'));
}, (e) => { console.error(e); process.exit(1); });
process.on('SIGTERM', () => process.exit(0));
`;

const config = (dir: string) => `storage: ${dir}/storage
auth:
  htpasswd:
    file: ${dir}/htpasswd
    max_users: 10
uplinks: {}
packages:
  '**':
    access: $all
    publish: $authenticated
    unpublish: $authenticated
max_body_size: 100mb
web:
  enable: false
log: { type: stdout, format: json, level: warn }
`;

/** A generous bound on one answer; a request past it fails with a message, never hangs the test. */
const REQUEST_TIMEOUT_MS = 60_000;

/** One request on a connection of its own (see above), its body read whole and parsed as JSON. */
function send(url: string, method: string, body?: unknown): Promise<{ status: number; body: any }> {
  const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method,
      agent: false,
      headers: {
        accept: 'application/json',
        connection: 'close',
        ...(data && { 'content-type': 'application/json', 'content-length': data.length }),
      },
      timeout: REQUEST_TIMEOUT_MS,
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${url}: no answer in ${REQUEST_TIMEOUT_MS} ms`)));
    req.on('error', (err) => reject(new Error(`${method} ${url}: ${err.message}`)));
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', (err) => reject(new Error(`${method} ${url}: ${err.message}`)));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        try {
          resolve({ status: res.statusCode!, body: JSON.parse(text) });
        } catch {
          reject(new Error(`${method} ${url}: ${res.statusCode}, not JSON: ${text.slice(0, 500)}`));
        }
      });
    });
    req.end(data);
  });
}

export async function startNpmRegistry(): Promise<NpmRegistry> {
  const dir = mkdtempSync(join(tmpdir(), 'npm-registry-'));
  writeFileSync(join(dir, 'config.yaml'), config(dir));
  const { server, log, stop } = startLogged('verdaccio', process.execPath, ['-e', MAIN], dir, {
    ...process.env,
    VERDACCIO_MODULE: require.resolve('verdaccio'),
    VERDACCIO_CONFIG: join(dir, 'config.yaml'),
  });
  try {
    const port = await pollUntil(server, async () => /^listening on (\d+)$/m.exec(log())?.[1], 60_000, 'its port');
    const url = `http://127.0.0.1:${port}/`;
    // Ready once its API answers a request, not when it prints its port.
    await pollUntil(server, async () => (await send(`${url}-/ping`, 'GET')).status === 200, 60_000, `${url}-/ping`);
    return {
      url,
      async addUser(name, password) {
        const res = await send(`${url}-/user/org.couchdb.user:${encodeURIComponent(name)}`, 'PUT', {
          _id: `org.couchdb.user:${name}`,
          name,
          password,
          type: 'user',
          roles: [],
        });
        const body = res.body as { token?: string; error?: string };
        if (res.status !== 201 || !body.token) throw new Error(`verdaccio did not register ${name}: ${res.status} ${JSON.stringify(body)}`);
        return body.token;
      },
      getJson: (path) => send(`${url}${path}`, 'GET'),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
