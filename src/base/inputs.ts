/** Input paths -> YAML texts: files, directories (recursively, *.yaml / *.yml, sorted) and `-` for stdin. */
import { closeSync, openSync, readdirSync, readSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';

export interface InputText {
  /** The path as it will appear in messages. */
  readonly file: string;
  readonly text: string;
  /** The user named this file (not found while walking a directory). */
  readonly explicit: boolean;
}

/** The texts of the input paths, and the problems met finding and reading them. */
export interface InputFiles {
  readonly inputs: InputText[];
  readonly errors: string[];
}

const YAML_FILE = /\.ya?ml$/i;
/** What a directory without inputs says (diff counts such a side as empty). */
export const NO_YAML_FILES = 'no .yaml or .yml file in this directory';

/** The largest input file read: 8 MiB. A TidbCluster is a few kilobytes; a bigger file is a mistake or an attack. */
export const MAX_INPUT_BYTES = 8 * 1024 * 1024;

/** Reads every input path: a file, a directory's YAML files, `-` for standard input. Never throws. */
export function readInputFiles(paths: readonly string[], readStdin: () => string): InputFiles {
  const inputs: InputText[] = [];
  const errors: string[] = [];
  for (const p of paths) {
    if (p === '-') {
      try {
        inputs.push({ file: '<stdin>', text: readStdin(), explicit: true });
      } catch (e) {
        errors.push(`<stdin>: ${describeFsError(e)}`);
      }
      continue;
    }
    try {
      if (statSync(p).isDirectory()) {
        const before = errors.length;
        const files = yamlFilesUnder(p, errors);
        if (files.length === 0 && errors.length === before) errors.push(`${p}: ${NO_YAML_FILES}`);
        for (const f of files) {
          try {
            inputs.push({ file: f, text: readInputFile(f), explicit: false });
          } catch (e) {
            errors.push(`${f}: ${describeFsError(e)}`);
          }
        }
      } else {
        inputs.push({ file: p, text: readInputFile(p), explicit: true });
      }
    } catch (e) {
      errors.push(`${p}: ${describeFsError(e)}`);
    }
  }
  return { inputs, errors };
}

/**
 * A regular file's text, at most {@link MAX_INPUT_BYTES}. Anything else (a FIFO would block, a device
 * such as /dev/zero never ends, both also behind a symlink) is refused before it is opened.
 */
export function readInputFile(path: string): string {
  const st = statSync(path);
  if (!st.isFile()) throw Object.assign(new Error(`is ${kindOfEntry(st)}, not a regular file; only files are read`), { code: 'ENOTREG' });
  if (st.size > MAX_INPUT_BYTES) throw tooBig(st.size);
  const fd = openSync(path, 'r');
  try {
    // One byte over the limit tells a file that grew (or reports no size, as /proc does) from one that fits.
    const buffer = Buffer.alloc(Math.min(MAX_INPUT_BYTES + 1, Math.max(st.size + 1, 64 * 1024)));
    let length = 0;
    for (;;) {
      if (length === buffer.length) {
        if (length > MAX_INPUT_BYTES) throw tooBig(length);
        break;
      }
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
      if (length > MAX_INPUT_BYTES) throw tooBig(length);
    }
    return decodeUtf8(buffer.subarray(0, length));
  } finally {
    closeSync(fd);
  }
}

/**
 * Standard input's text, at most {@link MAX_INPUT_BYTES}, like a file: `render - < /dev/zero` ends at
 * the limit instead of growing without end. A non-blocking descriptor that has nothing yet is waited on.
 */
export function readStdinText(fd = 0): string {
  const chunks: Buffer[] = [];
  let length = 0;
  const chunk = Buffer.alloc(64 * 1024);
  for (;;) {
    let n: number;
    try {
      n = readSync(fd, chunk, 0, chunk.length, null);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
      continue;
    }
    if (n === 0) break;
    chunks.push(Buffer.from(chunk.subarray(0, n)));
    length += n;
    // Reading stops here, so the whole size is not known: "over 8 MiB".
    if (length > MAX_INPUT_BYTES) throw tooBig(MAX_INPUT_BYTES + 1);
  }
  return decodeUtf8(Buffer.concat(chunks, length));
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The text of UTF-8 bytes; anything else is an error naming the line, instead of the silent U+FFFD a
 * lenient decoder puts there (kubectl refuses such a file too). A leading byte-order mark is dropped.
 */
export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return STRICT_UTF8.decode(bytes);
  } catch {
    const at = firstInvalidUtf8(bytes);
    let line = 1;
    for (let i = 0; i < at; i++) if (bytes[i] === 0x0a) line++;
    const hex = bytes[at].toString(16).padStart(2, '0');
    throw Object.assign(new Error(`line ${line}: not valid UTF-8 (byte 0x${hex}); save the file as UTF-8`), { code: 'EBADUTF8' });
  }
}

