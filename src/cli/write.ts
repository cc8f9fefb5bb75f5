/**
 * Writing rendered files all-or-nothing: every file is staged under a temporary name first; then each
 * is swapped in, the previous file kept aside until all swaps succeeded, so a failure restores them.
 * SIGINT, SIGTERM and SIGHUP wait until the directory is whole again (all new, or as it was), then
 * end the process as they would have. Only SIGKILL or a crash of the machine can leave staged
 * `.<name>.<pid>.tmp` / `.old` files behind; the next write ignores them.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeFsError } from '../base/inputs';

export interface OutputFile {
  readonly name: string;
  readonly content: string;
}

interface Slot {
  readonly final: string;
  readonly tmp: string;
  readonly backup: string;
  hadOld: boolean;
  swapped: boolean;
}

/**
 * A file name rendered output uses: `<cluster>.k8s.yaml` or `<namespace>.<cluster>.k8s.yaml`, and
 * `_passthrough.k8s.yaml` for the objects kept beside the clusters.
 */
export const RENDERED_FILE = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?|_passthrough)\.k8s\.yaml$/;

/** Rendered files in `dir` that are not among `keep` (a cluster no longer in the inputs). */
export function leftoverFiles(dir: string, keep: readonly string[]): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isFile() && RENDERED_FILE.test(e.name) && !keep.includes(e.name))
    .map((e) => e.name)
    .sort();
}

/** How the files in `dir` differ from what would be written. */
export function staleFiles(
  dir: string,
  files: readonly OutputFile[],
  remove: readonly string[] = [],
): { changed: string[]; missing: string[]; extra: string[] } {
  const changed: string[] = [];
  const missing: string[] = [];
  for (const f of files) {
    const path = join(dir, f.name);
    if (!existsSync(path)) missing.push(f.name);
    else if (readFileSync(path, 'utf8') !== f.content) changed.push(f.name);
  }
  return { changed, missing, extra: [...remove] };
}

/** Writes one file (`fs.writeFileSync`'s shape). */
export type WriteFile = (path: string, content: string, options: { flag: string }) => void;

/**
 * Writes `files` into `dir` and deletes the files named in `remove`, all or nothing. Throws an Error
 * naming the directory or file when anything cannot be written; then nothing was changed.
 */
export function writeFilesAtomically(
  dir: string,
  files: readonly OutputFile[],
  remove: readonly string[] = [],
  /** How one staged file is written (tests pass one that fails like a full disk). @default fs.writeFileSync */
  writeFile: WriteFile = writeFileSync,
): void {
  withSignalsDeferred(() => write(dir, files, remove, writeFile));
}

const DEFERRED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * Runs `fn` (synchronous) with the terminating signals held back: Node runs a signal's listener only
 * once the synchronous work is done, so with one registered no signal can stop `fn` halfway. The
 * listener then ends the process with the same signal, as if it had come a moment later.
 */
function withSignalsDeferred(fn: () => void): void {
  const onSignal = (signal: NodeJS.Signals) => {
    release();
    process.kill(process.pid, signal);
  };
  const release = () => {
    for (const s of DEFERRED_SIGNALS) process.removeListener(s, onSignal);
  };
  for (const s of DEFERRED_SIGNALS) process.on(s, onSignal);
  try {
    fn();
  } finally {
    // A signal that came during `fn` is delivered before this runs, and ends the process there.
    setImmediate(release);
  }
}

function write(dir: string, files: readonly OutputFile[], remove: readonly string[], writeFile: WriteFile): void {
  const created = !existsSync(dir);
  try {
    mkdirSync(dir, { recursive: true });
  } catch (e) {
    throw new Error(`${dir}: cannot create the output directory: ${describeFsError(e)}`);
  }
  const slots: Slot[] = files.map((f) => ({
    final: join(dir, f.name),
    tmp: join(dir, `.${f.name}.${process.pid}.tmp`),
    backup: join(dir, `.${f.name}.${process.pid}.old`),
    hadOld: false,
    swapped: false,
  }));
  for (const s of slots) {
    if (existsSync(s.final) && statSync(s.final).isDirectory()) throw new Error(`${s.final}: cannot write the output: is a directory`);
  }
  const staged: Slot[] = [];
  try {
    files.forEach((f, i) => {
      // Staged before the write: a full disk leaves part of the file, which the roll-back removes.
      staged.push(slots[i]);
      writeFile(slots[i].tmp, f.content, { flag: 'wx' });
    });
    for (const s of slots) {
      s.hadOld = existsSync(s.final);
      if (s.hadOld) renameSync(s.final, s.backup);
      renameSync(s.tmp, s.final);
      s.swapped = true;
    }
    for (const name of remove) {
      const r: Slot = { final: join(dir, name), tmp: '', backup: join(dir, `.${name}.${process.pid}.old`), hadOld: true, swapped: false };
      slots.push(r);
      renameSync(r.final, r.backup);
    }
  } catch (e) {
    rollBack(slots, staged);
    if (created) rmSync(dir, { recursive: true, force: true });
    throw new Error(`${dir}: cannot write the output: ${describeFsError(e)}`);
  }
  for (const s of slots) if (s.hadOld) rmSync(s.backup, { force: true });
}

function rollBack(slots: readonly Slot[], staged: readonly Slot[]): void {
  for (const s of [...slots].reverse()) {
    try {
      if (s.swapped) rmSync(s.final, { force: true });
      if (s.hadOld) renameSync(s.backup, s.final);
    } catch {
      // Best effort: the error that started the roll-back is the one to report.
    }
  }
  for (const s of staged) rmSync(s.tmp, { force: true });
}
