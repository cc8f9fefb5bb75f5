/**
 * The four PATCH flavours of the Kubernetes API, plus the three-way merge behind `kubectl apply` and
 * server-side apply. All functions are pure: they return new values and never change their inputs.
 */
import { KubeApiError } from './kube-errors';
import { clone, isObject, jsonEqual } from './kube-util';

/** RFC 7386 JSON merge patch: objects merge recursively, `null` deletes, everything else replaces. */
export function mergePatch(target: unknown, patch: unknown): any {
  if (!isObject(patch)) return clone(patch);
  const result: Record<string, any> = isObject(target) ? clone(target) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete result[k];
    else result[k] = mergePatch(result[k], v);
  }
  return result;
}

/**
 * The merge key of a list field: `type` for status conditions (`patchMergeKey:"type"` on
 * PodStatus.conditions and the other condition lists of k8s.io/api), `name` for the rest.
 */
const mergeKeyOf = (field: string | undefined): string => (field === 'conditions' ? 'type' : 'name');

/** Whether a list holds only objects with a string merge key, the lists a strategic merge merges by key. */
function isNamedList(list: unknown, key = 'name'): list is Array<Record<string, any>> {
  return Array.isArray(list) && list.every((e) => isObject(e) && typeof e[key] === 'string');
}

/** Drops strategic-merge directives (`$patch`, `$setElementOrder/...`, `$retainKeys`) from a value. */
function stripDirectives(v: unknown): any {
  if (Array.isArray(v)) return v.map(stripDirectives);
  if (!isObject(v)) return v;
  const out: Record<string, any> = {};
  for (const [k, child] of Object.entries(v)) if (!k.startsWith('$')) out[k] = stripDirectives(child);
  return out;
}

const DELETE = Symbol('delete');

function strategicValue(target: unknown, patch: unknown, field?: string): any {
  if (Array.isArray(patch)) {
    const key = mergeKeyOf(field);
    if (patch.length > 0 && isNamedList(patch, key) && isNamedList(target, key)) return mergeNamedList(target, patch, key);
    return stripDirectives(patch);
  }
  if (!isObject(patch)) return clone(patch);
  if (patch.$patch === 'delete') return DELETE;
  if (patch.$patch === 'replace') return stripDirectives(patch);
  const result: Record<string, any> = isObject(target) ? clone(target) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith('$')) continue;
    const merged = v === null ? DELETE : strategicValue(result[k], v, k);
    if (merged === DELETE) delete result[k];
    else result[k] = merged;
  }
  return result;
}

function mergeNamedList(target: Array<Record<string, any>>, patch: Array<Record<string, any>>, key: string): any[] {
  const result = clone(target);
  for (const el of patch) {
    const i = result.findIndex((e) => e[key] === el[key]);
    if (el.$patch === 'delete') {
      if (i >= 0) result.splice(i, 1);
    } else if (i >= 0) {
      result[i] = strategicValue(result[i], el);
    } else {
      result.push(stripDirectives(el));
    }
  }
  return result;
}

/**
 * Strategic merge patch, simplified: a merge patch that merges lists of objects by their `name` key
 * when both sides are such lists (containers, env, volumes, ports...), and status conditions by
 * `type`, and replaces other lists.
 * Honours `$patch: replace|delete`; other directives are ignored.
 */
export function strategicMergePatch(target: unknown, patch: unknown): any {
  const result = strategicValue(target, patch);
  return result === DELETE ? {} : result;
}

/** One RFC 6902 operation. */
export interface JsonPatchOp {
  op: string;
  path: string;
  value?: unknown;
  from?: string;
}

function patchError(message: string): KubeApiError {
  return new KubeApiError(422, `the server rejected our request due to an error in our request: ${message}`, 'Invalid');
}

function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw patchError(`invalid JSON pointer "${pointer}"`);
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** The container that holds the last token of a pointer, and that token. */
function locate(doc: unknown, tokens: string[], pointer: string): [any, string] {
  let node: any = doc;
  for (const t of tokens.slice(0, -1)) {
    node = Array.isArray(node) ? node[Number(t)] : isObject(node) ? node[t] : undefined;
    if (node === undefined) throw patchError(`path "${pointer}" does not exist`);
  }
  if (!Array.isArray(node) && !isObject(node)) throw patchError(`path "${pointer}" does not exist`);
  return [node, tokens[tokens.length - 1]];
}

