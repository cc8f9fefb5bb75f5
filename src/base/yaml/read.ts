/**
 * Reading YAML text into plain values the way kubectl reads it (scalars: see `scalar.ts`), with every
 * problem located by path and line. kubectl's reading, from sigs.k8s.io/yaml v1.4.0 and apimachinery's
 * YAMLReader (Kubernetes 1.32):
 *
 * - the stream is cut at every line that starts with `---`; anything but a comment after it, and any
 *   `%YAML` or `%TAG` directive, makes kubectl refuse the file;
 * - `<<` merges a mapping, or a list of them (the earlier one wins), into its mapping in order: a key
 *   written before the merge is replaced by the merged one, a key written after it replaces it;
 * - keys that resolve to something other than text are turned into text (`y:` becomes `"true":`),
 *   and a repeated key silently keeps its last value: both are refused here, with the reason;
 * - a tag other than the core ones is dropped or reinterpreted (`!!binary`, `!!omap`): refused here.
 *
 * Readings a YAML 1.2 tool would take differently (`on`, `010`) and merges that replace a key written
 * before them are noted, for warnings. Nothing here knows about Kubernetes kinds.
 */
import { isAlias, isMap, isScalar, isSeq, LineCounter, type Alias, type Document, type Node, type Scalar } from 'yaml';
import { joinKey, parsePath } from '../path';
import { aliasProblem, anchorTargets, MAX_DEPTH, parseDocuments } from './aliases';
import { readPlainScalar, readTaggedScalar } from './scalar';
import { explainSyntax } from './syntax';

export interface YamlIssue {
  /** Where in the document (`spec.tikv.replicas`), `(yaml)` for the text itself. */
  readonly path: string;
  /** 1-based. @default undefined: unknown */
  readonly line?: number;
  readonly message: string;
}

export interface ReadDocument {
  /** The document's value; null for an empty one, and for one with `syntax` problems. */
  readonly value: unknown;
  /** Problems with the text, whatever the document is: kubectl cannot read it, or nothing can be read. */
  readonly syntax: YamlIssue[];
  /** Problems with what the document says (keys that are not text or repeated, tags, values JSON cannot hold). */
  readonly issues: YamlIssue[];
  /** Readings other YAML tools take differently: for warnings. */
  readonly notes: YamlIssue[];
  /** The line of the deepest node a path reaches (the path itself may name a missing key). */
  line(path: string): number | undefined;
}

const STR = 'tag:yaml.org,2002:str';
const MAP = 'tag:yaml.org,2002:map';
const SEQ = 'tag:yaml.org,2002:seq';
const MERGE = 'tag:yaml.org,2002:merge';
const STACK_OVERFLOW = /Maximum call stack size exceeded/;
const TOO_DEEP = `it nests mappings and lists more than ${MAX_DEPTH} levels deep: write it flatter`;

/** Every document of `text`, read. */
export function readYaml(text: string): ReadDocument[] {
  const lines = new LineCounter();
  const docs = parseDocuments(text, lines);
  if (!docs) {
    const syntax = [{ path: '(yaml)', line: deepestLine(text), message: TOO_DEEP }];
    return [{ value: null, syntax, issues: [], notes: [], line: () => undefined }];
  }
  const out = docs.map((doc) => readDocument(doc, lines, text));
  for (const s of streamIssues(text, docs))
    out[s.document]?.syntax.push({ path: '(yaml)', line: lines.linePos(s.offset).line, message: s.message });
  return out;
}

