/**
 * A real vmagent for tests (Debian's `victoria-metrics` package, 1.79.5: /usr/bin/vmagent), on
 * 127.0.0.1 with a free port and its own temporary directory. Unlike Debian's Prometheus, Debian's
 * vmagent keeps Kubernetes service discovery: `kubernetes_sd_configs` are served by its own watcher
 * against the API server (`lib/promscrape/discovery/kubernetes`), so discovery, relabeling and
 * scraping are all vmagent's.
 *
 * ```ts
 * const vm = await startVmagent({ config: { global: { scrape_interval: '1s' }, scrape_configs } });
 * await vm.waitFor(async () => (await vm.targets()).some((t) => t.health === 'up'), 60_000, 'a target up');
 * await vm.stop();
 * ```
 *
 * vmagent stores nothing itself: it remote-writes what it scrapes. Here it writes to a sink served
 * by the test process, which decodes the Prometheus remote-write requests (snappy, protobuf) and
 * keeps the last sample of each series (`written()`).
 *
 * The configuration is written as JSON, which vmagent reads as YAML, and parsed strictly
 * (`-promscrape.config.strictParse`): a field vmagent 1.79 does not know is refused, not ignored.
 * What vmagent 1.79.5 does differently from Prometheus 2.42 with the scrape configs that
 * `scrapeConfigs` (podmonitor-scrape.ts) writes (read in VictoriaMetrics v1.79.5 `lib/promscrape`,
 * `lib/promrelabel`, `lib/promscrape/discovery/kubernetes`, and tried):
 * - `global` knows only `scrape_interval`, `scrape_timeout` and `external_labels`: Prometheus's
 *   `evaluation_interval` is refused. `global.external_labels` are added to every target's labels
 *   *before* relabeling (Prometheus adds them only on the way out).
 * - `enable_http2` and the relabel actions `keepequal`/`dropequal` are unknown (refused); vmagent's
 *   own `keep_if_equal`/`drop_if_equal` compare the source labels with one another, not with
 *   `target_label`. `scrapeConfigs` passes a PodMonitor's `KeepEqual`/`DropEqual` through, so such
 *   a PodMonitor cannot be scraped by vmagent 1.79.
 * - TLS files of a scrape config (`ca_file`, `cert_file`/`key_file`) are read and parsed when the
 *   config is loaded (a missing or malformed file refuses the whole config); those of a
 *   `kubernetes_sd_configs` entry only when discovery starts (an error there is logged and that
 *   job discovers nothing).
 * - `hashmod` hashes with xxhash, Prometheus with MD5: the same modulus gives other buckets (the
 *   operator's one-shard sharding, `modulus: 1`, is not affected).
 * - Regexes are anchored (`^(?:…)$`) and `$1` / `${1}` expand as in Prometheus; a `regex` written
 *   as a YAML number (`portNumber`'s `regex: 10240`) is taken as its decimal text, as Prometheus does.
 * - After target relabeling only `__meta_*` labels are removed; the other `__` labels
 *   (`__address__`, `__scheme__`, `__metrics_path__`, `__param_*`, `__scrape_interval__`, and the
 *   operator's `__tmp_prometheus_job_name` / `__tmp_hash`) stay hidden on the target and are
 *   visible to `metric_relabel_configs`, which Prometheus runs on the sample's and the target's
 *   public labels only. They are removed before samples are written.
 * - `honor_labels` works as in Prometheus (a clash is `exported_<name>` unless honored).
 * - Pod discovery has no `__meta_kubernetes_pod_container_image` / `_container_id`.
 * - `/api/v1/targets`: `scrapePool` is the target's (relabeled) `job` label, not the `job_name`;
 *   the `job_name` is in `discoveredLabels.job`. Dropped targets are listed (at most
 *   `-promscrape.maxDroppedTargets`, for 10 minutes) with their `discoveredLabels` only. Active
 *   targets have `discoveredLabels`, `labels`, `scrapePool`, `scrapeUrl`, `lastError`,
 *   `lastScrape`, `lastScrapeDuration`, `lastSamplesScraped`, `health` (`up`/`down`; a target not
 *   scraped yet is `down`).
 * - Kubernetes targets are taken from the watcher every `-promscrape.kubernetesSDCheckInterval`
 *   (30 s by default; 1 s here).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Obj } from '../kube/client';
import { freePort } from '../sim/controller-process';
import { pollUntil } from './poll';

export const VMAGENT_BIN = '/usr/bin/vmagent';

export interface VmagentOptions {
  /** The whole `-promscrape.config` (`{ global, scrape_configs }`), as an object. */
  readonly config: Obj;
  /** Where vmagent's temporary directory (config, remote-write buffer) is made. @default os.tmpdir() */
  readonly dir?: string;
  /** `-promscrape.kubernetesSDCheckInterval`: how often discovered Kubernetes targets are applied. @default '1s' */
  readonly kubernetesSDCheckInterval?: string;
  /** More command-line flags (`-name=value`). */
  readonly flags?: readonly string[];
}

