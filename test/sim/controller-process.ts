/**
 * The shipped controller bundle (lib/tidb-gitops-controller.js) run as a separate process, as a Pod
 * of the rendered `<cluster>-discovery` Deployment runs it: with the Deployment's environment, its
 * logs (JSON lines on stderr) collected for assertions, and what a scenario shares between the
 * simulated and the real Kubernetes API.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

type Obj = Record<string, any>;

/** The bundle under test; TIDB_GITOPS_TEST_BUNDLE names another build (an older one, to see a test fail before its fix). */
export const CONTROLLER_BUNDLE = process.env.TIDB_GITOPS_TEST_BUNDLE ?? join(__dirname, '../../lib/tidb-gitops-controller.js');

/** Short requeue and Lease timings, so scenarios run in seconds. */
export const FAST_CONTROLLER_ARGS = [
  '--requeue',
  '50ms',
  '--resync',
  '1s',
  '--lease-duration',
  '3s',
  '--lease-renew',
  '300ms',
  '--renew-deadline',
  '2500ms',
];

/** A free TCP port on 127.0.0.1 (see ports.ts). */
export { freePort } from './ports';

export interface LogLine {
  level: string;
  msg: string;
  [k: string]: unknown;
}

/** One controller process. */
export class ControllerProcess {
  readonly logs: LogLine[] = [];
  readonly stderr: string[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private buffer = '';

  constructor(
    readonly child: ChildProcess,
    readonly identity: string,
  ) {
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      this.buffer += chunk;
      let nl: number;
      while ((nl = this.buffer.indexOf('\n')) >= 0) {
        const line = this.buffer.slice(0, nl);
        this.buffer = this.buffer.slice(nl + 1);
        this.stderr.push(line);
        try {
          this.logs.push(JSON.parse(line) as LogLine);
        } catch {
          // Not a log line (a crash trace): kept in stderr.
        }
      }
    });
    this.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  }

  /**
   * The port of /metrics, /healthz and /readyz, as the controller says it bound it. The harness lets
   * it pick a free port (0) itself: a port picked here and bound there could be taken in between.
   */
  get metricsPort(): number | undefined {
    const started = this.logs.find((l) => l.msg === 'controller started');
    return typeof started?.metricsPort === 'number' ? started.metricsPort : undefined;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  async get(path: string): Promise<{ status: number; body: string }> {
    if (this.metricsPort === undefined) throw new Error(`${this.identity} has not said which port it serves on yet`);
    const res = await fetch(`http://127.0.0.1:${this.metricsPort}${path}`);
    return { status: res.status, body: await res.text() };
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    this.child.kill(signal);
  }
}

export interface SpawnControllerOptions {
  /** The rendered objects; the controller takes its environment from their Deployment. */
  readonly objects: readonly Obj[];
  readonly namespace: string;
  readonly identity: string;
  readonly kubeconfig: string;
  readonly pdUrl: string;
  /** 0 lets the controller pick one (a replica that only stands by). */
  readonly discoveryPort: number;
  /** @default lib/tidb-gitops-controller.js */
  readonly bundle?: string;
  /** `node` arguments before the bundle (a preload). */
  readonly nodeArgs?: readonly string[];
  /** More environment (a test DNS table). */
  readonly env?: Readonly<Record<string, string>>;
  /** Flags after the ones the harness sets. @default FAST_CONTROLLER_ARGS */
  readonly args?: readonly string[];
}

/** Starts the bundle with the Deployment's environment; resolves once it serves `/healthz`. */
export async function spawnController(o: SpawnControllerOptions): Promise<ControllerProcess> {
  const deployment = o.objects.find((x) => x.kind === 'Deployment');
  if (!deployment) throw new Error('the rendered cluster has no controller Deployment');
  const env: Record<string, string> = {};
  for (const e of deployment.spec.template.spec.containers[0].env ?? []) if (typeof e.value === 'string') env[e.name] = e.value;
  const child = spawn(
    process.execPath,
    [
      ...(o.nodeArgs ?? []),
      o.bundle ?? CONTROLLER_BUNDLE,
      '--kubeconfig',
      o.kubeconfig,
      '--pd-url',
      o.pdUrl,
      '--listen-address',
      '127.0.0.1',
      '--discovery-port',
      String(o.discoveryPort),
      '--metrics-port',
      '0',
      ...(o.args ?? FAST_CONTROLLER_ARGS),
    ],
    {
      env: { PATH: process.env.PATH ?? '', ...env, ...o.env, MY_POD_NAMESPACE: o.namespace, MY_POD_NAME: o.identity },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  const proc = new ControllerProcess(child, o.identity);
  const deadline = Date.now() + 10_000;
  while ((await proc.get('/healthz').catch(() => ({ status: 0 }))).status !== 200) {
    if (!proc.running || Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`the controller did not serve /healthz within 10 s:\n${proc.stderr.slice(-15).join('\n')}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  return proc;
}

/** Every Pod of the component exists, is Ready and runs the StatefulSet's update revision; partition holds at replicas. */
export function isSettled(sts: Obj | undefined, pods: readonly Obj[], replicas: number): boolean {
  if (!sts) return false;
  const rev = sts.status?.updateRevision;
  return (
    sts.spec.replicas === replicas &&
    sts.spec.updateStrategy?.rollingUpdate?.partition === replicas &&
    sts.status?.currentRevision === rev &&
    pods.length === replicas &&
    pods.every(
      (p) =>
        p.metadata.labels?.['controller-revision-hash'] === rev &&
        !p.metadata.deletionTimestamp &&
        (p.status?.conditions ?? []).some((c: Obj) => c.type === 'Ready' && c.status === 'True'),
    )
  );
}

/** A 3 PD / 3 TiKV / 2 TiDB cluster `c` in namespace `ns`, with `spec` overrides. */
export function simCluster(spec: Obj = {}, metadata: Obj = {}): Obj {
  return {
    apiVersion: 'pingcap.com/v1alpha1',
    kind: 'TidbCluster',
    metadata: { name: 'c', namespace: 'ns', ...metadata },
    spec: {
      version: 'v8.5.0',
      pd: { replicas: 3, requests: { storage: '1Gi' } },
      tikv: { replicas: 3, requests: { storage: '1Gi' } },
      tidb: { replicas: 2 },
      ...spec,
    },
  };
}
