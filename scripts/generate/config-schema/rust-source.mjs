// Reading Rust source text for the config schema generators: comment stripping, `macro_rules!` expansion of
// struct-generating macros, `use` trees, and the serde/online_config facts of structs and enums (names, field
// types, attributes). No Rust semantics beyond what config structs use; callers resolve types
// (scripts/generate/config-schema/rust-config.mjs).

/** Replaces comments by spaces, except that a doc or line comment mentioning "deprecated" becomes `#[__deprecated]`. */
export function stripComments(src) {
  let out = '';
  let i = 0;
  const n = src.length;
  while (i < n) {
    const c = src[i];
    const d = src[i + 1];
    if (c === '/' && d === '/') {
      const end = src.indexOf('\n', i);
      const stop = end < 0 ? n : end;
      const text = src.slice(i, stop);
      const own = /^\s*$/.test(src.slice(src.lastIndexOf('\n', i - 1) + 1, i));
      out += own && /\bdeprecated\b/i.test(text) ? '#[__deprecated]' : ' ';
      i = stop;
    } else if (c === '/' && d === '*') {
      let depth = 1;
      let j = i + 2;
      while (j < n && depth > 0) {
        if (src[j] === '/' && src[j + 1] === '*') depth++, (j += 2);
        else if (src[j] === '*' && src[j + 1] === '/') depth--, (j += 2);
        else j++;
      }
      const text = src.slice(i, j);
      out += /\bdeprecated\b/i.test(text) && text.startsWith('/**') ? '#[__deprecated]' : text.replace(/[^\n]/g, ' ');
      i = j;
    } else if (c === 'r' && (d === '"' || (d === '#' && /^r#+"/.test(src.slice(i, i + 10)))) && !/\w/.test(src[i - 1] ?? '')) {
      const hashes = /^r(#*)"/.exec(src.slice(i))[1];
      const close = `"${hashes}`;
      const end = src.indexOf(close, i + 2 + hashes.length);
      const stop = end < 0 ? n : end + close.length;
      out += src.slice(i, stop);
      i = stop;
    } else if (c === '"') {
      let j = i + 1;
      while (j < n && src[j] !== '"') j += src[j] === '\\' ? 2 : 1;
      out += src.slice(i, j + 1);
      i = j + 1;
    } else if (c === "'" && /^'(\\.|[^\\'\n])'/.test(src.slice(i, i + 4))) {
      const m = /^'(\\.|[^\\'\n])'/.exec(src.slice(i, i + 4));
      out += m[0];
      i += m[0].length;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

const OPEN = { '(': ')', '[': ']', '{': '}' };

/** Index just past the bracket that closes the one at `start` (strings skipped). */
export function matchBracket(text, start) {
  const stack = [];
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      i++;
      while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    } else if (OPEN[c]) stack.push(OPEN[c]);
    else if (c === ')' || c === ']' || c === '}') {
      if (stack.pop() !== c) throw new Error(`unbalanced ${c} at ${i}`);
      if (stack.length === 0) return i + 1;
    }
  }
  throw new Error(`unclosed bracket at ${start}`);
}

/** Splits at commas outside (), [], {}, <> and strings. */
export function splitTop(text, sep = ',') {
  const parts = [];
  let depth = 0;
  let cur = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      cur += text.slice(i, j + 1);
      i = j;
      continue;
    }
    if (c === '(' || c === '[' || c === '{' || c === '<') depth++;
    else if (c === ')' || c === ']' || c === '}' || (c === '>' && text[i - 1] !== '-' && text[i - 1] !== '=')) depth--;
    if (c === sep && depth === 0) {
      parts.push(cur);
      cur = '';
    } else cur += c;
  }
  if (cur.trim()) parts.push(cur);
  return parts.map((p) => p.trim()).filter(Boolean);
}

/** Removes `#[cfg(test)] mod x { ... }` blocks. */
function dropTestModules(text) {
  const re = /#\[cfg\(test\)\]\s*(pub\s+)?mod\s+\w+\s*\{/g;
  let out = '';
  let last = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m.index < last) continue;
    const open = m.index + m[0].length - 1;
    const end = matchBracket(text, open);
    out += text.slice(last, m.index);
    last = end;
    re.lastIndex = end;
  }
  return out + text.slice(last);
}

/** Expands invocations of `macro_rules!` macros whose single rule defines a `struct $param`. */
function expandStructMacros(text) {
  const defs = new Map();
  const re = /macro_rules!\s*(\w+)\s*\{/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const open = m.index + m[0].length - 1;
    const end = matchBracket(text, open);
    const inner = text.slice(open + 1, end - 1).trim();
    const pat = /^\(([^)]*)\)\s*=>\s*\{/.exec(inner);
    if (pat) {
      const bodyOpen = inner.indexOf('{', pat[0].length - 1);
      const body = inner.slice(bodyOpen + 1, matchBracket(inner, bodyOpen) - 1);
      const params = [...pat[1].matchAll(/\$(\w+):\w+/g)].map((p) => p[1]);
      if (/struct\s+\$\w+/.test(body)) defs.set(m[1], { params, body });
    }
    re.lastIndex = end;
  }
  let expanded = '';
  for (const [name, def] of defs) {
    const call = new RegExp(`\\b${name}!\\s*[({]`, 'g');
    for (let m = call.exec(text); m; m = call.exec(text)) {
      const open = m.index + m[0].length - 1;
      const args = splitTop(text.slice(open + 1, matchBracket(text, open) - 1));
      let body = def.body;
      def.params.forEach((p, k) => {
        body = body.replaceAll(new RegExp(`\\$${p}\\b`, 'g'), args[k] ?? '');
      });
      expanded += `\n${body}\n`;
    }
  }
  return text + expanded;
}

