/**
 * A component's config checked against the keys its server's release reads (`types.ts`): a key the
 * release does not read is an error with a did-you-mean (a key it reads later or read earlier says
 * which release), a value of the wrong type or outside the server's enumeration an error, a key the
 * release deprecates a warning. A cluster of a release between two lines takes what either reads; one
 * past the newest line known here gets warnings, not errors, for keys not known. A schema from one
 * source (TiDB's) cannot tell releases apart: only a typo of a key it reads is an error, the rest
 * warnings. Keys under a prefix the cluster marks as unchecked are left alone.
 */
import { suggest } from '../../base/suggest';
import { isTomlFloat, isTomlTable, type TomlTable, type TomlValue } from '../../base/toml';
import type { SpecIssue } from '../errors';
import type { ConfigNode, ConfigSchema } from './types';

/** The lines a version is checked against. */
export interface LineView {
  /** One line (a release of it), or the two around a release between lines (either reads). */
  readonly lines: readonly string[];
  /** The version is past the newest line known (or `latest`, `nightly`): unknown keys are warnings. */
  readonly beyond: boolean;
  /** The version as written, for messages. */
  readonly version: string;
  /**
   * The schema's lines all come from one source, so it cannot tell releases apart: what it finds is a
   * warning, with this said of it. @default none
   */
  readonly oneSource?: string;
}

const num = (line: string): [number, number] => {
  const [a, b] = line.split('.').map(Number);
  return [a, b ?? 0];
};
/** Lines compared as release numbers. */
export const compareLines = (a: string, b: string): number => {
  const [x, y] = [num(a), num(b)];
  return x[0] - y[0] || x[1] - y[1];
};

/** The lines a version (an image tag) is checked against; undefined for a release older than the oldest line, or no release. */
export function linesOf(schema: ConfigSchema, tag: string): LineView | undefined {
  const sources = new Set(Object.values(schema.sources));
  if (schema.lines.length > 1 && sources.size === 1) {
    const m = /^v?(\d+)\.(\d+)\.\d+/.exec(tag);
    if (!m && !/^(latest|nightly|master)(-.*)?$/.test(tag)) return undefined;
    return { lines: [...schema.lines], beyond: false, version: tag, oneSource: [...sources][0] };
  }
  const newest = schema.lines[schema.lines.length - 1];
  if (/^(latest|nightly|master)(-.*)?$/.test(tag)) return { lines: [newest], beyond: true, version: tag };
  const m = /^v?(\d+)\.(\d+)\.\d+/.exec(tag);
  if (!m) return undefined;
  const have = `${m[1]}.${m[2]}`;
  if (compareLines(have, schema.lines[0]) < 0) return undefined;
  if (compareLines(have, newest) > 0) return { lines: [newest], beyond: true, version: tag };
  const at = schema.lines.findIndex((l) => compareLines(l, have) >= 0);
  const lines = compareLines(schema.lines[at], have) === 0 ? [schema.lines[at]] : [schema.lines[at - 1], schema.lines[at]];
  return { lines, beyond: false, version: tag };
}

/** Whether a line reads the key. */
export const readAt = (n: ConfigNode, line: string): boolean =>
  (n.s === undefined || compareLines(line, n.s) >= 0) && (n.u === undefined || compareLines(line, n.u) < 0);

/** Whether the key is changed online at a line. */
export const onlineAt = (n: ConfigNode, line: string): boolean => n.o === true || (typeof n.o === 'string' && compareLines(line, n.o) >= 0);

/** The node of a dotted key, or undefined. */
export function nodeOf(schema: ConfigSchema, dotted: readonly string[]): ConfigNode | undefined {
  let keys: Readonly<Record<string, ConfigNode>> | undefined = schema.keys;
  let node: ConfigNode | undefined;
  for (const part of dotted) {
    node = keys && Object.hasOwn(keys, part) ? keys[part] : undefined;
    if (!node) return undefined;
    keys = node.k;
  }
  return node;
}

export interface ConfigCheckOptions {
  /** Where the config is in the document: `spec.tikv.config`. */
  readonly path: string;
  /** What the server is called in messages: `TiKV`. */
  readonly server: string;
  /** Dotted key prefixes left unchecked (`raftstore.new-key`). @default none */
  readonly unchecked?: readonly string[];
  /** The config as TOML text, when it was given so: messages then name the key's line in it. @default none */
  readonly text?: string;
}

