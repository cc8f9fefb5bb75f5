/**
 * A YAML emitter for plain JSON data (what Kubernetes objects are): block mappings and sequences,
 * multi-line strings as literal blocks so scripts and TOML read as written, and quoting wherever a
 * YAML 1.1 or 1.2 reader (kubectl, Argo CD, Flux) could take a plain string for another type.
 * Much faster than a general-purpose serialiser; tests check that parsing its output gives back the
 * input for every rendered object.
 */

import { LONE_SURROGATE_SOURCE } from '../patterns';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

// Characters a YAML 1.1 reader refuses raw or takes as line breaks (beyond C0): DEL, C1 (NEL among
// them), the line and paragraph separators, BOM and the non-characters U+FFFE/FFFF.
const UNPRINTABLE_CLASS = '\\u007f-\\u009f\\u2028\\u2029\\ufeff\\ufffe\\uffff';
// Printable characters only (tab allowed): anything else needs an escape, i.e. double quotes.
// Surrogates count only when alone: a pair is one printable character outside the BMP.
const NON_PRINTABLE = new RegExp(`[\\u0000-\\u0008\\u000b-\\u001f${UNPRINTABLE_CLASS}]|${LONE_SURROGATE_SOURCE}`);
// What a double-quoted scalar escapes: the quote, the backslash, all of C0 and the above.
const ESCAPED = new RegExp(`["\\\\\\u0000-\\u001f${UNPRINTABLE_CLASS}]|${LONE_SURROGATE_SOURCE}`, 'g');

/** One YAML document (no `---` marker), ending with a newline. */
export function emitYaml(value: unknown): string {
  const out: string[] = [];
  if (isBlock(value)) emitBlock(value as Json, '', out);
  else out.push(scalar(value as Json, ''));
  return `${out.join('\n')}\n`;
}

function isBlock(v: unknown): boolean {
  if (Array.isArray(v)) return v.length > 0;
  return typeof v === 'object' && v !== null && Object.keys(v).length > 0;
}

function emitBlock(value: Json, indent: string, out: string[]): void {
  if (Array.isArray(value)) {
    for (const item of value) emitEntry(`${indent}- `, `${indent}  `, item, out, true);
  } else {
    for (const [k, v] of Object.entries(value as Record<string, Json>)) {
      if (v === undefined) continue;
      const text = key(k);
      // YAML caps an implicit key at 1024 characters; a longer one takes the explicit `? key` form.
      const head = text.length > MAX_IMPLICIT_KEY ? `${indent}? ${text}\n${indent}:` : `${indent}${text}:`;
      emitEntry(head, `${indent}  `, v, out, false);
    }
  }
}

/** `head` is `key:` or `- `; nested content goes at `childIndent`. */
function emitEntry(head: string, childIndent: string, v: Json, out: string[], inSeq: boolean): void {
  if (isBlock(v)) {
    if (inSeq && !Array.isArray(v)) {
      // `- key: value` with the rest of the mapping aligned under the first key.
      const start = out.length;
      emitBlock(v, childIndent, out);
      out[start] = head + out[start].slice(childIndent.length);
    } else {
      out.push(inSeq ? head.trimEnd() : head);
      emitBlock(v, childIndent, out);
    }
    return;
  }
  const text = scalar(v, childIndent);
  out.push(inSeq ? head + text : `${head} ${text}`);
}

function scalar(v: Json, childIndent: string): string {
  if (v === null) return 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : JSON.stringify(String(v));
  if (Array.isArray(v)) return '[]';
  if (typeof v === 'object') return '{}';
  if (v.includes('\n') && canBeLiteral(v)) return literal(v, childIndent);
  return needsQuotes(v) ? quote(v) : v;
}

function key(k: string): string {
  return needsQuotes(k) ? quote(k) : k;
}

/**
 * Double quotes where nothing needs escaping (`"1"`, `"true"`); single quotes, which escape nothing but
 * `''`, keep JSON in an annotation readable; anything unprintable gets JSON's escapes.
 */