/** The line that nests deepest, by indentation and by the `-`, `[` and `{` that open a level on it. */
function deepestLine(text: string): number {
  let best = -1;
  let line = 1;
  text.split('\n').forEach((l, i) => {
    const n = l.length - l.trimStart().length + (l.match(/(?:^|\s)-(?=\s|$)|[[{]/g) ?? []).length * 2;
    if (n > best) {
      best = n;
      line = i + 1;
    }
  });
  return line;
}

/** The plain values of every document (for tests and for readers that need no messages). */
export function plainDocuments(text: string): unknown[] {
  return readYaml(text).map((d) => d.value);
}

/** Lines kubectl's YAMLReader refuses: `--- text` and directives, with the document each belongs to. */
function streamIssues(text: string, docs: readonly Document.Parsed[]): { document: number; offset: number; message: string }[] {
  if (!/^(?:---[^\S\n]*[^\s#]|%)/m.test(text)) return [];
  const out: { document: number; offset: number; message: string }[] = [];
  const docAt = (offset: number) => {
    const i = docs.findIndex((d) => d.range[2] > offset);
    return i === -1 ? docs.length - 1 : i;
  };
  const re = /^(?:---[^\S\n]*([^\s#].*)|%(\S*).*)$/gm;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m[1] !== undefined) {
      out.push({
        document: docAt(m.index),
        offset: m.index,
        message: `kubectl takes only a comment after \`---\` on its line: put ${JSON.stringify(m[1].slice(0, 40))} on the next line`,
      });
    } else {
      out.push({
        document: docAt(m.index),
        offset: m.index,
        message: `kubectl cannot read a file with a %${m[2]} directive: remove the line`,
      });
    }
  }
  return out;
}

function readDocument(doc: Document.Parsed, lines: LineCounter, text: string): ReadDocument {
  const overflow = doc.errors.find((e) => STACK_OVERFLOW.test(e.message));
  const explained = overflow ? { line: lines.linePos(overflow.pos[0]).line, message: TOO_DEEP } : explainSyntax(text, doc.errors, lines);
  const syntax: YamlIssue[] = explained ? [{ path: '(yaml)', ...explained }] : [];
  /** Offsets of the nodes read, by path: one lookup per problem, however many problems. */
  const offsets = new Map<string, number>();
  const line = (path: string) => {
    const offset = offsetOf(offsets, path);
    if (offset !== undefined) return lines.linePos(offset).line;
    return doc.contents?.range ? lines.linePos(doc.contents.range[0]).line : undefined;
  };
  const result = { value: null as unknown, syntax, issues: [] as YamlIssue[], notes: [] as YamlIssue[], line };
  if (syntax.length > 0) return result;
  const targets = anchorTargets(doc);
  const bomb = aliasProblem(doc, targets);
  if (bomb) {
    syntax.push({ path: '(yaml)', line: lines.linePos(bomb.offset).line, message: bomb.message });
    return result;
  }
  const reader = new Reader(targets, lines, result, offsets);
  result.value = doc.contents === null ? null : reader.value(doc.contents, '', 1);
  return result;
}

/** The offset of the deepest node read along `path` (the path itself may name a missing key). */
function offsetOf(offsets: ReadonlyMap<string, number>, path: string): number | undefined {
  const exact = offsets.get(path);
  if (exact !== undefined) return exact;
  const prefixes = [''];
  for (const segment of parsePath(path)) {
    const last = prefixes[prefixes.length - 1];
    prefixes.push(typeof segment === 'number' ? `${last}[${segment}]` : joinKey(last, segment));
  }
  for (let i = prefixes.length - 1; i >= 0; i--) {
    const offset = offsets.get(prefixes[i]);
    if (offset !== undefined) return offset;
  }
  return undefined;
}

class Reader {
  constructor(
    private readonly targets: Map<Alias, Node | undefined>,
    private readonly lines: LineCounter,
    private readonly out: { syntax: YamlIssue[]; issues: YamlIssue[]; notes: YamlIssue[] },
    private readonly offsets: Map<string, number>,
  ) {}

  private at(node: unknown): number | undefined {
    const range = (node as Node | undefined)?.range;
    return range ? this.lines.linePos(range[0]).line : undefined;
  }

  /** What each list already says, as line and message. */
  private readonly said = new Map<YamlIssue[], Set<string>>();

  private issue(list: YamlIssue[], path: string, node: unknown, message: string): void {
    const line = this.at(node);
    // Once per place in the text, not again for every alias or merge that repeats it.
    let said = this.said.get(list);
    if (!said) this.said.set(list, (said = new Set()));
    const key = `${line}\0${message}`;
    if (said.has(key)) return;
    said.add(key);
    list.push({ path: path === '' ? '(document)' : path, ...(line !== undefined && { line }), message });
  }

  private deref(node: unknown): unknown {
    return isAlias(node) ? this.targets.get(node) : node;
  }

  /** The plain value of a node at `path`, `level` levels of mappings and lists deep. */
  value(node: unknown, path: string, level: number): unknown {
    const target = this.deref(node);
    // Where the path is written (the alias, for an alias), the first time it is read.
    const at = (node as Node | null)?.range?.[0];
    if (at !== undefined && !this.offsets.has(path)) this.offsets.set(path, at);
    if (target === undefined || target === null) return null;
    if (isScalar(target)) return this.scalar(target, path);
    if (level > MAX_DEPTH) {
      this.issue(this.out.syntax, path, target, TOO_DEEP);
      return null;
    }
    if (isMap(target)) {
      this.collectionTag(target, MAP, path);
      const obj: Record<string, unknown> = {};
      this.fill(target, obj, new Map(), path, level);
      return obj;
    }
    if (isSeq(target)) {
      this.collectionTag(target, SEQ, path);
      return target.items.map((item, i) => this.value(item, `${path}[${i}]`, level + 1));
    }
    return null;
  }

  private collectionTag(node: Node, own: string, path: string): void {
    if (node.tag && node.tag !== own && node.tag !== '!') {
      this.issue(
        this.out.issues,
        path,
        node,
        `the tag ${shortTag(node.tag)} is not read here (kubectl drops or reinterprets it): write the ${own === MAP ? 'mapping' : 'list'} without it`,
      );
    }
  }

  /**
   * Sets the pairs of `map` on `obj` in order, as goyaml.v2 does: a merge sets its keys over those
   * before it. `explicit` holds the keys written in this mapping, with their nodes, for duplicates.
   */
  private fill(
    map: Node,
    obj: Record<string, unknown>,
    explicit: Map<string, Node>,
    path: string,
    level: number,
    merged?: { line?: number },
  ): void {
    if (!isMap(map)) return;
    for (const pair of map.items) {
      if (isMergeKey(pair.key)) {
        this.merge(pair.value, obj, explicit, path, level, pair.key);
        continue;
      }
      const key = this.key(pair.key, path);
      const at = joinKey(path, key);
      if (!merged) {
        const before = explicit.get(key);
        if (before)
          this.issue(
            this.out.issues,
            at,
            pair.key,
            `the key ${JSON.stringify(key)} is given twice in this mapping (first on line ${this.at(before)}): kubectl keeps the last, other tools the first; keep one`,
          );
        explicit.set(key, pair.key as Node);
      } else if (explicit.has(key) && Object.prototype.hasOwnProperty.call(obj, key)) {
        this.issue(
          this.out.notes,
          at,
          explicit.get(key),
          `the merge on line ${merged.line} replaces this key, written before it (kubectl reads a mapping in order; other YAML tools keep the written key): put \`<<\` first if this value is meant`,
        );
      }
      // An own property even for `__proto__` (assigning it would set the prototype).
      Object.defineProperty(obj, key, {
        value: this.value(pair.value, at, level + 1),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  }

  /** `<<: *base` or `<<: [*a, *b]`: each mapping's keys set in turn, the first of a list last (it wins). */
  private merge(
    value: unknown,
    obj: Record<string, unknown>,
    explicit: Map<string, Node>,
    path: string,
    level: number,
    keyNode: unknown,
  ): void {
    const line = this.at(keyNode);
    const one = this.deref(value);
    const sources = isSeq(one) ? [...one.items].reverse().map((i) => this.deref(i)) : [one];
    for (const source of sources) {
      if (!isMap(source)) {
        this.issue(
          this.out.issues,
          joinKey(path, '<<'),
          keyNode,
          'a merge (`<<`) takes a mapping or a list of mappings: kubectl cannot read anything else',
        );
        return;
      }
      this.fill(source, obj, explicit, path, level, { ...(line !== undefined && { line }) });
    }
  }

  /** A key as text; a key kubectl would turn into text (`1`, `y`, `null`) is refused. */
  private key(node: unknown, path: string): string {
    const target = this.deref(node);
    if (isScalar(target)) {
      const text = String(target.value);
      const value = this.scalar(target, joinKey(path, text), true);
      if (typeof value === 'string') return value;
      const plain = target.type === 'PLAIN' && target.tag === undefined ? readPlainScalar(text) : undefined;
      const kind = plain?.kind;
      const shown = value === null ? 'null' : kind === 'float' ? goFloat32Key(Number(value.valueOf())) : JSON.stringify(value.valueOf());
      this.issue(
        this.out.issues,
        joinKey(path, text),
        node,
        value === null
          ? `a key must be text, and kubectl cannot read a null one: quote it (${JSON.stringify(text)}) if it is meant as text`
          : plain?.unsigned64
            ? `a key must be text, and kubectl cannot read a number beyond 64-bit integers as one: quote it (${JSON.stringify(text)})`
            : `a key must be text: kubectl reads ${text} as ${typeof value === 'boolean' ? 'a boolean' : 'a number'} and makes it the key "${shown}": quote it (${JSON.stringify(text)}) if it is meant as text`,
      );
      return text;
    }
    this.issue(this.out.issues, joinKey(path, '?'), node, 'a key must be text, not a mapping or a list (kubectl cannot read it)');
    return '?';
  }

  private scalar(node: Scalar, path: string, isKey = false): null | boolean | number | string | object {
    const text = String(node.value);
    const quoted = node.type !== 'PLAIN' && node.type !== undefined;
    if (node.tag === undefined || node.tag === '!') {
      if (quoted || node.tag === '!') return text;
      const read = readPlainScalar(text);
      if (read.refused && !isKey)
        this.issue(this.out.issues, path, node, `${text} cannot be read: ${read.refused}; quote it if it is meant as text`);
      else if (read.differsFrom12 && !isKey) this.issue(this.out.notes, path, node, differs(text, read.value, read.differsFrom12));
      return read.kind === 'merge' ? text : read.value;
    }
    if (node.tag === STR) return text;
    const tagged = readTaggedScalar(node.tag, text);
    if (tagged === undefined) {
      this.issue(
        this.out.issues,
        path,
        node,
        `the tag ${shortTag(node.tag)} is not read here (kubectl drops or reinterprets it): write the value without it`,
      );
      return text;
    }
    if ('error' in tagged) {
      this.issue(this.out.issues, path, node, tagged.error);
      return text;
    }
    if (tagged.refused) this.issue(this.out.issues, path, node, `${text} cannot be read: ${tagged.refused}`);
    return tagged.value;
  }
}

/**
 * A float key as sigs.k8s.io/yaml turns it into text: strconv.FormatFloat(f, 'g', -1, 32), the
 * shortest digits that give the same float32, in %e form for an exponent below -4 or from 6 on.
 */
export function goFloat32Key(v: number): string {
  if (v === 0) return '0';
  const f = Math.fround(v);
  let digits = '';
  let exp = 0;
  for (let p = 1; p <= 9; p++) {
    const [m, e] = Math.abs(f)
      .toExponential(p - 1)
      .split('e');
    if (Math.fround(Number(`${m}e${e}`)) === Math.abs(f)) {
      digits = m.replace('.', '');
      exp = Number(e);
      break;
    }
  }
  const sign = f < 0 ? '-' : '';
  if (exp < -4 || exp >= 6) {
    const mantissa = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${mantissa}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  const whole = digits.padEnd(exp + 1, '0');
  const frac = digits.slice(exp + 1);
  return `${sign}${whole.slice(0, exp + 1)}${frac ? `.${frac}` : ''}`;
}

function isMergeKey(key: unknown): boolean {
  return isScalar(key) && key.value === '<<' && ((key.type === 'PLAIN' && key.tag === undefined) || key.tag === MERGE);
}

function shortTag(tag: string): string {
  return tag.startsWith('tag:yaml.org,2002:') ? `!!${tag.slice('tag:yaml.org,2002:'.length)}` : tag;
}

function differs(text: string, value: unknown, as12: string): string {
  const read = JSON.stringify(value !== null && typeof value === 'object' ? value.valueOf() : value);
  const other = as12 === 'text' ? `the text ${JSON.stringify(text)}` : as12;
  return `${text} is read as ${read}, as kubectl reads YAML (1.1); YAML 1.2 tools read ${other}. Write ${read} or quote the text to say which is meant`;
}
