/**
 * Reading TidbCluster documents from YAML text: multi-document streams, other kinds set apart, every
 * problem reported with file, document index, path and line. No file system access here.
 */
import { documentIssues as clusterIssues } from './check';
import { fastLoadAll } from '../base/yaml/fast-load';
import { formatIssue, SpecError, type SourceRef, type SpecIssue } from './errors';
import { resolveCluster, type ResolveOptions, type ResolvedCluster } from './resolve';
import { aliasProblems } from '../base/yaml/aliases';
import { plainDocuments, readYaml, type ReadDocument } from '../base/yaml/read';
import { keyWithoutColon } from '../base/yaml/syntax';
import { KIND, type TidbClusterManifest } from './types';
import { closest } from '../base/suggest';
import { parsePath } from '../base/path';
import { isSettingsDocument } from './settings';

export interface LoadedCluster {
  readonly source: SourceRef;
  readonly resolved: ResolvedCluster;
  /** `file: document N: path (line L): warning: ...` for each of the cluster's warnings. */
  readonly warnings: readonly string[];
  /** The line of a path in the document (for problems found across clusters). @default none */
  readonly line?: (path: string) => number | undefined;
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
  /**
   * The API group of its `apiVersion` (`pingcap.com`): a document of the same kind in another group
   * (Velero's `Backup`) is another project's object and passes through. One without an apiVersion
   * (or with one that is no string) is taken as this kind's, to be told what is wrong.
   */
  readonly group: string;
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
  /** `file: document N: path (line L): warning: ...` for each reading other YAML tools take differently. */
  readonly warnings: readonly string[];
}

/** What one YAML text holds: its TidbClusters, the documents of the kinds asked for, other objects, every problem. */
export interface ParsedDocuments<T> extends LoadResult {
  /** The documents of the caller's kinds that had no problem. */
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

/** Whether `obj` is of `kind`: its kind, and its apiVersion's group (or no apiVersion to tell). */
function isOfKind(obj: Record<string, unknown>, kind: DocumentKind<unknown>): boolean {
  if (obj.kind !== kind.kind) return false;
  const { apiVersion } = obj;
  if (typeof apiVersion !== 'string') return true;
  return apiVersion.slice(0, Math.max(0, apiVersion.indexOf('/'))) === kind.group;
}

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
  // One letter changed, added, dropped, or two neighbours swapped.
  return closest(obj.kind, OPERATOR_KINDS, { ignoreCase: true, maxDistance: 1 });
}

/** Whether a document other than the caller's kinds is an object to pass through. */
function isOther(obj: Record<string, unknown>): boolean {
  const { apiVersion, kind } = obj;
  return (
    typeof apiVersion === 'string' &&
    apiVersion !== '' &&
    typeof kind === 'string' &&
    kind !== '' &&
    !TOOL_GROUPS.some((g) => apiVersion.startsWith(g))
  );
}

/** Parses and checks every document of one YAML text. */
export function loadTidbClusters(text: string, file: string, options: ResolveOptions = {}): LoadResult {
  const bombs = aliasErrors(text, file);
  if (bombs.length > 0) return { clusters: [], errors: bombs, skipped: [] };
  return readTidbClusters(text, file, options);
}

/** {@link loadTidbClusters} for a text whose aliases {@link aliasErrors} has checked already. */
export function readTidbClusters(text: string, file: string, options: ResolveOptions = {}): LoadResult {
  const { clusters, errors, skipped, others } = parseDocuments(text, file, options, []);
  return { clusters, errors, skipped: others.length === 0 ? skipped : [...skipped, ...others.map((o) => skippedLine(o.source, o.value))] };
}

/**
 * {@link readTidbClusters} that also reads the documents of `kinds`, with the same strictness: every
 * problem of every document, each with its file, document, path and line.
 */
export function parseDocuments<T>(
  text: string,
  file: string,
  options: ResolveOptions,
  kinds: readonly DocumentKind<T>[],
): ParsedDocuments<T> {
  return fastLoad(text, file, options, kinds) ?? slowLoad(text, file, options, kinds);
}

/** The line of `path` in document `document` of `text`, reading the text once, on first use. */
function lazyLines(text: string): (document: number, path: string) => number | undefined {
  let docs: ReadDocument[] | undefined;
  return (document, path) => {
    docs ??= readYaml(text);
    return docs[document - 1]?.line(path);
  };
}

/** Documents whose YAML aliases expand too far, as errors; nothing reads such a text further. */
export function aliasErrors(text: string, file: string): SpecError[] {
  return aliasProblems(text).map(
    (p) => new SpecError([{ path: '(yaml)', line: p.line, message: p.message }], { file, document: p.document }),
  );
}