/** Parses the inside of one attribute (`serde(default, rename = "x")`) into [name, args]. */
function parseAttr(inner) {
  const m = /^\s*([\w:]+)\s*(.*)$/s.exec(inner);
  if (!m) return [inner.trim(), ''];
  let rest = m[2].trim();
  if (rest.startsWith('(') && rest.endsWith(')')) rest = rest.slice(1, -1);
  return [m[1], rest];
}

/** The serde/online_config/deprecated facts of a list of attribute texts. */
export function attrFacts(attrs) {
  const f = { serde: {}, aliases: [], online: new Set(), deprecated: false, docHidden: false, derives: new Set(), cfgTest: false };
  for (const a of attrs) {
    const [name, args] = parseAttr(a);
    if (name === 'serde') {
      for (const item of splitTop(args)) {
        const kv = /^([\w]+)\s*(?:=\s*"((?:[^"\\]|\\.)*)")?\s*(?:\((.*)\))?$/s.exec(item);
        if (!kv) continue;
        const [, key, val, sub] = kv;
        if (key === 'alias') f.aliases.push(val);
        else if (key === 'rename' && sub !== undefined) {
          const de = /deserialize\s*=\s*"([^"]*)"/.exec(sub);
          if (de) f.serde.rename = de[1];
        } else if (key === 'rename_all' && sub !== undefined) {
          const de = /deserialize\s*=\s*"([^"]*)"/.exec(sub);
          if (de) f.serde.rename_all = de[1];
        } else f.serde[key] = val ?? true;
      }
    } else if (name === 'online_config') {
      for (const item of splitTop(args)) f.online.add(item);
    } else if (name === 'deprecated' || name === '__deprecated') {
      f.deprecated = true;
      const note = /"((?:[^"\\]|\\.)*)"/.exec(args);
      if (note) f.deprecatedNote = note[1];
    } else if (name === 'doc' && /^\s*hidden\s*$/.test(args)) f.docHidden = true;
    else if (name === 'derive') for (const d of splitTop(args)) f.derives.add(d.split('::').pop());
    else if (name === 'cfg' && /^\s*test\s*$/.test(args)) f.cfgTest = true;
  }
  return f;
}

/** Attribute texts (without `#[`, `]`) in `text` from `pos`, and the index after them. */
function readAttrs(text, pos) {
  const attrs = [];
  let i = pos;
  for (;;) {
    while (/\s/.test(text[i] ?? '')) i++;
    if (text[i] === '#' && text[i + 1] === '[') {
      const end = matchBracket(text, i + 1);
      attrs.push(text.slice(i + 2, end - 1));
      i = end;
    } else if (text[i] === '#' && text[i + 1] === '!' && text[i + 2] === '[') {
      i = matchBracket(text, i + 2);
    } else return { attrs, end: i };
  }
}

/** Attribute texts just before `pos` (walking back over `#[...]`). */
function attrsBefore(text, pos) {
  const attrs = [];
  let i = pos;
  for (;;) {
    let j = i - 1;
    while (j >= 0 && /\s/.test(text[j])) j--;
    if (text[j] !== ']') return attrs.reverse();
    let depth = 0;
    let k = j;
    for (; k >= 0; k--) {
      if (text[k] === ']') depth++;
      else if (text[k] === '[' && --depth === 0) break;
    }
    if (text[k - 1] !== '#') return attrs.reverse();
    attrs.push(text.slice(k + 1, j));
    i = k - 1;
  }
}

/** Fields of a struct body `{ ... }` (inside text): [{ident, type, facts}]. */
function parseFields(body) {
  const fields = [];
  for (const piece of splitTop(body)) {
    const { attrs, end } = readAttrs(piece, 0);
    const rest = piece.slice(end).replace(/^pub(\([^)]*\))?\s+/, '');
    const m = /^(?:r#)?(\w+)\s*:\s*([\s\S]+)$/.exec(rest);
    if (m) fields.push({ ident: m[1], type: m[2].replace(/\s+/g, ' ').trim(), facts: attrFacts(attrs) });
  }
  return fields;
}

