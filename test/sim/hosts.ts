/**
 * The names a scenario's processes resolve (see hosts-preload.js): Pod FQDNs under their peer
 * Service and the client Services, each to the loopback address its simulated server listens on.
 */
import { writeFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';

export const HOSTS_ENV = 'TEST_DNS_HOSTS';
export const HOSTS_PRELOAD = join(__dirname, 'hosts-preload.js');

export class Hosts {
  private readonly table = new Map<string, string>();

  constructor(readonly file: string) {
    this.flush();
  }

  /** The environment and `node` arguments that make a child process resolve through this table. */
  nodeArgs(): string[] {
    return ['-r', HOSTS_PRELOAD];
  }

  env(): Record<string, string> {
    return { [HOSTS_ENV]: this.file };
  }

  /**
   * A Pod's names under its peer Service, in every form a client writes them:
   * `<pod>.<peer>.<ns>`, `.svc`, and `.svc.<domain>` (and the domain `cluster.local`).
   */
  setPod(pod: string, peerService: string, namespace: string, ip: string, clusterDomain = ''): void {
    const base = `${pod}.${peerService}.${namespace}`;
    this.setNames([base, `${base}.svc`, `${base}.svc.cluster.local`, ...(clusterDomain ? [`${base}.svc.${clusterDomain}`] : [])], ip);
  }

  /** A Service's names: `<svc>`, `<svc>.<ns>`, `.svc`, `.svc.<domain>`. */
  setService(service: string, namespace: string, ip: string, clusterDomain = ''): void {
    const base = `${service}.${namespace}`;
    this.setNames(
      [service, base, `${base}.svc`, `${base}.svc.cluster.local`, ...(clusterDomain ? [`${base}.svc.${clusterDomain}`] : [])],
      ip,
    );
  }

  setNames(names: readonly string[], ip: string): void {
    for (const n of names) this.table.set(n.toLowerCase(), ip);
    this.flush();
  }

  /** Written whole and renamed, so a reader never sees half a table. */
  private flush(): void {
    const tmp = join(`${this.file}.tmp`);
    writeFileSync(tmp, JSON.stringify(Object.fromEntries(this.table)));
    renameSync(tmp, this.file);
  }
}
