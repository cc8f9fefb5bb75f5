/**
 * docs/tutorial.md as a user runs it: every `sh` block in order, in one bash session (so `cd` and
 * variables carry over, as in a terminal), with `set -e`, against the real API server and controller
 * manager (test/kube/). The harness's kubelet and simulated PD, TiKV and TiDB servers play the
 * images; the companion controller runs from the bundle under a token of the rendered ServiceAccount,
 * started when its Deployment appears and started again when the Deployment changes, as the
 * Deployment's Pod would be. A block after `<!-- not run: why -->` is not run, and the test lists it
 * with why. `tidb-gitops` on PATH is this checkout's CLI (`npm run build` first).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { realApiSuite } from '../kube/suite';
import { RealWorld } from '../kube/world';
import { resourcePath, type Obj } from '../kube/client';
import { TEST_DIR } from '../support/paths';

const root = join(TEST_DIR, '..');
const TUTORIAL = join(root, 'docs/tutorial.md');
const NAMESPACE = 'tidb';
const CLUSTER = 'basic';
/** Far above what a step takes here (seconds): a step still running then is stuck, and says where. */
const STEP_TIMEOUT_MS = 180_000;

interface Step {
  readonly line: number;
  readonly code: string;
  /** Why the block is not run here. @default run */
  readonly notRun?: string;
}

/** The tutorial's `sh` blocks, with the reason given before a block that is not run. */
function tutorialSteps(markdown: string): Step[] {
  const lines = markdown.split('\n');
  const steps: Step[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '```sh') continue;
    const end = lines.indexOf('```', i + 1);
    if (end < 0) throw new Error(`docs/tutorial.md:${i + 1}: a block that does not end`);
    const before = lines
      .slice(0, i)
      .reverse()
      .find((l) => l.trim() !== '');
    const notRun = /^<!-- not run: (.+) -->$/.exec(before ?? '')?.[1];
    steps.push({ line: i + 1, code: lines.slice(i + 1, end).join('\n'), ...(notRun && { notRun }) });
    i = end;
  }
  return steps;
}

/** A bash session fed one block at a time; each block's output is what it printed up to its marker. */
class Terminal {
  private out = '';
  private err = '';
  private exit?: number;
  private waiting?: () => void;
  private readonly bash: ChildProcessWithoutNullStreams;

  constructor(cwd: string, env: NodeJS.ProcessEnv) {
    this.bash = spawn('bash', ['--noprofile', '--norc'], { cwd, env });
    this.bash.stdout.on('data', (d: Buffer) => {
      this.out += d.toString();
      this.waiting?.();
    });
    this.bash.stderr.on('data', (d: Buffer) => (this.err += d.toString()));
    this.bash.on('exit', (code) => {
      this.exit = code ?? 1;
      this.waiting?.();
    });
    this.bash.stdin.write('set -eo pipefail\n');
  }

  /** Runs a block; resolves with its output, rejects with its output and errors if the shell stopped. */
  async run(code: string, timeoutMs: number): Promise<{ stdout: string; stderr: string }> {
    const marker = `__step_done_${Math.random().toString(36).slice(2)}__`;
    this.out = '';
    this.err = '';
    this.bash.stdin.write(`${code}\necho ${marker}\n`);
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      this.waiting?.();
    }, timeoutMs);
    try {
      while (!this.out.includes(`${marker}\n`)) {
        if (this.exit !== undefined)
          throw new Error(`the shell stopped (exit ${this.exit})\n--- stdout ---\n${this.out}\n--- stderr ---\n${this.err}`);
        if (late) throw new Error(`still running after ${timeoutMs / 1000} s\n--- stdout ---\n${this.out}\n--- stderr ---\n${this.err}`);
        await new Promise<void>((resolve) => (this.waiting = resolve));
      }
    } finally {
      clearTimeout(timer);
    }
    return { stdout: this.out.slice(0, this.out.indexOf(marker)), stderr: this.err };
  }

  close(): void {
    this.bash.stdin.end();
    this.bash.kill('SIGKILL');
  }
}

test('the tutorial names a reason for every block it does not run, and runs the rest', () => {
  const steps = tutorialSteps(readFileSync(TUTORIAL, 'utf8'));
  expect(steps.length).toBeGreaterThan(15);
  expect(steps.filter((s) => s.notRun).map((s) => s.notRun)).toEqual([
    "installs from the npm registry; the test puts this checkout's CLI on PATH as tidb-gitops",
    'logs are read from the kubelet, which the test cluster has none of',
    'port-forward needs a kubelet to forward to',
  ]);
});

const { describeReal, cp } = realApiSuite();

