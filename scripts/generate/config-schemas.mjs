#!/usr/bin/env node
// Generates the per-server config key schemas (src/tidbcluster/config-schema/generated/<server>.json): every key
// a server reads from its TOML config file in each supported release line, merged into one tree whose nodes say
// the first line that reads a key ("s"), the first that no longer does ("u"), the first that deprecates it
// ("dep") and whether it can be changed online ("o").
//
// Usage: node scripts/generate/config-schemas.mjs [--check] [--cross-check] --tikv <git-dir> [--raft-engine <git-dir>]
//          [--pd <git-dir> --log <git-dir>] [--tidb <files-dir>]
//   --check        writes nothing: exits 1 when a committed file differs from what the sources give
//   --cross-check  also lists, per line, the keys of the release's own config template (TiKV, PD) that the
//                  generated schema says the line does not read (scripts/generate/config-schema/templates.mjs)
//   --tikv         a bare clone of tikv/tikv (read by scripts/generate/config-schema/rust-config.mjs)
//   --raft-engine  a bare clone of tikv/raft-engine, for the keys TiKV flattens into [raft-engine]
//   --pd, --log    clones of tikv/pd and pingcap/log; --tidb: saved TiDB files. Both are read by
//                  scripts/generate/config-schema/go-config.mjs (`goConfigSchema`), which says what they hold.
// The release lines are LINES plus the newest line tagged upstream with a final (non-prerelease) tag; each line
// is read at its newest final patch tag. Output is deterministic: sorted keys, 2-space JSON, trailing newline.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { countKeys, readTikvConfig } from './config-schema/rust-config.mjs';
import { crossCheck, printCrossCheck } from './config-schema/templates.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO_ROOT = path.resolve(HERE, '..', '..');
const OUT_DIR = path.join(REPO_ROOT, 'src/tidbcluster/config-schema/generated');
/** The release lines the schemas cover, oldest first (the newest tagged line is added when newer). */
export const LINES = ['7.1', '7.5', '8.1', '8.5'];

