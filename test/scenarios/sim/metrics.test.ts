/**
 * The simulators' `GET /metrics`, as a real Prometheus scrapes them through Kubernetes service
 * discovery: each on the port and path its real server serves it (PD and its micro-services 2379,
 * TiDB 10080, TiCDC 8301, Pump 8250; TiKV's is in tikv.test.ts), in the text exposition format
 * with the content type and the families the real server writes (sources named in the simulators).
 *
 * Every answer goes through a strict parser of the format as Go's client writes it (below), and
 * through the real Prometheus 2.42 parser: `promtool check metrics` (exit 0 when clean, 3 with one
 * `<metric> <problem>` line per lint problem on stderr, 1 when the text does not parse; the lint
 * problems expected here are the real families' own, about their names). Last, a real Prometheus
 * scrapes them all (its own Accept and Accept-Encoding, its scrape parser, which is not promtool's).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { PdSim, type PdSimOptions } from '../../sim/pd-api';
import { PdmsSim, type PdmsService } from '../../sim/pdms';
import { goFloat, promText, type PromFamily } from '../../sim/prom-text';
import { PumpSim } from '../../sim/pump';
import { TicdcSim } from '../../sim/ticdc';
import { TidbSim } from '../../sim/tidb';
import { PROMETHEUS_BIN, PROMTOOL_BIN } from '../../support/prometheus';
import { PROMETHEUS, requires } from '../../support/requires';

// The simulators run on timers: on a loaded machine a step takes longer, never a different course.
jest.setTimeout(120_000);

// ---- helpers ----

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The body as sent. */
  raw: Buffer;
  /** The body, gunzipped when it came gzipped. */
  text: string;
}

/** A plain node:http request on its own connection (no keep-alive to hold a simulator's close back). */
function call(url: string, headers: Record<string, string> = {}, method = 'GET', body?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent: false, headers, timeout: 3000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const raw = Buffer.concat(chunks);
        const text = (res.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, raw, text });
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`timeout: ${url}`)));
    req.on('error', reject);
    req.end(body);
  });
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Loopback addresses of this file's own /16 (Linux routes all of 127/8 to lo): `127.93.<group>.<n>`. */
const ip = (group: number, n: number) => `127.93.${group}.${n}`;

// ---- a strict parser of the text format, as Go's client writes it ----

interface Sample {
  labels: Record<string, string>;
  value: number;
  /** The value as written. */
  text: string;
}

interface Family {
  help: string;
  type: string;
  samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const FLOAT = /^(?:NaN|[+-]Inf|[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)$/;
const TYPES = ['counter', 'gauge', 'histogram', 'summary', 'untyped'];

/** Reads an escaped text up to `end` (or the end of the line); only `\\`, `\n` and, where allowed, `\"` may follow a backslash. */
function unescape(s: string, start: number, end: string | undefined, quoteEscape: boolean, where: string): { value: string; next: number } {
  let out = '';
  let i = start;
  for (;;) {
    if (i >= s.length) {
      if (end !== undefined) throw new Error(`${where}: unterminated value`);
      return { value: out, next: i };
    }
    const c = s[i];
    if (end !== undefined && c === end) return { value: out, next: i + 1 };
    if (c === '\\') {
      const e = s[i + 1];
      if (e === '\\') out += '\\';
      else if (e === 'n') out += '\n';
      else if (e === '"' && quoteEscape) out += '"';
      else throw new Error(`${where}: bad escape \\${e ?? ''}`);
      i += 2;
      continue;
    }
    if (c === '"' && quoteEscape) throw new Error(`${where}: unescaped quote`);
    out += c;
    i++;
  }
}

const goLess = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The text format (prometheus/common expfmt) in the form Go's client writes it, strictly: every line
 * ends with a newline, no blank lines; per family `# HELP`, `# TYPE`, then its samples, each family once
 * and at least one sample; families sorted by name, label names sorted and unique, samples sorted by
 * label values, no duplicate series, no timestamps; names, label names, escapes and values valid;
 * counters neither negative nor NaN.
 */
function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  if (!text.endsWith('\n')) throw new Error('the text does not end with a newline');
  const lines = text.slice(0, -1).split('\n');
  let current: { name: string; family: Family } | undefined;
  let phase: 'help' | 'type' | 'samples' = 'help';
  let previousName: string | undefined;
  lines.forEach((line, i) => {
    const where = `line ${i + 1} ${JSON.stringify(line)}`;
    if (line === '') throw new Error(`${where}: blank line`);
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (m === null) throw new Error(`${where}: a comment other than # HELP / # TYPE`);
      const [, kind, name, rest] = m;
      if (!METRIC_NAME.test(name)) throw new Error(`${where}: bad metric name`);
      if (kind === 'HELP') {
        if (current !== undefined && current.family.samples.length === 0) throw new Error(`${where}: ${current.name} has no samples`);
        if (families.has(name)) throw new Error(`${where}: ${name} appears twice`);
        if (previousName !== undefined && goLess(previousName, name) >= 0)
          throw new Error(`${where}: families not sorted (${previousName} before ${name})`);
        if (!line.startsWith(`# HELP ${name} `)) throw new Error(`${where}: no space after the name`);
        const help = unescape(line, `# HELP ${name} `.length, undefined, false, where).value;
        current = { name, family: { help, type: '', samples: [] } };
        families.set(name, current.family);
        previousName = name;
        phase = 'type';
        return;
      }
      if (current === undefined || current.name !== name || phase !== 'type')
        throw new Error(`${where}: # TYPE not right after its # HELP`);
      if (!TYPES.includes(rest)) throw new Error(`${where}: bad type`);
      current.family.type = rest;
      phase = 'samples';
      return;
    }
    if (current === undefined || phase !== 'samples') throw new Error(`${where}: a sample before its family's # HELP and # TYPE`);
    const nameMatch = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
    if (nameMatch === null) throw new Error(`${where}: no metric name`);
    const name = nameMatch[0];
    const suffixes =
      current.family.type === 'histogram'
        ? ['_bucket', '_sum', '_count']
        : current.family.type === 'summary'
          ? ['', '_sum', '_count']
          : [''];
    if (!suffixes.some((s) => name === `${current!.name}${s}`)) throw new Error(`${where}: sample ${name} in family ${current.name}`);
    let pos = name.length;
    const labels: Record<string, string> = {};
    const names: string[] = [];
    if (line[pos] === '{') {
      pos++;
      while (line[pos] !== '}') {
        const ln = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(line.slice(pos));
        if (ln === null || !LABEL_NAME.test(ln[0]) || ln[0].startsWith('__')) throw new Error(`${where}: bad label name at ${pos}`);
        pos += ln[0].length;
        if (line.slice(pos, pos + 2) !== '="') throw new Error(`${where}: expected =" at ${pos}`);
        const v = unescape(line, pos + 2, '"', true, where);
        if (ln[0] in labels) throw new Error(`${where}: label ${ln[0]} twice`);
        labels[ln[0]] = v.value;
        names.push(ln[0]);
        pos = v.next;
        if (line[pos] === ',') {
          pos++;
          if (line[pos] === '}') throw new Error(`${where}: trailing comma`);
        } else if (line[pos] !== '}') throw new Error(`${where}: expected , or } at ${pos}`);
      }
      if (names.length === 0) throw new Error(`${where}: empty braces`);
      pos++;
    }
    if (names.join('\u0000') !== [...names].sort(goLess).join('\u0000')) throw new Error(`${where}: label names not sorted`);
    if (line[pos] !== ' ') throw new Error(`${where}: expected one space before the value`);
    const valueText = line.slice(pos + 1);
    if (!FLOAT.test(valueText)) throw new Error(`${where}: bad value (or a timestamp) ${JSON.stringify(valueText)}`);
    const value = valueText === 'NaN' ? NaN : valueText === '+Inf' ? Infinity : valueText === '-Inf' ? -Infinity : Number(valueText);
    if (current.family.type === 'counter' && !(value >= 0)) throw new Error(`${where}: a counter that is negative or NaN`);
    const samples = current.family.samples;
    const key = JSON.stringify(names.map((n) => [n, labels[n]]));
    if (samples.some((s) => JSON.stringify(Object.keys(s.labels).map((n) => [n, s.labels[n]])) === key))
      throw new Error(`${where}: duplicate series`);
    const previous = samples[samples.length - 1];
    if (previous !== undefined) {
      const a = Object.keys(previous.labels).map((n) => previous.labels[n]);
      const b = names.map((n) => labels[n]);
      const cmp = a.map((x, k) => goLess(x, b[k] ?? '')).find((c) => c !== 0) ?? 0;
      if (cmp > 0) throw new Error(`${where}: samples not sorted by label values`);
    }
    samples.push({ labels, value, text: valueText });
  });
  if (current !== undefined && current.family.samples.length === 0) throw new Error(`${current.name} has no samples`);
  return families;
}