describeReal('docs/tutorial.md, run on a real API server', () => {
  let dir: string;
  let terminal: Terminal | undefined;
  let world: RealWorld | undefined;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'tidb-gitops-tutorial-'));
  });
  afterAll(async () => {
    terminal?.close();
    await world?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('every command runs as written, and the cluster comes up, scales, upgrades and goes', async () => {
    const bin = join(dir, 'bin');
    mkdirSync(bin);
    writeFileSync(
      join(bin, 'tidb-gitops'),
      `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(join(root, 'bin/tidb-gitops.js'))} "$@"\n`,
    );
    chmodSync(join(bin, 'tidb-gitops'), 0o755);
    const home = join(dir, 'home');
    mkdirSync(home);
    terminal = new Terminal(home, {
      PATH: `${bin}:${process.env.PATH}`,
      HOME: home,
      KUBECONFIG: cp().adminKubeconfig(),
      GIT_CONFIG_NOSYSTEM: '1',
      LANG: 'C.UTF-8',
    });
    const repo = join(home, 'tidb-infra');
    const kube = cp().admin();
    const rendered = (): Obj[] =>
      readdirSync(join(repo, 'dist'))
        .flatMap((f) => parseAllDocuments(readFileSync(join(repo, 'dist', f), 'utf8')).map((d) => d.toJS() as Obj))
        .filter(Boolean);
    let controllerFor = -1;
    const transcript: string[] = [];

    // What the cluster does between the user's commands: the nodes run what is applied.
    const follow = async () => {
      if (!world && (await kube.get(resourcePath('v1', 'Namespace', undefined, NAMESPACE)))) {
        const cluster = {
          ...parse(readFileSync(join(repo, 'tidb-clusters/basic.yaml'), 'utf8')),
          metadata: { name: CLUSTER, namespace: NAMESPACE },
        };
        world = await RealWorld.start({ cp: cp(), cluster, render: () => [], applyAtStart: false, createNamespace: false });
      }
      if (!world) return;
      const deployment = await kube.get(resourcePath('apps/v1', 'Deployment', NAMESPACE, `${CLUSTER}-discovery`));
      if (deployment?.metadata.generation === controllerFor) return;
      // A changed Deployment replaces its Pod (strategy Recreate), a deleted one deletes it: the
      // running controller stops first.
      for (const c of world.controllers.filter((p) => p.running)) {
        c.kill('SIGTERM');
        await c.exited;
      }
      if (!deployment) return;
      world.objects = rendered();
      await world.startController();
      controllerFor = deployment.metadata.generation;
    };

    for (const step of tutorialSteps(readFileSync(TUTORIAL, 'utf8'))) {
      // Deleting the rendered objects takes the Role before the Deployment's Pod, as in any cluster;
      // up to then, the controller was never refused.
      if (step.code.startsWith('kubectl delete -f dist/')) expect(world!.forbidden()).toEqual([]);
      if (step.notRun) {
        transcript.push(`docs/tutorial.md:${step.line}: not run (${step.notRun}):\n${step.code}`);
        continue;
      }
      const { stdout } = await terminal.run(step.code, STEP_TIMEOUT_MS).catch(async (e: Error) => {
        const sets = (await world?.statefulSets().catch(() => [])) ?? [];
        const state = sets.map(
          (s) =>
            `${s.metadata.name}: generation ${s.metadata.generation}, spec ${JSON.stringify({ replicas: s.spec.replicas, updateStrategy: s.spec.updateStrategy })}, status ${JSON.stringify(s.status)}`,
        );
        throw new Error(
          `docs/tutorial.md:${step.line}: this block failed:\n${step.code}\n\n${e.message}\n--- StatefulSets ---\n${state.join('\n')}\n--- controller ---\n${world?.controllerOutput().split('\n').slice(-30).join('\n') ?? ''}`,
        );
      });
      transcript.push(`docs/tutorial.md:${step.line}:\n$ ${step.code.replace(/\n/g, '\n$ ')}\n${stdout}`);
      await follow();
    }
    if (process.env.TIDB_GITOPS_TUTORIAL_TRANSCRIPT)
      writeFileSync(process.env.TIDB_GITOPS_TUTORIAL_TRANSCRIPT, `${transcript.join('\n')}\n`);

    // What the steps claim, checked beside them: the cluster was scaled and upgraded, then removed
    // with its claims and namespace.
    const log = transcript.join('\n');
    expect(log).toMatch(/^tidb\.basic\.k8s\.yaml$/m);
    expect(log).toContain('tikv 1 -> 3');
    // The status screen, and the reports' claims: a scale restarts nothing; an upgrade says the order,
    // what is checked between Pods, and that the lone PD and TiDB are down while they restart.
    expect(log).toMatch(/^Cluster tidb\/basic: healthy$/m);
    const scaled = transcript.find((t) => t.includes('tikv 1 -> 3'))!;
    expect(scaled).not.toContain('rolling restart');
    const report = transcript.find((t) => t.includes('v8.5.8') && t.includes('## tidb-gitops diff'))!;
    expect(report).toContain('**Order**: the controller restarts PD, then TiKV, then TiDB');
    expect(report).toContain("PD's leadership moves off a member before it restarts");
    expect(report).toContain("each store's region leaders move away before its restart");
    expect(report).toMatch(/single-replica-restart\*\*: PD has one replica/);
    expect(report).toMatch(/single-replica-restart\*\*: TiDB has one replica/);
    const upgraded = transcript.find((t) => t.includes('IMAGES:.spec.containers'))!;
    for (const pod of ['basic-pd-0', 'basic-tikv-0', 'basic-tikv-1', 'basic-tikv-2', 'basic-tidb-0'])
      expect(upgraded).toMatch(new RegExp(`^${pod}\\s+\\S*pingcap/\\w+:v8\\.5\\.8$`, 'm'));
    expect(upgraded).not.toContain('v8.5.7');
    expect(log).toMatch(/persistentvolumeclaim "pd-basic-pd-0" deleted/);
    expect(await kube.get(resourcePath('v1', 'Namespace', undefined, NAMESPACE))).toBeUndefined();
  }, 900_000);
});
