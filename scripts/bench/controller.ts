/**
 * Controller benchmark, run by scripts/bench.mjs (bundled with esbuild first): the shipped controller
 * bundle, with its default timings, against the simulated Kubernetes and PD API servers.
 *
 * - overhead per upgraded Pod: wall time of a 3 PD / 3 TiKV / 2 TiDB image upgrade, minus the time
 *   the simulated Pods themselves take to restart (stop to Ready), divided by the Pods restarted;
 * - the controller's reconcile passes during that upgrade: how many, their mean time (its own
 *   `tidb_gitops_reconcile_seconds_total`, requests to the simulators included) and the CPU time the
 *   controller process used per pass (from /proc), which the machine's load moves least;
 * - Kubernetes API requests per idle minute (the controller's own, watches counted when opened);
 * - peak resident memory of the controller process, and whether it stays flat under load: its resident
 *   memory once settled after the upgrade, and again after 10,000 watch events (a Pod annotated over
 *   and over) and 1,000 HTTP requests to its endpoints.
 *
 * Prints one JSON object on stdout.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { World, simCluster } from '../../test/sim/world';

type Obj = Record<string, any>;
const ROOT = process.env.TIDB_GITOPS_ROOT ?? process.cwd();
const req = createRequire(join(ROOT, 'package.json'));
const { loadTidbClusters } = req(join(ROOT, 'lib/src/tidbcluster/load.js'));
const { renderClusters } = req(join(ROOT, 'lib/src/render/render.js'));

function render(cluster: Obj): Obj[] {
  const loaded = loadTidbClusters(stringify(cluster), 'bench.yaml', {});
  if (loaded.errors.length > 0) throw new Error(loaded.errors.map((e: { message: string }) => e.message).join('\n'));
  return renderClusters(loaded.clusters.map((c: { resolved: unknown }) => c.resolved)).flatMap((r: { objects: Obj[] }) => r.objects);
}

const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 30);
const LOAD_EVENTS = Number(process.env.BENCH_LOAD_EVENTS ?? 10_000);
const LOAD_REQUESTS = 1_000;
/** How long the controller is left alone before its resident memory is read as settled. */
const SETTLE_MS = 3000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Resident memory once settled, then after `LOAD_EVENTS` watch events and `LOAD_REQUESTS` requests,
 * each read after the same pause.
 */
async function underLoad(
  world: World,
  ctl: { child: { pid?: number }; get(path: string): Promise<unknown> },
): Promise<{ settledKiB?: number; afterKiB?: number }> {
  await sleep(SETTLE_MS);
  const settledKiB = rssKiB(ctl.child.pid!, 'VmRSS');
  const pod = world.kube.list('Pod').find((p) => p.metadata.name.includes('-tidb-'))!;
  for (let i = 0; i < LOAD_EVENTS; i++) {
    const current = world.kube.get('Pod', pod.metadata.namespace ?? '', pod.metadata.name)!;
    world.kube.apply({
      ...current,
      metadata: { ...current.metadata, annotations: { ...current.metadata.annotations, 'bench.tidb-gitops.io/n': String(i) } },
    });
    // Let the streams drain now and then, as a real API server's writes are spread out.
    if (i % 200 === 199) await sleep(5);
  }
  const paths = ['/metrics', '/healthz', '/readyz'];
  for (let i = 0; i < LOAD_REQUESTS; i += 10)
    await Promise.all(paths.concat(paths, paths, ['/metrics']).map((p) => ctl.get(p).catch(() => undefined)));
  await sleep(SETTLE_MS);
  return { settledKiB, afterKiB: rssKiB(ctl.child.pid!, 'VmRSS') };
}
/** Simulated Pod restart: terminate, start, become Ready. */
const POD = { podStopMs: 300, podStartMs: 500, podReadyMs: 200 };

/**
 * A process's resident memory from /proc: its peak (VmHWM), now (VmRSS), or of that the private part
 * (RssAnon: heaps, stacks) and the part backed by files (RssFile: mostly the `node` executable's pages,
 * which every process running the same file on a node shares through the page cache).
 */
