#!/usr/bin/env node
// Config-key schema of the Go servers, PD and TiDB (src/tidbcluster/config-schema/generated/{pd,tidb}.json),
// from their Go config structs.
//
// Format: src/tidbcluster/config-schema/types.ts (`ConfigSchema`).
//
// Keys are what BurntSushi/toml decodes: every exported field with a `toml:"name"` tag; `toml:"-"` and fields
// without a toml name are left out (the server does not read them under a documented key); an embedded field
// without a toml name is inlined (also `,inline`/`,squash`). Types: bool, int (all Go ints), float, string,
// duration (time.Duration and named `Duration` types with UnmarshalText), size (named `ByteSize`/`Size` types with
// UnmarshalText), array, map, table (structs), any (other types with UnmarshalText/UnmarshalTOML, interfaces,
// structs with no toml-named field, unresolved types).
// A field whose doc comment (or Go name) says "deprecated" is marked "dep" from the first line where that holds.
//
// Sources per release line (the newest patch tag vX.Y.Z of each line; the newest line is the newest one tagged):
//   PD: tikv/pd at the tag, from a git directory (--pd-git-dir): server/config/config.go `Config` and the
//       packages it imports from the repository (github.com/tikv/pd/... is the repository's path); github.com/pingcap/log
//       (log.Config) from --log-git-dir at the commit PD's go.mod names. Online keys: the sections PD's
//       `POST /pd/api/v1/config` takes (server/api/config.go `updateConfig`: each `case "<section>":` that
//       returns an update; `log` takes only `log.level`).
//   TiDB: pingcap/tidb cannot be read per tag here, so --tidb-files <dir> holds saved files in a GOPATH-like
//       layout: <dir>/<label>/<import path>/<file>.go, e.g. <dir>/newest/github.com/pingcap/tidb/pkg/config/config.go,
//       with <dir>/<label>/SOURCE naming where they came from (one line, copied into "sources"), and
//       <dir>/LINES mapping each release line to a label ("8.5 newest"; `#` starts a comment line). Saved files may
//       be excerpts holding the package clause, the imports and the type declarations. Nothing is marked online.
//
// Usage: node scripts/generate/config-schema/go-config.mjs --pd-git-dir <pd.git> --log-git-dir <log.git>
//          [--tidb-files <dir>] [--check]
// or through scripts/generate/config-schemas.mjs (--pd, --log, --tidb), which calls `goConfigSchema`.
// Output is deterministic (keys sorted); --check compares with the committed files instead of writing.

import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseGoPackage, tagValue } from './go-struct.mjs';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const OUT_DIR = path.join(REPO_ROOT, 'src', 'tidbcluster', 'config-schema', 'generated');
/** The release lines every schema covers, oldest first; the newest tagged line is added after them. */
export const BASE_LINES = ['7.1', '7.5', '8.1', '8.5'];

const BASIC = {
  bool: 'bool',
  string: 'string',
  float32: 'float',
  float64: 'float',
  byte: 'int',
  rune: 'int',
  ...Object.fromEntries(
    ['', '8', '16', '32', '64'].flatMap((b) => [
      [`int${b}`, 'int'],
      [`uint${b}`, 'int'],
    ]),
  ),
  uintptr: 'int',
  error: 'any',
};

/**
 * A source of Go packages: `files(importPath)` gives the texts of its non-test .go files, or undefined when the
 * source does not hold that package.
 */
export function gitSource(gitDir, ref, modulePath) {
  return {
    files(importPath) {
      if (importPath !== modulePath && !importPath.startsWith(`${modulePath}/`)) return undefined;
      const dir = importPath.slice(modulePath.length + 1);
      let list;
      try {
        list = execFileSync('git', ['--git-dir', gitDir, 'ls-tree', '--name-only', `${ref}:${dir}`], { encoding: 'utf8' });
      } catch {
        return undefined;
      }
      const names = list.split('\n').filter((f) => f.endsWith('.go') && !f.endsWith('_test.go'));
      return names.sort().map((f) =>
        execFileSync('git', ['--git-dir', gitDir, 'show', `${ref}:${dir ? `${dir}/` : ''}${f}`], {
          encoding: 'utf8',
          maxBuffer: 1 << 26,
        }),
      );
    },
  };
}

