/**
 * `render -o DIR` is all-or-nothing, also when it is interrupted or the disk fills up: afterwards DIR
 * holds exactly the files it held before, or exactly the new render, and nothing else. The built CLI
 * runs as a child process (`npm test` builds first).
 */
import { execFileSync, spawn, spawnSync } from 'child_process';
import { cpSync, watch, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join, resolve } from 'path';
import fc from 'fast-check';
import { writeFilesAtomically } from '../../../src/cli/write';
import { TEST_DIR } from '../../support/paths';

const ROOT = resolve(TEST_DIR, '..');
const BIN = join(ROOT, 'bin', 'tidb-gitops.js');

let TMP: string;
beforeAll(() => {
  TMP = mkdtempSync(join(tmpdir(), 'tidb-gitops-atomic-'));
});
afterAll(() => rmSync(TMP, { recursive: true, force: true }));

/** `n` clusters in one file, named c0, c1, ... */
function clusters(n: number): string {
  return Array.from(
    { length: n },
    (_, i) =>
      `---\napiVersion: pingcap.com/v1alpha1\nkind: TidbCluster\nmetadata:\n  name: c${i}\nspec:\n  pd: {replicas: 1}\n  tikv: {replicas: 3}\n  tidb: {replicas: 1}\n`,
  ).join('');
}

/** Every entry of `dir` (hidden ones too) with its content. */
function snapshot(dir: string): Record<string, string> {
  if (!existsSync(dir)) return {};
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir).sort()) out[name] = readFileSync(join(dir, name), 'utf8');
  return out;
}

function render(args: string[]): { status: number | null; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, 'render', ...args], { encoding: 'utf8' });
  return { status: r.status, stderr: r.stderr };
}

describe('render -o under signals', () => {
  const CLUSTERS = 150;
  let input: string;
  let before: Record<string, string>;
  let after: Record<string, string>;
  let oldDir: string;

  beforeAll(() => {
    input = join(TMP, 'clusters.yaml');
    writeFileSync(input, clusters(CLUSTERS));
    // The directory before: the same clusters rendered with another controller image, so every file changes.
    oldDir = join(TMP, 'old');
    expect(render([input, '-o', oldDir, '--controller-image', 'example.com/old:1']).status).toBe(0);
    before = snapshot(oldDir);
    const newDir = join(TMP, 'new');
    expect(render([input, '-o', newDir]).status).toBe(0);
    after = snapshot(newDir);
    expect(Object.keys(before)).toHaveLength(CLUSTERS);
    expect(Object.keys(after)).toEqual(Object.keys(before));
  });

  /**
   * Runs render -o over a copy of the old directory and sends `signal`: `delay` ms after the start, or,
   * with `inWrite`, `delay` ms after the first staged file appears (the writes take a few ms only, so
   * a signal timed from the start would almost never land among them). Returns what is left.
   */
  async function interrupted(
    signal: NodeJS.Signals,
    delay: number,
    inWrite: boolean,
    run: number,
  ): Promise<{ code: number | null; killedBy: string | null; dir: Record<string, string> }> {
    const out = join(TMP, `run-${run}`);
    cpSync(oldDir, out, { recursive: true });
    const child = spawn(process.execPath, [BIN, 'render', input, '-o', out], { stdio: 'ignore' });
    let timer: NodeJS.Timeout | undefined;
    const watcher = inWrite
      ? watch(out, (_event, name) => {
          if (timer === undefined && String(name).endsWith('.tmp')) timer = setTimeout(() => child.kill(signal), delay);
        })
      : undefined;
    if (!inWrite) timer = setTimeout(() => child.kill(signal), delay);
    const [code, killedBy] = await new Promise<[number | null, string | null]>((done) => child.on('exit', (c, s) => done([c, s])));
    clearTimeout(timer);
    watcher?.close();
    const dir = snapshot(out);
    rmSync(out, { recursive: true, force: true });
    return { code, killedBy, dir };
  }

  const signals = fc.constantFrom<NodeJS.Signals>('SIGINT', 'SIGTERM');

  test('SIGINT or SIGTERM at any moment leaves the directory all old or all new, with nothing else', async () => {
    // How long an undisturbed run takes, so that signals land before, during and after the writes.
    const start = Date.now();
    expect(render([input, '-o', join(TMP, 'timed')]).status).toBe(0);
    const total = Date.now() - start;
    // From the start (before, during or after the render), and from the first staged file (in the writes).
    const plans = [
      ...fc.sample(
        fc.tuple(
          signals,
          fc.double({ min: 0.2, max: 1.1, noNaN: true }).map((f) => Math.round(total * f)),
          fc.constant(false),
        ),
        { seed: 4242, numRuns: 6 },
      ),
      ...fc.sample(fc.tuple(signals, fc.integer({ min: 0, max: 40 }), fc.constant(true)), { seed: 4243, numRuns: 14 }),
    ];
    const outcomes: string[] = [];
    for (const [i, [signal, delay, inWrite]] of plans.entries()) {
      const r = await interrupted(signal, delay, inWrite, i);
      const state = isEqual(r.dir, before) ? 'old' : isEqual(r.dir, after) ? 'new' : 'mixed';
      if (state === 'mixed') {
        const names = Object.keys(r.dir);
        const stray = names.filter((n) => !(n in after));
        const changed = names.filter((n) => n in after && r.dir[n] === after[n]).length;
        throw new Error(
          `run ${i} (${signal} ${delay} ms after ${inWrite ? 'the first staged file' : 'the start'}): ${names.length} entries, ${changed} new, stray: ${stray.slice(0, 3).join(', ')}`,
        );
      }
      // Killed by the signal, or done before it came (exit 0): never an exit in between.
      expect(r.killedBy === signal || r.code === 0).toBe(true);
      outcomes.push(state);
    }
    // The sample reaches both ends (the seed is fixed, so this does not flake on a slow machine).
    expect(outcomes).toContain('old');
  }, 120_000);
});

