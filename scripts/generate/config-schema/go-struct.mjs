// A small reader of Go struct declarations, enough to list the TOML keys a Go server reads from its
// config file (BurntSushi/toml rules): the type declarations of a package (`type X struct {...}`,
// `type X Y`, grouped `type (...)`), its imports, and which types have an `UnmarshalText` method.
//
// It does not type-check Go: it tokenizes the source, skips function bodies and values, and reads each
// type expression (named, pointer, slice, array, map, inline struct, interface, func, chan).
// Used by go-config.mjs (PD from its git tags, TiDB from saved files); tested by
// test/unit/scripts/config-schema-go.test.ts.

/**
 * Go source → tokens: { k: 'id' | 'str' | 'raw' | 'p' | 'c' | 'nl', v }. Comments are kept ('c'),
 * newlines are tokens ('nl'), so that struct fields can be told apart line by line.
 */
export function tokenize(src) {
  const out = [];
  let i = 0;
  const n = src.length;
  while (i < n) {
    const ch = src[i];
    if (ch === '\n') {
      out.push({ k: 'nl', v: '\n' });
      i++;
    } else if (ch === ' ' || ch === '\t' || ch === '\r') {
      i++;
    } else if (ch === '/' && src[i + 1] === '/') {
      const end = src.indexOf('\n', i);
      const stop = end < 0 ? n : end;
      out.push({ k: 'c', v: src.slice(i + 2, stop) });
      i = stop;
    } else if (ch === '/' && src[i + 1] === '*') {
      const end = src.indexOf('*/', i + 2);
      const stop = end < 0 ? n : end + 2;
      out.push({ k: 'c', v: src.slice(i + 2, stop - 2) });
      i = stop;
    } else if (ch === '`') {
      const end = src.indexOf('`', i + 1);
      const stop = end < 0 ? n : end + 1;
      out.push({ k: 'raw', v: src.slice(i + 1, stop - 1) });
      i = stop;
    } else if (ch === '"' || ch === "'") {
      let j = i + 1;
      while (j < n && src[j] !== ch && src[j] !== '\n') j += src[j] === '\\' ? 2 : 1;
      out.push({ k: 'str', v: src.slice(i + 1, j) });
      i = j + 1;
    } else if (/[A-Za-z_\u0080-\uffff]/.test(ch)) {
      let j = i + 1;
      while (j < n && /[A-Za-z0-9_\u0080-\uffff]/.test(src[j])) j++;
      out.push({ k: 'id', v: src.slice(i, j) });
      i = j;
    } else if (/[0-9]/.test(ch)) {
      let j = i + 1;
      while (j < n && /[0-9A-Za-z_.]/.test(src[j])) j++;
      out.push({ k: 'num', v: src.slice(i, j) });
      i = j;
    } else {
      out.push({ k: 'p', v: ch });
      i++;
    }
  }
  return out;
}

const OPEN = { '(': ')', '[': ']', '{': '}' };

/** Index just past the bracket that closes the one at `i`. */
function skipBalanced(toks, i) {
  const stack = [];
  for (let j = i; j < toks.length; j++) {
    const t = toks[j];
    if (t.k !== 'p') continue;
    if (OPEN[t.v]) stack.push(OPEN[t.v]);
    else if (t.v === stack[stack.length - 1]) {
      stack.pop();
      if (stack.length === 0) return j + 1;
    }
  }
  return toks.length;
}

const skipNl = (toks, i) => {
  while (i < toks.length && (toks[i].k === 'nl' || toks[i].k === 'c')) i++;
  return i;
};
const isP = (t, v) => t !== undefined && t.k === 'p' && t.v === v;
const isId = (t, v) => t !== undefined && t.k === 'id' && (v === undefined || t.v === v);

/**
 * Reads a type expression at `i`. Returns [type, next index]. Types:
 * { kind: 'named', pkg?, name } | { kind: 'ptr'|'slice'|'array'|'chan', elem } | { kind: 'map', key, elem }
 * | { kind: 'struct', fields } | { kind: 'any' } | { kind: 'func' }.
 */
