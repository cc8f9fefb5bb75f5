// Cross-checks a generated config schema against each release's own config template: TiKV's
// etc/config-template.toml and PD's conf/config.toml at the tag of each line (the tag is the one the schema's
// "sources" names). The templates hold mostly commented-out keys under `[section]` / `## [section]` headers, so
// they are read loosely: leading `#`s are stripped, `[a.b]` / `[[a.b]]` lines open a table and `key = value`
// lines name a key of the current table. A template key the schema says a line does not read is listed: it is
// either a key the generator missed or one the template documents but the source does not read.

import { execFileSync } from 'node:child_process';

/** The template file each server ships, per repository. */
export const TEMPLATES = { tikv: 'etc/config-template.toml', pd: 'conf/config.toml' };

const BARE = /^[A-Za-z0-9_-]+$/;
const KEY_PART = String.raw`(?:[A-Za-z0-9_-]+|"[^"\n]*")`;
const HEADER = new RegExp(String.raw`^\[(\[?)\s*(${KEY_PART}(?:\s*\.\s*${KEY_PART})*)\s*\](\]?)$`);
// `=` but not `==` or `=>` (prose such as `value => meaning` tables in comments).
const KEY_LINE = new RegExp(String.raw`^(${KEY_PART}(?:\s*\.\s*${KEY_PART})*)\s*=(?![=>])\s*(\S.*)$`);

/** A dotted TOML key (`a."b.c".d`) as its parts. */
function splitKey(text) {
  const parts = [];
  for (const m of text.matchAll(/"([^"\n]*)"|([A-Za-z0-9_-]+)/g)) parts.push(m[1] ?? m[2]);
  return parts;
}

/**
 * The keys a template names, loosely: each line with its leading `#`s and blanks stripped is a table header
 * (`[a.b]`, `[[a.b]]`: an array of tables) or a `key = value` line (a key of the table last opened). Returns the
 * tables and the keys (full paths, as part arrays) in the order first seen, each once, with its 1-based line.
 */
export function parseTemplate(text) {
  const tables = [];
  const keys = [];
  const seen = new Set();
  let table = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/^[\s#]+/, '').trimEnd();
    const h = HEADER.exec(line);
    if (h && h[1] === h[3].replace(']', '[')) {
      table = splitKey(h[2]);
      const id = `t:${table.join('\0')}`;
      if (!seen.has(id)) {
        seen.add(id);
        tables.push({ path: table, array: h[1] === '[', line: i + 1 });
      }
      return;
    }
    const k = KEY_LINE.exec(line);
    if (!k) return;
    const full = [...table, ...splitKey(k[1])];
    const id = `k:${full.join('\0')}`;
    if (seen.has(id)) return;
    seen.add(id);
    keys.push({ path: full, line: i + 1 });
  });
  return { tables, keys };
}

/** A key path as text (`a.b."c.d"`). */
export function keyText(parts) {
  return parts.map((p) => (BARE.test(p) ? p : JSON.stringify(p))).join('.');
}

/** Whether a node of a schema with these lines is read by `line`: from its "s" on, before its "u". */
function readBy(node, line, lines) {
  const at = lines.indexOf(line);
  if (node.s && lines.indexOf(node.s) > at) return false;
  if (node.u && lines.indexOf(node.u) <= at) return false;
  return true;
}

/**
 * Whether `line` of a schema reads the key at `parts`: null when it does, else why not. Below a map any key is
 * taken (its values are checked against the map's value node); below an "any" node anything is; an array of
 * tables is looked into through its item node.
 */
export function lookup(schema, parts, line) {
  let node = { t: 'table', k: schema.keys };
  for (let i = 0; i < parts.length; i++) {
    if (node.t === 'any') return null;
    if (node.t === 'array' && node.i) node = node.i;
    const at = keyText(parts.slice(0, i + 1));
    if (node.t === 'map') {
      node = node.v ?? { t: 'any' };
      continue;
    }
    if (node.t !== 'table') return `${keyText(parts.slice(0, i))} is a ${node.t}, not a table`;
    const next = node.k?.[parts[i]];
    if (!next) return i ? `no key ${at}` : `no top-level key ${at}`;
    if (!readBy(next, line, schema.lines)) return `${at} is read only in [${next.s ?? schema.lines[0]}, ${next.u ?? 'now'})`;
    node = next;
  }
  return null;
}

/** The tag a schema line came from, out of its "sources" text (`tikv/tikv v8.5.7 (...)`). */
export function sourceTag(source) {
  const m = /^\S+ (v\d+\.\d+\.\d+\S*)/.exec(source);
  if (!m) throw new Error(`no tag in source "${source}"`);
  return m[1];
}

/**
 * For each line of `schema`, the template at the line's tag (from the git dir `gitDir`) against the schema:
 * { line, tag, keys: how many template keys, tables, missing: [{ key, line (in the template), why }] }, where
 * missing lists the template tables and keys that line of the schema does not read.
 */
export function crossCheck(schema, gitDir) {
  const file = TEMPLATES[schema.server];
  if (!file) throw new Error(`no config template known for ${schema.server}`);
  return schema.lines.map((line) => {
    const tag = sourceTag(schema.sources[line]);
    let text;
    try {
      text = execFileSync('git', [`--git-dir=${gitDir}`, 'show', `${tag}:${file}`], { encoding: 'utf8', stdio: 'pipe' });
    } catch {
      return { line, tag, file, keys: 0, tables: 0, missing: [], absent: true };
    }
    const t = parseTemplate(text);
    const missing = [];
    for (const e of [...t.tables, ...t.keys]) {
      const why = lookup(schema, e.path, line);
      if (why) missing.push({ key: keyText(e.path), line: e.line, why });
    }
    missing.sort((a, b) => a.line - b.line);
    return { line, tag, file, keys: t.keys.length, tables: t.tables.length, missing };
  });
}

/** Prints crossCheck's result for one server. */
export function printCrossCheck(server, results) {
  for (const r of results) {
    if (r.absent) {
      console.log(`cross-check ${server} ${r.line}: no ${r.file} at ${r.tag}`);
      continue;
    }
    console.log(
      `cross-check ${server} ${r.line} (${r.file} at ${r.tag}): ${r.keys} keys, ${r.tables} tables, ${r.missing.length} not in the schema`,
    );
    for (const m of r.missing) console.log(`  ${r.file}:${m.line} ${m.key}: ${m.why}`);
  }
}
