/**
 * A real npm registry for tests: Verdaccio (a devDependency) in a child process on 127.0.0.1, on a
 * port the OS picks, its storage and users in a temporary folder. It has no uplinks, so it serves only
 * what was published to it and nothing leaves the machine: anyone reads, a registered user publishes,
 * and a version once published cannot be published again, as on the public registry.
 *
 * A child process rather than the test's own: the test runs npm synchronously, which would stall a
 * server in its own event loop.
 *
 * package.json's `overrides` entry is for Verdaccio: its verdaccio-audit asks for node-fetch by the
 * dist-tag `cjs`, which a registry mirror may not carry; the override names that release (2.7.0).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pollUntil, startLogged } from './poll';

export interface NpmRegistry {
  /** `http://127.0.0.1:<port>/` */
  readonly url: string;
  /** Registers a user (npm adduser's request) and returns the token npm publishes with. */
  addUser(name: string, password: string): Promise<string>;
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

export async function startNpmRegistry(): Promise<NpmRegistry> {
  const dir = mkdtempSync(join(tmpdir(), 'npm-registry-'));
  writeFileSync(join(dir, 'config.yaml'), config(dir));
  const { server, log, stop } = startLogged('verdaccio', process.execPath, ['-e', MAIN], dir, { ...process.env, VERDACCIO_MODULE: require.resolve('verdaccio'), VERDACCIO_CONFIG: join(dir, 'config.yaml') });
  try {
    const port = await pollUntil(server, async () => /^listening on (\d+)$/m.exec(log())?.[1], 60_000, 'its port');
    const url = `http://127.0.0.1:${port}/`;
    await pollUntil(server, async () => (await fetch(`${url}-/ping`)).ok, 60_000, `${url}-/ping`);
    return {
      url,
      async addUser(name, password) {
        const res = await fetch(`${url}-/user/org.couchdb.user:${encodeURIComponent(name)}`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ _id: `org.couchdb.user:${name}`, name, password, type: 'user', roles: [] }),
        });
        const body = (await res.json()) as { token?: string; error?: string };
        if (res.status !== 201 || !body.token) throw new Error(`verdaccio did not register ${name}: ${res.status} ${JSON.stringify(body)}`);
        return body.token;
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
