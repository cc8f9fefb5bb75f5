/**
 * Field ownership, as the API server tracks it in `metadata.managedFields`: which field manager set
 * which field. A field is a leaf path (`.spec.replicas`, `.spec.template.spec.containers[name=pd].image`):
 * objects are walked into, lists of objects keyed by `name` are walked into by that key, other lists
 * are one atomic field. Two kinds of writes, as in Kubernetes:
 *
 * - an update (create, PUT, or a non-apply PATCH, `kubectl apply` client-side included) gives its
 *   manager every field whose value it changed, defaulted fields of a new object included;
 * - a server-side apply gives its manager exactly the fields of the applied configuration. A field
 *   another manager owns with a different value is a conflict (409) unless the apply forces, which
 *   takes the field over. A field the manager applied before and no longer applies is removed from
 *   the object, unless another manager owns it too.
 */
import { KubeApiError, type StatusDetails } from './kube-errors';
import { clone, isObject } from './kube-util';

/** Paths that are not fields anyone owns: identity, system metadata and the status. */
const UNOWNED =
  /^\.(apiVersion|kind|status|metadata\.(name|namespace|uid|resourceVersion|generation|creationTimestamp|deletionTimestamp|deletionGracePeriodSeconds|managedFields|selfLink))(\.|\[|$)/;

function isKeyedList(v: unknown[]): boolean {
  return v.length > 0 && v.every((e) => isObject(e) && typeof e.name === 'string');
}

/** Every owned leaf path of a value, with the JSON of its value. */
export function fieldValues(obj: unknown): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (v: unknown, path: string): void => {
    if (isObject(v) && Object.keys(v).length > 0) {
      for (const [k, child] of Object.entries(v)) walk(child, `${path}.${k}`);
    } else if (Array.isArray(v) && isKeyedList(v)) {
      for (const e of v as Record<string, unknown>[]) walk(e, `${path}[name=${e.name}]`);
    } else if (path !== '' && !UNOWNED.test(path)) {
      out.set(path, JSON.stringify(v));
    }
  };
  walk(obj, '');
  return out;
}

/** Splits `.a.b[name=x].c` into `a`, `b`, `[name=x]`, `c`. */
function segments(path: string): string[] {
  return path.match(/\[name=[^\]]*\]|[^.[\]]+/g) ?? [];
}

/** Removes one leaf path from an object in place (missing paths are ignored). */
export function removeField(obj: Record<string, any>, path: string): void {
  const segs = segments(path);
  let node: any = obj;
  for (const s of segs.slice(0, -1)) {
    node = s.startsWith('[name=') && Array.isArray(node) ? node.find((e) => e?.name === s.slice(6, -1)) : node?.[s];
    if (node === undefined || node === null) return;
  }
  const last = segs[segs.length - 1];
  if (last.startsWith('[name=') && Array.isArray(node)) {
    const i = node.findIndex((e) => e?.name === last.slice(6, -1));
    if (i >= 0) node.splice(i, 1);
  } else if (isObject(node)) {
    delete node[last];
  }
}

/** Sets every field of `applied` on `target`: objects and keyed lists merge, other values replace. */
function mergeApplied(target: unknown, applied: unknown): any {
  if (isObject(applied)) {
    const out: Record<string, any> = isObject(target) ? clone(target) : {};
    for (const [k, v] of Object.entries(applied)) out[k] = mergeApplied(out[k], v);
    return out;
  }
  if (Array.isArray(applied) && isKeyedList(applied) && Array.isArray(target) && isKeyedList(target)) {
    const out = clone(target) as Record<string, any>[];
    for (const e of applied as Record<string, any>[]) {
      const i = out.findIndex((t) => t.name === e.name);
      if (i >= 0) out[i] = mergeApplied(out[i], e);
      else out.push(clone(e));
    }
    return out;
  }
  return clone(applied);
}

/** Owners of the fields of every object, by object key and manager. */
export class FieldOwnership {
  private readonly owners = new Map<string, Map<string, Set<string>>>();

  /** The fields each manager owns on an object. */
  of(key: string): Record<string, string[]> {
    const out: Record<string, string[]> = {};
    for (const [m, fields] of this.owners.get(key) ?? []) if (fields.size > 0) out[m] = [...fields].sort();
    return out;
  }

  /** Who owns one field of an object. */
  ownersOf(key: string, field: string): string[] {
    return [...(this.owners.get(key) ?? [])].filter(([, f]) => f.has(field)).map(([m]) => m);
  }

  forget(key: string): void {
    this.owners.delete(key);
  }

  /** An update: the manager takes every field whose value changed; removed fields lose their owners. */
  recordUpdate(key: string, manager: string, before: unknown, after: unknown): void {
    const was = fieldValues(before ?? {});
    const now = fieldValues(after);
    const managers = this.managers(key);
    for (const f of was.keys()) if (!now.has(f)) for (const set of managers.values()) set.delete(f);
    const mine = managers.get(manager) ?? new Set<string>();
    for (const [f, v] of now) {
      if (was.get(f) === v) continue;
      for (const [m, set] of managers) if (m !== manager) set.delete(f);
      mine.add(f);
    }
    managers.set(manager, mine);
  }

  /**
   * A server-side apply of `applied` by `manager` onto `live` (undefined: the object is new). Returns
   * the object to store and `commit`, which records the new ownership once the object is stored;
   * throws 409 on conflicts unless `force`.
   */
  apply(
    key: string,
    manager: string,
    live: Record<string, any> | undefined,
    applied: Record<string, any>,
    force: boolean,
    details?: StatusDetails,
  ): { next: Record<string, any>; commit: () => void } {
    const managers = new Map([...this.managers(key)].map(([m, set]) => [m, new Set(set)]));
    const wanted = fieldValues(applied);
    const current = fieldValues(live ?? {});
    const conflicts: string[] = [];
    for (const [f, v] of wanted) {
      if (current.get(f) === undefined || current.get(f) === v) continue;
      for (const [m, set] of managers) if (m !== manager && set.has(f)) conflicts.push(`conflict with "${m}": ${f}`);
    }
    if (conflicts.length > 0 && !force) {
      throw new KubeApiError(
        409,
        `Apply failed with ${conflicts.length} conflict${conflicts.length === 1 ? '' : 's'}: ${conflicts.join(', ')}`,
        'Conflict',
        details,
      );
    }
    // Forced: the fields whose value changes are taken over; equal values become shared.
    for (const f of wanted.keys()) for (const [m, set] of managers) if (m !== manager && current.get(f) !== wanted.get(f)) set.delete(f);
    const next: Record<string, any> = live ? clone(live) : {};
    for (const f of managers.get(manager) ?? []) {
      if (wanted.has(f)) continue;
      if (![...managers].some(([m, set]) => m !== manager && set.has(f))) removeField(next, f);
    }
    managers.set(manager, new Set(wanted.keys()));
    return { next: mergeApplied(next, applied), commit: () => this.owners.set(key, managers) };
  }

  private managers(key: string): Map<string, Set<string>> {
    let m = this.owners.get(key);
    if (!m) this.owners.set(key, (m = new Map()));
    return m;
  }
}