/** Clean input only: undefined as soon as anything would need a message with a line number. */
function fastLoad<T>(
  text: string,
  file: string,
  options: ResolveOptions,
  kinds: readonly DocumentKind<T>[],
): ParsedDocuments<T> | undefined {
  const docs = fastLoadAll(text);
  if (!docs) return undefined;
  const result: ParsedDocuments<T> = { clusters: [], errors: [], skipped: [], documents: [], others: [] };
  const lines = lazyLines(text);
  for (let i = 0; i < docs.length; i++) {
    const value = docs[i];
    const source = { file, document: i + 1 };
    if (value === null || value === undefined) continue;
    if (typeof value !== 'object' || Array.isArray(value)) return undefined;
    const obj = value as Record<string, unknown>;
    // Render settings are read before the clusters (settings.ts): nothing to render or pass through.
    if (isSettingsDocument(obj)) continue;
    if (nearMissKind(obj)) return undefined;
    const other = kinds.find((k) => isOfKind(obj, k));
    if (other) {
      if (documentIssues(obj, other).length > 0) return undefined;
      result.documents.push({ source, value: other.read(obj, source), line: (path) => lines(source.document, path), warnings: [] });
      continue;
    }
    if (obj.kind !== KIND) {
      if (isOther(obj)) result.others.push({ source, value: obj, line: (path) => lines(source.document, path), warnings: [] });
      else result.skipped.push(skippedLine(source, obj));
      continue;
    }
    if (documentIssues(obj).length > 0) return undefined;
    try {
      const resolved = resolveCluster(obj as unknown as TidbClusterManifest, options);
      // Warnings name their line, which only the full parser knows.
      if (resolved.warnings.length > 0) return undefined;
      result.clusters.push({ source, resolved, warnings: [], line: (path) => lines(source.document, path) });
    } catch (e) {
      if (e instanceof SpecError) return undefined;
      throw e;
    }
  }
  return result;
}

/** The plain values of every document as the full reader reads them (for tests of the fast path). */
export function slowLoadAll(text: string): unknown[] {
  return plainDocuments(text);
}

function slowLoad<T>(text: string, file: string, options: ResolveOptions, kinds: readonly DocumentKind<T>[]): ParsedDocuments<T> {
  const result: ParsedDocuments<T> = { clusters: [], errors: [], skipped: [], documents: [], others: [] };
  readYaml(text).forEach((doc, i) => loadDocument(doc, { file, document: i + 1 }, options, kinds, result));
  return result;
}

function loadDocument<T>(
  doc: ReadDocument,
  source: SourceRef,
  options: ResolveOptions,
  kinds: readonly DocumentKind<T>[],
  out: ParsedDocuments<T>,
): void {
  if (doc.syntax.length > 0) {
    out.errors.push(new SpecError(doc.syntax, source));
    return;
  }
  const value = doc.value;
  // An empty document (a trailing `---`) reads as null: nothing to render, nothing wrong.
  if (value === null) return;
  if (typeof value !== 'object' || Array.isArray(value)) {
    out.errors.push(
      new SpecError([{ path: '(document)', line: doc.line(''), message: 'expected a mapping (a Kubernetes object)' }], source),
    );
    return;
  }
  const obj = value as Record<string, unknown>;
  if (isSettingsDocument(obj)) return;
  const meant = nearMissKind(obj);
  if (meant) {
    const message = `${JSON.stringify(obj.kind)} is no kind tidb-gitops reads; did you mean ${meant}?`;
    out.errors.push(new SpecError([{ path: 'kind', line: doc.line('kind'), message }], source));
    return;
  }
  const other = kinds.find((k) => isOfKind(obj, k));
  // A problem with a value YAML 1.2 tools read differently (`name: yes` is true to kubectl) says so.
  const withLines = (issues: readonly SpecIssue[]) =>
    issues.map((i) => {
      const note = doc.notes.find((n) => n.path === i.path);
      const message = note ? `${i.message} (${note.message})` : missingColonHint(i.message);
      return { ...i, line: i.line ?? doc.line(i.path), message };
    });
  if (obj.kind !== KIND && !other) {
    if (!isOther(obj)) out.skipped.push(skippedLine(source, obj));
    // What kubectl would read differently or not at all is refused in a passed-through object too.
    else if (doc.issues.length > 0) out.errors.push(new SpecError(doc.issues, source));
    else out.others.push({ source, value: obj, line: doc.line, warnings: yamlWarnings(doc, source) });
    return;
  }
  if (doc.issues.length > 0) {
    out.errors.push(new SpecError(doc.issues, source));
    return;
  }
  if (other) {
    const issues = documentIssues(obj, other);
    if (issues.length > 0) out.errors.push(new SpecError(withLines(issues), source));
    else out.documents.push({ source, value: other.read(obj, source), line: doc.line, warnings: yamlWarnings(doc, source) });
    return;
  }
  const issues = documentIssues(obj);
  if (issues.length > 0) {
    out.errors.push(new SpecError(withLines(issues), source));
    return;
  }
  try {
    const resolved = resolveCluster(obj as unknown as TidbClusterManifest, options);
    const warnings = [
      ...yamlWarnings(doc, source),
      ...withLines(resolved.warnings).map((w) => formatIssue({ ...w, message: `warning: ${w.message}` }, source)),
    ];
    out.clusters.push({ source, resolved, warnings, line: doc.line });
  } catch (e) {
    if (!(e instanceof SpecError)) throw e;
    out.errors.push(new SpecError(withLines(e.issues), source));
  }
}

/**
 * `pd:` followed by `replicas 3` alone reads as the text "replicas 3" where a mapping belongs: the
 * message says which key was meant.
 */
function missingColonHint(message: string): string {
  const got = /^expected a mapping, got ("(?:[^"\\]|\\.)*")$/.exec(message);
  const fix = got ? keyWithoutColon(JSON.parse(got[1]) as string) : undefined;
  return fix ? `${message}: a key needs a colon and a space after it (${JSON.stringify(fix)})` : message;
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

/** `file: document N: path (line L): warning: ...` for each reading other YAML tools take differently. */
function yamlWarnings(doc: ReadDocument, source: SourceRef): string[] {
  return doc.notes.map((n) => formatIssue({ ...n, message: `warning: ${n.message}` }, source));
}

export { parsePath };
