/**
 * A simulated cluster for controller scenarios: the Kubernetes API simulator runs the rendered
 * manifests (StatefulSets roll Pods as kube-controller-manager would), the PD, PD micro-service
 * (TSO, scheduling), TiCDC and Pump simulators play the servers inside those Pods (processes.ts),
 * each Pod on its own loopback address, and the real controller runs as a separate Node process
 * (lib/tidb-gitops-controller.js, the shipped bundle) talking to all of them over HTTP, by the names
 * it would use in a cluster (hosts.ts).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ControllerProcess, FAST_CONTROLLER_ARGS, freePort, isSettled, spawnController } from './controller-process';
type Obj = Record<string, any>;
export { ControllerProcess, freePort, simCluster, type LogLine } from './controller-process';
import { Hosts } from './hosts';
import { KubeSim, type KubeObject, type KubeSimOptions } from './kube-api';
import { PdSim, type PdSimOptions } from './pd-api';
import { PdmsSim, type PdmsSimOptions } from './pdms';
import { Processes } from './processes';
import { PumpSim, type PumpSimOptions } from './pump';
import { TicdcSim, type TicdcSimOptions } from './ticdc';
import { TikvSim, type TikvSimOptions } from './tikv';
import { TidbSim } from './tidb';

/** The annotation that marks a PersistentVolumeClaim for deferred deletion (tidb-operator's name). */
export const PVC_DEFER_DELETING = 'tidb.pingcap.com/pvc-defer-deleting';

export interface WorldOptions {
  /** The TidbCluster to render (spec overrides on a 3 PD / 3 TiKV / 2 TiDB cluster named `c`). */
  readonly cluster: Obj;
  /** Renders a TidbCluster into objects (tests pass the strict-checking helper of test/support). */
  readonly render: (cluster: Obj) => Obj[];
  /** The controller bundle to run. @default lib/tidb-gitops-controller.js */
  readonly bundle?: string;
  readonly kube?: KubeSimOptions;
  readonly pd?: Partial<PdSimOptions>;
  /** Started when the cluster has TiCDC. */
  readonly ticdc?: Partial<TicdcSimOptions>;
  /** Started when the cluster has Pump. */
  readonly pump?: Partial<PumpSimOptions>;
  /** TiKV's own ports (`/metrics`, log backup). @default the gauge refreshed every 100 ms, log backup on, no task */
  readonly tikv?: Partial<TikvSimOptions>;
  /**
   * The TSO and scheduling servers, played when the rendered objects have a `tso` or `scheduling`
   * StatefulSet (PD then runs in API mode). @default the simulator's (scaled) timings
   */
  readonly pdms?: Partial<PdmsSimOptions>;
  /** Components whose servers never start (their Pods run but are never Ready). @default none */
  readonly hold?: readonly string[];
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
  readonly stops: Processes['stops'];
  /** TiDB's status port in each TiDB Pod (`/info`, `/labels`, `/upgrade/*`). */
  readonly tidb = new TidbSim();
  /**
   * Broken rules the world saw itself, one readable line each: a Pod created while one of its
   * PersistentVolumeClaims carries the deferred-deletion annotation (it would start on a volume that is
   * about to be deleted).
   */
  readonly violations: string[] = [];
  private readonly controllers: ControllerProcess[] = [];
  private readonly dir = mkdtempSync(join(tmpdir(), 'tidb-gitops-world-'));
  /** The names the controller resolves: each Pod's, to its own address. */
  readonly hosts = new Hosts(join(this.dir, 'hosts.json'));
  readonly processes: Processes;
  discoveryPort = 0;

  private constructor(
    readonly kube: KubeSim,
    readonly pd: PdSim,
    readonly ticdc: TicdcSim | undefined,
    readonly pump: PumpSim | undefined,
    readonly tikv: TikvSim,
    /** The TSO and scheduling servers, when the cluster has PD micro-services (PD then runs in API mode). */
    readonly pdms: PdmsSim | undefined,
    readonly objects: Obj[],
    private readonly opts: WorldOptions,
  ) {
    const deployment = objects.find((o) => o.kind === 'Deployment')!;
    this.namespace = deployment.metadata.namespace;
    this.name = deployment.metadata.name.replace(/-discovery$/, '');
    this.processes = new Processes(this.name, this.namespace, { pd, ticdc, pump, tikv, tidb: this.tidb, pdms }, this.hosts, opts.hold);
    this.stops = this.processes.stops;
  }

