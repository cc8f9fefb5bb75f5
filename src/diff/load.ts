/**
 * YAML texts -> the Kubernetes objects they stand for: TidbCluster documents are rendered exactly as
 * `render` renders them, every other Kubernetes object (an already rendered `dist/`, say) is taken as
 * it is. No file system access here.
 */
import { renderClusters, renderProblems } from '../render/render';
import { linkClusterInputs, loadInputDocuments, type InputDocument } from '../load/clusters';
import { fastLoadAll } from '../base/yaml/fast-load';
import { aliasErrors, slowLoadAll, type LoadedCluster, type LoadedDocument, type ParsedDocuments } from '../tidbcluster/load';
import { companionKinds } from '../backup/companions';
import { DATABASE_KINDS, isOwnGroup } from '../database/read';
import type { ResolveOptions } from '../tidbcluster/resolve';
import { KIND } from '../tidbcluster/types';
import { isLive, listItems, withoutServerFields, type Owner } from './live';
import { kindOf, metadataOf, nameOf, namespaceOf, objectKey, type KubeObject } from './model';
import { isPlainObject } from './values';

/** One YAML text and where it came from. */
export interface ManifestText {
  /** The file as messages name it: a path, `<stdin>`, or `REV:path` for a git revision. */
  readonly file: string;
  readonly text: string;
  /** The user named this file (rather than a directory holding it). */
  readonly explicit: boolean;
}

export interface LoadedManifests {
  /** Rendered and given objects, in input order (live objects without what only the server writes). */
  readonly objects: KubeObject[];
  /**
   * The objects that came from the API server (`kubectl get -o yaml`, `kind: List` included), by
   * {@link objectKey}, with their owner references.
   */
  readonly live: ReadonlyMap<string, readonly Owner[]>;
  /** Problems that make the input unusable, each naming its file. */
  readonly errors: string[];
  /** Things worth saying that do not stop the report. */
  readonly notes: string[];
}

/** Reads every text, renders its TidbClusters and collects every problem before giving up. */
export function loadManifests(texts: readonly ManifestText[], options: ResolveOptions = {}): LoadedManifests {
  const errors: string[] = [];
  const notes: string[] = [];
  const given: { object: KubeObject; origin: string }[] = [];
  const live = new Map<string, Owner[]>();
  const clusters: LoadedCluster[] = [];
  const operations: LoadedDocument<InputDocument>[] = [];
  const opKinds = new Set([...companionKinds().map((k) => k.kind), ...DATABASE_KINDS]);
  // What `render` reads of a text; only texts with its kinds need it (or its line numbers).
  const read = (text: string, file: string) => loadInputDocuments(text, file, options);
  for (const t of texts) {
    const bombs = aliasErrors(t.text, t.file);
    if (bombs.length > 0) {
      errors.push(...bombs.map((e) => e.message));
      continue;
    }
    let docs = fastLoadAll(t.text);
    let loaded: ParsedDocuments<InputDocument> | undefined;
    if (!docs) {
      // Only the full parser knows line numbers: let it say what is wrong.
      loaded = read(t.text, t.file);
      if (loaded.errors.length > 0) {
        errors.push(...loaded.errors.map((e) => e.message));
        continue;
      }
      docs = slowLoadAll(t.text);
    }
    if (docs.some((d) => isPlainObject(d) && (d.kind === KIND || opKinds.has(String(d.kind)) || isOwnGroup(d)))) {
      loaded ??= read(t.text, t.file);
      errors.push(...loaded.errors.map((e) => e.message));
      operations.push(...loaded.documents);
      for (const c of loaded.clusters) {
        const doc = docs[c.source.document - 1];
        // A TidbCluster read from the API server is the operator's input, not a new one to render.
        if (isPlainObject(doc) && isLive(doc)) {
          notes.push(
            `${t.file}: document ${c.source.document}: skipped TidbCluster ${c.resolved.name}: read from the API server (it is not rendered)`,
          );
          continue;
        }
        clusters.push(c);
        notes.push(...c.warnings);
      }
    }
    let count = 0;
    const take = (doc: unknown, where: string, inList: boolean) => {
      if (!isPlainObject(doc) || typeof doc.apiVersion !== 'string' || typeof doc.kind !== 'string') {
        notes.push(`${where}: skipped: not a Kubernetes object (no apiVersion and kind)`);
        return;
      }
      // Backups, schedules, restores, initializers and SQL accounts at the top level render with their cluster.
      if (!inList && (opKinds.has(String(doc.kind)) || isOwnGroup(doc))) return;
      if (doc.kind === KIND) {
        // Top-level TidbClusters are rendered above; one inside a List is a live object.
        if (inList)
          notes.push(
            `${where}: skipped TidbCluster ${String(metadataOf(doc as KubeObject).name ?? '')}: read from the API server (it is not rendered)`,
          );
        return;
      }
      // Through JSON so that numbers read from YAML compare equal to rendered ones.
      const object = JSON.parse(JSON.stringify(doc)) as KubeObject;
      if (!isLive(object)) {
        given.push({ object, origin: where });
        return;
      }
      const stripped = withoutServerFields(object);
      live.set(objectKey(stripped.object), stripped.owners);
      given.push({ object: stripped.object, origin: where });
    };
    docs.forEach((doc, i) => {
      if (doc === null || doc === undefined) return;
      count++;
      const where = `${t.file}: document ${i + 1}`;
      const items = isPlainObject(doc) ? listItems(doc) : undefined;
      // What `kubectl get -o yaml` prints for several objects: one List holding them.
      if (items) items.forEach((item, j) => take(item, `${where}: item ${j + 1}`, true));
      else take(doc, where, false);
    });
    if (count === 0 && t.explicit) notes.push(`${t.file}: no document in this file`);
  }
  // Tied together as `render` ties them.
  const linked = linkClusterInputs(clusters, operations, errors);
  errors.push(...linked.errors);
  if (errors.length > 0) return { objects: [], live, errors, notes };
  const renders = renderClusters(
    linked.clusters.map((c) => c.resolved),
    linked.clusters.map((c) => c.operations),
  );
  errors.push(...renderProblems(renders, clusters, operations));
  if (errors.length > 0) return { objects: [], live, errors, notes };
  const rendered = renders.flatMap((r, i) =>
    r.objects.map((object) => ({ object, origin: `rendered from ${clusters[i].source.file}: document ${clusters[i].source.document}` })),
  );
  const all = [...rendered, ...given];
  errors.push(...duplicateObjects(all));
  return { objects: errors.length > 0 ? [] : all.map((o) => o.object), live, errors, notes };
}

function duplicateObjects(objects: readonly { object: KubeObject; origin: string }[]): string[] {
  const seen = new Map<string, string>();
  const out: string[] = [];
  for (const { object, origin } of objects) {
    const key = objectKey(object);
    const first = seen.get(key);
    if (first === undefined) {
      seen.set(key, origin);
      continue;
    }
    const ns = namespaceOf(object) ? ` in namespace ${namespaceOf(object)}` : '';
    out.push(
      `${origin}: duplicate object ${kindOf(object)} ${nameOf(object)}${ns}, also ${first.startsWith('rendered') ? first : `in ${first}`}`,
    );
  }
  return out;
}
