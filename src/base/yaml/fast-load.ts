/**
 * The fast way to read YAML: js-yaml, with plain scalars resolved exactly as kubectl resolves them
 * (`scalar.ts`). Only clean input takes this path: anything that needs a message or a warning (a form
 * YAML 1.2 tools read differently, a merge, a tag, a key that is not text) makes it give up, and the
 * text is read again by `read.ts`, which knows lines and says what is wrong.
 */
import * as jsyaml from 'js-yaml';
import { loadAll, Schema, Type } from 'js-yaml';
import { readPlainScalar, type PlainScalar, type ScalarKind } from './scalar';

// js-yaml exports its built-in types at run time; its type declarations leave them out.
const types = (jsyaml as unknown as { types: Record<'str' | 'seq' | 'map', Type> }).types;

/** Thrown from inside js-yaml to give up on the text. */
class NotClean extends Error {}

let lastText: string | undefined;
let lastReading: PlainScalar | undefined;

/** js-yaml asks each implicit type in turn about the same text: read it once. */
function reading(text: string): PlainScalar {
  if (text !== lastText) {
    lastText = text;
    lastReading = readPlainScalar(text);
  }
  return lastReading!;
}

const implicit = (kind: ScalarKind) =>
  new Type(`tag:yaml.org,2002:${kind}`, {
    kind: 'scalar',
    resolve: (text: string | null) => (text === null ? kind === 'null' : reading(text).kind === kind),
    construct: (text: string | null) => {
      if (text === null) return null;
      const read = reading(text);
      if (read.refused || read.differsFrom12) throw new NotClean();
      return read.value;
    },
  });

const KUBECTL = new Schema({
  explicit: [types.str, types.seq, types.map],
  implicit: [implicit('null'), implicit('bool'), implicit('int'), implicit('float')],
});

/** A plain scalar that may resolve to something other than text: a number, a boolean, null. */
const NON_TEXT = String.raw`(?:[-+]?(?:\d|\.\w)|~|true|false|True|False|TRUE|FALSE|null|Null|NULL)`;
/** Such a scalar as a block key (at a line's start, maybe after `- `), a directive, or text after `---`. */
const AT_LINE_START = new RegExp(String.raw`^[ \t]*(?:-[ \t]+)*${NON_TEXT}[^\s:]*[ \t]*:(?:\s|$)|^%|^---[^\S\n]*[^\s#]`, 'm');
/** Such a scalar as a flow key (`{1: x}`), or a mapping or list as a key. */
const IN_FLOW = new RegExp(String.raw`[{,][ \t]*${NON_TEXT}[^\s:,{}[\]]*[ \t]*:(?:\s|$)|[\]}][ \t]*:(?:\s|$)`);
const EXPLICIT_KEY = /(?:^|\s)\?(?:\s|$)/;

/**
 * Text the fast path leaves to the full reader: a key that may not be text (a number, a boolean, null,
 * a mapping or a list), an explicit key, a merge, a directive, or content after `---`. Cheap tests
 * first: this runs on every input.
 */
function notForFast(text: string): boolean {
  return (
    text.includes('<<') ||
    AT_LINE_START.test(text) ||
    ((text.includes('{') || text.includes('[')) && IN_FLOW.test(text)) ||
    (text.includes('?') && EXPLICIT_KEY.test(text))
  );
}

/** Every document of the text as plain values, or undefined when the text needs the full reader. */
export function fastLoadAll(text: string): unknown[] | undefined {
  if (notForFast(text)) return undefined;
  try {
    return loadAll(text, undefined, { schema: KUBECTL });
  } catch {
    return undefined;
  }
}
