/** `tidb-gitops init [NAME] [--dir DIR]`: writes a starting repository, never over an existing file. */
import { lstatSync, mkdirSync, readdirSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describeFsError } from '../base/inputs';
import { documentIssues } from '../tidbcluster/check';
import type { Io } from './render';
import { initFiles, INPUTS_DIR, OUTPUT_DIR, type InitFile } from './init-files';

export const INIT_USAGE = `Usage: tidb-gitops init [NAME] [--dir DIR]

Write a starting repository into the current directory (or DIR):
  ${INPUTS_DIR}/NAME.yaml              a small TidbCluster named NAME (default basic)
  ${INPUTS_DIR}/settings.yaml          render settings (Kubernetes version, namespace)
  .github/workflows/tidb-gitops.yaml  a pull-request check: impact report, stale ${OUTPUT_DIR}/
  argocd/application.yaml             an Argo CD Application using the plugin
  README.md                           next steps (only when there is none)
No file is overwritten: if any of them exists, nothing is written.

Options:
      --dir DIR        Write into DIR (created if missing) instead of here.
  -h, --help           Show this help.

Exit status: 0 written, 1 a file exists already or cannot be written
(nothing written), 2 usage error (an invalid NAME).
`;

/** The cluster's name when none is given. */
export const DEFAULT_INIT_NAME = 'basic';

interface InitArgs {
  readonly name: string;
  readonly dir: string;
  readonly help?: boolean;
}

/** Returns the exit code. The list of what was written goes to stdout, problems to stderr. */
export function initMain(args: readonly string[], io: Io): number {
  const parsed = parseInitArgs(args);
  if (typeof parsed === 'string') {
    io.stderr(`tidb-gitops init: ${parsed}\nRun 'tidb-gitops init --help' for usage.\n`);
    return 2;
  }
  if (parsed.help) {
    io.stdout(INIT_USAGE);
    return 0;
  }
  const files = initFiles(parsed.name);
  const taken = files.filter((f) => !f.optional && exists(join(parsed.dir, f.path)));
  if (taken.length > 0) {
    const list = taken.map((f) => `  ${shown(parsed.dir, f.path)}`).join('\n');
    io.stderr(
      `tidb-gitops init: ${taken.length === 1 ? 'this file exists' : 'these files exist'} already, and init never overwrites a file:\n${list}\n` +
        `nothing was written; run init in an empty directory (--dir DIR), or move ${taken.length === 1 ? 'it' : 'them'} away\n`,
    );
    return 1;
  }
  const wanted = files.filter((f) => !f.optional || !exists(join(parsed.dir, f.path)));
  try {
    writeAllOrNothing(parsed.dir, wanted);
  } catch (e) {
    io.stderr(`tidb-gitops init: ${(e as Error).message}\nnothing was written\n`);
    return 1;
  }
  const width = Math.max(...wanted.map((f) => shown(parsed.dir, f.path).length));
  for (const f of wanted) io.stdout(`wrote ${shown(parsed.dir, f.path).padEnd(width)}  ${f.about}\n`);
  const cd = relative(process.cwd(), parsed.dir);
  io.stdout(
    `\nNext, render the cluster into ${OUTPUT_DIR}/ and commit both:\n  ${cd === '' ? '' : `cd ${cd} && `}tidb-gitops render ${INPUTS_DIR} -o ${OUTPUT_DIR}\n`,
  );
  return 0;
}

/** Returns the parsed arguments, or a usage error. */
export function parseInitArgs(args: readonly string[]): InitArgs | string {
  let name: string | undefined;
  let dir: string | undefined;
  let help = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '-h' || arg === '--help') help = true;
    else if (arg === '--dir' || arg.startsWith('--dir=')) {
      const v = arg === '--dir' ? args[++i] : arg.slice('--dir='.length);
      if (!v || (arg === '--dir' && v.startsWith('-'))) return '--dir needs a directory';
      dir = v;
    } else if (arg.startsWith('-')) return `unknown option ${JSON.stringify(arg)}`;
    else if (name !== undefined) return `one NAME only, got ${JSON.stringify(name)} and ${JSON.stringify(arg)}`;
    else name = arg;
  }
  if (help) return { name: name ?? DEFAULT_INIT_NAME, dir: dir ?? '.', help };
  const problem = nameProblem(name ?? DEFAULT_INIT_NAME);
  if (problem) return `NAME: ${problem}`;
  return { name: name ?? DEFAULT_INIT_NAME, dir: dir ?? '.' };
}

/** Why `name` cannot name the TidbCluster, as `render` would say it of metadata.name; or undefined. */
function nameProblem(name: string): string | undefined {
  // The rule is the TidbCluster's own: checked on the document init would write.
  const doc = { apiVersion: 'pingcap.com/v1alpha1', kind: 'TidbCluster', metadata: { name }, spec: { pd: {}, tikv: {}, tidb: {} } };
  return documentIssues(doc).find((i) => i.path === 'metadata.name')?.message;
}

/** Whether anything (a file, a directory, a dangling link) is at `path`. */
function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** A path as the user names it: relative to where the command ran. */
function shown(dir: string, path: string): string {
  return relative(process.cwd(), join(dir, path)) || path;
}

/**
 * Writes every file, none of which exists, or none: a file that appears meanwhile is not overwritten
 * (`wx`), and on any failure the files and directories made so far are removed again.
 */
function writeAllOrNothing(dir: string, files: readonly InitFile[]): void {
  const madeDirs: string[] = [];
  const written: string[] = [];
  try {
    for (const f of files) {
      const path = join(dir, f.path);
      const made = mkdirSync(dirname(path), { recursive: true });
      if (made !== undefined) madeDirs.push(made);
      writeFileSync(path, f.content, { flag: 'wx' });
      written.push(path);
    }
  } catch (e) {
    for (const path of written.reverse()) rmSync(path, { force: true });
    // Each entry is the top of what one mkdir made; the deepest first, so each is empty when removed.
    for (const made of madeDirs.reverse()) removeEmptyTree(made);
    const err = e as NodeJS.ErrnoException;
    const why =
      err.code === 'EEXIST' && written.length < files.length && err.path === join(dir, files[written.length].path)
        ? 'appeared while init was writing, and init never overwrites a file'
        : describeFsError(e);
    throw new Error(`${err.path ?? dir}: cannot write: ${why}`);
  }
}

/** Removes a directory tree init made, holding nothing but directories; leaves it if anything else is there. */
function removeEmptyTree(path: string): void {
  try {
    rmdirSync(path);
  } catch {
    try {
      // A parent made by the same mkdir holds the children made with it.
      for (const child of readdirSync(path)) removeEmptyTree(join(path, child));
      rmdirSync(path);
    } catch {
      // Not empty (something else is there): keep it.
    }
  }
}
