/**
 * The preStop hook of PD, TiKV and TiCDC as rendered, run by dash as kubelet runs it (`/bin/sh -c`):
 * it asks the controller's discovery for `/prestop/<pod>?wait=25` with what the image has (wget, curl,
 * busybox's wget, bash's /dev/tcp; each run here with a PATH holding only that one), asks again while
 * the controller says to wait, fails visibly when it has no way to ask or the controller does not
 * answer, and never holds a stopping Pod longer than its grace period allows.
 *
 * The Service name resolves only in a cluster: the tests point the script's `host` and `port` at a
 * local server (or reach it as wget's `http_proxy`), and its container log (`/proc/1/fd/2`) at a file.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DRAIN_HOOKS_ANNOTATION, TIKV_DRAIN_GRACE_SECONDS } from '../../../src/tidbcluster/guard-rails';
import { cluster, container, find, render, type Obj } from '../../support/render';
import { expectShellLintClean } from '../../support/sandbox';

const tikvSts = (objects: Obj[]) => find(objects, 'StatefulSet', 'demo-tikv');
const hookOf = (objects: Obj[]): string[] | undefined => container(tikvSts(objects), 'tikv').lifecycle?.preStop?.exec?.command;
const tikv = (o: Obj = {}) => ({ tikv: { replicas: 3, requests: { storage: '1Gi' }, ...o } });

/** A stand-in for the controller's discovery port. */
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
  return {
    seen,
    port,
    proxy: `http://127.0.0.1:${port}`,
    close: () => new Promise((r) => server.close(r)).then(() => server.closeAllConnections()),
  };
}

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'prestop-'));
  dirs.push(d);
  return d;
};

/** The programs besides the client the hook uses (coreutils in the Rocky Linux images, busybox's in Alpine ones). */
const BASICS = ['cat', 'date', 'sleep'];

const which = (name: string) => ['/usr/bin', '/bin', '/usr/local/bin'].map((d) => join(d, name)).find((p) => existsSync(p));

