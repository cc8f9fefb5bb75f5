/**
 * What the controller asks a TiFlash server itself before an upgrade moves past its Pod, which PD
 * cannot answer for it: whether it serves.
 */
import { PORT } from '../../tidbcluster/names';
import { podHost, type ClusterInfo } from '../model/cluster';
import { httpRequest, type ClientTls, type ProbeResult } from './http';

/**
 * A TiFlash Pod's proxy status server, as tidb-operator addresses it
 * (`pkg/tiflashapi/tiflash_control.go`: `<pod>.<cluster>-tiflash-peer.<ns>:20292`, https with cluster TLS).
 */
export function tiflashStatusUrl(c: ClusterInfo, pod: string): string {
  return `${c.tls ? 'https' : 'http'}://${podHost(c, 'tiflash', pod)}:${PORT.tiflashProxyStatus}/tiflash/store-status`;
}

/**
 * `GET /tiflash/store-status`: TiFlash answers its state (Idle, Ready, Running, Stopping,
 * Terminated) as the bare body; only `Running` serves (tidb-operator `tiflash_upgrader.go` compares
 * the body with "Running" exactly).
 */
export async function tiflashStoreStatus(url: string, tls?: ClientTls, timeoutMs = 5000): Promise<ProbeResult> {
  try {
    const res = await httpRequest(url, { tls, timeoutMs });
    if (res.status !== 200) return { ok: false, detail: `GET ${url}: HTTP ${res.status} ${res.body.trim().slice(0, 100)}` };
    return res.body === 'Running'
      ? { ok: true, detail: 'Running' }
      : { ok: false, detail: `store status is ${JSON.stringify(res.body.slice(0, 40))}, not Running` };
  } catch (e) {
    return { ok: false, detail: `GET ${url}: ${(e as Error).message}` };
  }
}
