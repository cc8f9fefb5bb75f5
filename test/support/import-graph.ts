/**
 * The import graph of a TypeScript tree, for the layout test: relative imports and re-exports
 * (type-only ones included, since a type import ties two files as much as any), resolved to files
 * of the tree; folders named `generated` hold generated code and are left out.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** File (relative to the root, with `/`) -> the files it imports. */
export type ImportGraph = Map<string, Set<string>>;

const IMPORT = /(?:^|\n)\s*(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\sfrom\s+)?['"](\.{1,2}\/[^'"]+)['"]/g;

function sources(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== 'generated') walk(p);
      } else if (/\.ts$/.test(e.name) && !e.name.endsWith('.d.ts')) out.push(p);
    }
  };
  walk(root);
  return out.sort();
}

const rel = (root: string, file: string): string => path.relative(root, file).split(path.sep).join('/');

export function importGraph(root: string): ImportGraph {
  const files = sources(root);
  const known = new Set(files);
  const resolve = (from: string, spec: string): string | undefined => {
    const base = path.resolve(path.dirname(from), spec);
    return [`${base}.ts`, path.join(base, 'index.ts'), base].find((c) => known.has(c));
  };
  const graph: ImportGraph = new Map();
  for (const f of files) {
    const out = new Set<string>();
    const text = fs.readFileSync(f, 'utf8');
    for (const m of text.matchAll(IMPORT)) {
      const target = resolve(f, m[1]);
      if (target) out.add(rel(root, target));
    }
    graph.set(rel(root, f), out);
  }
  return graph;
}

/** The layer of a file: the longest layer whose folder holds it; files at the root are entry points. */
export function layerOf(file: string, layers: readonly string[]): string | undefined {
  if (!file.includes('/')) return '';
  return [...layers].sort((a, b) => b.length - a.length).find((l) => file.startsWith(`${l}/`));
}

const within = (layer: string, folder: string): boolean => layer === folder || layer.startsWith(`${folder}/`);

/**
 * Imports that climb: to a layer later in `layers` (bottom to top), to an entry point at the root,
 * or between two layers kept apart. Entry points at the root may import anything.
 */
export function layerBreaks(graph: ImportGraph, layers: readonly string[], apart: readonly (readonly [string, string])[] = []): string[] {
  const out: string[] = [];
  for (const [from, targets] of graph) {
    const lf = layerOf(from, layers);
    if (lf === '' || lf === undefined) continue;
    for (const to of targets) {
      const lt = layerOf(to, layers);
      const climbs = lt === '' || (lt !== undefined && layers.indexOf(lt) > layers.indexOf(lf));
      const crosses = lt !== undefined && apart.some(([a, b]) => (within(lf, a) && within(lt, b)) || (within(lf, b) && within(lt, a)));
      if (climbs || crosses) out.push(`${from} -> ${to}`);
    }
  }
  return out.sort();
}

/** Strongly connected groups of more than one file, or a file importing itself (Tarjan). */
export function circles(graph: ImportGraph): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const group: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      group.push(w);
    } while (w !== v);
    if (group.length > 1 || graph.get(v)?.has(v)) found.push(group.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/** Files longer than `max` lines, as `file: lines`. */
export function longFiles(root: string, max: number): string[] {
  return sources(root)
    .map((f) => {
      const text = fs.readFileSync(f, 'utf8');
      return { file: rel(root, f), lines: text.split('\n').length - (text.endsWith('\n') ? 1 : 0) };
    })
    .filter((x) => x.lines > max)
    .map((x) => `${x.file}: ${x.lines}`);
}

/**
 * Where `pattern` matches the code of a tree outside the files `homes` names (paths relative to the
 * root), as `file:line`: comment lines are not code and are skipped.
 */
export function foundOutside(root: string, pattern: RegExp, homes: readonly string[]): string[] {
  const out: string[] = [];
  for (const f of sources(root)) {
    const file = rel(root, f);
    if (homes.includes(file)) continue;
    fs.readFileSync(f, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (!/^\s*(\/\/|\/?\*)/.test(line) && pattern.test(line)) out.push(`${file}:${i + 1}`);
      });
  }
  return out;
}