/** A `busybox` with only its wget applet, written in node: no busybox is installed here. */
function fakeBusybox(dir: string): void {
  const wget = [
    'const [, , ...a] = process.argv; const url = a[a.length - 1];',
    "const t = Number(a[a.indexOf('-T') + 1]) * 1000;",
    "const req = require('http').get(url, { timeout: t }, (res) => { let b = ''; res.on('data', (d) => (b += d));",
    "  res.on('end', () => { if (res.statusCode >= 200 && res.statusCode < 300) { process.stdout.write(b); process.exit(0); } process.stderr.write('wget: server returned error: HTTP ' + res.statusCode + '\\n'); process.exit(1); }); });",
    "req.on('timeout', () => req.destroy(new Error('download timed out'))); req.on('error', (e) => { process.stderr.write('wget: ' + e.message + '\\n'); process.exit(1); });",
  ].join('\n');
  writeFileSync(join(dir, 'busybox-wget.js'), wget);
  writeFileSync(
    join(dir, 'busybox'),
    [
      '#!/bin/sh',
      'case "$1" in',
      "--list) printf '%s\\n' sh cat date sleep wget ;;",
      `wget) shift; exec "${process.execPath}" "${dir}/busybox-wget.js" "$@" ;;`,
      '*) echo "$1: applet not found" >&2; exit 127 ;;',
      'esac',
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
}

/** A PATH with the basics and only `clients` (a program of the machine's, or `busybox`, the fake one). */
function pathWith(clients: string[]): string {
  const dir = tempDir();
  for (const name of [...BASICS, ...clients]) {
    if (name === 'busybox' && !which('busybox')) fakeBusybox(dir);
    else symlinkSync(which(name)!, join(dir, name));
  }
  return dir;
}

interface Run {
  code: number | null;
  ms: number;
  out: string;
  err: string;
  log: string;
}

/** Runs the hook as kubelet would (`/bin/sh -c <script>`, here dash unless told), with the container's env. */
function runHook(
  command: string[],
  env: Record<string, string>,
  o: { port?: number; patience?: number; path?: string; shell?: string } = {},
): Promise<Run> {
  const log = join(tempDir(), 'container.log');
  writeFileSync(log, '');
  let script = command[2].replaceAll('/proc/1/fd/2', log);
  if (o.port !== undefined) script = script.replace(/^host=.*$/m, 'host="127.0.0.1"').replace(/^port=.*$/m, `port=${o.port}`);
  if (o.patience !== undefined) script = script.replace(/^patience=\d+$/m, `patience=${o.patience}`);
  const started = Date.now();
  return new Promise((resolve) => {
    // bash started as `sh` (its POSIX mode), as /bin/sh is on the Rocky Linux based images.
    const child = spawn(o.shell ?? '/usr/bin/dash', ['-c', script], { argv0: 'sh', env: { PATH: o.path ?? process.env.PATH!, ...env } });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => resolve({ code, ms: Date.now() - started, out, err, log: readFileSync(log, 'utf8') }));
  });
}

describe('the preStop hook of PD, TiKV and TiCDC', () => {
  test('waits the grace period less 10 seconds, and is left out when that leaves nothing, or when drain hooks are off', () => {
    const hook = hookOf(render(cluster()));
    expect(hook?.slice(0, 2)).toEqual(['/bin/sh', '-c']);
    expect(hook?.[2]).toContain('host="demo-discovery.ns"\nport=10261\npath="/prestop/${pod}?wait=25"\n');
    expect(hook?.[2]).toContain('set -- wget -qO- -T 35 "http://${host}:${port}${path}"');
    // TiKV's own grace period is long enough for a large store's leaders to move.
    expect(tikvSts(render(cluster())).spec.template.spec.terminationGracePeriodSeconds).toBe(TIKV_DRAIN_GRACE_SECONDS);
    expect(hook?.[2]).toContain('end=$(($(date +%s) + 590))');
    const own = render(cluster(tikv({ terminationGracePeriodSeconds: 120 })));
    expect(tikvSts(own).spec.template.spec.terminationGracePeriodSeconds).toBe(120);
    expect(hookOf(own)?.[2]).toContain('end=$(($(date +%s) + 110))');
    expect(hookOf(render(cluster(tikv({ terminationGracePeriodSeconds: 10 }))))).toBeUndefined();
    const off = render(cluster({}, { annotations: { [DRAIN_HOOKS_ANNOTATION]: 'false' } }));
    expect(hookOf(off)).toBeUndefined();
    expect(tikvSts(off).spec.template.spec.terminationGracePeriodSeconds).toBeUndefined();
    // PD and TiCDC have the same hook, with their own certificate and the Kubernetes default grace period; TiDB and the others have none.
    const objects = render(cluster({ ticdc: { replicas: 2 }, tlsCluster: { enabled: true, enableDiscoveryMTLS: true } }));
    const pd = find(objects, 'StatefulSet', 'demo-pd');
    expect(container(pd, 'pd').lifecycle.preStop.exec.command[2]).toContain('--cacert /var/lib/pd-tls/ca.crt');
    expect(container(pd, 'pd').lifecycle.preStop.exec.command[2]).toContain('end=$(($(date +%s) + 20))');
    expect(pd.spec.template.spec.terminationGracePeriodSeconds).toBeUndefined();
    expect(container(find(objects, 'StatefulSet', 'demo-ticdc'), 'ticdc').lifecycle.preStop.exec.command[2]).toContain(
      '--cacert /var/lib/ticdc-tls/ca.crt',
    );
    expect(container(find(objects, 'StatefulSet', 'demo-tidb'), 'tidb').lifecycle).toBeUndefined();
  });

  test('passes dash -n and shellcheck -s sh, with and without mTLS', () => {
    expectShellLintClean(hookOf(render(cluster()))![2]);
    expectShellLintClean(hookOf(render(cluster({ tlsCluster: { enabled: true, enableDiscoveryMTLS: true } })))![2]);
  });

  test('under discovery mTLS it asks with curl and the TiKV certificate', () => {
    const hook = hookOf(render(cluster({ tlsCluster: { enabled: true, enableDiscoveryMTLS: true } })));
    expect(hook?.[2]).toContain(
      'set -- curl -sS --fail --max-time 35 --cacert /var/lib/tikv-tls/ca.crt --cert /var/lib/tikv-tls/tls.crt --key /var/lib/tikv-tls/tls.key "https://${host}:${port}${path}"',
    );
  });

  // The real wget and curl of this machine, busybox's wget (the real one where installed), bash's /dev/tcp;
  // under dash and under bash as sh (which has /dev/tcp itself).
  const SHELLS = [
    ['dash', '/usr/bin/dash'],
    ['bash as sh', '/usr/bin/bash'],
  ];
  test.each(SHELLS.flatMap(([name, shell]) => ['wget', 'curl', 'busybox', 'bash'].map((client) => [client, name, shell])))(
    'with only %s in the image, run by %s, asks the controller for its own Pod, again while told to wait, and ends as soon as it may',
    async (client, _name, shell) => {
      const c = await controller((n) =>
        n === 1
          ? { status: 200, body: 'wait: store 2 still has 5 region leaders\n' }
          : { status: 200, body: 'store 2 of demo-tikv-1 has no region leaders left\n' },
      );
      try {
        const r = await runHook(hookOf(render(cluster()))!, { POD_NAME: 'demo-tikv-1' }, { port: c.port, path: pathWith([client]), shell });
        expect(r.err).toBe('');
        expect(r.code).toBe(0);
        // Asked again at once (no pause) after the controller said to wait.
        expect(c.seen).toEqual(Array(2).fill('GET /prestop/demo-tikv-1?wait=25'));
        expect(r.out).toBe('store 2 of demo-tikv-1 has no region leaders left\n');
        expect(r.log).toBe('preStop hook of demo-tikv-1: store 2 of demo-tikv-1 has no region leaders left\n');
        expect(r.ms).toBeLessThan(1900);
      } finally {
        await c.close();
      }
    },
  );

  test('with none of them, it says so in the container log and fails, so that kubelet records a FailedPreStopHook event', async () => {
    // The fallback to /bin/busybox (where PATH leaves /bin out) would find a busybox installed here.
    if (existsSync('/bin/busybox')) return;
    const c = await controller(() => ({ status: 200, body: 'done' }));
    try {
      const r = await runHook(hookOf(render(cluster()))!, { POD_NAME: 'demo-tikv-1' }, { port: c.port, path: pathWith([]) });
      expect(r.code).toBe(1);
      expect(c.seen).toEqual([]);
      const said =
        'preStop hook of demo-tikv-1: this image has none of wget, curl, busybox or bash to ask discovery with (it could not ask the controller to wait until demo-tikv-1 has handed over what it holds)\n';
      expect(r.err).toBe(said);
      expect(r.log).toBe(said);
      // Under discovery mTLS only curl can present the certificate.
      const mtls = await runHook(
        hookOf(render(cluster({ tlsCluster: { enabled: true, enableDiscoveryMTLS: true } })))!,
        { POD_NAME: 'demo-tikv-1' },
        { path: pathWith(['wget', 'bash']) },
      );
      expect(mtls.code).toBe(1);
      expect(mtls.log).toMatch(
        /^preStop hook of demo-tikv-1: discovery requires a client certificate and this image has no curl to present it /,
      );
    } finally {
      await c.close();
    }
  });

  test("run by bash as sh with no client at all, it asks through the shell's own /dev/tcp", async () => {
    const c = await controller(() => ({ status: 200, body: 'done' }));
    try {
      const r = await runHook(
        hookOf(render(cluster()))!,
        { POD_NAME: 'demo-tikv-1' },
        { port: c.port, path: pathWith([]), shell: '/usr/bin/bash' },
      );
      expect(r.code).toBe(0);
      expect(c.seen).toEqual(['GET /prestop/demo-tikv-1?wait=25']);
      expect(r.out).toBe('done\n');
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
      expect(c.seen).toEqual(Array(3).fill('GET http://demo-discovery.from-env:10261/prestop/demo-tikv-0?wait=25'));
      expect(r.ms).toBeGreaterThanOrEqual(4000);
    } finally {
      await c.close();
    }
  }, 30_000);

  test('gives up, visibly, once the controller has not answered for its patience, however long the Pod could wait', async () => {
    const c = await controller(() => ({ status: 503, body: 'not serving' }));
    try {
      // The rendered patience is 30 s; 3 here.
      const r = await runHook(
        hookOf(render(cluster()))!,
        { POD_NAME: 'demo-tikv-2' },
        { port: c.port, patience: 3, path: pathWith(['curl']) },
      );
      expect(r.code).toBe(1);
      expect(c.seen.length).toBeGreaterThanOrEqual(2);
      expect(r.ms).toBeLessThan(12_000);
      expect(r.log).toBe(
        `preStop hook of demo-tikv-2: gave up: no answer from discovery at 127.0.0.1:${c.port} for 3s; stopping without waiting for the controller\n`,
      );
      expect(r.err).toContain('503');
    } finally {
      await c.close();
    }
  }, 30_000);

  test('gives up at its bound when the controller never answers', async () => {
    const c = await controller(() => 'hang');
    try {
      const objects = render(cluster(tikv({ terminationGracePeriodSeconds: 13 })));
      const r = await runHook(hookOf(objects)!, { POD_NAME: 'demo-tikv-2', http_proxy: c.proxy });
      // The watchdog ends the one request at the 3-second deadline (GNU wget would otherwise retry
      // its timed-out read 20 times), then the loop is over: 3 seconds and the 2-second pause.
      expect(c.seen).toHaveLength(1);
      expect(r.ms).toBeGreaterThanOrEqual(2900);
      expect(r.ms).toBeLessThan(12_000);
      expect(r.code).toBe(0);
      expect(r.log).toBe('preStop hook of demo-tikv-2: stopped waiting after 3s: no answer from discovery at demo-discovery.ns:10261\n');
      // The same with curl under bash as sh, as on the Rocky Linux based images.
      const rocky = await runHook(
        hookOf(objects)!,
        { POD_NAME: 'demo-tikv-2' },
        { port: c.port, path: pathWith(['curl']), shell: '/usr/bin/bash' },
      );
      expect(c.seen).toHaveLength(2);
      expect(rocky.ms).toBeGreaterThanOrEqual(2900);
      expect(rocky.ms).toBeLessThan(12_000);
      expect(rocky.code).toBe(0);
    } finally {
      await c.close();
    }
  }, 40_000);
});
