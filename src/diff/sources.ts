/**
 * The two sides of a diff as YAML texts: a path on disk (a file, or a directory searched recursively
 * for *.yaml / *.yml, as `render` reads it), `-` for stdin, or `REV:PATH`, a path in a git revision
 * read with git itself (`REV:./x` is relative to the current directory, as git has it).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { posix } from 'node:path';
import { NO_YAML_FILES, readInputFiles } from '../base/inputs';
import type { ManifestText } from './load';

export interface SideResult {
  readonly texts: ManifestText[];
  /** Problems that stop the diff (exit status 1). */
  readonly errors: string[];
  /** Things said on stderr that do not stop it. */
  readonly notes: string[];
}

export interface SourceOptions {
  /** `OLD` or `NEW`, for messages. */
  readonly role: string;
  readonly readStdin: () => string;
  /** Environment git runs with. @default the process environment */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

const YAML_FILE = /\.ya?ml$/i;

/** Reads one argument: on disk when it exists there, else as `REV:PATH` when REV is a git commit. */
export function readSide(arg: string, opts: SourceOptions): SideResult {
  if (arg === '-' || existsSync(arg)) return readPath(arg, opts);
  const colon = arg.indexOf(':');
  if (colon > 0) return readRevision(arg, arg.slice(0, colon), arg.slice(colon + 1), opts);
  return { texts: [], errors: [`${arg}: no such file or directory`], notes: [] };
}

function readPath(arg: string, opts: SourceOptions): SideResult {
  const { inputs, errors } = readInputFiles([arg], opts.readStdin);
  // Empty only when nothing failed: a tree that cannot be read is an error, never "every cluster removed".
  const onlyEmpty = errors.length === 1 && errors[0] === `${arg}: ${NO_YAML_FILES}`;
  if (inputs.length === 0 && onlyEmpty && arg !== '-' && statSync(arg, { throwIfNoEntry: false })?.isDirectory()) {
    return { texts: [], errors: [], notes: [`${arg}: no .yaml or .yml file in this directory; ${opts.role} counts as empty`] };
  }
  return { texts: inputs, errors, notes: [] };
}

class GitError extends Error {}

/** Runs git; its output as a Buffer, or GitError with what git said. */
function git(args: readonly string[], opts: SourceOptions, cwd?: string, input?: string): Buffer {
  try {
    return execFileSync('git', args, {
      cwd,
      env: (opts.env ?? process.env) as NodeJS.ProcessEnv,
      input,
      stdio: ['pipe', 'pipe', 'pipe'],
      maxBuffer: 1 << 30,
    });
  } catch (e) {
    const err = e as { status?: number | null; stderr?: Buffer; code?: string };
    if (err.code === 'ENOENT') throw new GitError('git is not installed (or not on PATH)');
    const said = err.stderr?.toString('utf8').trim().split('\n')[0];
    throw Object.assign(new GitError(`git ${args.join(' ')} failed${said ? `: ${said}` : ''}`), { status: err.status });
  }
}

function readRevision(arg: string, rev: string, path: string, opts: SourceOptions): SideResult {
  const fail = (message: string): SideResult => ({ texts: [], errors: [`${arg}: ${message}`], notes: [] });
  try {
    let commit: string;
    try {
      commit = git(['rev-parse', '--verify', '--quiet', `${rev}^{commit}`], opts)
        .toString('utf8')
        .trim();
    } catch (e) {
      if (!(e instanceof GitError)) throw e;
      if ((e as { status?: number }).status === 1)
        return fail(`no such file or directory, and ${JSON.stringify(rev)} is not a git revision`);
      return fail(`no such file or directory, and git cannot read it as REV:PATH (${e.message})`);
    }
    const [top, prefix = ''] = git(['rev-parse', '--show-toplevel', '--show-prefix'], opts).toString('utf8').split('\n');
    const full = repoPath(path, prefix);
    if (full === undefined) return fail('the path is outside the git repository');
    const spec = `${commit}:${full}`;
    let type: string;
    try {
      type = git(['cat-file', '-t', spec], opts, top).toString('utf8').trim();
    } catch {
      const note = `${arg}: ${full || '.'} does not exist in ${rev}; ${opts.role} counts as empty, so everything on the other side is ${opts.role === 'OLD' ? 'added' : 'removed'}`;
      return { texts: [], errors: [], notes: [note] };
    }
    const label = (file: string) => `${rev}:${file}`;
    if (type === 'blob')
      return {
        texts: readBlobs(commit, [full], opts, top).map((text) => ({ file: label(full), text, explicit: true })),
        errors: [],
        notes: [],
      };
    if (type !== 'tree') return fail(`is a git ${type}, not a file or directory`);
    const files = git(['ls-tree', '-r', '-z', '--name-only', spec], opts, top)
      .toString('utf8')
      .split('\0')
      // As on disk: hidden directories (.github workflows...) hold no inputs.
      .filter(
        (f) =>
          f !== '' &&
          YAML_FILE.test(f) &&
          !f
            .split('/')
            .slice(0, -1)
            .some((d) => d.startsWith('.')),
      )
      .map((f) => (full ? `${full}/${f}` : f));
    if (files.length === 0) {
      return { texts: [], errors: [], notes: [`${arg}: no .yaml or .yml file in this directory of ${rev}; ${opts.role} counts as empty`] };
    }
    const texts = readBlobs(commit, files, opts, top);
    return { texts: files.map((f, i) => ({ file: label(f), text: texts[i], explicit: false })), errors: [], notes: [] };
  } catch (e) {
    if (e instanceof GitError) return fail(e.message);
    throw e;
  }
}

/**
 * The path from the repository root: git reads `REV:path` from the root and `REV:./path` from the
 * current directory. Undefined when it leaves the repository.
 */
export function repoPath(path: string, prefix: string): string | undefined {
  const relative = path === '.' || path === '..' || path.startsWith('./') || path.startsWith('../');
  const joined = posix.normalize(relative ? `${prefix}${path}` : path || '.');
  if (joined === '..' || joined.startsWith('../') || joined.startsWith('/')) return undefined;
  const clean = joined.replace(/\/+$/, '');
  return clean === '.' ? '' : clean;
}

/** The contents of files in one commit, in one `git cat-file --batch` call. */
function readBlobs(commit: string, files: readonly string[], opts: SourceOptions, cwd: string): string[] {
  if (files.some((f) => f.includes('\n'))) throw new GitError('a file name holds a line break, which git cat-file --batch cannot read');
  const out = git(['cat-file', '--batch'], opts, cwd, files.map((f) => `${commit}:${f}\n`).join(''));
  const texts: string[] = [];
  let at = 0;
  for (const f of files) {
    const end = out.indexOf(0x0a, at);
    const header = out.subarray(at, end).toString('utf8');
    const m = /^[0-9a-f]+ blob (\d+)$/.exec(header);
    if (!m) throw new GitError(`git cat-file could not read ${f}: ${header}`);
    const size = Number(m[1]);
    texts.push(out.subarray(end + 1, end + 1 + size).toString('utf8'));
    at = end + 1 + size + 1;
  }
  return texts;
}