const cmpVer = (a, b) => {
  const x = a.split('.').map(Number);
  const y = b.split('.').map(Number);
  for (let i = 0; i < Math.max(x.length, y.length); i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
};

/** { line → newest final tag } for LINES and the newest line with a final tag, from `git tag`. */
export function lineTags(gitDir) {
  const tags = execFileSync('git', [`--git-dir=${gitDir}`, 'tag'], { encoding: 'utf8' })
    .split('\n')
    .filter((t) => /^v\d+\.\d+\.\d+$/.test(t));
  const newest = new Map();
  for (const t of tags) {
    const v = t.slice(1);
    const line = v.split('.').slice(0, 2).join('.');
    if (!newest.has(line) || cmpVer(v, newest.get(line).slice(1)) > 0) newest.set(line, t);
  }
  const lines = [...LINES];
  const top = [...newest.keys()].sort(cmpVer).pop();
  if (top && cmpVer(top, lines[lines.length - 1]) > 0) lines.push(top);
  const out = {};
  for (const l of lines) {
    if (!newest.has(l)) throw new Error(`no final tag for release line ${l} in ${gitDir}`);
    out[l] = newest.get(l);
  }
  return out;
}

/** Merges one node per line (undefined where the line does not read the key) into the compact node. */
export function mergeNodes(perLine, lines) {
  const idx = perLine.map((n, i) => (n ? i : -1)).filter((i) => i >= 0);
  const present = idx.map((i) => perLine[i]);
  const newest = present[present.length - 1];
  const out = {};
  const types = new Set(present.map((n) => n.t));
  if (types.size === 1) out.t = newest.t;
  else if (newest.t === 'table') out.t = 'table';
  else if ([...types].every((t) => t === 'size' || t === 'int')) out.t = 'size';
  else out.t = 'any';
  if (out.t === 'table') {
    const keys = new Set(present.flatMap((n) => Object.keys(n.k ?? {})));
    out.k = {};
    for (const key of [...keys].sort())
      out.k[key] = mergeNodes(
        perLine.map((n) => n?.k?.[key]),
        lines,
      );
  }
  for (const sub of ['v', 'i']) {
    if (out.t === 'map' || out.t === 'array') {
      const kids = perLine.map((n) => n?.[sub]);
      if (kids.some(Boolean)) out[sub] = mergeNodes(kids, lines);
    }
  }
  if (out.t === 'string' && present.every((n) => n.e)) out.e = [...new Set(present.flatMap((n) => n.e))].sort();
  if (out.e && present.some((n) => n.ci)) out.ci = true;
  if (idx[0] > 0) out.s = lines[idx[0]];
  if (idx[idx.length - 1] < lines.length - 1) out.u = lines[idx[idx.length - 1] + 1];
  if (newest.dep) out.dep = lines[idx[present.findIndex((n, k) => present.slice(k).every((m) => m.dep))]];
  if (newest.r) out.r = newest.r;
  if (out.t !== 'table') {
    const on = present.map((n) => n.o === true);
    const first = on.indexOf(true);
    if (first >= 0 && on.slice(first).every(Boolean)) out.o = first === 0 ? true : lines[idx[first]];
  }
  return out;
}

/** The whole file for one server: { server, sources, lines, keys }. */
export function schemaFile(server, perLine) {
  const lines = perLine.map((p) => p.line);
  const sources = Object.fromEntries(perLine.map((p) => [p.line, p.source]));
  const merged = mergeNodes(
    perLine.map((p) => p.tree),
    lines,
  );
  return { server, sources, lines, keys: merged.k };
}

/** Stable JSON text: keys of "k" tables sorted (done by mergeNodes), 2-space indent, trailing newline. */
export function schemaJson(file) {
  return `${JSON.stringify(file, null, 2)}\n`;
}

function report(server, perLine) {
  for (const p of perLine) {
    const c = countKeys(p.tree);
    console.log(`${server} ${p.line} (${p.source}): ${c.keys} keys, ${c.online} online`);
  }
  const unread = [...new Set(perLine.flatMap((p) => (p.unread ?? []).map((u) => `${u}`)))].sort();
  if (unread.length) console.log(`${server}: not read (typed "any"):\n  ${unread.join('\n  ')}`);
}

/** Writes (or with --check compares) one generated file. */
function output(server, text, check) {
  const file = path.join(OUT_DIR, `${server}.json`);
  if (check) {
    const same = existsSync(file) && readFileSync(file, 'utf8') === text;
    console.log(`${path.relative(REPO_ROOT, file)}: ${same ? 'up to date' : 'differs from what the sources give'}`);
    if (!same) process.exitCode = 1;
    return;
  }
  mkdirSync(OUT_DIR, { recursive: true });
  writeFileSync(file, text);
  console.log(`wrote ${path.relative(REPO_ROOT, file)}`);
}

async function main(argv) {
  const check = argv.includes('--check');
  const cross = argv.includes('--cross-check');
  argv = argv.filter((a) => a !== '--check' && a !== '--cross-check');
  const args = {};
  for (let i = 0; i < argv.length; i += 2) {
    if (!argv[i].startsWith('--') || argv[i + 1] === undefined)
      throw new Error(
        'usage: config-schemas.mjs --tikv <git-dir> [--raft-engine <git-dir>] [--pd <git-dir> --log <git-dir>] [--tidb <dir>]',
      );
    args[argv[i].slice(2)] = argv[i + 1];
  }
  if (args.tikv) {
    const tags = lineTags(args.tikv);
    const perLine = Object.entries(tags).map(([line, tag]) => {
      const r = readTikvConfig({ tikvDir: args.tikv, tag, raftEngineDir: args['raft-engine'] });
      for (const n of r.notes) console.log(`tikv ${line}: ${n}`);
      const source = `tikv/tikv ${tag} (src/config/mod.rs TikvConfig; online: the modules components/server/src/server.rs registers)${r.raftEngine ? `; tikv/raft-engine ${r.raftEngine}` : ''}`;
      return { line, source, tree: r.tree, unread: r.unread.map((u) => `${line}: ${u}`) };
    });
    report('tikv', perLine);
    const file = schemaFile('tikv', perLine);
    output('tikv', schemaJson(file), check);
    if (cross) printCrossCheck('tikv', crossCheck(file, args.tikv));
  }
  const goReader = path.join(HERE, 'config-schema/go-config.mjs');
  const goJobs = [];
  if (args.pd) goJobs.push(['pd', { gitDir: args.pd, logGitDir: args.log }]);
  if (args.tidb) goJobs.push(['tidb', { tidbFiles: args.tidb }]);
  for (const [server, opts] of goJobs) {
    if (!existsSync(goReader)) {
      console.log(`${server}: ${path.relative(REPO_ROOT, goReader)} does not exist; skipped`);
      continue;
    }
    const { goConfigSchema } = await import(pathToFileURL(goReader).href);
    const file = goConfigSchema({ server, ...opts });
    output(server, schemaJson(file), check);
    if (cross && server === 'pd') printCrossCheck(server, crossCheck(file, opts.gitDir));
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).catch((e) => {
    console.error(e.stack ?? String(e));
    process.exit(1);
  });
}
