/**
 * A rendered cluster on the real API server: the manifests applied as Argo CD (`kubectl apply`,
 * client-side) or Flux (forced server-side apply) apply them, the real StatefulSet, Deployment,
 * garbage-collector, PVC-protection and node-lifecycle controllers of kube-controller-manager, the
 * tests' kubelet (kubelet.ts) giving each Pod its own loopback address, the PD simulator playing PD
 * and TiKV inside the Pods, and the shipped controller bundle as a process that authenticates with
 * the rendered ServiceAccount's token, so the real RBAC authorizer enforces the rendered Role.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ControllerProcess, FAST_CONTROLLER_ARGS, freePort, isSettled, spawnController } from '../sim/controller-process';
import { Hosts } from '../sim/hosts';
import { PdSim, type PdSimOptions } from '../sim/pd-api';
import { PdmsSim } from '../sim/pdms';
import { Processes } from '../sim/processes';
import { TicdcSim } from '../sim/ticdc';
import { TidbSim } from '../sim/tidb';
import { TikvSim } from '../sim/tikv';
import { pathOf, resourcePath, type KubeClient, type Obj } from './client';
import type { AuditRecord, ControlPlane } from './control-plane';
import { Kubelet, type KubeletOptions } from './kubelet';

const run = promisify(execFile);

/** How Git's manifests reach the cluster. */
export type ApplyMode = 'client-side' | 'server-side';

/** The field manager of Flux's kustomize-controller, whose server-side apply the tests play. */
export const FLUX_MANAGER = 'kustomize-controller';
/** The annotation that marks a PersistentVolumeClaim for deferred deletion (tidb-operator's name). */
const PVC_DEFER_DELETING = 'tidb.pingcap.com/pvc-defer-deleting';

