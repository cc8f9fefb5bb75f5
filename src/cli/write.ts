/**
 * Writing rendered files all-or-nothing: every file is staged under a temporary name first; then each
 * is swapped in, the previous file kept aside until all swaps succeeded, so a failure restores them.
 */
import { existsSync, mkdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeFsError } from './inputs';

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

/** Throws an Error naming the directory or file when anything cannot be written; then nothing was changed. */
export function writeFilesAtomically(dir: string, files: readonly OutputFile[]): void {
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
      writeFileSync(slots[i].tmp, f.content, { flag: 'wx' });
      staged.push(slots[i]);
    });
    for (const s of slots) {
      s.hadOld = existsSync(s.final);
      if (s.hadOld) renameSync(s.final, s.backup);
      renameSync(s.tmp, s.final);
      s.swapped = true;
    }
  } catch (e) {
    rollBack(slots, staged);
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