/** A source reading `<root>/<import path>/*.go` (saved files). */
export function dirSource(root) {
  return {
    files(importPath) {
      const dir = path.join(root, importPath);
      if (!existsSync(dir)) return undefined;
      const names = readdirSync(dir).filter((f) => f.endsWith('.go') && !f.endsWith('_test.go'));
      return names.sort().map((f) => readFileSync(path.join(dir, f), 'utf8'));
    },
  };
}

/** A source of inline texts: { importPath: [text, ...] } (for tests). */
export function memorySource(packages) {
  return { files: (importPath) => packages[importPath] };
}

/**
 * The key tree of the struct `typeName` in package `importPath`, read from `sources` (tried in order).
 * `overrides` maps `<import path>.<type name>` to a node. Types not found become "any" and are listed in
 * `unresolved`. Returns { keys, deprecated: Set of dotted keys, unresolved: sorted names }.
 */
export function readGoConfig({ sources, importPath, typeName, overrides = {} }) {
  const packages = new Map();
  const unresolved = new Set();
  const deprecated = new Set();
  const loadPackage = (p) => {
    if (!packages.has(p)) {
      let texts;
      for (const s of sources) {
        texts = s.files(p);
        if (texts !== undefined && texts.length > 0) break;
      }
      packages.set(p, texts === undefined || texts.length === 0 ? undefined : parseGoPackage(texts));
    }
    return packages.get(p);
  };

  const named = (pkgPath, name, keyPath, stack) => {
    const qualified = `${pkgPath}.${name}`;
    if (overrides[qualified]) return structuredClone(overrides[qualified]);
    if (pkgPath === 'time' && name === 'Duration') return { t: 'duration' };
    const pkg = loadPackage(pkgPath);
    const type = pkg?.types[name];
    if (type === undefined) {
      unresolved.add(qualified);
      return { t: 'any' };
    }
    if (pkg.textTypes.has(name)) {
      if (/Duration$/.test(name)) return { t: 'duration' };
      if (/^(Byte)?Size$/.test(name)) return { t: 'size' };
      return { t: 'any' };
    }
    if (stack.includes(qualified)) return { t: 'any' }; // recursive type
    return node(type, { pkgPath, imports: pkg.importsOf[name] }, keyPath, [...stack, qualified]);
  };

  const node = (type, ctx, keyPath, stack) => {
    switch (type.kind) {
      case 'ptr':
        return node(type.elem, ctx, keyPath, stack);
      case 'slice':
      case 'array':
        if (type.elem.kind === 'named' && type.elem.name === 'byte' && !type.elem.pkg) return { t: 'string' };
        return { t: 'array', i: node(type.elem, ctx, [...keyPath, '[]'], stack) };
      case 'map':
        return { t: 'map', v: node(type.elem, ctx, [...keyPath, '*'], stack) };
      case 'struct': {
        // a struct with no toml-named field is read by Go field names only: left loose
        const k = structKeys(type.fields, ctx, keyPath, stack);
        return Object.keys(k).length === 0 && type.fields.length > 0 ? { t: 'any' } : { t: 'table', k };
      }
      case 'named': {
        if (type.pkg === undefined) {
          if (BASIC[type.name] && loadPackage(ctx.pkgPath)?.types[type.name] === undefined) return { t: BASIC[type.name] };
          return named(ctx.pkgPath, type.name, keyPath, stack);
        }
        const target = ctx.imports?.[type.pkg];
        if (target === undefined) {
          unresolved.add(`${type.pkg}.${type.name}`);
          return { t: 'any' };
        }
        return named(target, type.name, keyPath, stack);
      }
      default:
        return { t: 'any' };
    }
  };

  const structKeys = (fields, ctx, keyPath, stack) => {
    const keys = {};
    for (const f of fields) {
      const toml = tagValue(f.tag, 'toml');
      const [tomlName, ...opts] = (toml ?? '').split(',');
      if (tomlName === '-') continue;
      if (f.names.length === 0) {
        // embedded: inlined unless it has a toml name
        if (tomlName === '' || opts.includes('inline') || opts.includes('squash')) {
          const inner = node(f.type, ctx, keyPath, stack);
          if (inner.t === 'table') Object.assign(keys, inner.k);
          continue;
        }
      }
      if (!tomlName) continue;
      const goName = f.names[0] ?? (f.type.kind === 'ptr' ? f.type.elem.name : f.type.name);
      if (!/^[A-Z]/.test(goName ?? '')) continue;
      const child = [...keyPath, tomlName];
      keys[tomlName] = node(f.type, ctx, child, stack);
      if (/deprecated/i.test(f.doc) || /Deprecated/.test(goName)) deprecated.add(child.join('.'));
    }
    return keys;
  };

  const keys = named(importPath, typeName, [], []);
  if (keys.t !== 'table') throw new Error(`${importPath}.${typeName} is not a struct`);
  return { keys: keys.k, deprecated, unresolved: [...unresolved].sort() };
}

