/**
 * A real Prometheus server for tests (Debian's `prometheus` package: /usr/bin/prometheus and
 * /usr/bin/promtool), on 127.0.0.1 with a free port and its own temporary directory:
 *
 * ```ts
 * const prom = await startPrometheus({ config: { global: { scrape_interval: '1s' }, scrape_configs } });
 * await prom.waitFor(async () => (await prom.targets()).some((t) => t.health === 'up'), 60_000, 'a target up');
 * await prom.stop();
 * ```
 *
 * The configuration is written as JSON, which Prometheus reads as YAML.
 *
 * Debian builds Prometheus without Kubernetes service discovery (its packaging leaves client-go
 * out; the package's NEWS.Debian says so since 1.5.0): `kubernetes_sd_configs` is an unknown field
 * there. When the binary lacks it, `kubernetes_sd_configs` (role `pod`) are served by a pod
 * discovery bridge in this process instead: it lists the Pods from the API server named in the
 * SD config, with that config's credentials (so the API server's RBAC applies as to Prometheus),
 * and hands Prometheus, through `http_sd_configs`, the targets and `__meta_kubernetes_*` labels that
 * Prometheus v2.42.0's own `discovery/kubernetes/pod.go` (`buildPod`, `podLabels`) makes of them.
 * Relabeling, scraping and storage stay Prometheus's own.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeClient, type Obj } from '../kube/client';
import { freePort } from '../sim/controller-process';
import { sanitizeLabelName } from './podmonitor-scrape';
import { pollUntil } from './poll';

export const PROMETHEUS_BIN = '/usr/bin/prometheus';
export const PROMTOOL_BIN = '/usr/bin/promtool';

export interface PrometheusOptions {
  /** The whole prometheus.yml, as an object. */
  readonly config: Obj;
  /** Where the server's temporary directory (config, TSDB) is made. @default os.tmpdir() */
  readonly dir?: string;
}

export interface Prom {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** The server's own directory (removed by stop()). */
  readonly dir: string;
  readonly configFile: string;
  /**
   * Who discovers `kubernetes_sd_configs` targets: Prometheus itself, or (a build without
   * Kubernetes SD, such as Debian's) the pod discovery bridge.
   */
  readonly discovery: 'kubernetes' | 'bridge';
  /** Active targets (`GET /api/v1/targets?state=active`). */
  targets(): Promise<Obj[]>;
  /** Targets that service discovery found and relabeling dropped, with their `discoveredLabels`. */
  droppedTargets(): Promise<Obj[]>;
  /** The result vector of an instant query. */
  query(expr: string): Promise<Obj[]>;
  /** Rewrites the config file and reloads it (`POST /-/reload`); rejects with Prometheus's reason when it refuses the config. */
  reload(config: Obj): Promise<void>;
  /**
   * Polls `pred` every 200 ms until it returns something truthy, which it resolves with; fails after
   * `timeoutMs` naming `what` (with the last error and the server's last log lines), or at once when
   * the server exited.
   */
  waitFor<T>(pred: () => Promise<T>, timeoutMs: number, what: string): Promise<NonNullable<T>>;
  /** Everything the server wrote to stdout and stderr (its last 256 KiB). */
  output(): string;
  /** Ends the server and removes its directory. */
  stop(): Promise<void>;
}

const MAX_OUTPUT = 256 * 1024;

function requireBinary(bin: string): void {
  if (!existsSync(bin)) {
    throw new Error(
      `${bin} is missing: the Prometheus tests need Debian's prometheus package (apt-get install prometheus), which .ci/run installs`,
    );
  }
}