/** Offset of the first byte that does not start or continue a valid UTF-8 sequence. */
function firstInvalidUtf8(b: Uint8Array): number {
  let i = 0;
  while (i < b.length) {
    const c = b[i];
    const n = c < 0x80 ? 0 : c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xf0 && c <= 0xf4 ? 3 : -1;
    if (n < 0) return i;
    for (let k = 1; k <= n; k++) if (i + k >= b.length || (b[i + k] & 0xc0) !== 0x80) return i;
    // Overlong forms, surrogates and code points past U+10FFFF.
    if (
      (c === 0xe0 && b[i + 1] < 0xa0) ||
      (c === 0xed && b[i + 1] > 0x9f) ||
      (c === 0xf0 && b[i + 1] < 0x90) ||
      (c === 0xf4 && b[i + 1] > 0x8f)
    )
      return i;
    i += n + 1;
  }
  return b.length - 1;
}

function tooBig(size: number): Error {
  const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;
  return Object.assign(
    new Error(`is ${size > MAX_INPUT_BYTES + 1 ? mib(size) : 'over 8 MiB'}; input files are limited to ${mib(MAX_INPUT_BYTES)}`),
    { code: 'ETOOBIG' },
  );
}

function kindOfEntry(st: import('node:fs').Stats): string {
  if (st.isFIFO()) return 'a named pipe (FIFO)';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  if (st.isSocket()) return 'a socket';
  return 'not a file';
}

/**
 * The YAML files under `dir`, recursively, sorted, hidden directories and `node_modules` skipped: what
 * `render DIR` reads (a directory named on the command line is read whatever its name).
 * A subdirectory that cannot be read is named in `errors` (when given), not skipped in silence.
 * Symlinks are followed, to directories too (a skipped directory would have its clusters pruned); a
 * link back to a directory being read is a loop and an error, and a directory reached a second time
 * through another link is read once.
 */
export function yamlFilesUnder(dir: string, errors?: string[]): string[] {
  const out: string[] = [];
  walkYaml(dir, errors, [realOrSelf(dir)], new Set([realOrSelf(dir)]), out);
  return out;
}

function walkYaml(dir: string, errors: string[] | undefined, ancestors: string[], seen: Set<string>, out: string[]): void {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (e) {
    if (!errors) throw e;
    errors.push(`${dir}: ${describeFsError(e)}`);
    return;
  }
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const full = join(dir, entry.name);
    let isDir = entry.isDirectory();
    if (entry.isSymbolicLink()) {
      try {
        isDir = statSync(full).isDirectory();
      } catch {
        isDir = false; // a dangling link: read (and refused there) if named *.yaml, like a file
      }
    }
    // Hidden directories (.git, .github workflows...) and installed packages hold no inputs.
    if (isDir && (entry.name.startsWith('.') || entry.name === 'node_modules')) continue;
    if (isDir) {
      const real = realOrSelf(full);
      if (ancestors.includes(real)) {
        const message = `a symlink to ${real}, which holds it: following it would never end`;
        if (!errors) throw Object.assign(new Error(message), { code: 'ELOOP' });
        errors.push(`${full}: ${message}`);
        continue;
      }
      if (seen.has(real)) continue;
      seen.add(real);
      walkYaml(full, errors, [...ancestors, real], seen, out);
    }
    // Symlinks and other entries named *.yaml are read (and refused there when they are no file).
    else if (YAML_FILE.test(entry.name)) out.push(full);
  }
}

function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

export function describeFsError(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  switch (err.code) {
    case 'ENOENT':
      return 'no such file or directory';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'is a directory';
    case 'ENOTDIR':
      return 'a part of the path is not a directory';
    case 'EEXIST':
      return 'exists and is not a directory';
    case 'ENOTREG':
    case 'ETOOBIG':
    case 'EBADUTF8':
      return err.message;
    case 'ENOSPC':
      return 'no space left on the device';
    case 'EDQUOT':
      return 'disk quota exceeded';
    case 'EROFS':
      return 'read-only file system';
    case 'ELOOP':
      return 'a symlink loop';
    default:
      return err.message;
  }
}