/** The problems of a config: errors, and warnings that do not stop a render. */
export function configIssues(
  schema: ConfigSchema,
  view: LineView,
  config: TomlTable,
  o: ConfigCheckOptions,
): { errors: SpecIssue[]; warnings: SpecIssue[] } {
  const errors: SpecIssue[] = [];
  const warnings: SpecIssue[] = [];
  /** Unknown keys a sibling is a letter or two from: typos, whatever the release. */
  const typos = new Set<SpecIssue>();
  const textual = o.text !== undefined;
  const release = `${o.server} ${view.version}`;
  const at = (dotted: string[]) => {
    const key = dotted.join('.');
    if (!textual) return { path: `${o.path}.${key}`, key: '' };
    const line = o.text === undefined ? undefined : tomlKeyLine(o.text, dotted);
    return { path: o.path, key: `${key}${line === undefined ? '' : ` (line ${line} of the config)`}: ` };
  };
  const reads = (n: ConfigNode) => view.lines.some((l) => readAt(n, l));
  const skipped = (dotted: string[]) => (o.unchecked ?? []).some((p) => dotted.join('.') === p || dotted.join('.').startsWith(`${p}.`));

  const walk = (table: TomlTable, keys: Readonly<Record<string, ConfigNode>>, parent: string[]) => {
    for (const [name, value] of Object.entries(table)) {
      const dotted = [...parent, name];
      if (skipped(dotted)) continue;
      const node = Object.hasOwn(keys, name) ? keys[name] : undefined;
      if (!node) unknownKey(keys, name, dotted, parent);
      else if (!reads(node)) notRead(node, dotted);
      else {
        if (node.dep !== undefined && view.lines.every((l) => compareLines(l, node.dep!) >= 0)) {
          const where = at(dotted);
          warnings.push({
            path: where.path,
            message: `${where.key}${dotted.join('.')} is deprecated from ${o.server} v${node.dep}${node.r ? `: use ${node.r}` : ''}`,
          });
        }
        checkValue(node, value, dotted);
      }
    }
  };

  // Where a key is (its line in TOML text) is worked out only for a key with a problem.
  const unknownKey = (keys: Readonly<Record<string, ConfigNode>>, name: string, dotted: string[], parent: string[]) => {
    const where = at(dotted);
    const meant = suggest(
      name,
      Object.keys(keys).filter((k) => reads(keys[k])),
    );
    const elsewhere = meant ? undefined : placeOf(schema, name, reads);
    const hint = meant ? `; did you mean ${meant}?` : elsewhere ? `; did you mean ${elsewhere}?` : '';
    const message = `${where.key}${release} reads no key ${JSON.stringify(name)}${parent.length ? ` in [${parent.join('.')}]` : ''}${hint}`;
    const issue = {
      path: where.path,
      message: view.beyond
        ? `${message} (known here up to ${o.server} v${view.lines[0]}; passed as written)`
        : `${message} (list it in the annotation tidb-gitops.io/unchecked-config to pass it unchecked)`,
    };
    (view.beyond ? warnings : errors).push(issue);
    if (meant) typos.add(issue);
  };

  const notRead = (node: ConfigNode, dotted: string[]) => {
    const where = at(dotted);
    const later = node.s !== undefined && view.lines.every((l) => compareLines(l, node.s!) < 0);
    errors.push({
      path: where.path,
      message: later
        ? `${where.key}${dotted.join('.')} is read from ${o.server} v${node.s}; this cluster runs ${view.version}`
        : `${where.key}${dotted.join('.')} is no longer read from ${o.server} v${node.u}; this cluster runs ${view.version}: remove it${node.r ? ` (${node.r} took its place)` : ''}`,
    });
  };

  const checkValue = (node: ConfigNode, value: TomlValue, dotted: string[]) => {
    const problem = typeProblem(node, value);
    if (problem) {
      const where = at(dotted);
      errors.push({ path: where.path, message: `${where.key}${problem}` });
      return;
    }
    if (node.t === 'table' && node.k && isTomlTable(value)) walk(value, node.k, dotted);
    else if (node.t === 'map' && node.v && isTomlTable(value))
      for (const [k, v] of Object.entries(value)) checkValue(node.v, v, [...dotted, k]);
    else if (node.t === 'array' && node.i && Array.isArray(value))
      value.forEach((v, i) => checkValue(node.i!, v, [...dotted.slice(0, -1), `${dotted[dotted.length - 1]}[${i}]`]));
  };

  walk(config, schema.keys, []);
  if (view.oneSource === undefined) return { errors, warnings };
  // One source cannot tell releases apart: only a typo of a key it reads stays an error.
  const note = ` (${o.server}'s keys are known here from one source, not per release: ${view.oneSource.split(/[;(]/)[0].trim()})`;
  return {
    errors: errors.filter((i) => typos.has(i)),
    warnings: [...errors.filter((i) => !typos.has(i)), ...warnings].map((i) => ({ ...i, message: `${i.message}${note}` })),
  };
}

