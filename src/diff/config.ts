/**
 * What changed inside a component's ConfigMap: TOML files compared key by key (dotted keys, old -> new
 * values), scripts only said to have changed, anything else named by its data key.
 */
import { isTomlTable, parseToml, tomlEqual, type TomlTable, type TomlValue } from '../base/toml';
import type { ConfigKeyChange } from './report';
import { SHORT_VALUE } from './values';

export interface DataDiff {
  readonly keys: ConfigKeyChange[];
  readonly scripts: string[];
  readonly otherData: string[];
}

/** A data key holding a script rather than a config file. */
export function isScript(dataKey: string, text: string | undefined): boolean {
  return /script/i.test(dataKey) || /\.sh$/.test(dataKey) || (text ?? '').startsWith('#!');
}

/** Compares two ConfigMap `data` maps; either may be empty (a ConfigMap added or removed). */
export function diffConfigData(before: Readonly<Record<string, string>>, after: Readonly<Record<string, string>>): DataDiff {
  const out: DataDiff = { keys: [], scripts: [], otherData: [] };
  for (const file of [...new Set([...Object.keys(before), ...Object.keys(after)])].sort()) {
    const a = before[file];
    const b = after[file];
    if (a === b) continue;
    if (isScript(file, a ?? b)) {
      out.scripts.push(file);
      continue;
    }
    const ta = a === undefined ? {} : tryToml(a);
    const tb = b === undefined ? {} : tryToml(b);
    if (ta && tb) out.keys.push(...diffTables(file, ta, tb));
    else out.otherData.push(file);
  }
  return out;
}

function tryToml(text: string): TomlTable | undefined {
  try {
    return parseToml(text);
  } catch {
    return undefined;
  }
}

/** Leaf keys of a TOML table as dotted paths; arrays (of tables too) are leaves. */
export function flattenToml(table: TomlTable, prefix: readonly string[] = [], out = new Map<string, TomlValue>()): Map<string, TomlValue> {
  for (const [k, v] of Object.entries(table)) {
    const path = [...prefix, k];
    if (isTomlTable(v) && Object.keys(v).length > 0) flattenToml(v, path, out);
    else out.set(path.map(tomlKey).join('.'), v);
  }
  return out;
}

function diffTables(file: string, a: TomlTable, b: TomlTable): ConfigKeyChange[] {
  const fa = flattenToml(a);
  const fb = flattenToml(b);
  const keys = [...new Set([...fa.keys(), ...fb.keys()])].sort();
  const out: ConfigKeyChange[] = [];
  for (const key of keys) {
    const va = fa.get(key);
    const vb = fb.get(key);
    if (va !== undefined && vb !== undefined && tomlEqual(va, vb)) continue;
    const change = va === undefined ? 'added' : vb === undefined ? 'removed' : 'changed';
    out.push({ file, key, change, ...shown('from', va), ...shown('to', vb) });
  }
  return out;
}

function shown(side: 'from' | 'to', v: TomlValue | undefined): Partial<Record<'from' | 'to', string>> {
  if (v === undefined) return {};
  const text = tomlInline(v);
  return text.length <= SHORT_VALUE ? { [side]: text } : {};
}

const BARE_KEY = /^[A-Za-z0-9_-]+$/;

function tomlKey(k: string): string {
  return BARE_KEY.test(k) ? k : JSON.stringify(k);
}

/** A TOML value written inline, as it would appear after `key = `. */
export function tomlInline(v: TomlValue): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (v instanceof Date) return v.toISOString();
  if (Array.isArray(v)) return `[${v.map(tomlInline).join(', ')}]`;
  if (isTomlTable(v)) {
    const entries = Object.entries(v).map(([k, x]) => `${tomlKey(k)} = ${tomlInline(x)}`);
    return entries.length === 0 ? '{}' : `{ ${entries.join(', ')} }`;
  }
  return String(v);
}
