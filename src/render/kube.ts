import { ApiObject, type ApiObjectMetadataDefinition, type ApiObjectProps, type JsonPatch } from 'cdk8s';
import type { Construct } from 'constructs';

/**
 * An ApiObject whose props are plain JSON (no tokens, no lazy values). Its `toJson` produces what
 * cdk8s's does (keys sorted, apiVersion/kind/metadata first, null and undefined dropped) without
 * cdk8s's token resolution, which dominated render time; once a JSON patch is added it defers to cdk8s.
 */
export class KubeObject extends ApiObject {
  private patched = false;

  constructor(
    scope: Construct,
    id: string,
    private readonly json: Record<string, unknown>,
  ) {
    super(scope, id, json as unknown as ApiObjectProps);
  }

  override addJsonPatch(...ops: JsonPatch[]): void {
    this.patched = true;
    super.addJsonPatch(...ops);
  }

  /**
   * The object as given, when no JSON patch changed it (else `toJson()`): for reading a field, without
   * serialising the whole object. Null and undefined values are still in it.
   */
  givenJson(): any {
    return this.patched ? this.toJson() : this.json;
  }

  override toJson(): any {
    if (this.patched) return super.toJson();
    const { apiVersion, kind, metadata: _metadata, ...rest } = this.json;
    return { apiVersion, kind, metadata: metadataJson(this.metadata), ...(sorted(rest) as object) };
  }
}

/** An object as given where it is a {@link KubeObject} (see `givenJson`), else serialised. */
export function givenJson(o: ApiObject): any {
  // `instanceof` narrows to ApiObject only: cdk8s declares its own `Symbol.hasInstance`.
  const k = o as Partial<KubeObject>;
  return typeof k.givenJson === 'function' ? k.givenJson() : o.toJson();
}

/** The fields of cdk8s's `ApiObjectMetadataDefinition` its `toJson` reads (cdk8s 2.x, metadata.ts). */
interface MetadataFields {
  readonly name?: string;
  readonly namespace?: string;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
  readonly finalizers?: string[];
  readonly ownerReferences?: unknown[];
  readonly _additionalAttributes?: Record<string, unknown>;
}

/**
 * What cdk8s's `metadata.toJson()` gives (its fields, labels and annotations added since included;
 * empty arrays and objects dropped, keys sorted) for plain JSON, without its token resolution. Falls
 * back to cdk8s where the metadata is not laid out as this cdk8s release lays it out.
 */
function metadataJson(metadata: ApiObjectMetadataDefinition): unknown {
  const m = metadata as unknown as MetadataFields;
  if (typeof m._additionalAttributes !== 'object' || typeof m.labels !== 'object' || typeof m.annotations !== 'object')
    return sorted(metadata.toJson());
  const { name, namespace, annotations, finalizers, ownerReferences, labels } = m;
  return sorted({ ...m._additionalAttributes, name, namespace, annotations, finalizers, ownerReferences, labels }, true) ?? {};
}

/**
 * A value that stays `null` in the output, where null and undefined are otherwise dropped: for the
 * few fields whose stored form is an explicit null (Go's empty time, `creationTimestamp: null`).
 */
export const KEEP_NULL = Object.freeze({ keepNull: true }) as unknown as null;

/**
 * The value with its keys sorted and null and undefined dropped ({@link KEEP_NULL} stays null).
 * `dropEmpty` also drops empty arrays and objects, as cdk8s's `sanitizeValue` does for metadata.
 */
function sorted(value: unknown, dropEmpty = false): unknown {
  if (value === KEEP_NULL) return null;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const v of value) if (v !== null && v !== undefined) out.push(sorted(v, dropEmpty));
    return dropEmpty && out.length === 0 ? undefined : out;
  }
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const v = (value as Record<string, unknown>)[key];
    if (v === null || v === undefined) continue;
    const s = sorted(v, dropEmpty);
    if (s !== undefined) out[key] = s;
  }
  return dropEmpty && Object.keys(out).length === 0 ? undefined : out;
}

/** A Kubernetes object of a known JSON shape (`imports/k8s.ts`), added to the construct tree. */
export function kubeObject<T extends { apiVersion?: string; kind?: string }>(scope: Construct, id: string, obj: T): ApiObject {
  if (!obj.apiVersion || !obj.kind) throw new Error(`${scope.node.path}/${id}: an object needs apiVersion and kind`);
  return new KubeObject(scope, id, obj as unknown as Record<string, unknown>);
}
