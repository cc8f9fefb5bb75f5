/**
 * Prometheus's text exposition format as the simulated Go servers write it on `/metrics`
 * (client_golang's registry and promhttp, prometheus/common's expfmt), shared by the PD, PD
 * micro-service, TiDB, TiCDC and Pump simulators. Imports nothing of the simulators, so any of them
 * can use it.
 */
import { gzipSync } from 'node:zlib';

/** A metric family as a Go server's registry gathers it: counters and gauges only. */
export interface PromFamily {
  name: string;
  help: string;
  type: 'counter' | 'gauge';
  samples: readonly { labels?: Readonly<Record<string, string>>; value: number }[];
}

/**
 * The `escaping` term prometheus/common adds to the negotiated content type (expfmt/encode.go
 * `Negotiate`: `FmtText + "; escaping=" + model.NameEscapingScheme`): none before v0.47.0, `values`
 * from v0.47.0 (model/metric.go `NameEscapingScheme = ValueEncodingEscaping`), `underscores` from
 * v0.59.0 (`UnderscoreEscaping`). Which one a server writes is the prometheus/common version its
 * release's go.mod selects.
 */
export type PromEscaping = 'none' | 'values' | 'underscores';

/**
 * The `Content-Type` promhttp sets for the text format (client_golang prometheus/promhttp/http.go
 * `HandlerForTransactional`: `header.Set(contentTypeHeader, string(expfmt.Negotiate(req.Header)))`),
 * for a scraper that takes the text format (Prometheus 2.42's default `Accept` lists OpenMetrics,
 * which a handler without `EnableOpenMetrics` does not offer, then `text/plain;version=0.0.4`). A
 * request that asks for protobuf, or names an `escaping` itself, is not modelled: it gets this too.
 */
export function promContentType(escaping: PromEscaping): string {
  return `text/plain; version=0.0.4; charset=utf-8${escaping === 'none' ? '' : `; escaping=${escaping}`}`;
}

/**
 * A float64 as expfmt writes it (prometheus/common expfmt/text_create.go `writeFloat`): `1`, `0`,
 * `-1`, `NaN`, `+Inf`, `-Inf` as such, else `strconv.AppendFloat(f, 'g', -1, 64)`: the shortest
 * digits that read back, in %e form (`1.2345e+09`, two exponent digits at least) when the exponent
 * is below -4 or at least 6 (the shortest form decides with precision 6), else %f (`300`, `0.25`).
 */
export function goFloat(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  if (v === 0) return '0';
  const [mantissa, expText] = v.toExponential().split('e');
  const exp = Number(expText);
  const sign = mantissa.startsWith('-') ? '-' : '';
  const digits = mantissa.replace('-', '').replace('.', '');
  if (exp < -4 || exp >= 6) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  const int = digits.slice(0, exp + 1).padEnd(exp + 1, '0');
  const frac = digits.slice(exp + 1);
  return `${sign}${int}${frac ? `.${frac}` : ''}`;
}

const goLess = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The text a Go server writes for its registry: what `Registry.Gather` returns (client_golang
 * prometheus/registry.go; families without a metric left out, families sorted by name, label pairs
 * by name, the metrics of a family by their label values, internal/metric.go `NormalizeMetricFamilies`)
 * encoded by prometheus/common expfmt/text_create.go `MetricFamilyToText`: `# HELP` (`\` and newline
 * escaped), `# TYPE`, then one `name{label="value",...} value` line per metric (`\`, `"` and newline
 * escaped in values), no timestamps, no blank lines.
 */