// ---- the real Prometheus parser: promtool ----

const PROMTOOL = PROMTOOL_BIN;
/** Debian's Prometheus package: promtool parses the expositions, and Prometheus scrapes the simulators. */
const prometheus = requires(PROMETHEUS);
const withPromtool = prometheus.test;
const havePromtool = prometheus.ok;

/** `promtool check metrics` on `body`: its exit code and stderr lines. */
function promtool(body: string): { code: number | null; problems: string[] } {
  const r = spawnSync(PROMTOOL, ['check', 'metrics'], { input: body, encoding: 'utf8', timeout: 20_000 });
  if (r.error) throw r.error;
  return { code: r.status, problems: r.stderr.split('\n').filter((l) => l !== '') };
}

/**
 * A `/metrics` answer: 200, `contentType`, a body in the strict format, which promtool parses with
 * exactly the lint problems `lint` (none: exit 0). Returns the families.
 */
function expectExposition(reply: Reply, contentType: string, lint: string[] = []): Map<string, Family> {
  expect(reply.status).toBe(200);
  expect(reply.headers['content-type']).toBe(contentType);
  const families = parseExposition(reply.text);
  if (havePromtool) {
    const { code, problems } = promtool(reply.text);
    expect({ code, problems: problems.sort() }).toEqual({ code: lint.length === 0 ? 0 : 3, problems: [...lint].sort() });
  }
  return families;
}

/** The samples of `name` as `labels → value` lines, for compact expectations. */
function samplesOf(families: Map<string, Family>, name: string): Record<string, number> | undefined {
  const f = families.get(name);
  if (f === undefined) return undefined;
  return Object.fromEntries(
    f.samples.map((s) => [
      Object.entries(s.labels)
        .map(([k, v]) => `${k}=${v}`)
        .join(','),
      s.value,
    ]),
  );
}

const value = (families: Map<string, Family>, name: string, labels = ''): number | undefined => samplesOf(families, name)?.[labels];

const TEXT_004 = 'text/plain; version=0.0.4; charset=utf-8';
const VALUES = `${TEXT_004}; escaping=values`;
const UNDERSCORES = `${TEXT_004}; escaping=underscores`;
const STANDARD = ['go_goroutines', 'go_threads', 'process_start_time_seconds'];
const PROMHTTP = ['promhttp_metric_handler_requests_in_flight', 'promhttp_metric_handler_requests_total'];

/** `process_start_time_seconds` as the Go collector has it: the start in 1/100 s, close to `before`..`after`. */
function expectStartTime(families: Map<string, Family>, before: number, after: number): void {
  const f = families.get('process_start_time_seconds')!;
  expect(f.type).toBe('gauge');
  const v = f.samples[0].value;
  expect(v * 1000).toBeGreaterThanOrEqual(Math.floor(before / 10) * 10 - 1);
  expect(v * 1000).toBeLessThanOrEqual(after + 1);
  expect(f.samples[0].text).toMatch(/^\d\.\d+e\+09$/);
}

// ---- the format ----

