/**
 * A real Kubernetes control plane for tests, on loopback: etcd, kube-apiserver (RBAC and Node
 * authorization, ServiceAccount tokens, an audit log of what ServiceAccounts asked and got) and
 * kube-controller-manager (StatefulSet, Deployment, garbage-collector, PVC-protection,
 * node-lifecycle and the other default controllers). No kubelet and no scheduler: the tests' own
 * kubelet (kubelet.ts) binds Pods and reports their status.
 *
 * ```ts
 * const cp = await ControlPlane.start(assets);
 * const kube = cp.admin();
 * ...
 * await cp.stop();
 * ```
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../sim/controller-process';
import type { KubeAssets } from './assets';
import { KubeClient } from './client';
import { kubeconfig, makePki, type Pki } from './pki';

export interface ControlPlaneOptions {
  /**
   * How long a Node may go without a heartbeat before the node-lifecycle controller marks it
   * unhealthy (and its Pods not Ready). @default '10s'
   */
  readonly nodeMonitorGracePeriod?: string;
}

/** One audit record of a request made by a ServiceAccount. */
export interface AuditRecord {
  readonly user: string;
  readonly verb: string;
  readonly uri: string;
  readonly code: number;
  readonly resource?: string;
  readonly name?: string;
  readonly namespace?: string;
  /** The authorizer's verdict (`authorization.k8s.io/decision`): `allow`, or `forbid` for an RBAC denial. */
  readonly decision?: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  userGroups: ["system:serviceaccounts"]
- level: None
`;

export class ControlPlane {
  readonly server: string;
  /** The API server's release as `--kube-version` takes it (`1.37`), read from `/version` at start. */
  kubeVersion = '';
  private readonly processes = new Map<string, ChildProcess>();
  private stopped = false;

  private constructor(
    readonly assets: KubeAssets,
    readonly dir: string,
    readonly pki: Pki,
    private readonly ports: { etcd: number; etcdPeer: number; apiserver: number; kcm: number },
    private readonly options: ControlPlaneOptions,
  ) {
    this.server = `https://127.0.0.1:${ports.apiserver}`;
  }

  /** Starts etcd, the API server and the controller manager; resolves once the API answers `/readyz` and the default ServiceAccount exists. */
  static async start(assets: KubeAssets, options: ControlPlaneOptions = {}): Promise<ControlPlane> {
    // etcd on a RAM disk where there is one: its fsyncs dominate the API's write latency.
    const base = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
    const dir = mkdtempSync(join(base, 'tidb-gitops-kube-'));
    const pki = makePki(join(dir, 'pki'));
    const ports = { etcd: await freePort(), etcdPeer: await freePort(), apiserver: await freePort(), kcm: await freePort() };
    writeFileSync(join(dir, 'audit-policy.yaml'), AUDIT_POLICY);
    writeFileSync(join(dir, 'kcm.kubeconfig'), kubeconfig(`https://127.0.0.1:${ports.apiserver}`, pki.caCert, pki.clients.kcm));
    const cp = new ControlPlane(assets, dir, pki, ports, options);
    try {
      cp.startEtcd();
      await cp.waitFor(
        async () =>
          await fetch(`http://127.0.0.1:${ports.etcd}/health`)
            .then((r) => r.ok)
            .catch(() => false),
        30_000,
        'etcd',
      );
      await cp.startApiServer();
      cp.startControllerManager();
      const admin = cp.admin();
      const { major, minor } = (await admin.ok('GET', '/version')) as { major: string; minor: string };
      cp.kubeVersion = `${major}.${minor.replace(/\D+$/, '')}`;
      await cp.waitFor(
        async () => (await admin.get('/api/v1/namespaces/default/serviceaccounts/default').catch(() => undefined)) !== undefined,
        60_000,
        'the default ServiceAccount',
      );
    } catch (err) {
      await cp.stop();
      throw err;
    }
    return cp;
  }

  /** A client with `system:masters` rights. */
  admin(): KubeClient {
    return KubeClient.fromFiles(this.server, this.pki.caCert, this.pki.clients.admin);
  }

  /** A client acting with a bearer token (a ServiceAccount's). */
  withToken(token: string): KubeClient {
    return KubeClient.fromFiles(this.server, this.pki.caCert, { token });
  }

  /** A kubeconfig file for a client certificate or a token; returns its path. */
  writeKubeconfig(name: string, user: { cert: string; key: string } | { token: string }): string {
    const file = join(this.dir, `${name}.kubeconfig`);
    writeFileSync(file, kubeconfig(this.server, this.pki.caCert, user), { mode: 0o600 });
    return file;
  }

  /** The admin kubeconfig file (for kubectl). */
  adminKubeconfig(): string {
    return this.writeKubeconfig('admin', this.pki.clients.admin);
  }

  /** Requests made by ServiceAccounts, from the API server's audit log. */
  audit(): AuditRecord[] {
    const file = join(this.dir, 'audit.log');
    if (!existsSync(file)) return [];
    const out: AuditRecord[] = [];
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (!line.trim()) continue;
      const ev = JSON.parse(line) as Record<string, any>;
      if (ev.stage !== 'ResponseComplete' && ev.stage !== 'ResponseStarted') continue;
      out.push({
        user: ev.user?.username ?? '',
        verb: ev.verb,
        uri: ev.requestURI,
        code: ev.responseStatus?.code ?? 0,
        resource: ev.objectRef?.resource,
        name: ev.objectRef?.name,
        namespace: ev.objectRef?.namespace,
        decision: ev.annotations?.['authorization.k8s.io/decision'],
      });
    }
    return out;
  }

  /** Stops the API server and starts it again on the same port and etcd (its caches start cold). */
  async restartApiServer(downMs = 0): Promise<void> {
    await this.kill('kube-apiserver');
    if (downMs > 0) await sleep(downMs);
    await this.startApiServer();
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const name of ['kube-controller-manager', 'kube-apiserver', 'etcd']) await this.kill(name);
    if (!process.env.TIDB_GITOPS_KEEP_KUBE) rmSync(this.dir, { recursive: true, force: true });
  }

  /** The last lines of a component's log, for failure messages. */
  logTail(name: string, lines = 20): string {
    const file = join(this.dir, `${name}.log`);
    return existsSync(file) ? readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n') : '';
  }

  private spawnLogged(name: string, bin: string, args: string[]): void {
    const log = createWriteStream(join(this.dir, `${name}.log`), { flags: 'a' });
    const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.pipe(log);
    child.stderr!.pipe(log);
    this.processes.set(name, child);
    // A test process that ends without stop() (a crash, a failed beforeAll) takes its servers with it.
    process.once('exit', () => child.kill('SIGKILL'));
  }

  private async kill(name: string): Promise<void> {
    const child = this.processes.get(name);
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }

  private startEtcd(): void {
    const { etcd, etcdPeer } = this.ports;
    this.spawnLogged('etcd', this.assets.etcd, [
      '--name',
      'test',
      '--data-dir',
      join(this.dir, 'etcd-data'),
      '--listen-client-urls',
      `http://127.0.0.1:${etcd}`,
      '--advertise-client-urls',
      `http://127.0.0.1:${etcd}`,
      '--listen-peer-urls',
      `http://127.0.0.1:${etcdPeer}`,
      '--initial-advertise-peer-urls',
      `http://127.0.0.1:${etcdPeer}`,
      '--initial-cluster',
      `test=http://127.0.0.1:${etcdPeer}`,
      '--quota-backend-bytes',
      String(2 * 1024 ** 3),
      '--log-outputs',
      'stderr',
    ]);
  }

  private async startApiServer(): Promise<void> {
    const p = this.pki;
    this.spawnLogged('kube-apiserver', this.assets.apiserver, [
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      `--secure-port=${this.ports.apiserver}`,
      `--etcd-servers=http://127.0.0.1:${this.ports.etcd}`,
      '--authorization-mode=Node,RBAC',
      '--anonymous-auth=false',
      `--client-ca-file=${p.caCert}`,
      `--tls-cert-file=${p.serverCert}`,
      `--tls-private-key-file=${p.serverKey}`,
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${p.saPub}`,
      `--service-account-signing-key-file=${p.saKey}`,
      '--service-cluster-ip-range=10.0.0.0/24',
      '--endpoint-reconciler-type=none',
      '--allow-privileged=true',
      '--profiling=false',
      `--audit-policy-file=${join(this.dir, 'audit-policy.yaml')}`,
      `--audit-log-path=${join(this.dir, 'audit.log')}`,
      '--audit-log-mode=blocking',
      '--v=1',
    ]);
    const admin = this.admin();
    await this.waitFor(
      async () => (await admin.request('GET', '/readyz').catch(() => undefined))?.text === 'ok',
      120_000,
      'kube-apiserver /readyz',
    );
  }

  private startControllerManager(): void {
    const p = this.pki;
    const kc = join(this.dir, 'kcm.kubeconfig');
    this.spawnLogged('kube-controller-manager', this.assets.controllerManager, [
      `--kubeconfig=${kc}`,
      `--authentication-kubeconfig=${kc}`,
      `--authorization-kubeconfig=${kc}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${this.ports.kcm}`,
      '--leader-elect=false',
      '--controllers=*',
      `--service-account-private-key-file=${p.saKey}`,
      `--root-ca-file=${p.caCert}`,
      '--use-service-account-credentials=true',
      `--cluster-signing-cert-file=${p.caCert}`,
      `--cluster-signing-key-file=${p.caKey}`,
      `--node-monitor-grace-period=${this.options.nodeMonitorGracePeriod ?? '10s'}`,
      '--node-monitor-period=1s',
      '--profiling=false',
      '--v=1',
    ]);
  }

  private async waitFor(pred: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      for (const [name, child] of this.processes) {
        if (child.exitCode !== null)
          throw new Error(`${name} exited (${child.exitCode}) while waiting for ${what}:\n${this.logTail(name)}`);
      }
      if (await pred()) return;
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      await sleep(250);
    }
  }
}
