/**
 * The fast way to read YAML: js-yaml, with scalars resolved exactly as the YAML 1.2 core schema (what
 * the `yaml` package uses) resolves them. Only clean input takes this path; anything it cannot read,
 * and any document with a problem, is read again with `yaml`, which knows lines for messages.
 */
import * as jsyaml from 'js-yaml';
import { loadAll, Schema, Type } from 'js-yaml';
import { tomlFloat } from '../toml';

// js-yaml exports its built-in types at run time; its type declarations leave them out.
const types = (jsyaml as unknown as { types: Record<'str' | 'seq' | 'map' | 'null' | 'bool' | 'merge', Type> }).types;

const INT = /^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$/;
const FLOAT = /^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/;

const int = new Type('tag:yaml.org,2002:int', {
  kind: 'scalar',
  resolve: (data: string) => data !== null && INT.test(data),
  construct: (data: string) => (data.startsWith('0o') ? parseInt(data.slice(2), 8) : data.startsWith('0x') ? parseInt(data.slice(2), 16) : Number(data)),
});

/** A float written as `1.0` stays a float for TOML (see `tomlFloat`), as the slow path keeps it. */
const float = new Type('tag:yaml.org,2002:float', {
  kind: 'scalar',
  resolve: (data: string) => data !== null && FLOAT.test(data) && !INT.test(data),
  construct: (data: string) => {
    const lower = data.toLowerCase();
    const v = lower.endsWith('.inf') ? (lower.startsWith('-') ? -Infinity : Infinity) : lower === '.nan' ? NaN : Number(data);
    return Number.isInteger(v) ? tomlFloat(v) : v;
  },
});

const CORE_1_2 = new Schema({
  explicit: [types.str, types.seq, types.map],
  implicit: [types.null, types.bool, int, float, types.merge],
});

/** Every document of the text as plain values, or undefined when js-yaml cannot read it. */
export function fastLoadAll(text: string): unknown[] | undefined {
  try {
    return loadAll(text, undefined, { schema: CORE_1_2 });
  } catch {
    return undefined;
  }
}
