/** Input paths -> YAML texts: files, directories (recursively, *.yaml / *.yml, sorted) and `-` for stdin. */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

export interface InputText {
  /** The path as it will appear in messages. */
  readonly file: string;
  readonly text: string;
  /** The user named this file (not found while walking a directory). */
  readonly explicit: boolean;
}

export interface InputResult {
  readonly inputs: InputText[];
  readonly errors: string[];
}

const YAML_FILE = /\.ya?ml$/i;

export function readInputs(paths: readonly string[], readStdin: () => string): InputResult {
  const inputs: InputText[] = [];
  const errors: string[] = [];
  for (const p of paths) {
    if (p === '-') {
      inputs.push({ file: '<stdin>', text: readStdin(), explicit: true });
      continue;
    }
    try {
      if (statSync(p).isDirectory()) {
        const files = yamlFilesUnder(p);
        if (files.length === 0) errors.push(`${p}: no .yaml or .yml file in this directory`);
        for (const f of files) inputs.push({ file: f, text: readFileSync(f, 'utf8'), explicit: false });
      } else {
        inputs.push({ file: p, text: readFileSync(p, 'utf8'), explicit: true });
      }
    } catch (e) {
      errors.push(`${p}: ${describeFsError(e)}`);
    }
  }
  return { inputs, errors };
}

/** The YAML files under `dir`, recursively, sorted, hidden directories skipped: what `render DIR` reads. */
export function yamlFilesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    // Hidden directories (.git, .github workflows...) hold no inputs.
    if (entry.isDirectory() && entry.name.startsWith('.')) continue;
    const full = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...yamlFilesUnder(full));
    else if (YAML_FILE.test(entry.name)) out.push(full);
  }
  return out;
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
    default:
      return err.message;
  }
}
