/**
 * Renders sets of input files with the CLI's render command, each set in a folder of its own under one
 * temporary directory the suite removes at the end: what `tidb-gitops render <dir>` prints and exits with.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { renderCommand } from '../../src/cli/render';
import type { Obj } from './render';

/** A function rendering the files given (by name) as one input folder; registers the suite's clean-up. */
export function renderFolders(
  name: string,
): (files: Record<string, string>) => { status: number; stderr: string; dir: string; docs: Obj[] } {
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), `tidb-gitops-${name}-`));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let seq = 0;
  return (files) => {
    const d = join(dir, `case-${++seq}`);
    mkdirSync(d);
    for (const [file, text] of Object.entries(files)) writeFileSync(join(d, file), text);
    let stdout = '';
    let stderr = '';
    const status = renderCommand(
      { paths: [d], controllerImage: 'example.com/c:1' },
      { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s), readStdin: () => '' },
    );
    return { status, stderr, dir: d, docs: parseAllDocuments(stdout).map((x) => x.toJS() as Obj) };
  };
}