export function parseType(toks, i) {
  const t = toks[i];
  if (isP(t, '*')) {
    const [elem, j] = parseType(toks, i + 1);
    return [{ kind: 'ptr', elem }, j];
  }
  if (isP(t, '(')) {
    const [inner, j] = parseType(toks, i + 1);
    return [inner, j + 1];
  }
  if (isP(t, '[')) {
    if (isP(toks[i + 1], ']')) {
      const [elem, j] = parseType(toks, i + 2);
      return [{ kind: 'slice', elem }, j];
    }
    const [elem, j] = parseType(toks, skipBalanced(toks, i));
    return [{ kind: 'array', elem }, j];
  }
  if (isId(t, 'map')) {
    const close = skipBalanced(toks, i + 1);
    const [key] = parseType(toks, i + 2);
    const [elem, j] = parseType(toks, close);
    return [{ kind: 'map', key, elem }, j];
  }
  if (isP(t, '<') && isP(toks[i + 1], '-') && isId(toks[i + 2], 'chan')) {
    const [elem, j] = parseType(toks, i + 3);
    return [{ kind: 'chan', elem }, j];
  }
  if (isId(t, 'chan')) {
    const [elem, j] = parseType(toks, isP(toks[i + 1], '<') ? i + 3 : i + 1);
    return [{ kind: 'chan', elem }, j];
  }
  if (isId(t, 'struct')) {
    const close = skipBalanced(toks, i + 1);
    return [{ kind: 'struct', fields: parseFields(toks.slice(i + 2, close - 1)) }, close];
  }
  if (isId(t, 'interface')) return [{ kind: 'any' }, skipBalanced(toks, i + 1)];
  if (isId(t, 'func')) {
    let j = skipBalanced(toks, i + 1);
    if (isP(toks[j], '(')) j = skipBalanced(toks, j);
    else if (toks[j] && (toks[j].k === 'id' || isP(toks[j], '*') || isP(toks[j], '['))) [, j] = parseType(toks, j);
    return [{ kind: 'func' }, j];
  }
  if (isId(t)) {
    let j = i + 1;
    let type = { kind: 'named', name: t.v };
    if (isP(toks[j], '.') && isId(toks[j + 1])) {
      type = { kind: 'named', pkg: t.v, name: toks[j + 1].v };
      j += 2;
    }
    if (t.v === 'any' && type.pkg === undefined) type = { kind: 'any' };
    if (isP(toks[j], '[')) j = skipBalanced(toks, j); // type arguments
    return [type, j];
  }
  throw new Error(`unexpected token ${JSON.stringify(t)} where a Go type was expected`);
}

/** The value of `key:"..."` in a struct tag, or undefined. */
export function tagValue(tag, key) {
  if (tag === undefined) return undefined;
  const m = new RegExp(`(?:^|\\s)${key}:"([^"]*)"`).exec(tag);
  return m ? m[1] : undefined;
}

/**
 * The fields of a struct body (tokens between the braces):
 * [{ names: [..] (empty when embedded), type, tag?, doc: 'comment text' }].
 */
export function parseFields(toks) {
  const fields = [];
  let doc = [];
  let i = 0;
  while (i < toks.length) {
    const t = toks[i];
    if (t.k === 'nl' || isP(t, ';')) {
      if (t.k === 'nl' && toks[i - 1]?.k === 'nl') doc = [];
      i++;
      continue;
    }
    if (t.k === 'c') {
      doc.push(t.v);
      i++;
      continue;
    }
    // Embedded: `[*]Name[.Name]` followed by a tag, a comment, or the end of the line.
    let j = i;
    if (isP(toks[j], '*')) j++;
    let embedded = false;
    if (isId(toks[j])) {
      let k = j + 1;
      if (isP(toks[k], '.') && isId(toks[k + 1])) k += 2;
      const next = toks[k];
      embedded = next === undefined || next.k === 'nl' || next.k === 'raw' || next.k === 'str' || next.k === 'c' || isP(next, ';');
    }
    const names = [];
    if (!embedded) {
      for (;;) {
        names.push(toks[j].v);
        j++;
        if (!isP(toks[j], ',')) break;
        j = skipNl(toks, j + 1);
      }
    } else j = i;
    const [type, after] = parseType(toks, j);
    let k = after;
    let tag;
    if (toks[k] && (toks[k].k === 'raw' || toks[k].k === 'str')) tag = toks[k++].v;
    if (toks[k]?.k === 'c') doc.push(toks[k++].v);
    fields.push({ names, type, tag, doc: doc.join('\n') });
    doc = [];
    i = k;
  }
  return fields;
}

