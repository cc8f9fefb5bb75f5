/**
 * Reading TidbCluster documents from YAML text: multi-document streams, other kinds set apart, every
 * problem reported with file, document index, path and line. No file system access here.
 */
import { isAlias, isMap, isScalar, isSeq, LineCounter, parseAllDocuments, type Document, type Node } from 'yaml';
import { tomlFloat } from '../base/toml';
import { documentIssues as clusterIssues } from './check';
import { fastLoadAll } from '../base/yaml/fast-load';
import { formatIssue, SpecError, type SourceRef, type SpecIssue } from './errors';
import { resolveCluster, type ResolveOptions, type ResolvedCluster } from './resolve';
import { aliasProblems } from '../base/yaml/aliases';
import { KIND, type TidbCluster } from './types';
import { editDistance } from './crd-schema';

export interface LoadedCluster {
  readonly source: SourceRef;
  readonly resolved: ResolvedCluster;
  /** `file: document N: path (line L): warning: ...` for each of the cluster's warnings. */
  readonly warnings: readonly string[];
}

export interface LoadResult {
  readonly clusters: LoadedCluster[];
  /** Problems, each already attributed to its file and document. */
  readonly errors: SpecError[];
  /** One line per document skipped because it is not a TidbCluster (nor a kind the caller reads). */
  readonly skipped: string[];
}

/** A kind besides TidbCluster that a caller reads from the same stream (Backup, Restore, ...). */
export interface DocumentKind<T> {
  readonly kind: string;
  /** Every problem with the document, paths without lines; empty when it is good. Never throws. */
  check(doc: Record<string, unknown>): SpecIssue[];
  /** The document as the caller keeps it; called only when `check` found nothing. */
  read(doc: Record<string, unknown>, source: SourceRef): T;
}

/** A document of a {@link DocumentKind}, where it came from, and how to find a path's line. */
export interface LoadedDocument<T> {
  readonly source: SourceRef;
  readonly value: T;
  /** The line of a path in the document (for problems found later, across documents). */
  line(path: string): number | undefined;
}

export interface InputResult<T> extends LoadResult {
  readonly documents: LoadedDocument<T>[];
  /**
   * Kubernetes objects of other kinds (an apiVersion and a kind), which a render passes through;
   * they are not in `skipped`.
   */
  readonly others: LoadedDocument<Record<string, unknown>>[];
}

/**
 * Documents that are read by tools, not applied: a Kustomization beside the manifests Flux or
 * `kustomize build` reads. They are skipped, never passed through.
 */
const TOOL_GROUPS = ['kustomize.config.k8s.io/', 'config.kubernetes.io/'];

/** The operator's kinds tidb-gitops reads. */
const OPERATOR_KINDS = [KIND, 'Backup', 'BackupSchedule', 'Restore', 'TidbInitializer', 'TidbMonitor'];

/**
 * The operator kind a document's kind is a slip of (`TiDBCluster`, `TidbClusters`), for documents of
 * the operator's group or of none. Such a document would otherwise be passed through or skipped, and
 * the cluster it meant pruned.
 */
function nearMissKind(obj: Record<string, unknown>): string | undefined {
  if (typeof obj.kind !== 'string' || OPERATOR_KINDS.includes(obj.kind)) return undefined;
  if (obj.apiVersion !== undefined && !(typeof obj.apiVersion === 'string' && obj.apiVersion.startsWith('pingcap.com/'))) return undefined;
  const lower = obj.kind.toLowerCase();
  // One letter changed, added, dropped, or two neighbours swapped.
  return OPERATOR_KINDS.find((k) => editDistance(lower, k.toLowerCase()) <= 1);
}

/** Whether a document other than the caller's kinds is an object to pass through. */
function isOther(obj: Record<string, unknown>): boolean {
  const { apiVersion, kind } = obj;
  return typeof apiVersion === 'string' && apiVersion !== '' && typeof kind === 'string' && kind !== '' && !TOOL_GROUPS.some((g) => apiVersion.startsWith(g));
}