function rssKiB(pid: number, field: 'VmHWM' | 'VmRSS' | 'RssAnon' | 'RssFile' = 'VmHWM'): number | undefined {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** User plus system CPU time of a process so far, in ms (/proc/<pid>/stat, in clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
    .replace(/^.*\) /, '')
    .split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Passes so far and the seconds they took, from the controller's own metrics. */
async function passes(ctl: { get(path: string): Promise<{ body: string }> }): Promise<{ count: number; seconds: number }> {
  const { body } = await ctl.get('/metrics');
  let count = 0;
  let seconds = 0;
  for (const line of body.split('\n')) {
    const m = /^(tidb_gitops_reconciles_total|tidb_gitops_reconcile_seconds_total)(?:\{[^}]*\})? ([0-9.e+-]+)$/.exec(line);
    if (m?.[1] === 'tidb_gitops_reconciles_total') count += Number(m[2]);
    else if (m) seconds += Number(m[2]);
  }
  return { count, seconds };
}

async function main(): Promise<void> {
  const world = await World.start({
    cluster: simCluster(),
    render,
    bundle: process.env.BENCH_CONTROLLER_BUNDLE ?? join(ROOT, 'lib/tidb-gitops-controller.js'),
    kube: POD,
  });
  try {
    const ctl = await world.startController([], 'bench', false);
    const settled = () => world.settled('pd', 3) && world.settled('tikv', 3) && world.settled('tidb', 2);
    await world.waitFor(settled, 120_000, 'the cluster to come up');
    // Let the first status write and Lease renewals happen before counting.
    await new Promise((r) => setTimeout(r, 6000));

    const idleStart = world.kube.requests.length;
    await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000));
    const idle = world.kube.requests.slice(idleStart);
    const idleByKind: Record<string, number> = {};
    for (const r of idle) {
      const what = `${r.method} ${r.path.split('/').slice(-2, -1)[0] === 'namespaces' ? r.path.split('/').pop() : r.path.replace(/.*\/(\w+)\/[^/]+$/, '$1')}`;
      idleByKind[what] = (idleByKind[what] ?? 0) + 1;
    }

    // Upgrade: time from the new template to every Pod settled, and the Pods' own restart time.
    const restarts = new Map<string, { stop: number; ready?: number }>();
    world.kube.on('podStopped', (p) => restarts.set(p.metadata.name, { stop: Date.now() }));
    world.kube.on('podReady', (p) => {
      const r = restarts.get(p.metadata.name);
      if (r && r.ready === undefined) r.ready = Date.now();
    });
    const started = Date.now();
    const [passesBefore, cpuBefore] = [await passes(ctl), cpuMs(ctl.child.pid!)];
    await world.applyCluster(simCluster({ version: 'v8.5.1' }));
    await world.waitFor(settled, 300_000, 'the upgrade to finish');
    const total = Date.now() - started;
    const [passesAfter, cpuAfter] = [await passes(ctl), cpuMs(ctl.child.pid!)];
    const passCount = passesAfter.count - passesBefore.count;
    const restartMs = [...restarts.values()].reduce((n, r) => n + ((r.ready ?? r.stop) - r.stop), 0);
    const pods = restarts.size;
    const peakKiB = rssKiB(ctl.child.pid!);
    const [anonKiB, fileKiB] = [rssKiB(ctl.child.pid!, 'RssAnon'), rssKiB(ctl.child.pid!, 'RssFile')];
    const load = await underLoad(world, ctl);
    ctl.kill('SIGTERM');
    await ctl.exited;
    process.stdout.write(
      `${JSON.stringify({
        upgrade: { pods, totalMs: total, podRestartMs: restartMs, overheadPerPodMs: Math.round((total - restartMs) / pods) },
        passes: {
          count: passCount,
          meanMs: Math.round(((passesAfter.seconds - passesBefore.seconds) * 1000 * 10) / passCount) / 10,
          cpuMs: cpuAfter - cpuBefore,
          cpuPerPassMs: Math.round(((cpuAfter - cpuBefore) * 10) / passCount) / 10,
        },
        idle: {
          seconds: IDLE_SECONDS,
          requests: idle.length,
          perMinute: Math.round((idle.length * 60) / IDLE_SECONDS),
          byKind: idleByKind,
        },
        rssKiB: peakKiB,
        afterUpgrade: { anonKiB, fileKiB },
        load: { events: LOAD_EVENTS, requests: LOAD_REQUESTS, ...load },
        violations: { stopsWhileLeader: world.pd.stopsWhileLeader.length, stopsWithLeaders: world.pd.stopsWithLeaders.length },
      })}\n`,
    );
  } finally {
    await world.close();
  }
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