/** Starts Prometheus and resolves once it answers `/-/ready`. */
export async function startPrometheus(options: PrometheusOptions): Promise<Prom> {
  let out = '';
  const collect = (chunk: Buffer) => {
    out += chunk.toString('utf8');
    if (out.length > MAX_OUTPUT) out = out.slice(-MAX_OUTPUT);
  };
  requireBinary(PROMETHEUS_BIN);
  const log = (line: string) => collect(Buffer.from(`${line}\n`));
  const bridge = (await kubernetesSDSupported()) ? undefined : await PodDiscoveryBridge.start(log);
  const written = (config: Obj) => JSON.stringify(bridge ? bridge.serve(config) : config, null, 2);
  const parent = options.dir ?? tmpdir();
  mkdirSync(parent, { recursive: true });
  const dir = mkdtempSync(join(parent, 'prometheus-'));
  const configFile = join(dir, 'prometheus.yml');
  try {
    writeFileSync(configFile, written(options.config));
  } catch (err) {
    await bridge?.stop();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(
    PROMETHEUS_BIN,
    [
      `--config.file=${configFile}`,
      `--web.listen-address=127.0.0.1:${port}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      '--web.enable-lifecycle',
      '--log.level=info',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  child.on('error', (err) => collect(Buffer.from(`\nspawn ${PROMETHEUS_BIN}: ${err.message}\n`)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // A test process that ends without stop() takes its server with it.
  const onExit = () => child.kill('SIGKILL');
  process.once('exit', onExit);
  const running = () => child.exitCode === null && child.signalCode === null;
  const tail = () => out.split('\n').slice(-30).join('\n');

  const api = async (path: string, init?: RequestInit): Promise<any> => {
    const res = await fetch(`${url}${path}`, init);
    const text = await res.text();
    let body: any = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON (/-/reload answers in plain text)
    }
    if (!res.ok)
      throw new Error(
        `${init?.method ?? 'GET'} ${path}: HTTP ${res.status}: ${typeof body === 'string' ? body.trim() : (body?.error ?? text)}`,
      );
    return body;
  };

  const waitFor = <T>(pred: () => Promise<T>, timeoutMs: number, what: string): Promise<NonNullable<T>> =>
    pollUntil(
      { name: 'prometheus', exited: () => (running() ? undefined : String(child.exitCode ?? child.signalCode)), tail },
      pred,
      timeoutMs,
      what,
    );

  let stopped = false;
  const prom: Prom = {
    url,
    dir,
    configFile,
    discovery: bridge ? 'bridge' : 'kubernetes',
    targets: async () => (await api('/api/v1/targets?state=active')).data.activeTargets,
    droppedTargets: async () => (await api('/api/v1/targets?state=dropped')).data.droppedTargets,
    query: async (expr) => {
      const body = await api(`/api/v1/query?query=${encodeURIComponent(expr)}`);
      if (body.data.resultType !== 'vector') throw new Error(`query ${expr}: expected a vector, got a ${body.data.resultType}`);
      return body.data.result;
    },
    reload: async (config) => {
      writeFileSync(configFile, written(config));
      await api('/-/reload', { method: 'POST' });
    },
    waitFor,
    output: () => out,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      process.removeListener('exit', onExit);
      if (running()) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
      await bridge?.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };

  try {
    await waitFor(async () => (await fetch(`${url}/-/ready`).catch(() => undefined))?.ok, 60_000, 'prometheus /-/ready');
  } catch (err) {
    await prom.stop();
    throw err;
  }
  return prom;
}

export interface PromtoolResult {
  readonly ok: boolean;
  /** promtool's stdout and stderr. */
  readonly output: string;
}

function promtool(args: string[]): Promise<PromtoolResult> {
  requireBinary(PROMTOOL_BIN);
  return new Promise((resolve) => {
    execFile(PROMTOOL_BIN, args, { timeout: 60_000 }, (err, stdout, stderr) => {
      // An exit status is promtool's verdict, its output says why; anything else (not started, killed
      // at the timeout) is said here, as the output alone would not.
      const notRun =
        err && typeof err.code !== 'number'
          ? `\npromtool ${args.join(' ')} did not run to its end: ${err.killed ? `killed (${err.signal}) after 60 s` : err.message}`
          : '';
      resolve({ ok: !err, output: `${stdout}${stderr}${notRun}` });
    });
  });
}

/** `promtool check rules FILE...` */
export function checkRules(files: string[]): Promise<PromtoolResult> {
  return promtool(['check', 'rules', ...files]);
}

/**
 * `promtool check config` on a config object (written to a temporary file). `syntaxOnly` skips the
 * check that the files it names (CA, token...) exist. With a build that lacks Kubernetes SD, the
 * `kubernetes_sd_configs` are checked by the bridge's rules and the rest by promtool.
 */
export async function checkConfig(config: Obj, opts: { syntaxOnly?: boolean } = {}): Promise<PromtoolResult> {
  const dir = mkdtempSync(join(tmpdir(), 'promtool-'));
  try {
    const file = join(dir, 'prometheus.yml');
    // Without Kubernetes SD in the build, check the config Prometheus would be given (and the SD configs the bridge takes).
    const checked = (await kubernetesSDSupported()) ? config : bridgedConfig(config, (i) => `http://127.0.0.1:9/sd/${i}`).config;
    writeFileSync(file, JSON.stringify(checked, null, 2));
    return await promtool(['check', 'config', ...(opts.syntaxOnly ? ['--syntax-only'] : []), file]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

let kubernetesSD: Promise<boolean> | undefined;

/** Whether this Prometheus build knows `kubernetes_sd_configs` (asked of promtool, once). */
export function kubernetesSDSupported(): Promise<boolean> {
  kubernetesSD ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'promtool-'));
    try {
      const file = join(dir, 'prometheus.yml');
      writeFileSync(file, JSON.stringify({ scrape_configs: [{ job_name: 'probe', kubernetes_sd_configs: [{ role: 'pod' }] }] }));
      const res = await promtool(['check', 'config', '--syntax-only', file]);
      if (res.ok) return true;
      if (res.output.includes('field kubernetes_sd_configs not found')) return false;
      throw new Error(`promtool could not check a minimal config:\n${res.output}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  })();
  return kubernetesSD;
}

// What the bridge reproduces of a kubernetes_sd_config (v2.42.0 discovery/kubernetes/kubernetes.go SDConfig).
const BRIDGED_SD_FIELDS = ['role', 'api_server', 'namespaces', 'bearer_token_file', 'tls_config'];
const BRIDGED_TLS_FIELDS = ['ca_file', 'cert_file', 'key_file'];

/** The config with every `kubernetes_sd_configs` entry turned into an `http_sd_configs` entry at `url(i)`, and those entries. */
function bridgedConfig(config: Obj, url: (i: number) => string): { config: Obj; sds: Obj[] } {
  const sds: Obj[] = [];
  const scrapeConfigs = (config.scrape_configs ?? []).map((sc: Obj) => {
    if (sc.kubernetes_sd_configs === undefined) return sc;
    const { kubernetes_sd_configs: k8s, ...rest } = sc;
    const http = (k8s as Obj[]).map((sd) => {
      const at = `scrape config ${sc.job_name}: kubernetes_sd_configs`;
      for (const k of Object.keys(sd))
        if (!BRIDGED_SD_FIELDS.includes(k))
          throw new Error(
            `${at}.${k}: not supported by the pod discovery bridge (test/support/prometheus.ts), which stands in for Kubernetes SD in this Prometheus build`,
          );
      for (const k of Object.keys(sd.tls_config ?? {}))
        if (!BRIDGED_TLS_FIELDS.includes(k)) throw new Error(`${at}.tls_config.${k}: not supported by the pod discovery bridge`);
      for (const k of Object.keys(sd.namespaces ?? {}))
        if (k !== 'names') throw new Error(`${at}.namespaces.${k}: not supported by the pod discovery bridge`);
      if (sd.role !== 'pod') throw new Error(`${at}.role: the pod discovery bridge serves role pod only, got ${JSON.stringify(sd.role)}`);
      if (!sd.api_server || !sd.tls_config?.ca_file)
        throw new Error(`${at}: the pod discovery bridge needs api_server and tls_config.ca_file`);
      sds.push(sd);
      return { url: url(sds.length - 1), refresh_interval: '1s' };
    });
    return { ...rest, http_sd_configs: [...(rest.http_sd_configs ?? []), ...http] };
  });
  return { config: { ...config, scrape_configs: scrapeConfigs }, sds };
}

/** Serves `kubernetes_sd_configs` (role pod) to a Prometheus built without them, as http_sd_configs. */
class PodDiscoveryBridge {
  private sds: Obj[] = [];

  private constructor(
    private readonly server: Server,
    private readonly url: string,
  ) {}

  static async start(log: (line: string) => void): Promise<PodDiscoveryBridge> {
    let self: PodDiscoveryBridge | undefined;
    const server = createServer((req, res) => {
      const m = /^\/sd\/(\d+)$/.exec(req.url ?? '');
      const sd = m ? self?.sds[Number(m[1])] : undefined;
      if (!sd) {
        res.writeHead(404).end();
        return;
      }
      podTargetGroups(sd).then(
        (groups) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(groups)),
        (err: Error) => {
          log(`pod discovery bridge: ${sd.api_server}: ${err.message}`);
          res.writeHead(500, { 'content-type': 'text/plain' }).end(err.message);
        },
      );
    });
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', () => resolve()));
    self = new PodDiscoveryBridge(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return self;
  }

  /** The config to give Prometheus; from now on the bridge serves its Kubernetes SD configs. */
  serve(config: Obj): Obj {
    const bridged = bridgedConfig(config, (i) => `${this.url}/sd/${i}`);
    this.sds = bridged.sds;
    return bridged.config;
  }

  async stop(): Promise<void> {
    const closed = new Promise((r) => this.server.close(r));
    this.server.closeAllConnections();
    await closed;
  }
}

/**
 * Prometheus v2.42.0 discovery/kubernetes/pod.go `buildPod` over the Pods the SD config's
 * credentials may list, one group per target (an http_sd group's labels are shared by its targets).
 */
async function podTargetGroups(sd: Obj): Promise<Obj[]> {
  const tls = sd.tls_config;
  const kube = new KubeClient(String(sd.api_server).replace(/\/$/, ''), {
    ca: readFileSync(tls.ca_file),
    cert: tls.cert_file ? readFileSync(tls.cert_file) : undefined,
    key: tls.key_file ? readFileSync(tls.key_file) : undefined,
    // Prometheus reads the token file anew for each request.
    token: sd.bearer_token_file ? readFileSync(sd.bearer_token_file, 'utf8').trim() : undefined,
  });
  const names: string[] = sd.namespaces?.names ?? [];
  const paths = names.length === 0 ? ['/api/v1/pods'] : names.map((ns) => `/api/v1/namespaces/${ns}/pods`);
  const groups: Obj[] = [];
  for (const path of paths) {
    for (const pod of await kube.list(path)) {
      // "if len(pod.Status.PodIP) == 0 { return tg }": no IP, no targets.
      const ip: string = pod.status?.podIP ?? '';
      if (!ip) continue;
      const podLabels = { ...podMetaLabels(pod), __meta_kubernetes_namespace: pod.metadata.namespace };
      const containers: Obj[] = pod.spec?.containers ?? [];
      const all = [...containers, ...(pod.spec?.initContainers ?? [])];
      all.forEach((c, i) => {
        const isInit = i >= containers.length;
        const statuses: Obj[] = (isInit ? pod.status?.initContainerStatuses : pod.status?.containerStatuses) ?? [];
        const container = {
          __meta_kubernetes_pod_container_name: c.name,
          __meta_kubernetes_pod_container_id: statuses.find((s) => s.name === c.name)?.containerID ?? '',
          __meta_kubernetes_pod_container_image: c.image ?? '',
          __meta_kubernetes_pod_container_init: String(isInit),
        };
        const ports: Obj[] = c.ports ?? [];
        if (ports.length === 0) {
          groups.push({ targets: [ip], labels: { ...podLabels, ...container } });
          return;
        }
        for (const port of ports) {
          const number = String(port.containerPort);
          groups.push({
            // net.JoinHostPort: brackets around an IPv6 address.
            targets: [ip.includes(':') ? `[${ip}]:${number}` : `${ip}:${number}`],
            labels: {
              ...podLabels,
              ...container,
              __meta_kubernetes_pod_container_port_number: number,
              __meta_kubernetes_pod_container_port_name: port.name ?? '',
              __meta_kubernetes_pod_container_port_protocol: port.protocol ?? '',
            },
          });
        }
      });
    }
  }
  return groups;
}

/** pod.go `podLabels`. */
function podMetaLabels(pod: Obj): Record<string, string> {
  const ready = (pod.status?.conditions ?? []).find((c: Obj) => c.type === 'Ready');
  const ls: Record<string, string> = {
    __meta_kubernetes_pod_name: pod.metadata.name,
    __meta_kubernetes_pod_ip: pod.status?.podIP ?? '',
    __meta_kubernetes_pod_ready: String(ready?.status ?? 'Unknown').toLowerCase(),
    __meta_kubernetes_pod_phase: pod.status?.phase ?? '',
    __meta_kubernetes_pod_node_name: pod.spec?.nodeName ?? '',
    __meta_kubernetes_pod_host_ip: pod.status?.hostIP ?? '',
    __meta_kubernetes_pod_uid: pod.metadata.uid ?? '',
  };
  const controller = (pod.metadata.ownerReferences ?? []).find((r: Obj) => r.controller === true);
  if (controller?.kind) ls.__meta_kubernetes_pod_controller_kind = controller.kind;
  if (controller?.name) ls.__meta_kubernetes_pod_controller_name = controller.name;
  for (const [k, v] of Object.entries<string>(pod.metadata.labels ?? {})) {
    ls[`__meta_kubernetes_pod_label_${sanitizeLabelName(k)}`] = v;
    ls[`__meta_kubernetes_pod_labelpresent_${sanitizeLabelName(k)}`] = 'true';
  }
  for (const [k, v] of Object.entries<string>(pod.metadata.annotations ?? {})) {
    ls[`__meta_kubernetes_pod_annotation_${sanitizeLabelName(k)}`] = v;
    ls[`__meta_kubernetes_pod_annotationpresent_${sanitizeLabelName(k)}`] = 'true';
  }
  return ls;
}
