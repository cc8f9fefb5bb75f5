/** Writing rendered files all-or-nothing: every file goes to a temporary name first, then all are renamed. */
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeFsError } from './inputs';

export interface OutputFile {
  readonly name: string;
  readonly content: string;
}

/** Throws an Error naming the directory or file when anything cannot be written; then nothing was changed. */
export function writeFilesAtomically(dir: string, files: readonly OutputFile[]): void {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (e) {
    throw new Error(`${dir}: cannot create the output directory: ${describeFsError(e)}`);
  }
  const staged: { tmp: string; final: string }[] = [];
  try {
    for (const f of files) {
      const final = join(dir, f.name);
      const tmp = join(dir, `.${f.name}.${process.pid}.tmp`);
      writeFileSync(tmp, f.content, { flag: 'wx' });
      staged.push({ tmp, final });
    }
  } catch (e) {
    for (const s of staged) rmSync(s.tmp, { force: true });
    throw new Error(`${dir}: cannot write the output: ${describeFsError(e)}`);
  }
  for (const s of staged) renameSync(s.tmp, s.final);
}