export interface RealWorldOptions {
  readonly cp: ControlPlane;
  /** The TidbCluster; its `metadata.namespace` is the world's namespace (created here). */
  readonly cluster: Obj;
  readonly render: (cluster: Obj) => Obj[];
  /** @default 'server-side' */
  readonly apply?: ApplyMode;
  readonly pd?: Partial<PdSimOptions>;
  readonly kubelet?: Partial<Omit<KubeletOptions, 'node' | 'namespace'>>;
  /** Apply the rendered manifests at start. false: the test puts other objects there first. @default true */
  readonly applyAtStart?: boolean;
  /** Create the namespace. false: it exists already (made by the steps a test follows). @default true */
  readonly createNamespace?: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class RealWorld {
  readonly kube: KubeClient;
  readonly namespace: string;
  readonly name: string;
  /** Every Pod stop, in order. */
  readonly stops: Processes['stops'];
  readonly processes: Processes;
  /** Broken rules the world saw: a Pod created on a claim marked for deletion. */
  readonly violations: string[] = [];
  readonly controllers: ControllerProcess[] = [];
  /** TiDB's status port in each TiDB Pod (`/info`, `/labels`). */
  readonly tidb = new TidbSim();
  /** TiKV's own ports in each TiKV Pod (`/metrics`, log backup's FlushNow). */
  readonly tikv: TikvSim;
  /** The TSO and scheduling servers, when the cluster has PD micro-services (PD then runs in API mode). */
  readonly pdms?: PdmsSim;
  objects: Obj[];
  /** Where PD Pods ask discovery: the controller's port (`startController`), or a stand-in's before it runs. */
  discoveryPort = 0;
  private stopPvcWatch?: () => void;

  private constructor(
    readonly cp: ControlPlane,
    readonly pd: PdSim,
    readonly kubelet: Kubelet,
    readonly hosts: Hosts,
    private readonly opts: RealWorldOptions,
    objects: Obj[],
    /** TiCDC's captures, when the cluster has TiCDC. */
    readonly ticdc: TicdcSim | undefined,
  ) {
    this.kube = cp.admin();
    this.namespace = opts.cluster.metadata.namespace;
    this.name = opts.cluster.metadata.name;
    this.objects = objects;
    this.tikv = new TikvSim(pd, { metricsRefreshMs: 100 });
    const microservices = this.objects.some(
      (o) => o.kind === 'StatefulSet' && ['tso', 'scheduling'].includes(o.metadata.labels?.['app.kubernetes.io/component']),
    );
    if (microservices) {
      pd.microservices = true;
      this.pdms = new PdmsSim(pd, { cluster: this.name, namespace: this.namespace });
    }
    this.processes = new Processes(this.name, this.namespace, { pd, ticdc, tidb: this.tidb, tikv: this.tikv, pdms: this.pdms }, hosts);
    this.stops = this.processes.stops;
  }

  static async start(opts: RealWorldOptions): Promise<RealWorld> {
    const { cp, cluster } = opts;
    const namespace: string = cluster.metadata.namespace;
    const admin = cp.admin();
    if (opts.createNamespace ?? true) await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    const pd = await PdSim.start({ cluster: cluster.metadata.name, namespace, ...opts.pd });
    const kubelet = new Kubelet(admin, { node: `node-${namespace}`, namespace, startMs: 150, readyMs: 50, stopMs: 100, ...opts.kubelet });
    const dir = mkdtempSync(join(tmpdir(), 'tidb-gitops-hosts-'));
    const objects = opts.render(cluster);
    const hasTicdc = objects.some((o) => o.kind === 'StatefulSet' && o.metadata.labels?.['app.kubernetes.io/component'] === 'ticdc');
    const ticdc = hasTicdc ? await TicdcSim.start({ cluster: cluster.metadata.name, namespace }) : undefined;
    const world = new RealWorld(cp, pd, kubelet, new Hosts(join(dir, 'hosts.json')), opts, objects, ticdc);
    world.discoveryPort = await freePort();
    pd.discoveryUrl = `http://127.0.0.1:${world.discoveryPort}`;
    world.wire();
    await kubelet.start();
    if (opts.applyAtStart ?? true) await world.apply(world.objects);
    return world;
  }

  /**
   * The servers follow their Pods (processes.ts), with the Pod's address; a claim deleted for good
   * takes its volume's data with it; a Pod is Ready while its server serves.
   */
  private wire(): void {
    this.kubelet.on('podCreated', (pod: Obj) => void this.checkClaims(pod));
    this.kubelet.on('podStarted', (pod: Obj) => this.processes.started(pod, this.kubelet.ipOf(pod.metadata.name)!));
    this.kubelet.on('podStopped', (pod: Obj) => this.processes.stopped(pod));
    this.stopPvcWatch = this.kube.watch(`/api/v1/namespaces/${this.namespace}/persistentvolumeclaims`, '', (type, pvc) => {
      if (type === 'DELETED') this.processes.claimGone(pvc);
    });
    this.kubelet.readinessGate = (pod) => this.processes.ready(pod);
  }

  private async checkClaims(pod: Obj): Promise<void> {
    for (const pvc of await this.kube.list(`/api/v1/namespaces/${this.namespace}/persistentvolumeclaims`).catch(() => [])) {
      if (!pvc.metadata.name.endsWith(`-${pod.metadata.name}`)) continue;
      const mark = pvc.metadata.annotations?.[PVC_DEFER_DELETING];
      if (mark !== undefined && !pvc.metadata.deletionTimestamp) {
        this.violations.push(
          `Pod ${pod.metadata.name} was created on PersistentVolumeClaim ${pvc.metadata.name}, which is marked for deletion (${PVC_DEFER_DELETING}: ${JSON.stringify(mark)})`,
        );
      }
    }
  }

  /**
   * Applies manifests as a GitOps tool does: `kubectl apply` (client-side three-way merge, as Argo
   * CD by default) or a forced server-side apply per object (Flux). Returns kubectl's output lines
   * (`statefulset.apps/c-pd configured`) or, server-side, the objects the apply wrote.
   */
  async apply(objects: readonly Obj[], mode: ApplyMode = this.opts.apply ?? 'server-side'): Promise<string[]> {
    return RealWorld.applyObjects(this.cp, objects, mode);
  }

  /** `apply` for any objects on a control plane. */
  static async applyObjects(cp: ControlPlane, objects: readonly Obj[], mode: ApplyMode): Promise<string[]> {
    if (mode === 'client-side') {
      const dir = mkdtempSync(join(tmpdir(), 'tidb-gitops-apply-'));
      const file = join(dir, 'objects.json');
      writeFileSync(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
      const { stdout } = await run('kubectl', ['apply', '-f', file, '--kubeconfig', cp.adminKubeconfig()], { maxBuffer: 16 * 1024 * 1024 });
      rmSync(dir, { recursive: true, force: true });
      return stdout.trim().split('\n');
    }
    // An apply that changed nothing writes nothing: the applier's managedFields entry (its time) stays.
    const kube = cp.admin();
    const entry = (obj: Obj | undefined) =>
      JSON.stringify(
        (obj?.metadata?.managedFields ?? []).find((m: Obj) => m.manager === FLUX_MANAGER && m.operation === 'Apply' && !m.subresource),
      );
    const changed: string[] = [];
    for (const o of objects) {
      const before = await kube.get(pathOf(o));
      const after = await kube.apply(o, FLUX_MANAGER);
      if (!before || entry(after) !== entry(before) || after.metadata?.generation !== before.metadata?.generation)
        changed.push(`${o.kind}/${o.metadata.name}`);
    }
    return changed;
  }

  /** Renders the cluster again and applies it; resolves once the StatefulSet controller has seen it. */
  async applyCluster(cluster: Obj, mode?: ApplyMode): Promise<string[]> {
    this.objects = this.opts.render(cluster);
    const out = await this.apply(this.objects, mode);
    await this.waitFor(
      async () => (await this.statefulSets()).every((s) => (s.status?.observedGeneration ?? 0) >= (s.metadata.generation ?? 0)),
      10_000,
      'the StatefulSet controller to observe the change',
    );
    return out;
  }

  /** A token of the rendered ServiceAccount `<cluster>-discovery` (TokenRequest API). */
  async serviceAccountToken(): Promise<string> {
    const path = `/api/v1/namespaces/${this.namespace}/serviceaccounts/${this.name}-discovery/token`;
    const res = await this.kube.ok('POST', path, {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
    });
    return res.status.token as string;
  }

  /** Starts the controller bundle as the rendered ServiceAccount. */
  async startController(
    extraArgs: string[] = [],
    identity = `${this.name}-discovery-${this.controllers.length}`,
  ): Promise<ControllerProcess> {
    const kubeconfig = this.cp.writeKubeconfig(`${this.namespace}-controller`, { token: await this.serviceAccountToken() });
    const live = this.controllers.some((c) => c.running);
    const proc = await spawnController({
      objects: this.objects,
      namespace: this.namespace,
      identity,
      kubeconfig,
      pdUrl: this.pd.url,
      discoveryPort: live ? 0 : this.discoveryPort,
      nodeArgs: this.hosts.nodeArgs(),
      env: this.hosts.env(),
      args: [...FAST_CONTROLLER_ARGS, ...extraArgs],
    });
    this.controllers.push(proc);
    return proc;
  }

  /** What every controller started so far wrote on stderr (its log lines). */
  controllerOutput(): string {
    return this.controllers.map((c) => c.stderr.join('\n')).join('\n');
  }

  controller(): ControllerProcess {
    const last = this.controllers[this.controllers.length - 1];
    if (!last) throw new Error('no controller was started');
    return last;
  }

  statefulSets(): Promise<Obj[]> {
    return this.kube.list(resourcePath('apps/v1', 'StatefulSet', this.namespace));
  }

  sts(component: string): Promise<Obj | undefined> {
    return this.kube.get(resourcePath('apps/v1', 'StatefulSet', this.namespace, `${this.name}-${component}`));
  }

  async pods(component: string): Promise<Obj[]> {
    const all = await this.kube.list(resourcePath('v1', 'Pod', this.namespace), `labelSelector=app.kubernetes.io/component=${component}`);
    return all.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  }

  async pvcs(component: string): Promise<Obj[]> {
    const all = await this.kube.list(
      resourcePath('v1', 'PersistentVolumeClaim', this.namespace),
      `labelSelector=app.kubernetes.io/component=${component}`,
    );
    return all.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  }

  async settled(component: string, replicas: number): Promise<boolean> {
    return isSettled(await this.sts(component), await this.pods(component), replicas);
  }

  async status(): Promise<Obj | undefined> {
    const cm = await this.kube.get(resourcePath('v1', 'ConfigMap', this.namespace, `${this.name}-status`));
    return cm ? JSON.parse(cm.data['status.json']) : undefined;
  }

  async events(reason?: string): Promise<Obj[]> {
    const all = await this.kube.list(resourcePath('v1', 'Event', this.namespace));
    return all.filter((e) => reason === undefined || e.reason === reason);
  }

  /**
   * Requests of the controller's ServiceAccount that RBAC refused (403 with the authorizer's `forbid`;
   * an admission plugin's 403, such as a claim whose StorageClass cannot expand, is an answer).
   */
  forbidden(): AuditRecord[] {
    const user = `system:serviceaccount:${this.namespace}:${this.name}-discovery`;
    return this.cp.audit().filter((r) => r.user === user && r.code === 403 && r.decision !== 'allow');
  }

  /** Polls; on timeout the error carries PD's state, the status and the controller's last log lines. */
  async waitFor(pred: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (await pred()) return;
      if (Date.now() > deadline) {
        const logs = this.controllers[this.controllers.length - 1]?.stderr.slice(-15).join('\n') ?? '';
        const status = JSON.stringify((await this.status().catch(() => undefined))?.components ?? {}, null, 1).slice(0, 3000);
        throw new Error(
          `timed out after ${timeoutMs} ms waiting for ${what}\n--- PD ---\n${this.pd.describe()}\n--- status ---\n${status}\n--- controller ---\n${logs}`,
        );
      }
      await sleep(100);
    }
  }

  async close(): Promise<void> {
    for (const c of this.controllers) {
      if (c.running) {
        c.kill('SIGKILL');
        await c.exited;
      }
    }
    this.stopPvcWatch?.();
    await this.kubelet.close();
    await this.pd.close();
    await this.tidb.close();
    await this.tikv.close();
    await this.pdms?.close();
    await this.ticdc?.close();
  }
}