/** Sorted copy of a node tree (keys of every "k" in code-point order). */
function sortNode(n) {
  const out = {};
  for (const key of ['t', 'k', 'v', 'i', 'e', 'ci', 's', 'u', 'dep', 'o', 'r']) {
    if (n[key] === undefined) continue;
    if (key === 'k') out.k = sortKeys(n.k);
    else if (key === 'v' || key === 'i') out[key] = sortNode(n[key]);
    else out[key] = n[key];
  }
  return out;
}
const sortKeys = (keys) =>
  Object.fromEntries(
    Object.keys(keys)
      .sort()
      .map((k) => [k, sortNode(keys[k])]),
  );

/**
 * Merges per-line key trees into one: [{ line, keys, deprecated: Set, online: (dottedKey) => bool }], oldest first.
 * A key absent from some lines gets "s" (first line reading it) and "u" (first line no longer reading it, when the
 * newest does not); types are the newest line's (a type that changed is "size" between int and size, else "any");
 * "dep" from the first line that deprecates it; "o" on keys (not tables) online in every line from one on.
 */
export function mergeLines(perLine) {
  const lines = perLine.map((p) => p.line);
  // getKeys(i): the key map at this level in line i (undefined where the parent is absent); range: the line
  // indexes where the parent is read (s/u are only given relative to it).
  const mergeKeys = (getKeys, prefix, range) => {
    const names = new Set();
    for (const i of range) Object.keys(getKeys(i) ?? {}).forEach((k) => names.add(k));
    const out = {};
    for (const name of [...names].sort()) {
      const dotted = prefix ? `${prefix}.${name}` : name;
      const present = perLine.map((_, i) => (range.includes(i) ? getKeys(i)?.[name] : undefined));
      const idx = range.filter((i) => present[i] !== undefined);
      const last = idx[idx.length - 1];
      const newest = present[last];
      const types = new Set(idx.map((i) => present[i].t));
      // a type that changed between lines: the newest when a table, "size" for int/size, else "any"
      let t = newest.t;
      if (types.size > 1 && t !== 'table') t = [...types].every((x) => x === 'int' || x === 'size') ? 'size' : 'any';
      const node = { t };
      const same = idx.filter((i) => present[i].t === newest.t);
      if (t === 'table') node.k = mergeKeys((i) => present[i]?.k, dotted, same);
      else if (t === 'map' || t === 'array') {
        const key = newest.t === 'map' ? 'v' : 'i';
        if (newest[key].t === 'table') {
          const items = (i) => present[i]?.[key]?.k;
          node[key] = { t: 'table', k: mergeKeys(items, `${dotted}.${key === 'v' ? '*' : '[]'}`, same) };
        } else node[key] = newest[key];
      }
      if (t === newest.t) for (const extra of ['e', 'ci']) if (newest[extra] !== undefined) node[extra] = newest[extra];
      if (idx[0] > range[0]) node.s = lines[idx[0]];
      if (last < range[range.length - 1]) node.u = lines[range[range.indexOf(last) + 1]];
      const dep = idx.find((i) => perLine[i].deprecated.has(dotted));
      if (dep !== undefined) node.dep = lines[dep];
      const on = idx.map((i) => perLine[i].online(dotted));
      const from = on.indexOf(true);
      if (t !== 'table' && from >= 0 && on.slice(from).every(Boolean)) node.o = from === 0 ? true : lines[idx[from]];
      out[name] = node;
    }
    return out;
  };
  return sortKeys(
    mergeKeys(
      (i) => perLine[i].keys,
      '',
      lines.map((_, i) => i),
    ),
  );
}

