/**
 * A simulated cluster for controller scenarios: the Kubernetes API simulator runs the rendered
 * manifests (StatefulSets roll Pods as kube-controller-manager would), the PD simulator plays PD and
 * TiKV processes inside those Pods, and the real controller runs as a separate Node process
 * (lib/tidb-gitops-controller.js, the shipped bundle) talking to both over HTTP.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
type Obj = Record<string, any>;
import { KubeSim, type KubeObject, type KubeSimOptions } from './kube-api';
import { PdSim, type PdSimOptions } from './pd-api';

export const CONTROLLER_BUNDLE = join(__dirname, '../../lib/tidb-gitops-controller.js');

/** The annotation that marks a PersistentVolumeClaim for deferred deletion (tidb-operator's name). */
export const PVC_DEFER_DELETING = 'tidb.pingcap.com/pvc-defer-deleting';

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

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
    readonly metricsPort: number,
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

  async get(path: string): Promise<{ status: number; body: string }> {
    const res = await fetch(`http://127.0.0.1:${this.metricsPort}${path}`);
    return { status: res.status, body: await res.text() };
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    this.child.kill(signal);
  }
}

export interface WorldOptions {
  /** The TidbCluster to render (spec overrides on a 3 PD / 3 TiKV / 2 TiDB cluster named `c`). */
  readonly cluster: Obj;
  /** Renders a TidbCluster into objects (tests pass the strict-checking helper of test/support). */
  readonly render: (cluster: Obj) => Obj[];
  /** The controller bundle to run. @default lib/tidb-gitops-controller.js */
  readonly bundle?: string;
  readonly kube?: KubeSimOptions;
  readonly pd?: Partial<PdSimOptions>;
  /**
   * Puts rendered objects into the cluster, at the start and on every `applyCluster` (a GitOps tool
   * syncing, say). @default `kubectl apply` of each object (client-side)
   */
  readonly apply?: (kube: KubeSim, objects: Obj[]) => void;
}

function applyEach(kube: KubeSim, objects: Obj[]): void {
  for (const o of objects) kube.apply(o as KubeObject);
}

export class World {
  readonly namespace: string;
  readonly name: string;
  /** Every Pod stop, in order: which Pod and when. */
  readonly stops: { pod: string; component: string; time: number }[] = [];
  /**
   * Broken rules the world saw itself, one readable line each: a Pod created while one of its
   * PersistentVolumeClaims carries the deferred-deletion annotation (it would start on a volume that is
   * about to be deleted).
   */
  readonly violations: string[] = [];
  private readonly controllers: ControllerProcess[] = [];
  private readonly dir = mkdtempSync(join(tmpdir(), 'tidb-gitops-world-'));
  discoveryPort = 0;

  private constructor(
    readonly kube: KubeSim,
    readonly pd: PdSim,
    readonly objects: Obj[],
    private readonly opts: WorldOptions,
  ) {
    const deployment = objects.find((o) => o.kind === 'Deployment')!;
    this.namespace = deployment.metadata.namespace;
    this.name = deployment.metadata.name.replace(/-discovery$/, '');
  }

  static async start(opts: WorldOptions): Promise<World> {
    const objects = opts.render(opts.cluster);
    const deployment = objects.find((o) => o.kind === 'Deployment');
    if (!deployment) throw new Error('the rendered cluster has no controller Deployment');
    const kube = await KubeSim.start({ podStartMs: 60, podReadyMs: 20, podStopMs: 40, ...opts.kube });
    const pd = await PdSim.start({ cluster: opts.cluster.metadata.name, namespace: deployment.metadata.namespace, ...opts.pd });
    const world = new World(kube, pd, objects, opts);
    world.discoveryPort = await freePort();
    pd.discoveryUrl = `http://127.0.0.1:${world.discoveryPort}`;
    world.wire();
    (opts.apply ?? applyEach)(kube, objects);
    return world;
  }