function quote(s: string): string {
  if (NON_PRINTABLE.test(s) || /[\n\r\t]/.test(s)) return doubleQuoted(s);
  return /["\\]/.test(s) ? `'${s.replace(/'/g, "''")}'` : `"${s}"`;
}

/**
 * A double-quoted scalar with YAML's own escapes for everything a reader could take otherwise: C0 and
 * C1 controls, DEL, NEL (a line break to YAML 1.1 readers such as kubectl's), the Unicode line and
 * paragraph separators, BOM, non-characters and lone surrogates. JSON's escapes would leave C1 raw.
 */
function doubleQuoted(s: string): string {
  return `"${s.replace(ESCAPED, escape)}"`;
}

const SHORT_ESCAPES: Record<string, string> = { '"': '\\"', '\\': '\\\\', '\n': '\\n', '\t': '\\t', '\r': '\\r', '\u0085': '\\N' };

function escape(c: string): string {
  const short = SHORT_ESCAPES[c];
  if (short) return short;
  const code = c.charCodeAt(0);
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** Longest key written in the implicit `key:` form (YAML allows 1024 characters; a margin for readers counting otherwise). */
const MAX_IMPLICIT_KEY = 1000;

/** A block of nothing but line breaks reads back as "", so such a string is quoted instead. */
function canBeLiteral(s: string): boolean {
  return /[^\n]/.test(s) && !NON_PRINTABLE.test(s) && !s.includes('\r');
}

/** `|`, `|-` or `|+` by trailing newlines; an indentation indicator when the text starts with a space. */
function literal(s: string, indent: string): string {
  let trailing = 0;
  while (trailing < s.length && s.charCodeAt(s.length - 1 - trailing) === 10) trailing++;
  const chomp = trailing === 0 ? '-' : trailing === 1 ? '' : '+';
  const body = trailing > 0 ? s.slice(0, s.length - 1) : s;
  const indicator = /^\n*[ \t]/.test(s) ? '2' : '';
  const lines = body.split('\n').map((line) => (line === '' ? '' : indent + line));
  return `|${indicator}${chomp}\n${lines.join('\n')}`;
}

// Words YAML 1.1 or 1.2 read as null or booleans.
const RESERVED = /^(~|null|Null|NULL|true|True|TRUE|false|False|FALSE|y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF|=|<<)$/;
// Numbers in either version: integers (with 1.1 underscores, octal, hex, binary), floats, sexagesimal, .inf/.nan.
const NUMERIC =
  /^[-+]?(0b[01_]+|0o?[0-7_]+|0x[0-9a-fA-F_]+|[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?|([0-9][0-9_]*)?\.?[0-9_]*([eE][-+]?[0-9]+)?|\.(inf|Inf|INF|nan|NaN|NAN))$/;
// Dates and timestamps (YAML 1.1 timestamp type).
const TIMESTAMP = /^\d{4}-\d\d?-\d\d?([Tt ]|$)/;

// Most keys and values (names, paths, images) are like this: plain, unless they are a reserved word.
const SAFE = /^[A-Za-z][A-Za-z0-9_./-]*$/;

function needsQuotes(s: string): boolean {
  if (SAFE.test(s)) return RESERVED.test(s);
  if (s === '' || NON_PRINTABLE.test(s) || /[\n\r\t]/.test(s)) return true;
  if (s[0] === ' ' || s[s.length - 1] === ' ') return true;
  if ('?:,[]{}#&*!|>\'"%@`'.includes(s[0])) return true;
  if (s[0] === '-' && (s.length === 1 || s[1] === ' ' || s.startsWith('---'))) return true;
  if (s.includes(': ') || s.includes(' #') || s.endsWith(':')) return true;
  return RESERVED.test(s) || NUMERIC.test(s) || TIMESTAMP.test(s);
}