describe('the text format as Go writes it', () => {
  test("floats as strconv.AppendFloat(f, 'g', -1, 64): %e from exponent 6 or below -4, shortest digits", () => {
    const cases: [number, string][] = [
      [0, '0'],
      [1, '1'],
      [-1, '-1'],
      [300, '300'],
      [0.25, '0.25'],
      [123456, '123456'],
      [1e6, '1e+06'],
      [1234567, '1.234567e+06'],
      [107374182400, '1.073741824e+11'],
      [1723456789.12, '1.72345678912e+09'],
      [0.0001, '0.0001'],
      [0.00001, '1e-05'],
      [-2.5e-7, '-2.5e-07'],
      [1.5e300, '1.5e+300'],
      [NaN, 'NaN'],
      [Infinity, '+Inf'],
      [-Infinity, '-Inf'],
      [12.345, '12.345'],
      [100000, '100000'],
    ];
    for (const [v, text] of cases) expect([v, goFloat(v)]).toEqual([v, text]);
  });

  test('families by name, labels by name, samples by label values, escapes; empty families left out; promtool agrees', () => {
    const families: PromFamily[] = [
      { name: 'z_total', help: 'last', type: 'counter', samples: [{ value: 2 }] },
      { name: 'empty', help: 'never set', type: 'gauge', samples: [] },
      {
        name: 'a_status',
        help: 'back\\slash and\nnewline',
        type: 'gauge',
        samples: [
          { labels: { type: 'b', engine: 'tikv' }, value: 1 },
          { labels: { type: 'a', engine: 'tikv' }, value: 0.5 },
          { labels: { type: 'q"uote\\\n', engine: 'tiflash' }, value: 1e6 },
        ],
      },
    ];
    const text = promText(families);
    expect(text).toBe(
      [
        '# HELP a_status back\\\\slash and\\nnewline',
        '# TYPE a_status gauge',
        'a_status{engine="tiflash",type="q\\"uote\\\\\\n"} 1e+06',
        'a_status{engine="tikv",type="a"} 0.5',
        'a_status{engine="tikv",type="b"} 1',
        '# HELP z_total last',
        '# TYPE z_total counter',
        'z_total 2',
        '',
      ].join('\n'),
    );
    const parsed = parseExposition(text);
    expect(parsed.get('a_status')).toEqual({
      help: 'back\\slash and\nnewline',
      type: 'gauge',
      samples: [
        { labels: { engine: 'tiflash', type: 'q"uote\\\n' }, value: 1e6, text: '1e+06' },
        { labels: { engine: 'tikv', type: 'a' }, value: 0.5, text: '0.5' },
        { labels: { engine: 'tikv', type: 'b' }, value: 1, text: '1' },
      ],
    });
    if (havePromtool) expect(promtool(text)).toEqual({ code: 0, problems: [] });
  });

  test('the strict parser refuses what Go never writes', () => {
    const ok = '# HELP a x\n# TYPE a gauge\na 1\n';
    expect(() => parseExposition(ok)).not.toThrow();
    const bad: [string, RegExp][] = [
      ['# HELP a x\n# TYPE a gauge\na 1', /newline/],
      ['# TYPE a gauge\na 1\n', /TYPE not right after/],
      ['# HELP a x\n# TYPE a gauge\n\na 1\n', /blank line/],
      ['# HELP a x\n# TYPE a gauge\na 1 1700000000000\n', /bad value/],
      ['# HELP a x\n# TYPE a gauge\na{b="1",b="2"} 1\n', /twice/],
      ['# HELP a x\n# TYPE a gauge\na{b="1"} 1\na{b="1"} 2\n', /duplicate series/],
      ['# HELP a x\n# TYPE a gauge\na{b="2"} 1\na{b="1"} 2\n', /not sorted/],
      ['# HELP b x\n# TYPE b gauge\nb 1\n# HELP a x\n# TYPE a gauge\na 1\n', /not sorted/],
      ['# HELP a x\n# TYPE a gauge\na{z="1",b="2"} 1\n', /label names not sorted/],
      ['# HELP a x\n# TYPE a counter\na -1\n', /counter/],
      ['# HELP a x\n# TYPE a gauge\na{b="\\t"} 1\n', /bad escape/],
      ['# HELP a x\n# TYPE a gauge\nb 1\n', /sample b in family a/],
      ['# HELP a x\n# TYPE a gauge\n# HELP b x\n# TYPE b gauge\nb 1\n', /no samples/],
    ];
    for (const [text, err] of bad) expect(() => parseExposition(text)).toThrow(err);
  });

  withPromtool('promtool check metrics: exit 0 when clean, 3 with lint problems, 1 when it cannot parse', () => {
    expect(promtool('# HELP a_total x\n# TYPE a_total counter\na_total 1\n')).toEqual({ code: 0, problems: [] });
    expect(promtool('# HELP a x\n# TYPE a counter\na 1\n')).toEqual({
      code: 3,
      problems: ['a counter metrics should have "_total" suffix'],
    });
    expect(promtool('a{ 1\n').code).toBe(1);
  });
});

// ---- PD ----