// ---------------------------------------------------------------------------------------------------
// Release lines and the two servers

const git = (gitDir, ...args) => execFileSync('git', ['--git-dir', gitDir, ...args], { encoding: 'utf8', maxBuffer: 1 << 26 });

/** { line: newest vX.Y.Z tag } for BASE_LINES and the newest line tagged in `gitDir`, oldest first. */
export function releaseTags(gitDir) {
  const byLine = new Map();
  for (const tag of git(gitDir, 'tag', '--list', 'v*').split('\n')) {
    const m = /^v(\d+)\.(\d+)\.(\d+)$/.exec(tag);
    if (!m) continue;
    const line = `${m[1]}.${m[2]}`;
    const prev = byLine.get(line);
    if (prev === undefined || Number(m[3]) > prev.patch) byLine.set(line, { tag, patch: Number(m[3]) });
  }
  const num = (l) => l.split('.').map(Number);
  const cmp = (a, b) => num(a)[0] - num(b)[0] || num(a)[1] - num(b)[1];
  const newest = [...byLine.keys()].sort(cmp).pop();
  const lines = BASE_LINES.includes(newest) ? BASE_LINES : [...BASE_LINES, newest];
  return Object.fromEntries(
    lines.map((l) => {
      if (!byLine.has(l)) throw new Error(`${gitDir}: no v${l}.x tag`);
      return [l, byLine.get(l).tag];
    }),
  );
}

/** The commit (or tag) of `module` that a go.mod text requires: a pseudo-version's commit, else the version. */
function requiredRevision(goMod, module) {
  const m = new RegExp(`^\\s*(?:require\\s+)?${module.replace(/[.]/g, '\\.')}\\s+(v\\S+)`, 'm').exec(goMod);
  if (!m) throw new Error(`go.mod does not require ${module}`);
  const pseudo = /-(?:\d+\.)?\d{14}-([0-9a-f]{12})$/.exec(m[1]);
  return pseudo ? pseudo[1] : m[1];
}

/** Sections of PD's config API (server/api/config.go `updateConfig`) that update something: [section]. */
export function pdOnlineSections(configApiGo) {
  const body = /func \(h \*confHandler\) updateConfig\([\s\S]*?\n}\n/.exec(configApiGo)?.[0] ?? '';
  const sections = [];
  const re = /case "([a-z-]+)":[^\n]*\n\s*(?:if [^\n]*\{[\s\S]*?\n\s*}\n\s*)?return h\.update/g;
  for (let m = re.exec(body); m; m = re.exec(body)) sections.push(m[1]);
  return sections.sort();
}

const PD_MODULE = 'github.com/tikv/pd';
const LOG_MODULE = 'github.com/pingcap/log';
const PD_OVERRIDES = { 'github.com/coreos/go-semver/semver.Version': { t: 'string' } };
const TIDB_OVERRIDES = Object.fromEntries(
  ['github.com/pingcap/tidb/pkg/config', 'github.com/pingcap/tidb/config'].flatMap((p) => [
    [`${p}.nullableBool`, { t: 'bool' }],
    [`${p}.AtomicBool`, { t: 'bool' }],
  ]),
);

