/**
 * A component's `config` as the user gave it, made a TOML table: a TOML document is parsed, a mapping
 * taken as the same table; bad input becomes an issue at its path.
 */
import { isTomlTable, parseToml, TomlSyntaxError, type TomlTable, type TomlValue } from '../base/toml';
import type { SpecIssue } from './errors';
import type { ComponentConfig } from './spec-parts';

/** A TOML string is parsed; a mapping is taken as the same table. Bad input becomes an issue. */
export function configTable(config: ComponentConfig | undefined, path: string, issues: SpecIssue[]): TomlTable {
  if (config === undefined || config === null) return {};
  if (typeof config === 'string') return parseConfigToml(config, path, issues);
  if (typeof config !== 'object' || Array.isArray(config)) {
    issues.push({ path, message: `expected a TOML document (a string) or a mapping, got ${JSON.stringify(config)}` });
    return {};
  }
  return toTable(config, path, issues);
}

/** A config given as TOML text; a syntax error becomes an issue at `path` and the table is empty. */
export function parseConfigToml(text: string, path: string, issues: SpecIssue[]): TomlTable {
  try {
    return parseToml(text);
  } catch (e) {
    // One line per problem: the parser's own message carries a code excerpt.
    const message =
      e instanceof TomlSyntaxError
        ? `invalid TOML at line ${e.line}, column ${e.column} of the config: ${e.reason}`
        : `invalid TOML: ${(e as Error).message.split('\n')[0]}`;
    issues.push({ path, message });
    return {};
  }
}

function toTable(obj: Record<string, unknown>, path: string, issues: SpecIssue[]): TomlTable {
  const out: TomlTable = {};
  for (const [key, value] of Object.entries(obj)) {
    const v = toTomlValue(value, `${path}.${key}`, issues);
    if (v !== undefined) out[key] = v;
  }
  return out;
}

function toTomlValue(value: unknown, path: string, issues: SpecIssue[]): TomlValue | undefined {
  if (value === null || value === undefined) {
    issues.push({ path, message: 'a config value cannot be empty (null); remove the key or give it a value' });
    return undefined;
  }
  if (Array.isArray(value)) {
    return value.map((v, i) => toTomlValue(v, `${path}[${i}]`, issues)).filter((v): v is TomlValue => v !== undefined);
  }
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return toTable(value as Record<string, unknown>, path, issues);
  }
  return value as TomlValue;
}

export function asTable(value: TomlValue | undefined): TomlTable {
  return isTomlTable(value) ? value : {};
}
