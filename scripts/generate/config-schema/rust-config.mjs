// Reads the configuration a Rust server takes from its TOML file, as a per-release key tree, from the server's
// git history (`git --git-dir=<dir> show <rev>:<path>`): serde-derived structs followed field by field into the
// crates that define them. Used by scripts/generate/config-schemas.mjs for TiKV (see readTikvConfig).
//
// A tree node is { t, k?, v?, i?, e?, ci?, dep?: true, o?: true } (the per-line form of the format in
// src/tidbcluster/config-schema/generated/*.json). What is not understood is typed "any" and listed in
// `unread` (with the key path), never guessed.

import { execFileSync, spawnSync } from 'node:child_process';
import { parseRustFile, renameAll } from './rust-source.mjs';

const INT = /^(u8|u16|u32|u64|u128|usize|i8|i16|i32|i64|i128|isize|NonZero\w+|AtomicU\w+|AtomicI\w+)$/;
const WRAPPERS = new Set(['Option', 'Box', 'Arc', 'Rc', 'Cell', 'RefCell', 'Mutex', 'RwLock']);
const ARRAYS = new Set(['Vec', 'VecDeque', 'HashSet', 'BTreeSet', 'SmallVec']);
const MAPS = new Set(['HashMap', 'BTreeMap', 'IndexMap']);
/** Types with hand-written deserializers, by name: what they take (tikv_util/src/config.rs, src/config/mod.rs). */
const KNOWN = {
  ReadableSize: { t: 'size' },
  ReadableDuration: { t: 'duration' },
  ReadableOffsetTime: { t: 'string' },
  ReadableSchedule: { t: 'array', i: { t: 'string' } },
  LogLevel: { t: 'string' },
  String: { t: 'string' },
  PathBuf: { t: 'string' },
  str: { t: 'string' },
  bool: { t: 'bool' },
  AtomicBool: { t: 'bool' },
  f32: { t: 'float' },
  f64: { t: 'float' },
};