export function promText(families: readonly PromFamily[]): string {
  const lines: string[] = [];
  const escHelp = (s: string) => s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
  const escValue = (s: string) => s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
  for (const f of [...families].filter((x) => x.samples.length > 0).sort((a, b) => goLess(a.name, b.name))) {
    const metrics = f.samples.map((s) => ({ pairs: Object.entries(s.labels ?? {}).sort(([a], [b]) => goLess(a, b)), value: s.value }));
    metrics.sort((a, b) => {
      for (let i = 0; i < Math.min(a.pairs.length, b.pairs.length); i++) {
        const c = goLess(a.pairs[i][1], b.pairs[i][1]);
        if (c !== 0) return c;
      }
      return 0;
    });
    lines.push(`# HELP ${f.name} ${escHelp(f.help)}`, `# TYPE ${f.name} ${f.type}`);
    for (const m of metrics) {
      const labels = m.pairs.length === 0 ? '' : `{${m.pairs.map(([k, v]) => `${k}="${escValue(v)}"`).join(',')}}`;
      lines.push(`${f.name}${labels} ${goFloat(m.value)}`);
    }
  }
  return lines.map((l) => `${l}\n`).join('');
}

/**
 * client_golang's process and Go collectors (prometheus/process_collector.go, go_collector.go), which
 * every Go server here registers (the default registry has both; TiCDC and Pump register them in
 * their own): `process_start_time_seconds` is the process start as /proc gives it (clock ticks of
 * 1/100 s, `Starttime/userHZ + boot time`); the goroutine and thread counts are plausible constants,
 * the simulator having no goroutines.
 */
export function goProcessFamilies(startMs: number, goroutines: number, threads: number): PromFamily[] {
  return [
    { name: 'go_goroutines', help: 'Number of goroutines that currently exist.', type: 'gauge', samples: [{ value: goroutines }] },
    { name: 'go_threads', help: 'Number of OS threads created.', type: 'gauge', samples: [{ value: threads }] },
    {
      name: 'process_start_time_seconds',
      help: 'Start time of the process since unix epoch in seconds.',
      type: 'gauge',
      samples: [{ value: Math.floor(startMs / 10) / 100 }],
    },
  ];
}

/**
 * What `promhttp.InstrumentMetricHandler` registers in the registerer it is given
 * (prometheus/promhttp/http.go): the scrapes served so far by status code (200, 500 and 503 made up
 * front; the scrape being served is counted once it ends) and the scrapes in flight (this one). Only
 * where the handler's registerer is also the gatherer: TiCDC and Pump set `prometheus.DefaultGatherer`
 * to their own registry but leave `DefaultRegisterer`, so their answers have neither family.
 */
export function promhttpFamilies(scrapesServed: number): PromFamily[] {
  return [
    {
      name: 'promhttp_metric_handler_requests_in_flight',
      help: 'Current number of scrapes being served.',
      type: 'gauge',
      samples: [{ value: 1 }],
    },
    {
      name: 'promhttp_metric_handler_requests_total',
      help: 'Total number of scrapes by HTTP status code.',
      type: 'counter',
      samples: [
        { labels: { code: '200' }, value: scrapesServed },
        { labels: { code: '500' }, value: 0 },
        { labels: { code: '503' }, value: 0 },
      ],
    },
  ];
}

/**
 * promhttp's answer (prometheus/promhttp/http.go): 200, the negotiated content type, the body gzipped
 * with `Content-Encoding: gzip` when the request accepts gzip and the handler compresses (what
 * Prometheus asks for; zstd, which client_golang v1.20+ also offers, is not modelled).
 */
export function promhttpAnswer(
  families: readonly PromFamily[],
  escaping: PromEscaping,
  acceptEncoding: string | string[] | undefined,
  compress = true,
): { status: number; headers: Record<string, string>; body: Buffer } {
  const text = Buffer.from(promText(families), 'utf8');
  // v1.19 `gzipAccepted`: a comma-separated part that is `gzip` or starts with `gzip;`.
  const accepted = String(acceptEncoding ?? '')
    .split(',')
    .some((e) => e.trim() === 'gzip' || e.trim().startsWith('gzip;'));
  if (compress && accepted)
    return { status: 200, headers: { 'content-type': promContentType(escaping), 'content-encoding': 'gzip' }, body: gzipSync(text) };
  return { status: 200, headers: { 'content-type': promContentType(escaping) }, body: text };
}
