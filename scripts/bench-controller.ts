/**
 * Controller benchmark, run by scripts/bench.mjs (bundled with esbuild first): the shipped controller
 * bundle, with its default timings, against the simulated Kubernetes and PD API servers.
 *
 * - overhead per upgraded Pod: wall time of a 3 PD / 3 TiKV / 2 TiDB image upgrade, minus the time
 *   the simulated Pods themselves take to restart (stop to Ready), divided by the Pods restarted;
 * - Kubernetes API requests per idle minute (the controller's own, watches counted when opened);
 * - peak resident memory of the controller process.
 *
 * Prints one JSON object on stdout.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { World, simCluster } from '../test/sim/world';

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
/** Simulated Pod restart: terminate, start, become Ready. */
const POD = { podStopMs: 300, podStartMs: 500, podReadyMs: 200 };

function peakRssKiB(pid: number): number | undefined {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

async function main(): Promise<void> {
  const world = await World.start({ cluster: simCluster(), render, bundle: join(ROOT, 'lib/tidb-gitops-controller.js'), kube: POD });
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
    await world.applyCluster(simCluster({ version: 'v8.5.1' }));
    await world.waitFor(settled, 300_000, 'the upgrade to finish');
    const total = Date.now() - started;
    const restartMs = [...restarts.values()].reduce((n, r) => n + ((r.ready ?? r.stop) - r.stop), 0);
    const pods = restarts.size;
    const rssKiB = peakRssKiB(ctl.child.pid!);
    ctl.kill('SIGTERM');
    await ctl.exited;
    process.stdout.write(
      `${JSON.stringify({
        upgrade: { pods, totalMs: total, podRestartMs: restartMs, overheadPerPodMs: Math.round((total - restartMs) / pods) },
        idle: { seconds: IDLE_SECONDS, requests: idle.length, perMinute: Math.round((idle.length * 60) / IDLE_SECONDS), byKind: idleByKind },
        rssKiB,
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
