import { ApiObject, type ApiObjectProps, type JsonPatch } from 'cdk8s';
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

  override toJson(): any {
    if (this.patched) return super.toJson();
    const { apiVersion, kind, metadata: _metadata, ...rest } = this.json;
    return { apiVersion, kind, metadata: sorted(this.metadata.toJson()), ...(sorted(rest) as object) };
  }
}

/**
 * A value that stays `null` in the output, where null and undefined are otherwise dropped: for the
 * few fields whose stored form is an explicit null (Go's empty time, `creationTimestamp: null`).
 */
export const KEEP_NULL = Object.freeze({ keepNull: true }) as unknown as null;

function sorted(value: unknown): unknown {
  if (value === KEEP_NULL) return null;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const v of value) if (v !== null && v !== undefined) out.push(sorted(v));
    return out;
  }
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const v = (value as Record<string, unknown>)[key];
    if (v !== null && v !== undefined) out[key] = sorted(v);
  }
  return out;
}

/** A Kubernetes object of a known JSON shape (`imports/k8s.ts`), added to the construct tree. */
export function kubeObject<T extends { apiVersion?: string; kind?: string }>(scope: Construct, id: string, obj: T): ApiObject {
  if (!obj.apiVersion || !obj.kind) throw new Error(`${scope.node.path}/${id}: an object needs apiVersion and kind`);
  return new KubeObject(scope, id, obj as unknown as Record<string, unknown>);
}
