/**
 * The preStop hook of PD, TiKV and TiCDC as rendered, run by dash with the real wget: it asks the controller's
 * discovery for `/prestop/<pod>` (reached here through wget's `http_proxy`, since the Service name
 * resolves only in a cluster), asks again while the controller is not answering, and gives up at
 * its bound, so that it never holds a stopping Pod longer than its grace period allows.
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DRAIN_HOOKS_ANNOTATION } from '../src/tidbcluster/guard-rails';
import { cluster, container, find, render, type Obj } from './support/render';
import { expectShellLintClean } from './support/sandbox';

const tikvContainer = (objects: Obj[]) => container(find(objects, 'StatefulSet', 'demo-tikv'), 'tikv');
const hookOf = (objects: Obj[]): string[] | undefined => tikvContainer(objects).lifecycle?.preStop?.exec?.command;

/** A stand-in for the controller's discovery port, reached as wget's HTTP proxy. */
async function controller(answer: (n: number) => { status: number; body: string } | 'hang') {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const a = answer(seen.length);
    if (a === 'hang') return;
    res.writeHead(a.status, { 'content-type': 'text/plain' });
    res.end(a.body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return { seen, proxy: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(r)).then(() => server.closeAllConnections()) };
}

/** Runs the hook as kubelet would (`/bin/sh -c <script>`, here dash), with the container's env. */
function runHook(command: string[], env: Record<string, string>): Promise<{ code: number | null; ms: number; out: string }> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn('dash', ['-c', command[2]], { env: { PATH: process.env.PATH!, ...env } });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('close', (code) => resolve({ code, ms: Date.now() - started, out }));
  });
}

describe('the preStop hook of PD, TiKV and TiCDC', () => {
  test('waits the grace period less 10 seconds, and is left out when that leaves nothing, or when drain hooks are off', () => {
    const hook = hookOf(render(cluster()));
    expect(hook?.slice(0, 2)).toEqual(['/bin/sh', '-c']);
    expect(hook?.[2]).toContain('wget -qO- -T 20 "http://demo-discovery.ns:10261/prestop/${pod}"');
    expect(hookOf(render(cluster({ tikv: { replicas: 3, requests: { storage: '1Gi' }, terminationGracePeriodSeconds: 120 } })))?.[2]).toContain('-T 110 ');
    expect(hookOf(render(cluster({ tikv: { replicas: 3, requests: { storage: '1Gi' }, terminationGracePeriodSeconds: 10 } })))).toBeUndefined();
    expect(hookOf(render(cluster({}, { annotations: { [DRAIN_HOOKS_ANNOTATION]: 'false' } })))).toBeUndefined();
    // PD and TiCDC have the same hook, with their own certificate; TiDB and the others have none.
    const objects = render(cluster({ ticdc: { replicas: 2 }, tlsCluster: { enabled: true, enableDiscoveryMTLS: true } }));
    expect(container(find(objects, 'StatefulSet', 'demo-pd'), 'pd').lifecycle.preStop.exec.command[2]).toContain('--cacert /var/lib/pd-tls/ca.crt');
    expect(container(find(objects, 'StatefulSet', 'demo-ticdc'), 'ticdc').lifecycle.preStop.exec.command[2]).toContain('--cacert /var/lib/ticdc-tls/ca.crt');
    expect(container(find(objects, 'StatefulSet', 'demo-tidb'), 'tidb').lifecycle).toBeUndefined();
  });

  test('passes dash -n and shellcheck -s sh, with and without mTLS', () => {
    expectShellLintClean(hookOf(render(cluster()))![2]);
    expectShellLintClean(hookOf(render(cluster({ tlsCluster: { enabled: true, enableDiscoveryMTLS: true } })))![2]);
  });

  test('under discovery mTLS it asks with curl and the TiKV certificate', () => {
    const hook = hookOf(render(cluster({ tlsCluster: { enabled: true, enableDiscoveryMTLS: true } })));
    expect(hook?.[2]).toContain('curl -sS --fail --max-time 20 --cacert /var/lib/tikv-tls/ca.crt --cert /var/lib/tikv-tls/tls.crt --key /var/lib/tikv-tls/tls.key "https://demo-discovery.ns:10261/prestop/${pod}"');
  });

  test('asks the controller for its own Pod and ends as soon as it answers', async () => {
    const c = await controller(() => ({ status: 200, body: 'store 2 of demo-tikv-1 has no region leaders left\n' }));
    try {
      const r = await runHook(hookOf(render(cluster()))!, { POD_NAME: 'demo-tikv-1', http_proxy: c.proxy });
      expect(r.code).toBe(0);
      expect(c.seen).toEqual(['GET http://demo-discovery.ns:10261/prestop/demo-tikv-1']);
      expect(r.out).toBe('store 2 of demo-tikv-1 has no region leaders left\n');
    } finally {
      await c.close();
    }
  });

  // Two 2-second pauses: at least 4 s however fast the machine, past Jest's default 5 s on a loaded one.
  test('asks again every 2 seconds while the controller refuses (not leading, restarting)', async () => {
    const c = await controller((n) => (n < 3 ? { status: 503, body: 'not serving' } : { status: 200, body: 'done' }));
    try {
      const objects = render(cluster({}, { namespace: undefined }), { namespace: undefined });
      const r = await runHook(hookOf(objects)!, { POD_NAME: 'demo-tikv-0', NAMESPACE: 'from-env', http_proxy: c.proxy });
      expect(r.code).toBe(0);
      // Without a namespace in the document, the container's NAMESPACE names discovery's.
      expect(c.seen).toEqual(Array(3).fill('GET http://demo-discovery.from-env:10261/prestop/demo-tikv-0'));
      expect(r.ms).toBeGreaterThanOrEqual(4000);
    } finally {
      await c.close();
    }
  }, 30_000);

  test('gives up at its bound when the controller never answers', async () => {
    const c = await controller(() => 'hang');
    try {
      const objects = render(cluster({ tikv: { replicas: 3, requests: { storage: '1Gi' }, terminationGracePeriodSeconds: 13 } }));
      const r = await runHook(hookOf(objects)!, { POD_NAME: 'demo-tikv-2', http_proxy: c.proxy });
      // The watchdog ends the one request at the 3-second deadline (GNU wget would otherwise retry
      // its timed-out read 20 times), then the loop is over: 3 seconds and the 2-second pause.
      expect(c.seen).toHaveLength(1);
      expect(r.ms).toBeGreaterThanOrEqual(2900);
      expect(r.ms).toBeLessThan(12_000);
    } finally {
      await c.close();
    }
  }, 30_000);
});