describe('render -o when the disk fills up', () => {
  /** A 256 KiB tmpfs, when this machine lets the test mount one (root in a container usually may). */
  function smallDisk(): string | undefined {
    const dir = join(TMP, 'tmpfs');
    mkdirSync(dir, { recursive: true });
    const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', dir], { stdio: 'ignore' });
    return r.status === 0 ? dir : undefined;
  }

  test('on a real full disk (tmpfs) nothing changes and no partial file is left', () => {
    const disk = smallDisk();
    if (!disk) {
      console.warn('cannot mount a tmpfs here; the injected write error test below covers the same path');
      return;
    }
    try {
      const input = join(TMP, 'disk.yaml');
      // Four old files fit; then the disk is filled until one and a half files' room is left, so
      // staging the new files runs out of space in the middle of one.
      writeFileSync(input, clusters(4));
      const out = join(disk, 'out');
      expect(render([input, '-o', out, '--controller-image', 'example.com/old:1']).status).toBe(0);
      const used = dirBytes(out);
      const free = 256 * 1024 - used - 4 * 4096;
      writeFileSync(join(disk, 'filler'), Buffer.alloc(Math.max(0, free - Math.round((used / 4) * 1.5))));
      const was = snapshot(out);
      const r = render([input, '-o', out]);
      expect(r.status).toBe(1);
      expect(r.stderr).toContain(`${out}: cannot write the output: no space left on the device\nnothing was written\n`);
      expect(snapshot(out)).toEqual(was);
    } finally {
      execFileSync('umount', [disk]);
    }
  });

  test('an injected write error halfway (ENOSPC after part of a file) leaves the directory as it was', () => {
    const dir = join(TMP, 'inject');
    mkdirSync(dir);
    writeFileSync(join(dir, 'a.k8s.yaml'), 'old a\n');
    writeFileSync(join(dir, 'keep.txt'), 'not ours\n');
    const was = snapshot(dir);
    let calls = 0;
    const fullDisk = (path: string, content: string, options: { flag: string }) => {
      calls++;
      if (calls === 2) {
        // What a full disk does: part of the bytes land, then the write fails.
        writeFileSync(path, content.slice(0, 3), options);
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      }
      writeFileSync(path, content, options);
    };
    expect(() =>
      writeFilesAtomically(
        dir,
        [
          { name: 'a.k8s.yaml', content: 'new a\n' },
          { name: 'b.k8s.yaml', content: 'new b\n' },
        ],
        [],
        fullDisk,
      ),
    ).toThrow(`${dir}: cannot write the output: no space left on the device`);
    expect(calls).toBe(2);
    expect(snapshot(dir)).toEqual(was);
  });

  test('a directory the failed write created is removed again', () => {
    const dir = join(TMP, 'fresh', 'out');
    expect(() =>
      writeFilesAtomically(dir, [
        { name: 'a.k8s.yaml', content: 'a' },
        { name: 'a.k8s.yaml', content: 'twice' },
      ]),
    ).toThrow(/cannot write the output/);
    expect(existsSync(dir)).toBe(false);
  });
});

function dirBytes(dir: string): number {
  return readdirSync(dir).reduce((n, f) => n + statSync(join(dir, f)).size, 0);
}

function isEqual(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => b[k] === a[k]);
}