/** Parses and checks every document of one YAML text. */
export function loadTidbClusters(text: string, file: string, options: ResolveOptions = {}): LoadResult {
  const bombs = aliasErrors(text, file);
  if (bombs.length > 0) return { clusters: [], errors: bombs, skipped: [] };
  return readTidbClusters(text, file, options);
}

/** {@link loadTidbClusters} for a text whose aliases {@link aliasErrors} has checked already. */
export function readTidbClusters(text: string, file: string, options: ResolveOptions = {}): LoadResult {
  const { clusters, errors, skipped, others } = readInputs(text, file, options, []);
  return { clusters, errors, skipped: others.length === 0 ? skipped : [...skipped, ...others.map((o) => skippedLine(o.source, o.value))] };
}

/**
 * {@link readTidbClusters} that also reads the documents of `kinds`, with the same strictness: every
 * problem of every document, each with its file, document, path and line.
 */
export function readInputs<T>(text: string, file: string, options: ResolveOptions, kinds: readonly DocumentKind<T>[]): InputResult<T> {
  return fastLoad(text, file, options, kinds) ?? slowLoad(text, file, options, kinds);
}

/** The line of `path` in document `document` of `text`, parsing the text once, on first use. */
function lazyLines(text: string): (document: number, path: string) => number | undefined {
  let parsed: { docs: Document.Parsed[]; lines: LineCounter } | undefined;
  return (document, path) => {
    if (!parsed) {
      const lines = new LineCounter();
      const docs = parseAllDocuments(text, { lineCounter: lines });
      parsed = { docs: Array.isArray(docs) ? docs : [], lines };
    }
    const doc = parsed.docs[document - 1];
    return doc ? lineOf(doc, parsed.lines, path) : undefined;
  };
}

/** Documents whose YAML aliases expand too far, as errors; nothing reads such a text further. */
export function aliasErrors(text: string, file: string): SpecError[] {
  return aliasProblems(text).map((p) => new SpecError([{ path: '(yaml)', line: p.line, message: p.message }], { file, document: p.document }));
}

/**
 * A mapping key that YAML reads as a number, boolean or null (js-yaml turns it into a string without a
 * word). It may also match inside a block of text; then the full parser just takes a closer look.
 */