  /**
   * The PD and TiKV processes follow their Pods, and their data follows the Pods' claims; a Pod is
   * Ready while its process serves (PD: its member runs; TiKV: tikv-server runs and its store is Up or
   * Offline, i.e. still serving while it drains).
   */
  private wire(): void {
    const comp = (pod: KubeObject): string => pod.metadata.labels?.['app.kubernetes.io/component'] ?? '';
    this.kube.on('podCreated', (pod) => {
      for (const pvc of this.kube.list('PersistentVolumeClaim', pod.metadata.namespace)) {
        if (!pvc.metadata.name.endsWith(`-${pod.metadata.name}`)) continue;
        const mark = pvc.metadata.annotations?.[PVC_DEFER_DELETING];
        if (mark === undefined) continue;
        this.violations.push(
          `Pod ${pod.metadata.name} was created on PersistentVolumeClaim ${pvc.metadata.name}, which is marked for deletion (${PVC_DEFER_DELETING}: ${JSON.stringify(mark)})`,
        );
      }
    });
    // A deleted claim takes the volume with it: `<template>-<cluster>-<pd|tikv>-<n>`.
    const claimOf = new RegExp(`-(${this.name.replace(/[.]/g, '\\.')}-(pd|tikv)-\\d+)$`);
    this.kube.onDeleted('PersistentVolumeClaim', (pvc) => {
      if (pvc.metadata.namespace !== this.namespace) return;
      const m = claimOf.exec(pvc.metadata.name);
      if (m?.[2] === 'pd') this.pd.wipeData(m[1]);
      if (m?.[2] === 'tikv') this.pd.tikvWipe(m[1]);
    });
    this.kube.on('podStarted', (pod) => {
      if (comp(pod) === 'pd') this.pd.pdStart(pod.metadata.name);
      if (comp(pod) === 'tikv') this.pd.tikvStart(pod.metadata.name);
    });
    this.kube.on('podStopped', (pod) => {
      this.stops.push({ pod: pod.metadata.name, component: comp(pod), time: Date.now() });
      if (comp(pod) === 'pd') this.pd.pdStop(pod.metadata.name);
      if (comp(pod) === 'tikv') this.pd.tikvStop(pod.metadata.name);
    });
    this.kube.readinessGate = (pod) => {
      const name = pod.metadata.name;
      if (comp(pod) === 'pd') return this.pd.pdState(name) === 'running';
      if (comp(pod) === 'tikv') {
        const state = this.pd.store(name)?.state;
        return this.pd.tikvState(name) === 'running' && (state === 'Up' || state === 'Offline');
      }
      return true;
    };
  }

  /**
   * The process fails while its Pod lives on: stops the PD process inside the running Pod (as a crash
   * would, without the Pod being deleted). The Pod object stays and turns not Ready. Throws unless the
   * Pod is a started, non-terminating PD Pod.
   */
  stopPd(pod: string): void {
    this.livePod(pod, 'pd');
    this.pd.pdStop(pod);
  }

  /** Starts the PD process again inside its running Pod (after `stopPd`); the Pod turns Ready once it serves. */
  startPd(pod: string): void {
    this.livePod(pod, 'pd');
    this.pd.pdStart(pod);
  }

  /**
   * The process fails while its Pod lives on: stops the TiKV process inside the running Pod (its store
   * turns Disconnected, then Down). The Pod object stays and turns not Ready. Throws unless the Pod is
   * a started, non-terminating TiKV Pod.
   */
  stopTikv(pod: string): void {
    this.livePod(pod, 'tikv');
    this.pd.tikvStop(pod);
  }

  /** Starts the TiKV process again inside its running Pod (after `stopTikv`), on the data it has. */
  startTikv(pod: string): void {
    this.livePod(pod, 'tikv');
    this.pd.tikvStart(pod);
  }

  /** The Pod, which must be of the component, started (phase Running) and not terminating. */
  private livePod(name: string, component: string): KubeObject {
    const pod = this.kube.get('Pod', this.namespace, name);
    if (!pod) throw new Error(`no Pod ${this.namespace}/${name}`);
    if (pod.metadata.labels?.['app.kubernetes.io/component'] !== component) throw new Error(`Pod ${name} is not a ${component} Pod`);
    if (pod.metadata.deletionTimestamp) throw new Error(`Pod ${name} is terminating`);
    if (pod.status?.phase !== 'Running') throw new Error(`Pod ${name} has not started (phase ${pod.status?.phase})`);
    return pod;
  }