/** A series as vmagent remote-wrote it, with its last sample. */
export interface WrittenSeries {
  /** All labels, `__name__` included. */
  readonly labels: Record<string, string>;
  readonly value: number;
  /** Milliseconds since the epoch. */
  readonly timestamp: number;
}

export interface Vmagent {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** vmagent's own directory (removed by stop()). */
  readonly dir: string;
  readonly configFile: string;
  /** The sink's URL vmagent remote-writes to (`-remoteWrite.url`). */
  readonly remoteWriteUrl: string;
  /** Active targets (`GET /api/v1/targets?state=active`). */
  targets(): Promise<Obj[]>;
  /** Targets that service discovery found and relabeling dropped, with their `discoveredLabels`. */
  droppedTargets(): Promise<Obj[]>;
  /**
   * Rewrites the config file and has vmagent reload it (`/-/reload`, a SIGHUP to itself), resolving
   * once it has applied it. Rejects with vmagent's reason when it refuses the config (checked first
   * with `-promscrape.config.dryRun`; the running vmagent then keeps its previous config). The
   * config it already has is a no-op (vmagent itself reloads only a file whose bytes changed).
   */
  reload(config: Obj): Promise<void>;
  /** vmagent's own metrics (`GET /metrics`), as text. */
  metrics(): Promise<string>;
  /** The series remote-written so far, each with its last sample. */
  written(): WrittenSeries[];
  /** How many remote-write requests the sink has received. */
  writeRequests(): number;
  /**
   * Polls `pred` every 200 ms until it returns something truthy, which it resolves with; fails after
   * `timeoutMs` naming `what` (with the last error and vmagent's last log lines), or at once when
   * vmagent exited.
   */
  waitFor<T>(pred: () => Promise<T>, timeoutMs: number, what: string): Promise<NonNullable<T>>;
  /** Everything vmagent wrote to stdout and stderr (its last 256 KiB), and the sink's errors. */
  output(): string;
  /** Ends vmagent and the sink, and removes the directory. */
  stop(): Promise<void>;
}

const MAX_OUTPUT = 256 * 1024;
const MAX_SERIES = 100_000;

function requireBinary(): void {
  if (!existsSync(VMAGENT_BIN)) {
    throw new Error(
      `${VMAGENT_BIN} is missing: the vmagent tests need Debian's victoria-metrics package (apt-get install victoria-metrics), which .ci/run installs`,
    );
  }
}

export interface VmagentCheckResult {
  readonly ok: boolean;
  /** vmagent's output (its reason, when it refuses). */
  readonly output: string;
}

/**
 * `vmagent -promscrape.config=FILE -promscrape.config.dryRun -promscrape.config.strictParse`: parses
 * the config as vmagent would load it, TLS files of the scrape configs included (they must exist and
 * parse), without starting anything.
 */