/** Variants of an enum body: [{ident, unit, fields (of a `{ ... }` variant), facts}]. */
function parseVariants(body) {
  const variants = [];
  for (const piece of splitTop(body)) {
    const { attrs, end } = readAttrs(piece, 0);
    const m = /^(\w+)\s*(.*)$/s.exec(piece.slice(end));
    if (!m) continue;
    const rest = m[2].trim();
    const fields = rest.startsWith('{') && rest.endsWith('}') ? parseFields(rest.slice(1, -1)) : undefined;
    variants.push({ ident: m[1], unit: rest === '' || rest.startsWith('='), fields, facts: attrFacts(attrs) });
  }
  return variants;
}

/** Parses the `use` trees of a file: Map alias → path segments (the last one the original name); globs under '*'. */
export function parseUses(text) {
  const uses = new Map();
  const globs = [];
  const walk = (prefix, tree) => {
    tree = tree.trim();
    const brace = tree.indexOf('{');
    if (brace >= 0 && tree.endsWith('}')) {
      const head = tree.slice(0, brace).replace(/::\s*$/, '');
      const base = head ? [...prefix, ...head.split('::').map((s) => s.trim())] : prefix;
      for (const sub of splitTop(tree.slice(brace + 1, -1))) walk(base, sub);
      return;
    }
    const m = /^([\w:\s]+?)(?:\s+as\s+(\w+))?$/.exec(tree);
    if (!m) return;
    const segs = [...prefix, ...m[1].split('::').map((s) => s.trim())].filter(Boolean);
    const last = segs[segs.length - 1];
    if (last === '*') globs.push(segs.slice(0, -1));
    else if (last === 'self') uses.set(m[2] ?? segs[segs.length - 2], segs.slice(0, -1));
    else if (m[2] !== '_') uses.set(m[2] ?? last, segs);
  };
  for (const m of text.matchAll(/(?:^|[;}\s])(?:pub(?:\([^)]*\))?\s+)?use\s+([^;]+);/g)) walk([], m[1].replace(/^::/, ''));
  return { uses, globs };
}

/**
 * Everything a config reader needs from one Rust file: structs and enums (after macro expansion, test modules
 * dropped), type aliases, `use` trees, and the `impl Deserialize for X` names (custom deserializers).
 */
export function parseRustFile(src) {
  const text = expandStructMacros(dropTestModules(stripComments(src)));
  const items = new Map();
  const re = /(?:^|[\s;{}\]])(?:pub(?:\([^)]*\))?\s+)?(struct|enum|type)\s+(\w+)\s*(<[^{;(=]*>)?\s*/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const [, kind, name] = m;
    const after = m.index + m[0].length;
    const facts = attrFacts(attrsBefore(text, m.index + (/^[\s;{}\]]/.test(m[0]) ? 1 : 0)));
    let item;
    if (kind === 'type') {
      const end = text.indexOf(';', after);
      const rhs = /^=\s*([\s\S]*)$/.exec(text.slice(after, end).trim());
      if (rhs) item = { kind: 'alias', name, target: rhs[1].replace(/\s+/g, ' ').trim() };
    } else {
      let i = after;
      if (text.startsWith('where', i)) i = text.indexOf('{', i);
      if (text[i] === '{') {
        const end = matchBracket(text, i);
        const body = text.slice(i + 1, end - 1);
        item = kind === 'struct' ? { kind, name, fields: parseFields(body), facts } : { kind, name, variants: parseVariants(body), facts };
        re.lastIndex = end;
      } else if (text[i] === '(' && kind === 'struct') {
        const end = matchBracket(text, i);
        const types = splitTop(text.slice(i + 1, end - 1)).map((t) => t.replace(/^pub(\([^)]*\))?\s+/, '').trim());
        item = { kind: 'tuple', name, types, facts };
      } else if (text[i] === ';' && kind === 'struct') item = { kind: 'unit', name, facts };
    }
    if (item && !item.facts?.cfgTest && !items.has(name)) items.set(name, item);
  }
  const customDe = new Set([...text.matchAll(/impl\s*<'de>\s*(?:serde::)?(?:de::)?Deserialize<'de>\s+for\s+(\w+)/g)].map((m) => m[1]));
  const { uses, globs } = parseUses(text);
  return { text, items, uses, globs, customDe };
}

/** serde's rename_all on a Rust identifier (`field` says whether it is a snake_case field or a PascalCase variant). */
export function renameAll(ident, rule, field) {
  const words = field ? ident.split('_').filter(Boolean) : ident.split(/(?=[A-Z])/).filter(Boolean);
  const lower = words.map((w) => w.toLowerCase());
  switch (rule) {
    case 'kebab-case':
      return lower.join('-');
    case 'snake_case':
      return lower.join('_');
    case 'lowercase':
      return field ? ident.toLowerCase() : ident.toLowerCase();
    case 'UPPERCASE':
      return ident.toUpperCase();
    case 'SCREAMING_SNAKE_CASE':
      return lower.join('_').toUpperCase();
    case 'SCREAMING-KEBAB-CASE':
      return lower.join('-').toUpperCase();
    case 'camelCase':
      return lower.map((w, k) => (k ? w[0].toUpperCase() + w.slice(1) : w)).join('');
    case 'PascalCase':
      return lower.map((w) => w[0].toUpperCase() + w.slice(1)).join('');
    default:
      return ident;
  }
}
