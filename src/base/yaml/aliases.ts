/**
 * YAML aliases (`*name`) repeat the anchored node wherever they appear, so a few hundred bytes of
 * nested aliases stand for billions of values (a "billion laughs" document), and an alias inside its
 * own anchor stands for an endless one. Every reader here expands aliases into plain values, and
 * Argo CD renders on every refresh: a document whose aliases expand beyond a small bound, nest too
 * deep once expanded, or refer to themselves, is refused before anything expands it.
 */
import { isAlias, isMap, isPair, isScalar, isSeq, LineCounter, parseAllDocuments, type Alias, type Document, type Node } from 'yaml';

/** Values a document may hold once its aliases are expanded (every mapping, list and scalar counts). */
export const MAX_EXPANDED_VALUES = 100_000;

/** Levels of mappings and lists a document may nest, aliases expanded (js-yaml's own bound too). */
export const MAX_DEPTH = 100;

/** A document whose aliases expand too far: where, and why. */
export interface AliasProblem {
  /** 1-based document index in the text. */
  readonly document: number;
  readonly line: number;
  readonly message: string;
}

/**
 * The node each alias of `doc` stands for: the last node before it with that anchor, as YAML says.
 * One walk in document order (the `yaml` package's own `Alias.resolve` walks the whole document for
 * every alias, which makes 10,000 aliases take most of a minute).
 */
export function anchorTargets(doc: Document.Parsed): Map<Alias, Node | undefined> {
  const anchors = new Map<string, Node>();
  const targets = new Map<Alias, Node | undefined>();
  const walk = (node: unknown): void => {
    if (isAlias(node)) {
      targets.set(node, anchors.get(node.source));
      return;
    }
    if (!isMap(node) && !isSeq(node) && !isScalar(node)) return;
    if (node.anchor) anchors.set(node.anchor, node);
    if (isMap(node) || isSeq(node)) {
      for (const item of node.items) {
        if (isPair(item)) {
          walk(item.key);
          walk(item.value);
        } else walk(item);
      }
    }
  };
  walk(doc.contents);
  return targets;
}

/**
 * The first problem with aliases in each document of `text`, if any. Cheap for text without anchors
 * (no `&`, no alias can resolve), which is nearly every input.
 */
export function aliasProblems(text: string): AliasProblem[] {
  if (!text.includes('&')) return [];
  const lines = new LineCounter();
  // Nesting that overflows the parser is refused by the reader, with its own message.
  const docs = parseDocuments(text, lines) ?? [];
  const out: AliasProblem[] = [];
  docs.forEach((doc, i) => {
    // A document that does not parse is refused for that, with its own message.
    if (doc.errors.length > 0) return;
    const problem = aliasProblem(doc, anchorTargets(doc));
    if (problem) out.push({ document: i + 1, line: lines.linePos(problem.offset).line, message: problem.message });
  });
  return out;
}

/**
 * The documents of `text`, scalars left as text (the failsafe schema: their meaning is decided by
 * `scalar.ts`); undefined when they nest deep enough to overflow the parser, which recurses per level.
 */
export function parseDocuments(text: string, lines: LineCounter): Document.Parsed[] | undefined {
  try {
    const docs = parseAllDocuments(text, { lineCounter: lines, prettyErrors: false, schema: 'failsafe', uniqueKeys: false });
    return Array.isArray(docs) ? docs : [];
  } catch (e) {
    if (e instanceof RangeError) return undefined;
    throw e;
  }
}

/** What is wrong with the aliases of one parsed document, with the offset to report it at. */
export function aliasProblem(doc: Document.Parsed, targets: Map<Alias, Node | undefined>): { offset: number; message: string } | undefined {
  if (targets.size === 0) return undefined;
  /** Per mapping or list: the values it stands for and the levels it nests, once expanded. */
  const sizes = new Map<Node, { values: number; depth: number }>();
  const active = new Set<Node>();
  let problem: { offset: number; message: string } | undefined;
  const tooDeep = (node: Node) => {
    problem = {
      offset: node.range?.[0] ?? 0,
      message: `it nests mappings and lists more than ${MAX_DEPTH} levels deep once its aliases are expanded: write it flatter`,
    };
  };

  /**
   * `level` is the nesting of the mapping or list `node` would be, 1 for the document's own; `via` the
   * alias that led to it, where a problem is reported.
   */
  const size = (node: unknown, level: number, via?: Node): { values: number; depth: number } => {
    if (problem) return { values: 0, depth: 0 };
    if (isAlias(node)) {
      const target = targets.get(node);
      if (!target) return { values: 1, depth: 0 };
      if (active.has(target)) {
        problem = {
          offset: node.range?.[0] ?? 0,
          message: `the alias *${node.source} refers to its own anchor, so its value never ends: write the value out`,
        };
        return { values: 0, depth: 0 };
      }
      return size(target, level, node);
    }
    if (!isMap(node) && !isSeq(node)) return { values: 1, depth: 0 };
    const known = sizes.get(node);
    if (known) {
      if (level + known.depth - 1 > MAX_DEPTH) tooDeep(via ?? node);
      return known;
    }
    if (level > MAX_DEPTH) {
      tooDeep(via ?? node);
      return { values: 0, depth: 0 };
    }
    active.add(node);
    let values = 1;
    let depth = 0;
    for (const item of node.items) {
      for (const part of isPair(item) ? [item.key, item.value] : [item]) {
        const s = size(part, level + 1);
        values += s.values;
        depth = Math.max(depth, s.depth);
      }
      if (values > MAX_EXPANDED_VALUES && !problem) {
        problem = {
          offset: node.range?.[0] ?? 0,
          message: `its aliases expand to more than ${MAX_EXPANDED_VALUES.toLocaleString('en-US')} values: write the values out, or anchor fewer of them`,
        };
      }
      if (problem) break;
    }
    active.delete(node);
    const result = { values, depth: depth + 1 };
    sizes.set(node, result);
    return result;
  };
  size(doc.contents, 1);
  return problem;
}
