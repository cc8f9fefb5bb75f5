/** The CLI run in process, and the temporary input files its tests write. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../src/cli/main';

/** `tidb-gitops ARGS` in process: its exit code and what it printed. */
export function runMain(args: string[]): { code: number; stdout: string; stderr: string } {
  let stdout = '';
  let stderr = '';
  const code = main(args, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s), readStdin: () => '', env: {} });
  return { code, stdout, stderr };
}

/**
 * A temporary directory for one test file, made before its tests and removed after them (call at the
 * top level of the file). `file(name, content)` writes a file there, making its folders, and returns its path.
 */
export function tempFiles(prefix: string): { file(name: string, content: string): string; dir(): string } {
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), prefix));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return {
    dir: () => dir,
    file(name: string, content: string): string {
      const path = join(dir, name);
      mkdirSync(join(path, '..'), { recursive: true });
      writeFileSync(path, content);
      return path;
    },
  };
}