/**
 * One Go file: { pkg, imports: { alias: path }, types: { Name: type }, textTypes: Set of the type names with an
 * UnmarshalText or UnmarshalTOML method }.
 */
export function parseGoFile(src) {
  const toks = tokenize(src);
  const file = { pkg: undefined, imports: {}, types: {}, textTypes: new Set() };
  const addImport = (alias, p) => {
    if (alias === '_' || alias === '.') return;
    const name =
      alias ??
      p
        .split('/')
        .filter((s) => !/^v\d+$/.test(s))
        .pop();
    file.imports[name] = p;
  };
  const readTypeSpec = (i) => {
    const name = toks[i].v;
    let j = i + 1;
    if (isP(toks[j], '[') && !isP(toks[j + 1], ']')) {
      // generic type: skipped (not used by config structs)
      j = skipBalanced(toks, j);
      const [, end] = parseType(toks, j);
      return end;
    }
    if (isP(toks[j], '=')) j++;
    try {
      const [type, end] = parseType(toks, j);
      file.types[name] = type;
      return end;
    } catch {
      // a type this reader does not follow: read as "any"; skip its body
      file.types[name] = { kind: 'any' };
      let k = j;
      while (k < toks.length && toks[k].k !== 'nl' && !isP(toks[k], '{')) k++;
      return isP(toks[k], '{') ? skipBalanced(toks, k) : k;
    }
  };
  let i = 0;
  while (i < toks.length) {
    const t = toks[i];
    if (isId(t, 'package') && file.pkg === undefined) {
      file.pkg = toks[i + 1].v;
      i += 2;
    } else if (isId(t, 'import')) {
      if (isP(toks[i + 1], '(')) {
        const close = skipBalanced(toks, i + 1);
        for (let j = i + 2; j < close - 1; j++) {
          if (toks[j].k === 'str') addImport(isId(toks[j - 1]) || isP(toks[j - 1], '.') ? toks[j - 1].v : undefined, toks[j].v);
        }
        i = close;
      } else {
        const alias = toks[i + 1].k === 'str' ? undefined : toks[i + 1].v;
        addImport(alias, toks[alias === undefined ? i + 1 : i + 2].v);
        i += alias === undefined ? 2 : 3;
      }
    } else if (isId(t, 'type')) {
      if (isP(toks[i + 1], '(')) {
        const close = skipBalanced(toks, i + 1);
        let j = skipNl(toks, i + 2);
        while (j < close - 1) {
          j = skipNl(toks, readTypeSpec(j));
          while (j < close - 1 && (toks[j].k === 'nl' || toks[j].k === 'c' || isP(toks[j], ';'))) j++;
        }
        i = close;
      } else i = readTypeSpec(i + 1);
    } else if (isId(t, 'func')) {
      // method receiver: func (r *T) Name(
      if (isP(toks[i + 1], '(')) {
        const close = skipBalanced(toks, i + 1);
        const recv = toks.slice(i + 2, close - 1).filter((x) => x.k === 'id');
        const method = toks[close];
        if ((isId(method, 'UnmarshalText') || isId(method, 'UnmarshalTOML')) && recv.length > 0)
          file.textTypes.add(recv[recv.length - 1].v);
        i = close;
      } else i++;
    } else if (isP(t, '{') || isP(t, '(') || isP(t, '[')) {
      i = skipBalanced(toks, i); // bodies and values
    } else i++;
  }
  return file;
}

/** Several files of one package merged: { pkg, types, textTypes, importsOf: { Name: imports of the file declaring it } }. */
export function parseGoPackage(sources) {
  const pkg = { pkg: undefined, types: {}, textTypes: new Set(), importsOf: {} };
  for (const src of sources) {
    const f = parseGoFile(src);
    pkg.pkg ??= f.pkg;
    for (const [name, type] of Object.entries(f.types)) {
      pkg.types[name] = type;
      pkg.importsOf[name] = f.imports;
    }
    for (const t of f.textTypes) pkg.textTypes.add(t);
  }
  return pkg;
}