const DURATION = /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h|d))+$/;
const SIZE = /^\d+(\.\d+)?\s*(B|K|M|G|T|P|E|KB|MB|GB|TB|PB|EB|KiB|MiB|GiB|TiB|PiB|EiB)?$/i;

/** What is wrong with a value's type, in words, or undefined. */
function typeProblem(node: ConfigNode, value: TomlValue): string | undefined {
  const got = describe(value);
  const integer = (typeof value === 'number' && Number.isInteger(value)) || typeof value === 'bigint';
  switch (node.t) {
    case 'bool':
      return typeof value === 'boolean' ? undefined : `expected true or false, got ${got}`;
    case 'int':
      return integer ? undefined : `expected an integer, got ${got}`;
    case 'float':
      return typeof value === 'number' || isTomlFloat(value) || typeof value === 'bigint' ? undefined : `expected a number, got ${got}`;
    case 'string':
      if (typeof value !== 'string') return `expected a string, got ${got}`;
      return enumProblem(node, value);
    case 'duration':
      return typeof value === 'string' && DURATION.test(value) ? undefined : `expected a duration such as "10s" or "1h30m", got ${got}`;
    case 'size':
      return integer || (typeof value === 'string' && SIZE.test(value.trim()))
        ? undefined
        : `expected a size such as "512MiB" or "1GB", got ${got}`;
    case 'array':
      return Array.isArray(value) ? undefined : `expected an array, got ${got}`;
    case 'table':
    case 'map':
      return isTomlTable(value) ? undefined : `expected a table, got ${got}`;
    default:
      return typeof value === 'string' ? enumProblem(node, value) : undefined;
  }
}

function enumProblem(node: ConfigNode, value: string): string | undefined {
  if (!node.e || node.e.length === 0) return undefined;
  const ok = node.ci ? node.e.some((x) => x.toLowerCase() === value.toLowerCase()) : node.e.includes(value);
  return ok ? undefined : `expected one of ${node.e.map((x) => JSON.stringify(x)).join(', ')}, got ${JSON.stringify(value)}`;
}

function describe(value: TomlValue): string {
  if (isTomlTable(value)) return 'a table';
  if (Array.isArray(value)) return 'an array';
  if (isTomlFloat(value)) return String(value.value);
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

/** Where else a key of this name is read: `raftstore.apply-pool-size` for a top-level `apply-pool-size`. */
function placeOf(schema: ConfigSchema, name: string, reads: (n: ConfigNode) => boolean): string | undefined {
  const found: string[] = [];
  const visit = (keys: Readonly<Record<string, ConfigNode>>, parent: string[]) => {
    for (const [k, n] of Object.entries(keys)) {
      if (!reads(n)) continue;
      if (k === name && parent.length > 0) found.push([...parent, k].join('.'));
      if (n.k) visit(n.k, [...parent, k]);
    }
  };
  visit(schema.keys, []);
  return found.length === 1 ? found[0] : undefined;
}

/** The line (1-based) of a dotted key in TOML text: under its table header, or written dotted. */
export function tomlKeyLine(text: string, dotted: readonly string[]): number | undefined {
  const key = dotted[dotted.length - 1].replace(/\[\d+\]$/, '');
  const table = dotted.slice(0, -1).join('.');
  const unquote = (s: string) => s.trim().replace(/^["']|["']$/g, '');
  let current = '';
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    const header = /^\[\[?\s*([^\]]+?)\s*\]\]?/.exec(line);
    if (header) {
      current = header[1].split('.').map(unquote).join('.');
      continue;
    }
    const assign = /^([^=#]+?)\s*=/.exec(line);
    if (!assign) continue;
    const full = [current, assign[1].split('.').map(unquote).join('.')].filter(Boolean).join('.');
    if (full === [table, key].filter(Boolean).join('.')) return i + 1;
  }
  return undefined;
}
