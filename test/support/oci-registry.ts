/**
 * A real container registry for tests: the CNCF Distribution registry (Debian: docker-registry) on
 * 127.0.0.1 over plain HTTP, on a port the OS picks (it logs the one it got), its blobs in a temporary
 * folder. No authentication: skopeo pushes and pulls with --tls-verify=false.
 */
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pollUntil, startLogged } from './poll';

export const REGISTRY_BIN = '/usr/bin/docker-registry';

export interface OciRegistry {
  /** `127.0.0.1:<port>`, the host part of an image reference. */
  readonly host: string;
  stop(): Promise<void>;
}

const config = (dir: string) => `version: 0.1
log:
  level: info
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: ${dir}/data
http:
  addr: 127.0.0.1:0
  secret: tests-on-loopback
`;

export async function startOciRegistry(): Promise<OciRegistry> {
  if (!existsSync(REGISTRY_BIN)) throw new Error(`${REGISTRY_BIN} is missing (Debian: docker-registry)`);
  const dir = mkdtempSync(join(tmpdir(), 'oci-registry-'));
  writeFileSync(join(dir, 'config.yml'), config(dir));
  const { server, log, stop } = startLogged('docker-registry', REGISTRY_BIN, ['serve', join(dir, 'config.yml')], dir);
  try {
    const port = await pollUntil(server, async () => /listening on 127\.0\.0\.1:(\d+)/.exec(log())?.[1], 60_000, 'its port');
    const host = `127.0.0.1:${port}`;
    // The API's base endpoint answers 200 once the registry serves.
    await pollUntil(server, async () => (await fetch(`http://${host}/v2/`)).status === 200, 60_000, `http://${host}/v2/`);
    return { host, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
