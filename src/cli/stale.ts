/**
 * What `render --check` found stale, file by file: which objects differ (by kind, namespace and name)
 * and, for `-v`, the unified diff from the committed file to what the inputs render.
 */
import { stableJson } from '../base/stable-json';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readYaml } from '../base/yaml/read';
import { firstDifferentLine, unifiedDiff } from './text-diff';
import { staleFiles, type OutputFile } from './write';

/** How one object of a stale file differs: `added` is rendered now but not in the committed file. */
export interface ObjectDifference {
  /** `kind` of the object, e.g. `StatefulSet`. */
  readonly kind: string;
  /** @default none: the object has no namespace */
  readonly namespace?: string;
  /** `metadata.name`. */
  readonly name: string;
  /** `changed` in both, `added`: rendered now, not in the committed file, `removed`: the other way round. */
  readonly change: 'changed' | 'added' | 'removed';
}

/** A file of the output directory that is not what the inputs render. */
export interface StaleFile {
  /** `DIR/name`, as the user named DIR. */
  readonly file: string;
  /** `changed` (differs), `missing` (not there) or `extra` (no input renders it any more, with `--prune`). */
  readonly status: 'changed' | 'missing' | 'extra';
  /** The first line of the committed file that differs. @default none (a missing file) */
  readonly line?: number;
  /** The objects that differ; empty when only the text differs (formatting, comments, order). */
  readonly objects: readonly ObjectDifference[];
  /** The unified diff from the committed file to the rendered one. @default none (without `-v`) */
  readonly diff?: string;
}

/** The stale files of `dir`, in the order `render --check` lists them. */
export function staleReport(dir: string, files: readonly OutputFile[], leftovers: readonly string[], verbose: boolean): StaleFile[] {
  const shown = dir.replace(/\/$/, '');
  const stale = staleFiles(dir, files, leftovers);
  const rendered = new Map(files.map((f) => [f.name, f.content]));
  const read = (name: string) => (existsSync(join(dir, name)) ? readFileSync(join(dir, name), 'utf8') : '');
  const entry = (name: string, status: StaleFile['status']): StaleFile => {
    const before = status === 'missing' ? '' : read(name);
    const after = status === 'extra' ? '' : (rendered.get(name) ?? '');
    const file = `${shown}/${name}`;
    const names = { from: status === 'missing' ? '/dev/null' : file, to: status === 'extra' ? '/dev/null' : `${file} (rendered)` };
    return {
      file,
      status,
      ...(status !== 'missing' && { line: firstDifferentLine(before, after) }),
      objects: objectDifferences(before, after),
      ...(verbose && { diff: unifiedDiff(before, after, names) }),
    };
  };
  return [
    ...stale.changed.map((f) => entry(f, 'changed')),
    ...stale.missing.map((f) => entry(f, 'missing')),
    ...stale.extra.map((f) => entry(f, 'extra')),
  ];
}

/** The objects that differ between two YAML streams, in the new stream's order, then the removed ones. */
export function objectDifferences(before: string, after: string): ObjectDifference[] {
  const old = objectsOf(before);
  const now = objectsOf(after);
  const out: ObjectDifference[] = [];
  for (const [key, o] of now) {
    const was = old.get(key);
    if (was === undefined) out.push({ ...o.id, change: 'added' });
    else if (was.canonical !== o.canonical) out.push({ ...o.id, change: 'changed' });
  }
  for (const [key, o] of old) if (!now.has(key)) out.push({ ...o.id, change: 'removed' });
  return out;
}

interface Found {
  readonly id: { readonly kind: string; readonly namespace?: string; readonly name: string };
  /** The object as JSON with its keys sorted: equal for equal objects however they were written. */
  readonly canonical: string;
}

function objectsOf(text: string): Map<string, Found> {
  const out = new Map<string, Found>();
  for (const doc of readYaml(text)) {
    const o = doc.value as { kind?: unknown; metadata?: { name?: unknown; namespace?: unknown } } | null;
    if (!o || typeof o !== 'object' || typeof o.kind !== 'string' || typeof o.metadata?.name !== 'string') continue;
    const namespace = typeof o.metadata.namespace === 'string' ? o.metadata.namespace : undefined;
    const id = { kind: o.kind, ...(namespace !== undefined && { namespace }), name: o.metadata.name };
    out.set(JSON.stringify([o.kind, namespace ?? '', o.metadata.name]), { id, canonical: stableJson(o) });
  }
  return out;
}

/** `StatefulSet db/basic-pd` */
export function objectName(o: Pick<ObjectDifference, 'kind' | 'namespace' | 'name'>): string {
  return `${o.kind} ${o.namespace ? `${o.namespace}/` : ''}${o.name}`;
}