  static async start(opts: WorldOptions): Promise<World> {
    const objects = opts.render(opts.cluster);
    const deployment = objects.find((o) => o.kind === 'Deployment');
    if (!deployment) throw new Error('the rendered cluster has no controller Deployment');
    const namespace = deployment.metadata.namespace;
    const cluster = opts.cluster.metadata.name;
    const has = (c: string) => objects.some((o) => o.kind === 'StatefulSet' && o.metadata.labels?.['app.kubernetes.io/component'] === c);
    const kube = await KubeSim.start({ podStartMs: 60, podReadyMs: 20, podStopMs: 40, uniquePodIPs: true, ...opts.kube });
    // PD micro-services: PD runs as their API server (`services api`).
    const microservices = has('tso') || has('scheduling');
    const pd = await PdSim.start({ cluster, namespace, microservices, ...opts.pd });
    const pdms = microservices
      ? new PdmsSim(pd, { cluster, namespace, clusterDomain: opts.cluster.spec?.clusterDomain, ...opts.pdms })
      : undefined;
    const ticdc = has('ticdc') ? await TicdcSim.start({ cluster, namespace, ...opts.ticdc }) : undefined;
    const pump = has('pump') ? await PumpSim.start({ cluster, namespace, ...opts.pump }) : undefined;
    // A TiKV server reads the config file of the ConfigMap its Pod mounts when it starts.
    const configFile = (pod: string): string | undefined => {
      const volumes: Obj[] = kube.get('Pod', namespace, pod)?.spec?.volumes ?? [];
      const name = volumes.find((v) => v.name === 'config')?.configMap?.name;
      return name === undefined ? undefined : kube.get('ConfigMap', namespace, name)?.data?.['config-file'];
    };
    const tikv = new TikvSim(pd, { metricsRefreshMs: 100, configFile, ...opts.tikv });
    const world = new World(kube, pd, ticdc, pump, tikv, pdms, objects, opts);
    world.discoveryPort = await freePort();
    pd.discoveryUrl = `http://127.0.0.1:${world.discoveryPort}`;
    world.wire();
    (opts.apply ?? applyEach)(kube, objects);
    return world;
  }

  /**
   * The servers follow their Pods (processes.ts), and their data follows the Pods' claims; a Pod is
   * Ready while its server serves. A Pod created on a claim marked for deletion is a violation.
   */
  private wire(): void {
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
    this.kube.onDeleted('PersistentVolumeClaim', (pvc) => this.processes.claimGone(pvc));
    this.kube.on('podStarted', (pod) => this.processes.started(pod, this.kube.podIPOf(pod.metadata.namespace!, pod.metadata.name)!));
    this.kube.on('podStopped', (pod) => this.processes.stopped(pod));
    this.kube.readinessGate = (pod) => this.processes.ready(pod);
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
  async startController(
    extraArgs: string[] = [],
    identity = `c-discovery-${this.controllers.length}`,
    fast = true,
  ): Promise<ControllerProcess> {
    const kubeconfig = join(this.dir, 'kubeconfig');
    writeFileSync(kubeconfig, this.kube.kubeconfig());
    // Replicas run in separate Pods; here they share a host, so a second live one needs its own port.
    const live = this.controllers.some((c) => c.running);
    const proc = await spawnController({
      objects: this.objects,
      namespace: this.namespace,
      identity,
      kubeconfig,
      pdUrl: this.pd.url,
      discoveryPort: live ? 0 : this.discoveryPort,
      bundle: this.opts.bundle,
      nodeArgs: this.hosts.nodeArgs(),
      env: this.hosts.env(),
      args: [...(fast ? FAST_CONTROLLER_ARGS : []), ...extraArgs],
    });
    this.controllers.push(proc);
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
    return isSettled(this.sts(component), this.pods(component), replicas);
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
        const pdms = this.pdms ? `\n--- PD micro-services ---\n${this.pdms.describe()}` : '';
        throw new Error(
          `timed out after ${timeoutMs} ms waiting for ${what}\n--- PD ---\n${this.pd.describe()}${pdms}\n--- status ---\n${JSON.stringify(this.status()?.components ?? {}, null, 1).slice(0, 3000)}\n--- controller ---\n${logs}`,
        );
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  async close(): Promise<void> {
    for (const c of this.controllers) {
      if (c.running) {
        c.kill('SIGKILL');
        await c.exited;
      }
    }
    await this.pdms?.close();
    await this.pd.close();
    await this.ticdc?.close();
    await this.pump?.close();
    await this.tikv.close();
    await this.tidb.close();
    await this.kube.close();
  }
}