const MAYBE_NON_STRING_KEY = /(?:^|[\s{,])(?:-\s+)?(?:[-+]?(?:\d[\d_.]*|\.\d+)|true|false|True|False|TRUE|FALSE|null|Null|NULL|~)\s*:(?:\s|$)/m;

/** Clean input only: undefined as soon as anything would need a message with a line number. */
function fastLoad<T>(text: string, file: string, options: ResolveOptions, kinds: readonly DocumentKind<T>[]): InputResult<T> | undefined {
  if (MAYBE_NON_STRING_KEY.test(text)) return undefined;
  const docs = fastLoadAll(text);
  if (!docs) return undefined;
  const result: InputResult<T> = { clusters: [], errors: [], skipped: [], documents: [], others: [] };
  const lines = lazyLines(text);
  for (let i = 0; i < docs.length; i++) {
    const value = docs[i];
    const source = { file, document: i + 1 };
    if (value === null || value === undefined) continue;
    if (typeof value !== 'object' || Array.isArray(value)) return undefined;
    const obj = value as Record<string, unknown>;
    if (nearMissKind(obj)) return undefined;
    const other = kinds.find((k) => k.kind === obj.kind);
    if (other) {
      if (documentIssues(obj, other).length > 0) return undefined;
      result.documents.push({ source, value: other.read(obj, source), line: (path) => lines(source.document, path) });
      continue;
    }
    if (obj.kind !== KIND) {
      if (isOther(obj)) result.others.push({ source, value: obj, line: (path) => lines(source.document, path) });
      else result.skipped.push(skippedLine(source, obj));
      continue;
    }
    if (documentIssues(obj).length > 0) return undefined;
    try {
      const resolved = resolveCluster(obj as unknown as TidbCluster, options);
      // Warnings name their line, which only the full parser knows.
      if (resolved.warnings.length > 0) return undefined;
      result.clusters.push({ source, resolved, warnings: [] });
    } catch (e) {
      if (e instanceof SpecError) return undefined;
      throw e;
    }
  }
  return result;
}

/** The plain values of every document as the full parser reads them (for tests of the fast path). */
export function slowLoadAll(text: string): unknown[] {
  const docs = parseAllDocuments(text);
  return (Array.isArray(docs) ? docs : []).map((doc) => (doc.contents === null ? null : toPlain(doc.contents, doc)));
}

function slowLoad<T>(text: string, file: string, options: ResolveOptions, kinds: readonly DocumentKind<T>[]): InputResult<T> {
  const lines = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const result: InputResult<T> = { clusters: [], errors: [], skipped: [], documents: [], others: [] };
  if (!Array.isArray(docs)) return result; // an empty stream
  docs.forEach((doc, i) => loadDocument(doc, { file, document: i + 1 }, lines, options, kinds, result));
  return result;
}

function loadDocument<T>(doc: Document.Parsed, source: SourceRef, lines: LineCounter, options: ResolveOptions, kinds: readonly DocumentKind<T>[], out: InputResult<T>): void {
  if (doc.errors.length > 0) {
    out.errors.push(
      new SpecError(
        doc.errors.map((e) => ({ path: '(yaml)', line: lines.linePos(e.pos[0]).line, message: `not valid YAML: ${firstLine(e.message)}` })),
        source,
      ),
    );
    return;
  }
  // An empty document (a trailing `---`) parses as a null scalar: nothing to render, nothing wrong.
  if (doc.contents === null || (isScalar(doc.contents) && doc.contents.value === null)) return;
  const keyIssues: SpecIssue[] = [];
  const value = toPlain(doc.contents, doc, { path: '', issues: keyIssues, lines });
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    out.errors.push(new SpecError([{ path: '(document)', line: lineOf(doc, lines, ''), message: 'expected a mapping (a Kubernetes object)' }], source));
    return;
  }
  const obj = value as Record<string, unknown>;
  const meant = nearMissKind(obj);
  if (meant) {
    const message = `${JSON.stringify(obj.kind)} is no kind tidb-gitops reads; did you mean ${meant}?`;
    out.errors.push(new SpecError([{ path: 'kind', line: lineOf(doc, lines, 'kind'), message }], source));
    return;
  }
  const other = kinds.find((k) => k.kind === obj.kind);
  const withLines = (issues: readonly SpecIssue[]) => issues.map((i) => ({ ...i, line: i.line ?? lineOf(doc, lines, i.path) }));
  if (obj.kind !== KIND && !other) {
    if (!isOther(obj)) out.skipped.push(skippedLine(source, obj));
    // Kubernetes reads every key as a string: a passed-through object must not say otherwise either.
    else if (keyIssues.length > 0) out.errors.push(new SpecError(keyIssues, source));
    else out.others.push({ source, value: obj, line: (path) => lineOf(doc, lines, path) });
    return;
  }
  if (keyIssues.length > 0) {
    out.errors.push(new SpecError(keyIssues, source));
    return;
  }
  if (other) {
    const issues = documentIssues(obj, other);
    if (issues.length > 0) out.errors.push(new SpecError(withLines(issues), source));
    else out.documents.push({ source, value: other.read(obj, source), line: (path) => lineOf(doc, lines, path) });
    return;
  }
  const issues = documentIssues(obj);
  if (issues.length > 0) {
    out.errors.push(new SpecError(withLines(issues), source));
    return;
  }
  try {
    const resolved = resolveCluster(obj as unknown as TidbCluster, options);
    const warnings = withLines(resolved.warnings).map((w) => formatIssue({ ...w, message: `warning: ${w.message}` }, source));
    out.clusters.push({ source, resolved, warnings });
  } catch (e) {
    if (!(e instanceof SpecError)) throw e;
    out.errors.push(new SpecError(withLines(e.issues), source));
  }
}

/** A TidbCluster's problems, or those of a document of another kind the caller reads. */
function documentIssues(obj: Record<string, unknown>, kind?: DocumentKind<unknown>): SpecIssue[] {
  return kind ? kind.check(obj) : clusterIssues(obj);
}