export async function checkVmagentConfig(config: Obj): Promise<VmagentCheckResult> {
  requireBinary();
  const dir = mkdtempSync(join(tmpdir(), 'vmagent-check-'));
  try {
    const file = join(dir, 'promscrape.yml');
    writeFileSync(file, JSON.stringify(config, null, 2));
    return await dryRun(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function dryRun(file: string): Promise<VmagentCheckResult> {
  return new Promise((resolve) => {
    execFile(
      VMAGENT_BIN,
      [`-promscrape.config=${file}`, '-promscrape.config.dryRun', '-promscrape.config.strictParse=true', '-loggerLevel=ERROR'],
      { timeout: 60_000 },
      (err, stdout, stderr) => resolve({ ok: !err, output: `${stdout}${stderr}`.trim() }),
    );
  });
}

/** Starts vmagent and resolves once it answers `/health` and `/ready` (its scrape configs are initialised). */
export async function startVmagent(options: VmagentOptions): Promise<Vmagent> {
  requireBinary();
  let out = '';
  const collect = (chunk: Buffer | string) => {
    out += chunk.toString();
    if (out.length > MAX_OUTPUT) out = out.slice(-MAX_OUTPUT);
  };
  const parent = options.dir ?? tmpdir();
  mkdirSync(parent, { recursive: true });
  const dir = mkdtempSync(join(parent, 'vmagent-'));
  const configFile = join(dir, 'promscrape.yml');
  let configText = JSON.stringify(options.config, null, 2);
  writeFileSync(configFile, configText);

  const sink = await RemoteWriteSink.start((line) => collect(`${line}\n`)).catch((err) => {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  });
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(
    VMAGENT_BIN,
    [
      `-httpListenAddr=127.0.0.1:${port}`,
      `-promscrape.config=${configFile}`,
      '-promscrape.config.strictParse=true',
      `-promscrape.kubernetesSDCheckInterval=${options.kubernetesSDCheckInterval ?? '1s'}`,
      `-remoteWrite.url=${sink.url}`,
      `-remoteWrite.tmpDataPath=${join(dir, 'remote-write')}`,
      '-remoteWrite.flushInterval=1s',
      '-http.maxGracefulShutdownDuration=1s',
      '-loggerLevel=INFO',
      ...(options.flags ?? []),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  child.on('error', (err) => collect(`\nspawn ${VMAGENT_BIN}: ${err.message}\n`));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // A test process that ends without stop() takes its vmagent with it.
  const onExit = () => child.kill('SIGKILL');
  process.once('exit', onExit);
  const running = () => child.exitCode === null && child.signalCode === null;
  const tail = () => out.split('\n').slice(-30).join('\n');

  const get = async (path: string, init?: RequestInit): Promise<string> => {
    const res = await fetch(`${url}${path}`, init);
    const text = await res.text();
    if (!res.ok) throw new Error(`${init?.method ?? 'GET'} ${path}: HTTP ${res.status}: ${text.trim()}`);
    return text;
  };
  const targetsOf = async (state: 'active' | 'dropped'): Promise<Obj[]> => {
    const body = JSON.parse(await get(`/api/v1/targets?state=${state}`));
    if (body.status !== 'success') throw new Error(`GET /api/v1/targets?state=${state}: ${JSON.stringify(body)}`);
    return state === 'active' ? body.data.activeTargets : body.data.droppedTargets;
  };
  const reloads = async (): Promise<number> => {
    const m = /^vm_promscrape_config_reloads_total (\d+)$/m.exec(await get('/metrics'));
    if (!m) throw new Error('vmagent /metrics has no vm_promscrape_config_reloads_total');
    return Number(m[1]);
  };

  // vmagent's reason (a config it refuses at start, say) is its `fatal` line.
  const fatal = () =>
    out
      .split('\n')
      .filter((l) => l.includes('\tfatal\t'))
      .join('\n');
  const waitFor = <T>(pred: () => Promise<T>, timeoutMs: number, what: string): Promise<NonNullable<T>> =>
    pollUntil(
      {
        name: 'vmagent',
        exited: () => (running() ? undefined : `${child.exitCode ?? child.signalCode}${fatal() ? `: ${fatal()}` : ''}`),
        tail,
      },
      pred,
      timeoutMs,
      what,
    );

  let stopped = false;
  const vm: Vmagent = {
    url,
    dir,
    configFile,
    remoteWriteUrl: sink.url,
    targets: () => targetsOf('active'),
    droppedTargets: () => targetsOf('dropped'),
    reload: async (config) => {
      const text = JSON.stringify(config, null, 2);
      // vmagent reloads only when the file's bytes changed ("nothing changed in ...").
      if (text === configText) return;
      const candidate = join(dir, 'candidate.yml');
      writeFileSync(candidate, text);
      const check = await dryRun(candidate);
      if (!check.ok) throw new Error(`vmagent refuses the config:\n${check.output}`);
      const before = await reloads();
      writeFileSync(configFile, text);
      configText = text;
      await get('/-/reload', { method: 'POST' });
      await waitFor(async () => (await reloads()) > before, 60_000, 'vmagent to apply the reloaded config');
    },
    metrics: () => get('/metrics'),
    written: () => sink.series(),
    writeRequests: () => sink.requests,
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
      await sink.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };

  try {
    await waitFor(async () => (await fetch(`${url}/health`).catch(() => undefined))?.ok, 60_000, 'vmagent /health');
    await waitFor(async () => (await fetch(`${url}/ready`).catch(() => undefined))?.ok, 60_000, 'vmagent /ready');
  } catch (err) {
    await vm.stop();
    throw err;
  }
  return vm;
}

// ---------------------------------------------------------------------------------------------
// The remote-write sink: Prometheus remote write 0.1.0 (a snappy block of a protobuf WriteRequest)

class RemoteWriteSink {
  requests = 0;
  private readonly last = new Map<string, WrittenSeries>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(log: (line: string) => void): Promise<RemoteWriteSink> {
    let sink: RemoteWriteSink | undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.method !== 'POST' || new URL(req.url ?? '/', 'http://x').pathname !== '/api/v1/write') {
          res.writeHead(404).end();
          return;
        }
        try {
          sink!.requests++;
          sink!.record(decodeWriteRequest(snappyDecode(Buffer.concat(chunks))));
          res.writeHead(204).end();
        } catch (err) {
          log(`remote-write sink: cannot decode a request: ${(err as Error).message}`);
          // 400: vmagent drops the block rather than retrying it forever.
          res.writeHead(400).end((err as Error).message);
        }
      });
    });
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', () => resolve()));
    sink = new RemoteWriteSink(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/write`);
    return sink;
  }

  private record(series: WrittenSeries[]): void {
    for (const s of series) {
      const key = JSON.stringify(Object.entries(s.labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
      const prev = this.last.get(key);
      if (prev ? s.timestamp >= prev.timestamp : this.last.size < MAX_SERIES) this.last.set(key, s);
    }
  }

  series(): WrittenSeries[] {
    return [...this.last.values()];
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

/** Snappy's block format (no framing), as remote write sends it. */
export function snappyDecode(buf: Buffer): Buffer {
  let pos = 0;
  let length = 0;
  for (let shift = 0; ; shift += 7) {
    if (pos >= buf.length || shift > 35) throw new Error('snappy: bad length preamble');
    const b = buf[pos++];
    length += (b & 0x7f) * 2 ** shift;
    if (!(b & 0x80)) break;
  }
  const out = Buffer.alloc(length);
  let o = 0;
  while (pos < buf.length) {
    const tag = buf[pos++];
    if ((tag & 3) === 0) {
      let n = tag >> 2;
      if (n >= 60) {
        const bytes = n - 59;
        if (pos + bytes > buf.length) throw new Error('snappy: truncated literal length');
        n = buf.readUIntLE(pos, bytes);
        pos += bytes;
      }
      n += 1;
      if (pos + n > buf.length || o + n > length) throw new Error('snappy: literal out of range');
      buf.copy(out, o, pos, pos + n);
      pos += n;
      o += n;
      continue;
    }
    let n: number;
    let offset: number;
    if ((tag & 3) === 1) {
      n = ((tag >> 2) & 7) + 4;
      offset = ((tag >> 5) << 8) | buf[pos++];
    } else if ((tag & 3) === 2) {
      n = (tag >> 2) + 1;
      offset = buf.readUInt16LE(pos);
      pos += 2;
    } else {
      n = (tag >> 2) + 1;
      offset = buf.readUInt32LE(pos);
      pos += 4;
    }
    if (offset === 0 || offset > o || o + n > length) throw new Error('snappy: copy out of range');
    // Byte by byte: a copy may overlap what it writes.
    for (let i = 0; i < n; i++, o++) out[o] = out[o - offset];
  }
  if (o !== length) throw new Error(`snappy: decoded ${o} bytes, expected ${length}`);
  return out;
}

/** prompb.WriteRequest: `timeseries` (1) of `labels` (1: name, value) and `samples` (2: value, timestamp). */
function decodeWriteRequest(buf: Buffer): WrittenSeries[] {
  const out: WrittenSeries[] = [];
  for (const [field, ts] of fields(buf)) {
    if (field !== 1 || !Buffer.isBuffer(ts)) continue;
    const labels: Record<string, string> = {};
    const samples: { value: number; timestamp: number }[] = [];
    for (const [f, v] of fields(ts)) {
      if (!Buffer.isBuffer(v)) continue;
      if (f === 1) {
        let name = '';
        let value = '';
        for (const [lf, lv] of fields(v)) {
          if (lf === 1 && Buffer.isBuffer(lv)) name = lv.toString('utf8');
          if (lf === 2 && Buffer.isBuffer(lv)) value = lv.toString('utf8');
        }
        labels[name] = value;
      } else if (f === 2) {
        let value = 0;
        let timestamp = 0;
        for (const [sf, sv] of fields(v)) {
          if (sf === 1 && Buffer.isBuffer(sv)) value = sv.readDoubleLE(0);
          if (sf === 2 && typeof sv === 'number') timestamp = sv;
        }
        samples.push({ value, timestamp });
      }
    }
    for (const s of samples) out.push({ labels, ...s });
  }
  return out;
}

/** A protobuf message's fields: varints as numbers, fixed64/fixed32 and length-delimited as buffers. */
function* fields(buf: Buffer): Generator<[number, number | Buffer]> {
  let pos = 0;
  const varint = (): number => {
    let v = 0;
    for (let shift = 0; ; shift += 7) {
      if (pos >= buf.length || shift > 63) throw new Error('protobuf: bad varint');
      const b = buf[pos++];
      v += (b & 0x7f) * 2 ** shift;
      if (!(b & 0x80)) return v;
    }
  };
  const take = (n: number): Buffer => {
    if (pos + n > buf.length) throw new Error('protobuf: truncated field');
    const b = buf.subarray(pos, pos + n);
    pos += n;
    return b;
  };
  while (pos < buf.length) {
    const key = varint();
    const field = Math.floor(key / 8);
    switch (key & 7) {
      case 0:
        yield [field, varint()];
        break;
      case 1:
        yield [field, take(8)];
        break;
      case 2:
        yield [field, take(varint())];
        break;
      case 5:
        yield [field, take(4)];
        break;
      default:
        throw new Error(`protobuf: unsupported wire type ${key & 7}`);
    }
  }
}