async function startPd(options: Partial<PdSimOptions> = {}, members = 3, group = 1): Promise<{ pd: PdSim; urls: string[] }> {
  const pd = await PdSim.start({
    cluster: 'demo',
    namespace: 'ns',
    electionMs: 20,
    transferMs: 10,
    discoveryRetryMs: 10,
    regionLoadMs: 20,
    tickMs: 0,
    metricsCollectMs: 0,
    ...options,
  });
  cleanups.push(() => pd.close());
  // A discovery service like the operator's: the first pod bootstraps, the others join it.
  const discovery = http.createServer((req, res) => {
    const peerHost = Buffer.from((req.url ?? '').replace(/^\/new\//, ''), 'base64')
      .toString('utf8')
      .replace(/:2380\n$/, '');
    const pod = peerHost.split('.')[0];
    if (pod === 'demo-pd-0') return res.writeHead(200).end(`--initial-cluster=${pod}=http://${peerHost}:2380\n`);
    return res.writeHead(200).end(`--join=http://demo-pd-0.demo-pd-peer.ns.svc:2379\n`);
  });
  await new Promise<void>((resolve) => discovery.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => (discovery.closeAllConnections(), discovery.close(() => resolve()))));
  pd.discoveryUrl = `http://127.0.0.1:${(discovery.address() as AddressInfo).port}`;
  const urls: string[] = [];
  for (let i = 0; i < members; i++) {
    pd.pdStart(`demo-pd-${i}`, undefined, ip(group, i + 1));
    urls.push(`http://${ip(group, i + 1)}:2379/metrics`);
    await pd.waitFor(() => pd.pdState(`demo-pd-${i}`) === 'running', 60_000, `demo-pd-${i} running`);
  }
  await pd.waitFor(() => pd.leader() !== undefined, 60_000, 'a PD leader');
  await sleep(20); // the member listeners bind
  return { pd, urls };
}

describe("PD: etcd's /metrics on the client port 2379", () => {
  test('every member answers for itself: etcd leadership and id, cluster id, version, promhttp; text/plain with escaping=values', async () => {
    const before = Date.now();
    const { pd, urls } = await startPd();
    const after = Date.now();
    const leader = pd.leader()!;
    const members = pd.members();
    for (const [i, url] of urls.entries()) {
      const m = members.find((x) => x.pod === `demo-pd-${i}`)!;
      const families = expectExposition(await call(url), VALUES);
      expect([...families.keys()]).toEqual([
        'etcd_server_has_leader',
        'etcd_server_id',
        'etcd_server_is_leader',
        ...STANDARD.slice(0, 2),
        'pd_cluster_metadata',
        'pd_monitor_time_jump_back_total',
        'pd_server_info',
        'process_start_time_seconds',
        ...PROMHTTP,
      ]);
      expect(samplesOf(families, 'etcd_server_is_leader')).toEqual({ '': m.name === leader ? 1 : 0 });
      expect(samplesOf(families, 'etcd_server_has_leader')).toEqual({ '': 1 });
      expect(samplesOf(families, 'etcd_server_id')).toEqual({ [`server_id=${BigInt(m.memberId).toString(16)}`]: 1 });
      expect(samplesOf(families, 'pd_cluster_metadata')).toEqual({ [`type=cluster${pd.clusterId()}`]: 0 });
      expect(families.get('pd_monitor_time_jump_back_total')).toMatchObject({ type: 'counter', samples: [{ value: 0 }] });
      const info = families.get('pd_server_info')!;
      expect(info.samples[0].labels).toEqual({ hash: 'd190c0e9082de46128b756f93b1291768dda645a', version: 'v8.5.0' });
      expect(info.samples[0].value).toBeGreaterThanOrEqual(Math.floor(before / 1000));
      expect(info.samples[0].value).toBeLessThanOrEqual(after / 1000);
      expectStartTime(families, before, after);
      expect(samplesOf(families, 'promhttp_metric_handler_requests_total')).toEqual({ 'code=200': 0, 'code=500': 0, 'code=503': 0 });
      expect(samplesOf(families, 'promhttp_metric_handler_requests_in_flight')).toEqual({ '': 1 });
      // No RaftCluster yet (TiKV has not bootstrapped): no pd_cluster_status.
      expect(families.has('pd_cluster_status')).toBe(false);
    }
    // The scrape counter counts the scrapes served before this one, per process.
    const again = parseExposition((await call(urls[1])).text);
    expect(samplesOf(again, 'promhttp_metric_handler_requests_total')?.['code=200']).toBe(1);
    // The Service answers from any member, without redirecting.
    const viaService = expectExposition(await call(`${pd.url}/metrics`), VALUES);
    expect(samplesOf(viaService, 'etcd_server_has_leader')).toEqual({ '': 1 });
    // etcd's ServeMux: /metrics exactly, any method; other paths are PD's 404.
    expect((await call(urls[0], {}, 'POST')).status).toBe(200);
    expect(await call(urls[0].replace('/metrics', '/metrics/'))).toMatchObject({ status: 404, text: '404 page not found\n' });
    // A member without a leader still answers (etcd's handler needs none): has_leader 0.
    pd.pdStop('demo-pd-1');
    pd.pdStop('demo-pd-2');
    await pd.waitFor(() => pd.leader() === undefined, 60_000, 'no leader');
    const alone = expectExposition(await call(urls[0]), VALUES);
    expect([value(alone, 'etcd_server_has_leader'), value(alone, 'etcd_server_is_leader')]).toEqual([0, 0]);
  });

  test('gzipped for a client that accepts gzip, as promhttp.Handler does (Prometheus always asks)', async () => {
    const { urls } = await startPd({}, 1);
    const gz = await call(urls[0], { 'Accept-Encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gz.raw.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    expectExposition(gz, VALUES);
    const plain = await call(urls[0]);
    expect(plain.headers['content-encoding']).toBeUndefined();
  });

  test("v8.5.0-v8.5.4: the leader's pd_cluster_status{type}, summed over the stores at each collection; none on followers", async () => {
    const { pd, urls } = await startPd({ totalLeaders: 30 });
    for (let i = 0; i < 3; i++) pd.tikvStart(`demo-tikv-${i}`);
    for (let i = 0; i < 50; i++) pd.tick();
    const leaderUrl = urls[pd.members().findIndex((m) => m.name === pd.leader())];
    // Not collected yet: the job runs every 10 s (metricsCollectMs), here by hand.
    expect(parseExposition((await call(leaderUrl)).text).has('pd_cluster_status')).toBe(false);
    pd.collectMetrics();
    const families = expectExposition(await call(leaderUrl), VALUES);
    const stores = pd.stores();
    const regions = stores.reduce((n, s) => n + s.regionCount, 0);
    expect(samplesOf(families, 'pd_cluster_status')).toEqual({
      'type=leader_count': 30,
      'type=learner_count': 0,
      'type=region_count': regions,
      'type=storage_capacity': 3 * 100 * 1024 ** 3,
      'type=storage_size': regions * 1024 ** 2,
      'type=store_disconnected_count': 0,
      'type=store_down_count': 0,
      'type=store_low_space_count': 0,
      'type=store_offline_count': 0,
      'type=store_preparing_count': 0,
      'type=store_removed_count': 0,
      'type=store_removing_count': 0,
      'type=store_serving_count': 3,
      'type=store_slow_count': 0,
      'type=store_tombstone_count': 0,
      'type=store_unhealth_count': 0,
      'type=store_up_count': 3,
      'type=witness_count': 0,
    });
    expect(families.get('pd_cluster_status')?.help).toBe('Status of the cluster.');
    for (const url of urls.filter((u) => u !== leaderUrl))
      expect(parseExposition((await call(url)).text).has('pd_cluster_status')).toBe(false);
    // A stopped store: disconnected at the next collection, values as of the last one until then.
    pd.tikvStop('demo-tikv-2');
    pd.tick();
    expect(value(parseExposition((await call(leaderUrl)).text), 'pd_cluster_status', 'type=store_up_count')).toBe(3);
    pd.collectMetrics();
    const later = parseExposition((await call(leaderUrl)).text);
    expect([
      value(later, 'pd_cluster_status', 'type=store_up_count'),
      value(later, 'pd_cluster_status', 'type=store_disconnected_count'),
    ]).toEqual([2, 1]);
    // The leader moves: the old leader's gauge is gone (its jobs stopped), the new one collects at the next round.
    const old = pd.leader()!;
    const next = pd.members().find((m) => m.name !== old)!;
    const transfer = await call(`${pd.url}/pd/api/v1/leader/transfer/${next.name}`, {}, 'POST');
    expect(transfer.status).toBe(200);
    await pd.waitFor(() => pd.leader() === next.name, 60_000, 'the leader moved');
    expect(parseExposition((await call(leaderUrl)).text).has('pd_cluster_status')).toBe(false);
    const nextUrl = urls[Number(next.pod.slice(-1))];
    expect(parseExposition((await call(nextUrl)).text).has('pd_cluster_status')).toBe(false);
    pd.collectMetrics();
    expect(value(expectExposition(await call(nextUrl), VALUES), 'pd_cluster_status', 'type=store_disconnected_count')).toBe(1);
  });

  test('v8.5.5+: pd_cluster_status{engine,store,type} per store; a Tombstone store keeps its last sizes', async () => {
    const { pd, urls } = await startPd({ version: 'v8.5.5', totalLeaders: 20, storeDownMs: 50 }, 1);
    for (let i = 0; i < 4; i++) pd.tikvStart(`demo-tikv-${i}`);
    pd.tiflashStart('demo-tiflash-0');
    await pd.waitFor(() => pd.stores().length === 5, 60_000, 'five stores');
    for (let i = 0; i < 50; i++) pd.tick();
    pd.collectMetrics();
    const families = expectExposition(await call(urls[0]), VALUES);
    const status = samplesOf(families, 'pd_cluster_status')!;
    expect(Object.keys(status)).toHaveLength(5 * 18);
    const tiflash = pd.stores().find((s) => s.engine === 'tiflash')!;
    const one = pd.stores().find((s) => s.pod === 'demo-tikv-1')!;
    expect(status[`engine=tiflash,store=${tiflash.id},type=store_up_count`]).toBe(1);
    expect(status[`engine=tikv,store=${one.id},type=leader_count`]).toBe(one.leaderCount);
    expect(status[`engine=tikv,store=${one.id},type=storage_capacity`]).toBe(100 * 1024 ** 3);
    // Taken offline, drained, buried: Tombstone; the status counts follow, its sizes stay as they were.
    const sizeBefore = status[`engine=tikv,store=${one.id},type=region_count`];
    const del = await call(`${pd.url}/pd/api/v1/store/${one.id}`, {}, 'DELETE');
    expect(del.status).toBe(200);
    pd.collectMetrics();
    const offline = samplesOf(parseExposition((await call(urls[0])).text), 'pd_cluster_status')!;
    expect([
      offline[`engine=tikv,store=${one.id},type=store_offline_count`],
      offline[`engine=tikv,store=${one.id},type=store_up_count`],
    ]).toEqual([1, 0]);
    pd.tikvStop('demo-tikv-1');
    await pd.waitFor(
      () => {
        pd.tick();
        return pd.stores().find((s) => s.id === one.id)?.state === 'Tombstone';
      },
      60_000,
      'store 2 Tombstone',
    );
    pd.collectMetrics();
    const buried = samplesOf(expectExposition(await call(urls[0]), VALUES), 'pd_cluster_status')!;
    expect([
      buried[`engine=tikv,store=${one.id},type=store_tombstone_count`],
      buried[`engine=tikv,store=${one.id},type=store_offline_count`],
    ]).toEqual([1, 0]);
    expect(buried[`engine=tikv,store=${one.id},type=region_count`]).toBe(offline[`engine=tikv,store=${one.id},type=region_count`]);
    expect(sizeBefore).toBeGreaterThan(0);
  });

  test('API mode: PD collects pd_cluster_status only while no scheduling server is registered (scheduling fallback)', async () => {
    const { pd, urls } = await startPd({ microservices: true }, 1);
    pd.tikvStart('demo-tikv-0');
    await pd.waitFor(() => pd.tikvBootstrapped(), 60_000, 'bootstrapped');
    pd.collectMetrics();
    expect(value(parseExposition((await call(urls[0])).text), 'pd_cluster_status', 'type=store_up_count')).toBe(1);
    pd.ms.put('scheduling', 'http://demo-scheduling-0.demo-scheduling-peer.ns.svc:2379', '{}');
    expect(parseExposition((await call(urls[0])).text).has('pd_cluster_status')).toBe(false);
    pd.collectMetrics();
    expect(parseExposition((await call(urls[0])).text).has('pd_cluster_status')).toBe(false);
  });
});

// ---- PD micro-services ----

describe('PD micro-services: GET /metrics on 2379 (PromHandler on the gin engine)', () => {
  const msIp = (pod: string) => ip(2, Number(pod.slice(-1)) + (pod.includes('tso') ? 1 : 11));
  const msUrl = (pod: string, path = '/metrics') => `http://${msIp(pod)}:2379${path}`;
  const serviceOf = (pod: string) => (pod.includes('tso') ? 'tso' : 'scheduling') as PdmsService;

  async function startMs(pods: string[], version: string): Promise<PdmsSim> {
    const { pd } = await startPd({ microservices: true, clientPort: 20000 + Math.floor(Math.random() * 20000) }, 1, 8);
    const sim = new PdmsSim(pd, { cluster: 'demo', namespace: 'ns', electionMs: 20, retryMs: 10 });
    cleanups.push(() => sim.close());
    for (const pod of pods) await sim.serverStart(pod, msIp(pod), serviceOf(pod), version);
    return sim;
  }

  test('v8.5.7: service_member_role from the first time a server is primary (1, then 0), pd_server_info, promhttp; escaping=values', async () => {
    const before = Date.now();
    const sim = await startMs(['demo-scheduling-0', 'demo-scheduling-1', 'demo-tso-0'], 'v8.5.7');
    const after = Date.now();
    await sim.waitFor(() => sim.primary('scheduling') !== undefined && sim.primary('tso') !== undefined, 60_000, 'primaries');
    const primary = sim.primary('scheduling')!.pod;
    const secondary = primary === 'demo-scheduling-0' ? 'demo-scheduling-1' : 'demo-scheduling-0';
    const p = expectExposition(await call(msUrl(primary)), VALUES);
    expect([...p.keys()]).toEqual([
      ...STANDARD.slice(0, 2),
      'pd_server_info',
      'process_start_time_seconds',
      ...PROMHTTP,
      'service_member_role',
    ]);
    expect(samplesOf(p, 'service_member_role')).toEqual({ 'service=Scheduling Service': 1 });
    expect(p.get('service_member_role')?.help).toBe('The leader/primary of services');
    expect(p.get('pd_server_info')?.samples[0].labels).toEqual({ hash: '6dce4a68e3e93b523657bd05cba89a86d64de117', version: 'v8.5.7' });
    expectStartTime(p, before, after);
    const s = expectExposition(await call(msUrl(secondary)), VALUES);
    expect(s.has('service_member_role')).toBe(false);
    const tso = expectExposition(await call(msUrl('demo-tso-0')), VALUES);
    expect(samplesOf(tso, 'service_member_role')).toEqual({ 'service=TSO Service Group 0': 1 });
    // A transfer: the old primary steps down (0), the new one is primary (1).
    const t = await call(msUrl(primary, '/scheduling/api/v1/primary/transfer'), {}, 'POST', JSON.stringify({ new_primary: secondary }));
    expect(t.status).toBe(200);
    await sim.waitFor(() => sim.primary('scheduling')?.pod === secondary, 60_000, 'the transfer');
    expect(samplesOf(parseExposition((await call(msUrl(primary))).text), 'service_member_role')).toEqual({
      'service=Scheduling Service': 0,
    });
    expect(samplesOf(parseExposition((await call(msUrl(secondary))).text), 'service_member_role')).toEqual({
      'service=Scheduling Service': 1,
    });
    // Scrapes counted per process; the route is GET only (gin): another method is gin's 404.
    expect(samplesOf(parseExposition((await call(msUrl(primary))).text), 'promhttp_metric_handler_requests_total')?.['code=200']).toBe(2);
    expect(await call(msUrl(primary), {}, 'POST')).toMatchObject({ status: 404, text: '404 page not found' });
    // gin's gzip middleware compresses it (PromHandler itself does not).
    const gz = await call(msUrl(primary), { 'Accept-Encoding': 'gzip' });
    expect(gz.headers).toMatchObject({ 'content-encoding': 'gzip', vary: 'Accept-Encoding' });
    expectExposition(gz, VALUES);
    expect(sim.unsimulated).toEqual([`${primary} POST /metrics`]);
  });

  test("v7.5.0: behind the engine-level redirector, a secondary answers with the primary's; no escaping term, no pd_server_info", async () => {
    const sim = await startMs(['demo-scheduling-0', 'demo-scheduling-1'], 'v7.5.0');
    await sim.waitFor(() => sim.primary('scheduling') !== undefined, 60_000, 'a primary');
    const primary = sim.primary('scheduling')!.pod;
    const secondary = primary === 'demo-scheduling-0' ? 'demo-scheduling-1' : 'demo-scheduling-0';
    const families = expectExposition(await call(msUrl(secondary)), TEXT_004);
    expect(samplesOf(families, 'service_member_role')).toEqual({ 'service=Scheduling Service': 1 });
    expect(families.has('pd_server_info')).toBe(false);
    // Recorded by the primary (forwarded from the secondary), then by the secondary.
    expect(sim.requests.filter((r) => r.path === '/metrics').map((r) => [r.pod, r.redirectedFrom])).toEqual([
      [primary, secondary],
      [secondary, undefined],
    ]);
  });
});

// ---- TiDB ----

describe('TiDB: /metrics on the status port 10080', () => {
  async function startTidb(version?: string): Promise<TidbSim> {
    const sim = new TidbSim(version === undefined ? {} : { version });
    cleanups.push(() => sim.close());
    return sim;
  }

  test("v8.5.0: tidb_server_info = /info's start_timestamp, time jumps, promhttp, Go collectors; escaping=values; any method; gzip", async () => {
    const sim = await startTidb();
    const before = Date.now();
    await sim.serverStart('tidb-0', ip(3, 1));
    const after = Date.now();
    const url = `http://${ip(3, 1)}:10080/metrics`;
    const families = expectExposition(await call(url), VALUES);
    expect([...families.keys()]).toEqual([
      ...STANDARD.slice(0, 2),
      'process_start_time_seconds',
      ...PROMHTTP,
      'tidb_monitor_time_jump_back_total',
      'tidb_server_info',
    ]);
    const info = JSON.parse((await call(`http://${ip(3, 1)}:10080/info`)).text) as { start_timestamp: number; git_hash: string };
    expect(samplesOf(families, 'tidb_server_info')).toEqual({ [`hash=${info.git_hash},version=v8.5.0`]: info.start_timestamp });
    expect(families.get('tidb_monitor_time_jump_back_total')).toMatchObject({ type: 'counter', samples: [{ value: 0 }] });
    expectStartTime(families, before, after);
    // gorilla/mux without .Methods: any method.
    expect(samplesOf(expectExposition(await call(url, {}, 'POST'), VALUES), 'promhttp_metric_handler_requests_total')?.['code=200']).toBe(
      1,
    );
    const gz = await call(url, { 'Accept-Encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expectExposition(gz, VALUES);
    expect(sim.unsimulated).toEqual([]);
    // A restart is a new process: its own start, no scrapes yet.
    await sim.serverStop('tidb-0');
    await sim.serverStart('tidb-0', ip(3, 1));
    expect(samplesOf(parseExposition((await call(url)).text), 'promhttp_metric_handler_requests_total')?.['code=200']).toBe(0);
  });

  test("the escaping term follows the release's prometheus/common: none before v8.1, underscores from v8.5.6", async () => {
    const sim = await startTidb();
    await sim.serverStart('tidb-0', ip(3, 2), 'v7.5.0');
    await sim.serverStart('tidb-1', ip(3, 3), 'v8.5.6');
    expect(samplesOf(expectExposition(await call(`http://${ip(3, 2)}:10080/metrics`), TEXT_004), 'tidb_server_info')).toBeDefined();
    expectExposition(await call(`http://${ip(3, 3)}:10080/metrics`), UNDERSCORES);
  });
});

// ---- TiCDC ----

describe('TiCDC (tiflow): /metrics on 8301', () => {
  const OWNERSHIP_LINT = [
    'ticdc_owner_ownership_counter counter metrics should have "_total" suffix',
    "ticdc_owner_ownership_counter metric name should not include type 'counter'",
  ];

  async function startCdc(pods: string[], versions: Record<string, string> = {}, initMs = 10): Promise<TicdcSim> {
    const sim = await TicdcSim.start({ cluster: 'demo', namespace: 'ns', initMs, electionMs: 10, tables: 4 });
    cleanups.push(() => sim.close());
    for (const [i, pod] of pods.entries()) await sim.captureStart(pod, ip(4, i + 1), { version: versions[pod] });
    return sim;
  }
  const cdcUrl = (i: number, path = '/metrics') => `http://${ip(4, i + 1)}:8301${path}`;

  test("v8.5.0: the owner's ticdc_owner_ownership_counter grows with its time as owner; TiCDC's own registry has no promhttp families", async () => {
    const before = Date.now();
    const sim = await startCdc(['demo-ticdc-0', 'demo-ticdc-1']);
    const after = Date.now();
    await sim.waitFor(() => sim.owner() !== undefined, 60_000, 'an owner');
    const owner = sim.owner() === 'demo-ticdc-0' ? 0 : 1;
    await sleep(120);
    const o = expectExposition(await call(cdcUrl(owner)), VALUES, OWNERSHIP_LINT);
    expect([...o.keys()]).toEqual([...STANDARD.slice(0, 2), 'process_start_time_seconds', 'ticdc_owner_ownership_counter']);
    expect(o.get('ticdc_owner_ownership_counter')).toMatchObject({
      type: 'counter',
      help: 'The counter of ownership increases every 5 seconds on a owner capture',
    });
    const owned = value(o, 'ticdc_owner_ownership_counter')!;
    expect(owned).toBeGreaterThanOrEqual(0.1);
    expect(owned).toBeLessThan(5);
    expectStartTime(o, before, after);
    const other = expectExposition(await call(cdcUrl(1 - owner)), VALUES, OWNERSHIP_LINT);
    expect(value(other, 'ticdc_owner_ownership_counter')).toBe(0);
    // The owner resigns: its counter stops growing; the new owner's starts.
    const resign = await call(cdcUrl(owner, '/api/v1/owner/resign'), {}, 'POST');
    expect(resign.status).toBe(202);
    sim.rigNextElection(`demo-ticdc-${1 - owner}`);
    await sim.waitFor(() => sim.owner() === `demo-ticdc-${1 - owner}`, 60_000, 'the other owner');
    const frozen = value(parseExposition((await call(cdcUrl(owner))).text), 'ticdc_owner_ownership_counter')!;
    await sleep(50);
    expect(value(parseExposition((await call(cdcUrl(owner))).text), 'ticdc_owner_ownership_counter')).toBe(frozen);
    expect(value(parseExposition((await call(cdcUrl(1 - owner))).text), 'ticdc_owner_ownership_counter')).toBeGreaterThan(0);
    // gin's Any: every method; a trailing slash is redirected; gzip for a client that accepts it.
    expect((await call(cdcUrl(0), {}, 'PUT')).status).toBe(200);
    expect(await call(cdcUrl(0, '/metrics/'))).toMatchObject({ status: 301, headers: { location: '/metrics' } });
    const gz = await call(cdcUrl(0), { 'Accept-Encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expectExposition(gz, VALUES, OWNERSHIP_LINT);
    expect(sim.unsimulated).toEqual([]);
  });

  test('answered before the capture is initialised; the escaping term and the ServeMux of v4.0-v5.1 by release', async () => {
    const sim = await startCdc(
      ['demo-ticdc-0', 'demo-ticdc-1', 'demo-ticdc-2', 'demo-ticdc-3'],
      {
        'demo-ticdc-1': 'v8.5.6',
        'demo-ticdc-2': 'v6.5.0',
        'demo-ticdc-3': 'v5.1.0',
      },
      2000,
    );
    expect(sim.captures().every((c) => c.state === 'starting')).toBe(true);
    expect((await call(cdcUrl(0, '/api/v1/status'))).status).toBe(503);
    expect(value(expectExposition(await call(cdcUrl(0)), VALUES, OWNERSHIP_LINT), 'ticdc_owner_ownership_counter')).toBe(0);
    expectExposition(await call(cdcUrl(1)), UNDERSCORES, OWNERSHIP_LINT);
    expectExposition(await call(cdcUrl(2)), TEXT_004, OWNERSHIP_LINT);
    expectExposition(await call(cdcUrl(3)), TEXT_004, OWNERSHIP_LINT);
    // net/http's ServeMux: `/metrics` exactly.
    expect(await call(cdcUrl(3, '/metrics/'))).toMatchObject({ status: 404, text: '404 page not found\n' });
    expect(sim.unsimulated).toEqual([]);
  });
});

// ---- Pump ----

describe('Pump: /metrics on 8250 (the default ServeMux)', () => {
  test("the storage's max commit TS (ms) as the node reports it, no lost binlogs; Pump's own registry; no escaping term", async () => {
    const sim = await PumpSim.start({ cluster: 'demo', namespace: 'ns', heartbeatMs: 30 });
    cleanups.push(() => sim.close());
    const before = Date.now();
    await sim.pumpStart('demo-pump-0', ip(5, 1));
    const after = Date.now();
    const url = `http://${ip(5, 1)}:8250/metrics`;
    // Answered once the node registered (requests wait for `m.Serve()`).
    const families = expectExposition(await call(url), TEXT_004, [
      'binlog_pump_loss_binlog_count counter metrics should have "_total" suffix',
      'binlog_pump_loss_binlog_count non-histogram and non-summary metrics should not have "_count" suffix',
    ]);
    expect([...families.keys()]).toEqual(['binlog_pump_loss_binlog_count', 'binlog_pump_storage_max_commit_ts', ...STANDARD]);
    const node = sim.nodes().find((n) => n.nodeId === sim.nodeIdOf('demo-pump-0'))!;
    const maxCommit = value(families, 'binlog_pump_storage_max_commit_ts')!;
    expect(maxCommit).toBeGreaterThanOrEqual(Number(node.maxCommitTS >> 18n) - 1000);
    expect(maxCommit).toBeLessThanOrEqual(Date.now());
    expect(families.get('binlog_pump_storage_max_commit_ts')?.samples[0].text).toMatch(/^\d\.\d+e\+12$/);
    expect(samplesOf(families, 'binlog_pump_loss_binlog_count')).toEqual({ '': 0 });
    expectStartTime(families, before, after);
    // Heartbeats move it on.
    await sleep(80);
    expect(value(parseExposition((await call(url)).text), 'binlog_pump_storage_max_commit_ts')).toBeGreaterThan(maxCommit);
    // Any method, gzip when accepted; /metrics/ is the gorilla router's 404.
    expect((await call(url, {}, 'DELETE')).status).toBe(200);
    const gz = await call(url, { 'Accept-Encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(parseExposition(gz.text).has('binlog_pump_storage_max_commit_ts')).toBe(true);
    expect(await call(`${url}/`)).toMatchObject({ status: 404, text: '404 page not found\n' });
    expect(sim.unsimulated).toEqual([]);
  });
});

// ---- a real Prometheus scrapes them all ----

const withPrometheus = prometheus.test;

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as AddressInfo;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

/** Prometheus on a free port with static targets per job; stopped (by its pid) and its directory removed at cleanup. */
async function startPrometheus(jobs: Record<string, string[]>): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'sim-metrics-prom-'));
  const config = {
    global: { scrape_interval: '200ms', scrape_timeout: '150ms' },
    scrape_configs: Object.entries(jobs).map(([job, targets]) => ({ job_name: job, static_configs: [{ targets }] })),
  };
  writeFileSync(join(dir, 'prometheus.yml'), JSON.stringify(config));
  const port = await freePort();
  const child = spawn(
    PROMETHEUS_BIN,
    [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let log = '';
  child.stderr?.on('data', (c: Buffer) => (log = (log + c.toString()).slice(-20_000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  cleanups.push(async () => {
    child.kill('SIGKILL');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if ((await call(`${url}/-/ready`).catch(() => undefined))?.status === 200) return url;
    if (i > 150 || child.exitCode !== null) throw new Error(`prometheus did not start:\n${log}`);
    await sleep(100);
  }
}

const promQuery = async (url: string, expr: string) =>
  (
    JSON.parse((await call(`${url}/api/v1/query?query=${encodeURIComponent(expr)}`)).text) as {
      data: { result: { metric: Record<string, string>; value: [number, string] }[] };
    }
  ).data.result;

withPrometheus(
  'Prometheus 2.42 scrapes every simulator: all targets up, the families stored',
  async () => {
    const { pd } = await startPd({}, 1, 6);
    pd.tikvStart('demo-tikv-0');
    await pd.waitFor(() => pd.tikvBootstrapped(), 60_000, 'bootstrapped');
    pd.collectMetrics();
    const tidb = new TidbSim();
    cleanups.push(() => tidb.close());
    await tidb.serverStart('tidb-0', ip(6, 21));
    const cdc = await TicdcSim.start({ cluster: 'demo', namespace: 'ns', initMs: 10, electionMs: 10, tables: 2 });
    cleanups.push(() => cdc.close());
    await cdc.captureStart('demo-ticdc-0', ip(6, 31));
    const pump = await PumpSim.start({ cluster: 'demo', namespace: 'ns' });
    cleanups.push(() => pump.close());
    await pump.pumpStart('demo-pump-0', ip(6, 41));
    const { pd: apiPd } = await startPd({ microservices: true, clientPort: 20000 + Math.floor(Math.random() * 20000) }, 1, 7);
    const ms = new PdmsSim(apiPd, { cluster: 'demo', namespace: 'ns', electionMs: 10, retryMs: 10 });
    cleanups.push(() => ms.close());
    await ms.serverStart('demo-scheduling-0', ip(6, 51), 'scheduling', 'v8.5.7');
    await ms.waitFor(() => ms.primary('scheduling') !== undefined, 60_000, 'a scheduling primary');
    await cdc.waitFor(() => cdc.owner() !== undefined, 60_000, 'an owner');

    const prom = await startPrometheus({
      pd: [`${ip(6, 1)}:2379`],
      scheduling: [`${ip(6, 51)}:2379`],
      tidb: [`${ip(6, 21)}:10080`],
      ticdc: [`${ip(6, 31)}:8301`],
      pump: [`${ip(6, 41)}:8250`],
    });
    let targets: { labels: { job: string }; health: string; lastError: string }[] = [];
    for (let i = 0; ; i++) {
      targets = (JSON.parse((await call(`${prom}/api/v1/targets?state=active`)).text) as { data: { activeTargets: typeof targets } }).data
        .activeTargets;
      if (targets.length === 5 && targets.every((t) => t.health === 'up')) break;
      if (i > 100) throw new Error(`targets not all up: ${JSON.stringify(targets)}`);
      await sleep(100);
    }
    const jobsOf = async (expr: string) => (await promQuery(prom, expr)).map((r) => r.metric.job).sort();
    expect(await jobsOf('up == 1')).toEqual(['pd', 'pump', 'scheduling', 'ticdc', 'tidb']);
    expect(await jobsOf('process_start_time_seconds > 0')).toEqual(['pd', 'pump', 'scheduling', 'ticdc', 'tidb']);
    expect((await promQuery(prom, 'pd_cluster_status{type="store_up_count"}')).map((r) => r.value[1])).toEqual(['1']);
    expect((await promQuery(prom, 'service_member_role')).map((r) => [r.metric.service, r.value[1]])).toEqual([
      ['Scheduling Service', '1'],
    ]);
    expect((await promQuery(prom, 'tidb_server_info')).map((r) => r.metric.version)).toEqual(['v8.5.0']);
    expect(await jobsOf('ticdc_owner_ownership_counter > 0')).toEqual(['ticdc']);
    expect(await jobsOf('binlog_pump_storage_max_commit_ts > 1.7e12')).toEqual(['pump']);
    // Prometheus's scrape parser read as many samples as the strict parser finds in an answer.
    const scraped = Object.fromEntries((await promQuery(prom, 'scrape_samples_scraped')).map((r) => [r.metric.job, Number(r.value[1])]));
    const direct = {
      pd: `http://${ip(6, 1)}:2379/metrics`,
      scheduling: `http://${ip(6, 51)}:2379/metrics`,
      tidb: `http://${ip(6, 21)}:10080/metrics`,
      ticdc: `http://${ip(6, 31)}:8301/metrics`,
      pump: `http://${ip(6, 41)}:8250/metrics`,
    };
    const counted: Record<string, number> = {};
    for (const [job, url] of Object.entries(direct))
      counted[job] = [...parseExposition((await call(url)).text).values()].reduce((n, f) => n + f.samples.length, 0);
    expect(scraped).toEqual(counted);
  },
  20_000,
);