function skippedLine(source: SourceRef, obj: Record<string, unknown>): string {
  return `${source.file}: document ${source.document}: skipped ${describe(obj)}: not a ${KIND}`;
}

function describe(obj: Record<string, unknown>): string {
  const kind = typeof obj.kind === 'string' ? obj.kind : '(no kind)';
  const name = (obj.metadata as { name?: unknown } | undefined)?.name;
  return typeof name === 'string' ? `${kind} ${name}` : kind;
}

/** Where toPlain is in a TidbCluster document, and where it notes keys that are not strings. */
interface KeyCheck {
  readonly path: string;
  readonly issues: SpecIssue[];
  readonly lines: LineCounter;
}

/** The JS value of a node; floats written with a fraction or exponent stay floats for TOML. */
function toPlain(node: unknown, doc: Document.Parsed, check?: KeyCheck): unknown {
  if (isAlias(node)) return toPlain(node.resolve(doc), doc, check);
  if (isMap(node)) {
    const out: Record<string, unknown> = {};
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? pair.key.value : pair.key;
      const at = check && (check.path === '' ? String(key) : `${check.path}.${String(key)}`);
      // Kubernetes reads every key as a string: `1:` and `"1":` would become one key, `true:` a "true".
      if (check && at !== undefined && key !== '<<' && typeof key !== 'string') {
        const where = isScalar(pair.key) && pair.key.range ? check.lines.linePos(pair.key.range[0]).line : undefined;
        check.issues.push({
          path: at,
          ...(where !== undefined && { line: where }),
          message: `a mapping key must be a string; quote it (${JSON.stringify(String(key))}) if it is meant as one`,
        });
      }
      // `<<: *anchor` merges the anchored mapping's keys under the explicit ones.
      if (key === '<<' && (isAlias(pair.value) || isMap(pair.value))) {
        const merged = toPlain(pair.value, doc, check);
        if (merged && typeof merged === 'object') for (const [k, v] of Object.entries(merged)) if (!(k in out)) out[k] = v;
        continue;
      }
      // An own property even for `__proto__` (assigning it would set the prototype); check.ts refuses it.
      const value = toPlain(pair.value, doc, check && { ...check, path: at! });
      Object.defineProperty(out, String(key), { value, enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  if (isSeq(node)) return node.items.map((item, i) => toPlain(item, doc, check && { ...check, path: `${check.path}[${i}]` }));
  if (isScalar(node)) {
    const v = node.value;
    if (typeof v === 'number' && Number.isInteger(v) && isFloatLiteral(node.source)) return tomlFloat(v);
    return v;
  }
  return node === undefined ? null : node;
}

function isFloatLiteral(source: unknown): boolean {
  return typeof source === 'string' && /^[-+]?(\d[\d_]*)?\.\d|[eE]/.test(source) && !/^0x/i.test(source);
}

/** Line of the deepest node the path reaches (the path itself may name a missing key). */
function lineOf(doc: Document.Parsed, lines: LineCounter, path: string): number | undefined {
  const segments = parsePath(path);
  for (let n = segments.length; n >= 0; n--) {
    const node = (n === 0 ? doc.contents : doc.getIn(segments.slice(0, n), true)) as Node | undefined;
    if (node && node.range) return lines.linePos(node.range[0]).line;
  }
  return undefined;
}

/** `spec.tidb.env[0]["app.kubernetes.io/name"]` -> ['spec', 'tidb', 'env', 0, 'app.kubernetes.io/name'] */
export function parsePath(path: string): (string | number)[] {
  const out: (string | number)[] = [];
  const re = /([^.[\]]+)|\[(\d+)\]|\["((?:[^"\\]|\\.)*)"\]/g;
  for (let m = re.exec(path); m; m = re.exec(path)) {
    if (m[1] !== undefined) out.push(m[1]);
    else if (m[2] !== undefined) out.push(Number(m[2]));
    else out.push(JSON.parse(`"${m[3]}"`) as string);
  }
  return out;
}

function firstLine(s: string): string {
  return s.split('\n')[0];
}