function pdSchema({ gitDir, logGitDir }) {
  const tags = releaseTags(gitDir);
  const perLine = [];
  const sources = {};
  const unresolved = {};
  for (const [line, tag] of Object.entries(tags)) {
    const logRev = git(logGitDir, 'rev-parse', `${requiredRevision(git(gitDir, 'show', `${tag}:go.mod`), LOG_MODULE)}^{commit}`).trim();
    const read = readGoConfig({
      sources: [gitSource(gitDir, tag, PD_MODULE), gitSource(logGitDir, logRev, LOG_MODULE)],
      importPath: `${PD_MODULE}/server/config`,
      typeName: 'Config',
      overrides: PD_OVERRIDES,
    });
    const sections = pdOnlineSections(git(gitDir, 'show', `${tag}:server/api/config.go`));
    const online = (dotted) => {
      const [head, ...rest] = dotted.split('.');
      if (!sections.includes(head)) return false;
      if (head === 'log') return rest.join('.') === 'level';
      if (head === 'cluster-version') return rest.length === 0;
      return rest.length > 0;
    };
    perLine.push({ line, keys: read.keys, deprecated: read.deprecated, online });
    sources[line] = `tikv/pd ${tag} (with pingcap/log ${logRev.slice(0, 12)})`;
    if (read.unresolved.length > 0) unresolved[line] = read.unresolved;
  }
  return { server: 'pd', sources, lines: Object.keys(tags), keys: mergeLines(perLine), unresolved };
}

function tidbSchema({ tidbFiles }) {
  const linesFile = path.join(tidbFiles, 'LINES');
  const entries = readFileSync(linesFile, 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => l.split(/\s+/));
  const perLine = [];
  const sources = {};
  const unresolved = {};
  for (const [line, label] of entries) {
    const root = path.join(tidbFiles, label);
    const pkg = existsSync(path.join(root, 'github.com/pingcap/tidb/pkg/config')) ? 'pkg/config' : 'config';
    const read = readGoConfig({
      sources: [dirSource(root)],
      importPath: `github.com/pingcap/tidb/${pkg}`,
      typeName: 'Config',
      overrides: TIDB_OVERRIDES,
    });
    perLine.push({ line, keys: read.keys, deprecated: read.deprecated, online: () => false });
    sources[line] = readFileSync(path.join(root, 'SOURCE'), 'utf8').trim();
    if (read.unresolved.length > 0) unresolved[line] = read.unresolved;
  }
  return { server: 'tidb', sources, lines: entries.map((e) => e[0]), keys: mergeLines(perLine), unresolved };
}

/**
 * The schema of `server` ('pd' | 'tidb') in the format of src/tidbcluster/config-schema/generated/*.json.
 * PD needs `gitDir` (tikv/pd) and `logGitDir` (pingcap/log); TiDB needs `tidbFiles` (see the header).
 * Types the reader could not find are left "any" and named on stderr.
 */
export function goConfigSchema({ server, gitDir, logGitDir, tidbFiles }) {
  const { unresolved, ...schema } = server === 'pd' ? pdSchema({ gitDir, logGitDir }) : tidbSchema({ tidbFiles });
  for (const [line, names] of Object.entries(unresolved)) process.stderr.write(`${server} ${line}: read as "any": ${names.join(', ')}\n`);
  return schema;
}

export const schemaText = (schema) => `${JSON.stringify(schema, null, 2)}\n`;

function main(argv) {
  const arg = (name) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const check = argv.includes('--check');
  const jobs = [];
  if (arg('--pd-git-dir')) jobs.push(['pd', { gitDir: arg('--pd-git-dir'), logGitDir: arg('--log-git-dir') }]);
  if (arg('--tidb-files')) jobs.push(['tidb', { tidbFiles: arg('--tidb-files') }]);
  if (jobs.length === 0) throw new Error('nothing to do: give --pd-git-dir <dir> --log-git-dir <dir> and/or --tidb-files <dir>');
  const stale = [];
  for (const [server, opts] of jobs) {
    const text = schemaText(goConfigSchema({ server, ...opts }));
    const file = path.join(OUT_DIR, `${server}.json`);
    if (check) {
      if (!existsSync(file) || readFileSync(file, 'utf8') !== text) stale.push(file);
    } else writeFileSync(file, text);
  }
  if (stale.length > 0) {
    process.stderr.write(`not what the sources give: ${stale.join(', ')}\n`);
    process.exitCode = 1;
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main(process.argv.slice(2));
