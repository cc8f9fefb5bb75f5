/**
 * YAML aliases (`*name`) repeat the anchored node wherever they appear, so a few hundred bytes of
 * nested aliases stand for billions of values (a "billion laughs" document), and an alias inside its
 * own anchor stands for an endless one. Every reader here expands aliases into plain values, and
 * Argo CD renders on every refresh: a document whose aliases expand beyond a small bound, or refer to
 * themselves, is refused before anything expands it.
 */
import { isAlias, isMap, isPair, isScalar, isSeq, LineCounter, parseAllDocuments, type Document, type Node } from 'yaml';

/** Values a document may hold once its aliases are expanded (every mapping, list and scalar counts). */
export const MAX_EXPANDED_VALUES = 100_000;

/** A document whose aliases expand too far: where, and why. */
export interface AliasProblem {
  /** 1-based document index in the text. */
  readonly document: number;
  readonly line: number;
  readonly message: string;
}

/**
 * The first problem with aliases in each document of `text`, if any. Cheap for text without anchors
 * (no `&`, no alias can resolve), which is nearly every input.
 */
export function aliasProblems(text: string): AliasProblem[] {
  if (!text.includes('&')) return [];
  const lines = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter: lines });
  if (!Array.isArray(docs)) return [];
  const out: AliasProblem[] = [];
  docs.forEach((doc, i) => {
    const problem = checkDocument(doc);
    if (problem) out.push({ document: i + 1, line: lines.linePos(problem.offset).line, message: problem.message });
  });
  return out;
}

function checkDocument(doc: Document.Parsed): { offset: number; message: string } | undefined {
  // A document that does not parse is refused for that, with its own message.
  if (doc.errors.length > 0) return undefined;
  const sizes = new Map<Node, number>();
  const active = new Set<Node>();
  let problem: { offset: number; message: string } | undefined;

  /** Values `node` stands for once expanded; stops counting past the bound. */
  const size = (node: unknown): number => {
    if (problem) return 0;
    if (isAlias(node)) {
      const target = node.resolve(doc) as Node | undefined;
      if (!target) return 1;
      if (active.has(target)) {
        problem = { offset: node.range?.[0] ?? 0, message: `the alias *${node.source} refers to its own anchor, so its value never ends: write the value out` };
        return 0;
      }
      return size(target);
    }
    if (!isMap(node) && !isSeq(node)) return 1;
    const known = sizes.get(node);
    if (known !== undefined) return known;
    active.add(node);
    let total = 1;
    for (const item of node.items) {
      total += isPair(item) ? size(item.key) + size(item.value) : size(item);
      if (total > MAX_EXPANDED_VALUES && !problem) {
        problem = {
          offset: node.range?.[0] ?? 0,
          message: `its aliases expand to more than ${MAX_EXPANDED_VALUES.toLocaleString('en-US')} values: write the values out, or anchor fewer of them`,
        };
      }
      if (problem) break;
    }
    active.delete(node);
    sizes.set(node, total);
    return total;
  };
  size(isScalar(doc.contents) ? undefined : doc.contents);
  return problem;
}