  /**
   * Starts a controller process with the rendered Deployment's environment. `fast` shortens the
   * requeue and Lease timings for tests; without it the controller runs with its defaults.
   */
  async startController(extraArgs: string[] = [], identity = `c-discovery-${this.controllers.length}`, fast = true): Promise<ControllerProcess> {
    const kubeconfig = join(this.dir, 'kubeconfig');
    writeFileSync(kubeconfig, this.kube.kubeconfig());
    const deployment = this.objects.find((o) => o.kind === 'Deployment')!;
    const env: Record<string, string> = {};
    for (const e of deployment.spec.template.spec.containers[0].env ?? []) if (typeof e.value === 'string') env[e.name] = e.value;
    const metricsPort = await freePort();
    // Replicas run in separate Pods; here they share a host, so a second live one needs its own port.
    const live = this.controllers.some((c) => c.child.exitCode === null && c.child.signalCode === null);
    const discoveryPort = live ? await freePort() : this.discoveryPort;
    const child = spawn(
      process.execPath,
      [
        this.opts.bundle ?? CONTROLLER_BUNDLE,
        '--kubeconfig', kubeconfig,
        '--pd-url', this.pd.url,
        '--listen-address', '127.0.0.1',
        '--discovery-port', String(discoveryPort),
        '--metrics-port', String(metricsPort),
        ...(fast ? ['--requeue', '50ms', '--resync', '1s', '--lease-duration', '3s', '--lease-renew', '300ms', '--renew-deadline', '2500ms'] : []),
        ...extraArgs,
      ],
      {
        env: { PATH: process.env.PATH ?? '', ...env, MY_POD_NAMESPACE: this.namespace, MY_POD_NAME: identity },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    const proc = new ControllerProcess(child, identity, metricsPort);
    this.controllers.push(proc);
    await this.waitFor(async () => (await proc.get('/healthz').catch(() => ({ status: 0 }))).status === 200, 10_000, 'controller to serve /healthz', proc);
    return proc;
  }

  /**
   * Re-renders with changed spec and applies it, as a GitOps tool would; resolves once the
   * StatefulSet controller has seen every change (so a new revision shows in the status).
   */
  async applyCluster(cluster: Obj): Promise<void> {
    (this.opts.apply ?? applyEach)(this.kube, this.opts.render(cluster));
    await this.waitFor(
      () => this.kube.list('StatefulSet', this.namespace).every((s) => (s.status?.observedGeneration ?? 0) >= (s.metadata.generation ?? 0)),
      5000,
      'the StatefulSet controller to observe the change',
    );
  }

  /** The controller process started last. */
  controller(): ControllerProcess {
    const last = this.controllers[this.controllers.length - 1];
    if (!last) throw new Error('no controller was started');
    return last;
  }

  sts(component: string): KubeObject {
    return this.kube.get('StatefulSet', this.namespace, `${this.name}-${component}`)!;
  }

  pods(component: string): KubeObject[] {
    return this.kube
      .list('Pod', this.namespace)
      .filter((p) => p.metadata.labels?.['app.kubernetes.io/component'] === component)
      .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  }

  /**
   * The PersistentVolumeClaims of a component, sorted by name: those labelled with it
   * (app.kubernetes.io/component), and unlabelled ones named `<template>-<cluster>-<component>-<n>`.
   */
  pvcs(component: string): KubeObject[] {
    const named = new RegExp(`-${this.name.replace(/[.]/g, '\\.')}-${component}-\\d+$`);
    return this.kube
      .list('PersistentVolumeClaim', this.namespace)
      .filter((c) => {
        const label = c.metadata.labels?.['app.kubernetes.io/component'];
        return label !== undefined ? label === component : named.test(c.metadata.name);
      })
      .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  }

  /** Every Pod of the component exists, is Ready and runs the StatefulSet's update revision; partition holds at replicas. */
  settled(component: string, replicas: number): boolean {
    const sts = this.sts(component);
    const rev = sts.status?.updateRevision;
    const pods = this.pods(component);
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

  status(): Obj | undefined {
    const cm = this.kube.get('ConfigMap', this.namespace, `${this.name}-status`);
    return cm ? JSON.parse(cm.data['status.json']) : undefined;
  }

  events(reason?: string): KubeObject[] {
    return this.kube.list('Event', this.namespace).filter((e) => reason === undefined || e.reason === reason);
  }

  /** Polls an async or sync condition; on timeout the error carries the simulators' state and the controller's last log lines. */
  async waitFor(pred: () => boolean | Promise<boolean>, timeoutMs: number, what: string, proc?: ControllerProcess): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (await pred()) return;
      if (Date.now() > deadline) {
        const logs = (proc ?? this.controllers[this.controllers.length - 1])?.stderr.slice(-15).join('\n') ?? '';
        throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}\n--- PD ---\n${this.pd.describe()}\n--- status ---\n${JSON.stringify(this.status()?.components ?? {}, null, 1).slice(0, 3000)}\n--- controller ---\n${logs}`);
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  async close(): Promise<void> {
    for (const c of this.controllers) {
      if (c.child.exitCode === null && c.child.signalCode === null) {
        c.kill('SIGKILL');
        await c.exited;
      }
    }
    await this.pd.close();
    await this.kube.close();
  }
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