function arrayIndex(arr: unknown[], token: string, pointer: string, forInsert: boolean): number {
  if (forInsert && token === '-') return arr.length;
  const i = /^(0|[1-9]\d*)$/.test(token) ? Number(token) : NaN;
  if (!(i >= 0 && i < arr.length + (forInsert ? 1 : 0))) throw patchError(`index out of range in "${pointer}"`);
  return i;
}

function getAt(doc: unknown, pointer: string): unknown {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) return doc;
  const [parent, last] = locate(doc, tokens, pointer);
  const v = Array.isArray(parent) ? parent[arrayIndex(parent, last, pointer, false)] : parent[last];
  if (v === undefined) throw patchError(`path "${pointer}" does not exist`);
  return v;
}

function removeAt(doc: unknown, pointer: string): unknown {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) throw patchError('cannot remove the whole document');
  const [parent, last] = locate(doc, tokens, pointer);
  if (Array.isArray(parent)) return parent.splice(arrayIndex(parent, last, pointer, false), 1)[0];
  if (!Object.prototype.hasOwnProperty.call(parent, last)) throw patchError(`unable to remove nonexistent key "${last}" at "${pointer}"`);
  const v = parent[last];
  delete parent[last];
  return v;
}

function addAt(doc: unknown, pointer: string, value: unknown): unknown {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) return value;
  const [parent, last] = locate(doc, tokens, pointer);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, last, pointer, true), 0, value);
  else parent[last] = value;
  return doc;
}

/** RFC 6902 JSON patch (add, remove, replace, move, copy, test). A failed op rejects the whole patch. */
export function jsonPatch(target: unknown, ops: unknown): any {
  if (!Array.isArray(ops)) throw patchError('a JSON patch must be an array of operations');
  let doc = clone(target);
  for (const raw of ops as JsonPatchOp[]) {
    if (!isObject(raw) || typeof raw.path !== 'string') throw patchError('each JSON patch operation needs "op" and "path"');
    switch (raw.op) {
      case 'add':
        doc = addAt(doc, raw.path, clone(raw.value));
        break;
      case 'remove':
        removeAt(doc, raw.path);
        break;
      case 'replace':
        if (raw.path === '') doc = clone(raw.value);
        else {
          removeAt(doc, raw.path);
          doc = addAt(doc, raw.path, clone(raw.value));
        }
        break;
      case 'move': {
        const v = removeAt(doc, raw.from ?? '');
        doc = addAt(doc, raw.path, v);
        break;
      }
      case 'copy':
        doc = addAt(doc, raw.path, clone(getAt(doc, raw.from ?? '')));
        break;
      case 'test':
        if (!jsonEqual(getAt(doc, raw.path), raw.value)) throw patchError(`testing value ${raw.path} failed`);
        break;
      default:
        throw patchError(`unexpected kind of JSON patch operation: "${raw.op}"`);
    }
  }
  return doc;
}

/**
 * The three-way merge of `kubectl apply`: starts from `live`, sets every field `desired` gives
 * (objects recursively, lists and scalars replaced, `null` deletes), and deletes the fields that the
 * previous desired state (`last`) had but `desired` no longer has. Fields nobody declared (set by a
 * controller, say) are kept.
 */
export function threeWayMerge(last: unknown, desired: unknown, live: unknown): any {
  if (!isObject(desired) || !isObject(live)) return clone(desired);
  const result = clone(live);
  if (isObject(last)) {
    for (const k of Object.keys(last)) if (!(k in desired)) delete result[k];
  }
  for (const [k, d] of Object.entries(desired)) {
    if (d === null) delete result[k];
    else if (isObject(d)) {
      result[k] = threeWayMerge(isObject(last) ? last[k] : undefined, d, isObject(result[k]) ? result[k] : {});
    } else result[k] = clone(d);
  }
  return result;
}
