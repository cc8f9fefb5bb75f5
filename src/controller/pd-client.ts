/**
 * A small client for the PD HTTP API endpoints the controller uses. Plain node:http(s), so TLS client
 * certificates work without extra dependencies. Every call has a timeout; errors carry the URL.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { join } from 'node:path';

export interface PdMember {
  readonly name: string;
  readonly memberId: string;
  readonly clientUrls: readonly string[];
  readonly healthy: boolean;
}

/** A member as `/pd/api/v1/members` lists it: with peer URLs, without health. */
export interface PdListedMember {
  readonly name: string;
  readonly memberId: string;
  readonly peerUrls: readonly string[];
}

export interface PdStore {
  readonly id: number;
  readonly address: string;
  /** Up, Disconnected, Down, Offline or Tombstone. */
  readonly state: string;
  readonly leaderCount: number;
  readonly regionCount: number;
  /** Epoch milliseconds of PD's last heartbeat from the store; undefined when PD does not say. */
  readonly lastHeartbeat?: number;
  readonly labels: Readonly<Record<string, string>>;
}

export class PdError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

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

export class PdClient {
  /** Called after every request with its outcome ("200", "500", "error"), for metrics. */
  onRequest: (outcome: string) => void = () => {};

  constructor(
    readonly baseUrl: string,
    private readonly tls?: ClientTls,
    private readonly timeoutMs = 5000,
  ) {}

  private async call(method: string, path: string, body?: unknown, okStatus: readonly number[] = [200]): Promise<string> {
    const url = `${this.baseUrl}${path}`;
    let res: HttpResult;
    try {
      res = await httpRequest(url, { method, body: body === undefined ? undefined : JSON.stringify(body), timeoutMs: this.timeoutMs, tls: this.tls });
    } catch (e) {
      this.onRequest('error');
      throw new PdError(`${method} ${url}: ${(e as Error).message}`);
    }
    this.onRequest(String(res.status));
    if (!okStatus.includes(res.status)) {
      throw new PdError(`${method} ${url}: HTTP ${res.status} ${res.body.trim().slice(0, 200)}`, res.status);
    }
    return res.body;
  }

  private async json<T>(path: string): Promise<T> {
    const text = await this.call('GET', path);
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new PdError(`GET ${this.baseUrl}${path}: answer is not JSON`);
    }
  }

  /** Members with their health (`/pd/api/v1/health`). */
  async health(): Promise<PdMember[]> {
    const list = await this.json<{ name: string; member_id: number | string; client_urls?: string[]; health: boolean }[]>('/pd/api/v1/health');
    return list.map((m) => ({ name: m.name, memberId: String(m.member_id), clientUrls: m.client_urls ?? [], healthy: m.health === true }));
  }

  /** Members as PD lists them (`/pd/api/v1/members`). */
  async members(): Promise<PdListedMember[]> {
    const r = await this.json<{ members?: { name: string; member_id: number | string; peer_urls?: string[] }[] }>('/pd/api/v1/members');
    return (r.members ?? []).map((m) => ({ name: m.name, memberId: String(m.member_id), peerUrls: m.peer_urls ?? [] }));
  }

  async leader(): Promise<string | undefined> {
    const r = await this.json<{ name?: string }>('/pd/api/v1/leader');
    return r.name || undefined;
  }

  async transferLeader(to: string): Promise<void> {
    await this.call('POST', `/pd/api/v1/leader/transfer/${encodeURIComponent(to)}`, undefined, [200, 404]);
  }

  async deleteMemberByName(name: string): Promise<void> {
    await this.call('DELETE', `/pd/api/v1/members/name/${encodeURIComponent(name)}`, undefined, [200, 404]);
  }

  async deleteMemberById(memberId: string): Promise<void> {
    await this.call('DELETE', `/pd/api/v1/members/id/${encodeURIComponent(memberId)}`, undefined, [200, 404]);
  }

  /** Up, Disconnected, Down and Offline stores. */
  async stores(): Promise<PdStore[]> {
    return this.storeList('/pd/api/v1/stores');
  }

  /** Tombstone stores (metapb state 2), which PD leaves out of the plain list. */
  async tombstones(): Promise<PdStore[]> {
    return (await this.storeList('/pd/api/v1/stores?state=2')).map((s) => ({ ...s, state: 'Tombstone' }));
  }

  private async storeList(path: string): Promise<PdStore[]> {
    const r = await this.json<{
      stores?: {
        store: { id: number; address: string; state_name?: string; labels?: { key: string; value: string }[] };
        status?: { leader_count?: number; region_count?: number; last_heartbeat_ts?: string };
      }[];
    }>(path);
    return (r.stores ?? []).map((s) => {
      const heartbeat = s.status?.last_heartbeat_ts === undefined ? NaN : Date.parse(s.status.last_heartbeat_ts);
      return {
        id: Number(s.store.id),
        address: s.store.address,
        state: s.store.state_name ?? 'Up',
        leaderCount: s.status?.leader_count ?? 0,
        regionCount: s.status?.region_count ?? 0,
        lastHeartbeat: Number.isNaN(heartbeat) ? undefined : heartbeat,
        labels: Object.fromEntries((s.store.labels ?? []).map((l) => [l.key, l.value])),
      };
    });
  }

  /** Takes a store offline; PD moves its regions away and then marks it Tombstone. Gone already counts as done. */
  async deleteStore(storeId: number): Promise<void> {
    await this.call('DELETE', `/pd/api/v1/store/${storeId}`, undefined, [200, 404, 410]);
  }

  /** `replication.max-replicas`: how many copies PD keeps of each region. */
  async maxReplicas(): Promise<number> {
    const r = await this.json<{ 'max-replicas'?: number }>('/pd/api/v1/config/replicate');
    if (typeof r['max-replicas'] !== 'number') throw new PdError(`GET ${this.baseUrl}/pd/api/v1/config/replicate: no max-replicas in the answer`);
    return r['max-replicas'];
  }

  /** Names of the schedulers running in PD. */
  async schedulers(): Promise<string[]> {
    return this.json<string[]>('/pd/api/v1/schedulers');
  }

  /**
   * Stores with an evict-leader scheduler. PD before v6 lists one scheduler per store; later versions
   * list a single `evict-leader-scheduler` whose config names the stores.
   */
  async evictingStores(): Promise<Set<number>> {
    const names = await this.schedulers();
    const ids = new Set<number>();
    for (const n of names) {
      const m = /^evict-leader-scheduler-(\d+)$/.exec(n);
      if (m) ids.add(Number(m[1]));
    }
    if (names.includes('evict-leader-scheduler')) {
      const cfg = await this.json<{ 'store-id-ranges'?: Record<string, unknown> }>('/pd/api/v1/scheduler-config/evict-leader-scheduler/list');
      for (const id of Object.keys(cfg['store-id-ranges'] ?? {})) ids.add(Number(id));
    }
    return ids;
  }

  /** Adds the evict-leader scheduler for a store; an existing one counts as success. */
  async addEvictLeader(storeId: number): Promise<void> {
    try {
      await this.call('POST', '/pd/api/v1/schedulers', { name: 'evict-leader-scheduler', store_id: storeId });
    } catch (e) {
      if (e instanceof PdError && e.status === 500 && /exist/i.test(e.message)) return;
      throw e;
    }
  }

  async removeEvictLeader(storeId: number): Promise<void> {
    await this.call('DELETE', `/pd/api/v1/schedulers/${evictSchedulerName(storeId)}`, undefined, [200, 404]);
  }
}

export const evictSchedulerName = (storeId: number): string => `evict-leader-scheduler-${storeId}`;