/** One git repository at one revision, with its files, crates and type definitions read on demand. */
export class GitSource {
  constructor(gitDir, rev, label) {
    Object.assign(this, { gitDir, rev, label, files: new Map(), parsed: new Map() });
  }
  git(args, input) {
    return execFileSync('git', [`--git-dir=${this.gitDir}`, ...args], {
      encoding: 'utf8',
      maxBuffer: 1 << 28,
      input,
      stdio: ['pipe', 'pipe', 'ignore'],
    });
  }
  show(path) {
    if (!this.files.has(path)) {
      const r = spawnSync('git', [`--git-dir=${this.gitDir}`, 'show', `${this.rev}:${path}`], { encoding: 'utf8', maxBuffer: 1 << 28 });
      this.files.set(path, r.status === 0 ? r.stdout : null);
    }
    return this.files.get(path);
  }
  parse(path) {
    if (!this.parsed.has(path)) {
      const src = this.show(path);
      this.parsed.set(path, src == null ? null : parseRustFile(src));
    }
    return this.parsed.get(path);
  }
  /** Crate name (with `_`) → directory ('' for the root), from every Cargo.toml. */
  crates() {
    if (!this._crates) {
      this._crates = new Map();
      const tomls = this.git(['ls-tree', '-r', '--name-only', this.rev])
        .split('\n')
        .filter((p) => /(^|\/)Cargo\.toml$/.test(p) && !/(^|\/)(tests?|benches|fuzz|examples)\//.test(p));
      for (const p of tomls) {
        const name = /\[package\][^[]*?\bname\s*=\s*"([^"]+)"/s.exec(this.show(p) ?? '');
        if (name) this._crates.set(name[1].replaceAll('-', '_'), p.replace(/Cargo\.toml$/, ''));
      }
    }
    return this._crates;
  }
  /** Paths of the .rs files whose text matches the extended regular expression `pattern`. */
  grep(pattern) {
    const out = spawnSync('git', [`--git-dir=${this.gitDir}`, 'grep', '-l', '-E', pattern, this.rev, '--', '*.rs'], {
      encoding: 'utf8',
    }).stdout;
    return out
      .split('\n')
      .filter(Boolean)
      .map((hit) => hit.slice(hit.indexOf(':') + 1));
  }
  crateOf(file) {
    let best = null;
    for (const [name, dir] of this.crates())
      if (file.startsWith(dir) && (best === null || dir.length > best.dir.length)) best = { name, dir };
    return best;
  }
  /** name → files defining a struct, enum or type alias of that name. */
  defs() {
    if (!this._defs) {
      this._defs = new Map();
      const out = spawnSync(
        'git',
        [
          `--git-dir=${this.gitDir}`,
          'grep',
          '-n',
          '--full-name',
          '-I',
          '-E',
          '^\\s*(pub(\\([a-z:]+\\))?\\s+)?(struct|enum|type)\\s+\\w+',
          this.rev,
          '--',
          '*.rs',
        ],
        { encoding: 'utf8', maxBuffer: 1 << 28 },
      ).stdout;
      const re = /^[^:]+:([^:]+):\d+:\s*(?:pub(?:\([a-z:]+\))?\s+)?(?:struct|enum|type)\s+(\w+)/;
      for (const line of out.split('\n')) {
        const m = re.exec(line);
        if (!m || /(^|\/)(tests?|benches|fuzz|examples)\//.test(m[1])) continue;
        if (!this._defs.has(m[2])) this._defs.set(m[2], new Set());
        this._defs.get(m[2]).add(m[1]);
      }
    }
    return this._defs;
  }
}

/** A source of in-memory files ({ path: text }) and crates ({ crate name: directory }), for samples. */
export function memorySource(files, crates) {
  const src = new GitSource(null, null, 'memory');
  src.show = (p) => files[p] ?? null;
  src.grep = (pattern) => Object.keys(files).filter((p) => new RegExp(pattern).test(files[p]));
  src._crates = new Map(Object.entries(crates));
  src._defs = new Map();
  for (const [p, text] of Object.entries(files)) {
    for (const m of text.matchAll(/^\s*(?:pub(?:\([a-z:]+\))?\s+)?(?:struct|enum|type)\s+(\w+)/gm)) {
      if (!src._defs.has(m[1])) src._defs.set(m[1], new Set());
      src._defs.get(m[1]).add(p);
    }
  }
  return src;
}

/** A fresh reading context: external crates ({ name: source with rootDir }), and what was not read. */
export function newContext(external = {}) {
  return { external, unread: new Set(), withCache: new Map(), notes: [] };
}

/** The table of struct `typeName` as `file` of `src` names it; `online`: read as a registered OnlineConfig module. */
export function readStruct(src, file, typeName, { online = false, external = {} } = {}) {
  const ctx = newContext(external);
  const res = resolveType(ctx, src, file, typeName);
  if (!res || res.item.kind !== 'struct') throw new Error(`struct ${typeName} not found from ${file}`);
  return { tree: structNode(ctx, res, '', online), unread: [...ctx.unread].sort() };
}

/** Finds the definition a type name means in `file` of `src`: { src, file, item } or null. */
export function resolveType(ctx, src, file, typeName) {
  const segs = typeName.split('::').map((s) => s.trim());
  const f = src.parse(file);
  if (!f) return null;
  if (segs.length === 1) {
    const name = segs[0];
    if (f.items.has(name)) return { src, file, item: f.items.get(name) };
    if (f.uses.has(name)) return resolvePath(ctx, src, file, f.uses.get(name));
    for (const g of f.globs) {
      const r = resolvePath(ctx, src, file, [...g, name]);
      if (r) return r;
    }
    return resolvePath(ctx, src, file, ['crate', name]);
  }
  const head = f.uses.get(segs[0]);
  return resolvePath(ctx, src, file, head ? [...head, ...segs.slice(1)] : segs);
}

/** Crates outside the repository whose types are never config structs. */
const NOT_OURS = new Set([
  'std',
  'core',
  'alloc',
  'serde',
  'slog',
  'rocksdb',
  'kvproto',
  'tokio',
  'futures',
  'chrono',
  'regex',
  'online_config',
]);

function resolvePath(ctx, src, file, segs, depth = 0) {
  if (depth > 6) return null;
  const name = segs[segs.length - 1];
  let crate;
  if (['crate', 'self', 'super'].includes(segs[0])) crate = src.crateOf(file);
  else if (src.crates().has(segs[0])) crate = { name: segs[0], dir: src.crates().get(segs[0]) };
  else if (ctx.external[segs[0]]) {
    const ext = ctx.external[segs[0]];
    return resolvePath(ctx, ext, `${ext.rootDir}lib.rs`, ['crate', ...segs.slice(1)], depth + 1);
  } else if (/^[a-z_]\w*$/.test(segs[0]) && segs.length > 1 && !NOT_OURS.has(segs[0])) {
    crate = src.crateOf(file); // a module path relative to the crate root (`pub use engine::X` in lib.rs)
    segs = ['crate', ...segs];
  } else return null;
  if (!crate) return null;
  const mids = segs.slice(1, -1).filter((s) => !['self', 'super', 'crate'].includes(s));
  const files = [...(src.defs().get(name) ?? [])].filter((p) => p.startsWith(crate.dir) && src.crateOf(p)?.dir === crate.dir);
  const score = (p) =>
    mids.filter((m) => p.split('/').includes(m) || p.endsWith(`/${m}.rs`)).length * 10 + (p.endsWith('config.rs') ? 1 : 0);
  files.sort((a, b) => score(b) - score(a) || a.length - b.length || (a < b ? -1 : 1));
  const defined = (p) => {
    const item = src.parse(p)?.items.get(name);
    return item ? { src, file: p, item } : null;
  };
  // A file on the module path defines it...
  for (const p of files.filter((f) => score(f) >= mids.length * 10)) {
    const r = defined(p);
    if (r) return r;
  }
  // ...or the module on the path (or the crate root) re-exports it (`pub use other::Name as Alias`)...
  const lib = `${crate.dir}src/lib.rs`;
  const modFiles = mids.length ? [`${crate.dir}src/${mids.join('/')}/mod.rs`, `${crate.dir}src/${mids.join('/')}.rs`] : [];
  for (const p of [...modFiles, lib]) {
    const target = src.parse(p)?.uses.get(name);
    if (target && target.join('::') !== segs.join('::')) {
      const r = resolvePath(ctx, src, p, target[0] === 'self' ? ['crate', ...mids, ...target.slice(1)] : target, depth + 1);
      if (r) return r;
    }
  }
  // ...or, failing both, any file of the crate.
  for (const p of files) {
    const r = defined(p);
    if (r) return r;
  }
  return null;
}

/** Splits `Outer<A, B>` into ['Outer', ['A', 'B']]; `[T; N]` into ['[]', ['T']]. */
function splitGeneric(type) {
  const t = type
    .replace(/^&('\w+\s+)?/, '')
    .replace(/^(mut|dyn)\s+/, '')
    .trim();
  const arr = /^\[\s*([\s\S]+?)\s*;\s*[^\]]+\]$/.exec(t);
  if (arr) return ['[]', [arr[1]]];
  const lt = t.indexOf('<');
  if (lt < 0) return [t, []];
  const args = [];
  let depth = 0;
  let cur = '';
  for (const c of t.slice(lt + 1, t.lastIndexOf('>'))) {
    if (c === '<' || c === '(' || c === '[') depth++;
    if (c === '>' || c === ')' || c === ']') depth--;
    if (c === ',' && depth === 0) args.push(cur.trim()), (cur = '');
    else cur += c;
  }
  if (cur.trim()) args.push(cur.trim());
  return [t.slice(0, lt).trim(), args.filter((a) => !a.startsWith("'"))];
}

/** The prefix of a serde_with `with_prefix!(name "prefix-")` module named `modPath` in `file`, or null. */
function withPrefix(src, file, modPath) {
  const name = modPath.split('::').pop();
  const m = new RegExp(`with_prefix!\\s*\\(\\s*(?:pub\\s+)?${name}\\s+"([^"]*)"`).exec(src.show(file) ?? '');
  return m ? m[1] : null;
}

/** The node a `#[serde(with = "...")]` module reads: from the module's string match arms or `numeric_enum_serializing_mod!`. */
function withNode(ctx, src, file, modPath, where) {
  const name = modPath.split('::').pop();
  const key = `${src.label}:${name}`;
  if (!ctx.withCache.has(key)) {
    let node = null;
    for (const hit of src.grep(`(mod|numeric_enum_serializing_mod!\\s*\\{)\\s*${name}\\b`)) {
      const text = src.show(hit) ?? '';
      if (new RegExp(`numeric_enum_serializing_mod!\\s*\\{\\s*${name}\\b`).test(text)) node = { t: 'any' };
      const m = new RegExp(`(?:^|\\s)mod ${name}\\s*\\{`).exec(text);
      if (!m) continue;
      const body = text.slice(m.index, text.indexOf('\n}', m.index));
      const de = body.slice(body.indexOf('fn deserialize'));
      // Match arms on string literals, or on the module's `const NAME: &str = "..."` constants.
      const consts = new Map([...body.matchAll(/const (\w+)\s*:\s*&(?:'static\s+)?str\s*=\s*"([^"]*)"/g)].map((c) => [c[1], c[2]]));
      const arms = [...de.matchAll(/^\s*("([^"]+)"|[A-Z][A-Z0-9_]*)\s*(\|[^=]*)?=>/gm)].map((v) => v[2] ?? consts.get(v[1]));
      const values = [...new Set(arms.filter((v) => v !== undefined))].sort();
      const str = values.length ? { t: 'string', e: values, ...(/to_lowercase\(\)/.test(de) ? { ci: true } : {}) } : { t: 'any' };
      node = /visit_seq/.test(de) ? { t: 'array', i: str } : str;
    }
    ctx.withCache.set(key, node);
  }
  const node = ctx.withCache.get(key);
  if (!node) ctx.unread.add(`${where}: serde(with = "${modPath}")`);
  return structuredClone(node ?? { t: 'any' });
}

/** The node of a Rust type as written in `file` of `src`. */
export function typeNode(ctx, src, file, type, where, online, seen = []) {
  const [head, args] = splitGeneric(type);
  const last = head.split('::').pop();
  if (WRAPPERS.has(last) && args.length) return typeNode(ctx, src, file, args[0], where, online, seen);
  if ((ARRAYS.has(last) || head === '[]') && args.length)
    return { t: 'array', i: typeNode(ctx, src, file, args[0], `${where}[]`, false, seen) };
  if (MAPS.has(last) && args.length === 2) return { t: 'map', v: typeNode(ctx, src, file, args[1], `${where}.*`, false, seen) };
  if (INT.test(last)) return { t: 'int' };
  if (/^\(.*\)$/.test(head)) return { t: 'any' };
  if (last.endsWith('ReadableSize')) return { t: 'size' };
  const res = resolveType(ctx, src, file, head);
  if (!res && KNOWN[last]) return structuredClone(KNOWN[last]);
  if (!res) {
    ctx.unread.add(`${where}: type ${type} (definition not found)`);
    return { t: 'any' };
  }
  const { item } = res;
  if (KNOWN[item.name] && (item.kind !== 'struct' || !item.facts.derives.has('Deserialize'))) return structuredClone(KNOWN[item.name]);
  if (item.kind === 'alias') return typeNode(ctx, res.src, res.file, item.target, where, online, seen);
  const custom = !item.facts?.derives.has('Deserialize');
  if (custom && item.kind === 'enum') return customEnumNode(ctx, res, where);
  if (custom) {
    ctx.unread.add(`${where}: ${item.name} (${res.src.label} ${res.file}) has a hand-written deserializer`);
    return { t: 'any' };
  }
  if (item.kind === 'tuple' && item.types.length === 1) return typeNode(ctx, res.src, res.file, item.types[0], where, online, seen);
  if (item.kind === 'enum' && item.facts.serde.tag && !item.facts.serde.content && !item.facts.serde.untagged)
    return taggedEnumNode(ctx, res, where, seen);
  if (item.kind === 'enum') return enumNode(item, ctx, where);
  if (item.kind === 'struct') {
    if (seen.includes(item)) return { t: 'any' };
    return structNode(ctx, res, where, online, [...seen, item]);
  }
  ctx.unread.add(`${where}: ${item.kind} ${item.name}`);
  return { t: 'any' };
}

/**
 * An enum with a hand-written deserializer: a string enum when it visits strings only and the file maps string
 * literals to its variants (`"low" => Ok(IoPriority::Low)`, usually in its FromStr), else any.
 */
function customEnumNode(ctx, res, where) {
  const { item } = res;
  const text = res.src.parse(res.file).text;
  const m = new RegExp(`impl\\s*<'de>\\s*(?:serde::)?(?:de::)?Deserialize<'de>\\s+for\\s+${item.name}\\s*\\{`).exec(text);
  const body = m ? text.slice(m.index, text.indexOf('\n}', m.index)) : '';
  const values = [...text.matchAll(new RegExp(`"([^"]+)"\\s*=>\\s*(?:Ok\\()?(?:Self|${item.name})::`, 'g'))].map((v) => v[1]);
  if (m && !/visit_(bool|i64|u64|f64|seq|map)/.test(body) && values.length) return { t: 'string', e: [...new Set(values)].sort() };
  ctx.unread.add(`${where}: ${item.name} (${res.src.label} ${res.file}) has a hand-written deserializer`);
  return { t: 'any' };
}

/**
 * An internally tagged enum (`#[serde(tag = "type")]`, e.g. tikv components/encryption/src/config.rs
 * `MasterKeyConfig`): a table of the tag key (the variant names) and the fields of every `{ ... }` variant.
 */
function taggedEnumNode(ctx, res, where, seen) {
  const { item } = res;
  const names = new Set();
  const keys = {};
  for (const v of item.variants) {
    if (v.facts.serde.skip || v.facts.serde.skip_deserializing) continue;
    names.add(v.facts.serde.rename ?? renameAll(v.ident, item.facts.serde.rename_all, false));
    for (const a of v.facts.aliases) names.add(a);
    if (v.unit) continue;
    if (!v.fields) return { t: 'any' };
    const variant = { kind: 'struct', name: `${item.name}::${v.ident}`, fields: v.fields, facts: v.facts };
    for (const [k, node] of Object.entries(structNode(ctx, { ...res, item: variant }, where, false, [...seen, item]).k)) keys[k] ??= node;
  }
  return { t: 'table', k: { ...keys, [item.facts.serde.tag]: { t: 'string', e: [...names].sort() } } };
}

function enumNode(item, ctx, where) {
  const s = item.facts.serde;
  if (s.untagged || s.tag || item.variants.some((v) => !v.unit)) return { t: 'any' };
  const values = new Set();
  for (const v of item.variants) {
    if (v.facts.serde.skip || v.facts.serde.skip_deserializing || v.facts.serde.other) continue;
    values.add(v.facts.serde.rename ?? renameAll(v.ident, s.rename_all, false));
    for (const a of v.facts.aliases) values.add(a);
  }
  if (!values.size) {
    ctx.unread.add(`${where}: enum ${item.name} without variants read`);
    return { t: 'any' };
  }
  return { t: 'string', e: [...values].sort() };
}

/**
 * The table a serde struct reads. `online` says whether the struct is changed online as an OnlineConfig
 * submodule of a registered module; a field then is online unless `#[online_config(skip)]`/`(hidden)`.
 */
export function structNode(ctx, res, where, online, seen = []) {
  const { item, src, file } = res;
  const table = { t: 'table', k: {} };
  const onlineStruct = online === true && item.facts.derives.has('OnlineConfig');
  for (const field of item.fields) {
    const fx = field.facts;
    if (fx.serde.skip || fx.serde.skip_deserializing || fx.cfgTest) continue;
    const key = fx.serde.rename ?? renameAll(field.ident, item.facts.serde.rename_all, true);
    const path = where ? `${where}.${key}` : key;
    const fieldOnline = typeof online === 'function' ? online(field) : onlineStruct && !fx.online.has('skip') && !fx.online.has('hidden');
    const nested = fieldOnline && (typeof online === 'function' || fx.online.has('submodule'));
    let node;
    const prefix = fx.serde.flatten && fx.serde.with ? withPrefix(src, file, fx.serde.with) : null;
    if (prefix !== null) {
      const inner = typeNode(ctx, src, file, field.type, where, nested, seen);
      if (inner.t === 'table') for (const [k, v] of Object.entries(inner.k)) table.k[prefix + k] = v;
      else ctx.unread.add(`${path}: flattened ${field.type} not read`);
      continue;
    }
    if (fx.serde.with || fx.serde.deserialize_with) node = withNode(ctx, src, file, fx.serde.with ?? fx.serde.deserialize_with, path);
    else node = typeNode(ctx, src, file, field.type, fx.serde.flatten ? where : path, nested, seen);
    if (fx.serde.flatten) {
      if (node.t === 'table') Object.assign(table.k, node.k);
      else ctx.unread.add(`${path}: flattened ${field.type} not read: the keys of ${where || 'the top level'} are not all listed`);
      continue;
    }
    if (node.t !== 'table' && fieldOnline) node.o = true;
    if (fx.deprecated) node.dep = true;
    // `#[deprecated = "... moved to log.file.max_days."]`: the key that replaced it.
    const moved = /moved to `?([a-z_][\w.]*\w)/.exec(fx.deprecatedNote ?? '');
    if (moved) node.r = moved[1].replaceAll('_', '-');
    table.k[key] = node;
    for (const alias of fx.aliases) table.k[alias] = structuredClone(node);
  }
  return table;
}

/** `"name" => Module::X` pairs of TiKV's `impl From<&str> for Module` (src/config/mod.rs). */
function moduleNames(text) {
  const map = new Map();
  for (const m of text.matchAll(/"(\w+)"\s*=>\s*Module::(\w+)/g)) map.set(m[1], m[2]);
  return map;
}

/** Modules registered with the config controller by the default (raft-kv) server (components/server/src/server.rs, common.rs). */
export function registeredModules(src) {
  const found = new Set();
  for (const p of ['components/server/src/server.rs', 'components/server/src/common.rs', 'cmd/src/server.rs']) {
    for (const m of (src.show(p) ?? '').matchAll(/\.register\(\s*(?:[\w:]*::)?Module::(\w+)/g)) found.add(m[1]);
  }
  return found;
}

/** The raft-engine revision TiKV's Cargo.lock pins (commit, and version as a fallback tag). */
function lockedRaftEngine(src) {
  const lock = src.show('Cargo.lock') ?? '';
  const m = /name = "raft-engine"\nversion = "([^"]+)"\nsource = "git\+[^#"]*#([0-9a-f]+)"/.exec(lock);
  return m ? { version: m[1], commit: m[2] } : null;
}

/**
 * TiKV's TOML configuration at `tag`: { tree, unread, notes, registered, raftEngine (the raft-engine revision read) }. `raftEngineDir` (optional) is a git
 * dir of tikv/raft-engine, read at the commit TiKV's Cargo.lock pins (or at the pinned version's tag
 * when that commit is not there) for the flattened `raft-engine` keys.
 */
export function readTikvConfig({ tikvDir, tag, raftEngineDir }) {
  const src = new GitSource(tikvDir, tag, `tikv ${tag}`);
  const ctx = newContext();
  const pin = lockedRaftEngine(src);
  if (raftEngineDir && pin) {
    const has = (rev) => spawnSync('git', [`--git-dir=${raftEngineDir}`, 'cat-file', '-e', `${rev}^{commit}`]).status === 0;
    const rev = has(pin.commit) ? pin.commit : has(pin.version) ? pin.version : has(`v${pin.version}`) ? `v${pin.version}` : null;
    if (rev) {
      const ext = new GitSource(raftEngineDir, rev, `raft-engine ${rev}`);
      ext.rootDir = 'src/';
      ctx.external.raft_engine = ext;
      ctx.raftEngine = rev;
      ctx.notes.push(
        `raft-engine keys from tikv/raft-engine ${rev === pin.commit ? rev : `${rev} (pinned commit ${pin.commit} not in the mirror)`}`,
      );
    }
  }
  const root = resolveType(ctx, src, 'src/config/mod.rs', 'TikvConfig');
  if (!root) throw new Error(`TikvConfig not found in src/config/mod.rs at ${tag}`);
  const names = moduleNames(src.show('src/config/mod.rs'));
  const registered = registeredModules(src);
  const top = (field) => field.facts.online.has('submodule') && registered.has(names.get(field.ident));
  const tree = structNode(ctx, root, '', top);
  dropUnknownReplacements(tree, tree, ctx);
  return { tree, unread: [...ctx.unread].sort(), notes: ctx.notes, registered: [...registered].sort(), raftEngine: ctx.raftEngine };
}

/** Keeps "r" only where it names a key of the tree (the deprecation note names a field path, not always a key). */
function dropUnknownReplacements(root, node, ctx, where = '') {
  for (const [key, child] of Object.entries(node.k ?? {})) {
    const path = where ? `${where}.${key}` : key;
    if (child.r && !child.r.split('.').reduce((n, part) => n?.k?.[part], root)) {
      ctx.notes.push(`${path}: replacement ${child.r} is not a key; left out`);
      delete child.r;
    }
    if (child.t === 'table') dropUnknownReplacements(root, child, ctx, path);
  }
}

/** Counts the leaf keys of a tree (tables are not counted, their keys are) and the online ones. */
export function countKeys(node) {
  let keys = 0;
  let online = 0;
  for (const child of Object.values(node.k ?? {})) {
    if (child.t === 'table') {
      const c = countKeys(child);
      keys += c.keys;
      online += c.online;
    } else {
      keys++;
      if (child.o) online++;
    }
  }
  return { keys, online };
}
