/**
 * Differences between two plain JSON values (parts of Kubernetes objects), as readable paths:
 * `containers[pd].resources.limits.memory`. Lists of named objects (containers, env, volumes, ports,
 * volume mounts, claim templates) are matched by their name, not by their position, so adding an env
 * var names that var instead of shifting every later one.
 */

/** One step into a value: a map key, or the key of an item in a list of named objects. */
export interface PathStep {
  readonly kind: 'key' | 'item';
  readonly name: string;
}

/** A place where two values differ; `from` or `to` is undefined where that side has nothing. */
export interface ValueChange {
  readonly path: readonly PathStep[];
  readonly from: unknown;
  readonly to: unknown;
}

type Plain = Record<string, unknown>;

export function isPlainObject(v: unknown): v is Plain {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => deepEqual(a[k], b[k]));
  }
  return false;
}

/** Fields that name an item of a list, tried in this order; `metadata.name` is for claim templates. */
const ITEM_KEYS: readonly (readonly string[])[] = [['name'], ['metadata', 'name'], ['mountPath'], ['containerPort'], ['key']];

function itemKey(item: unknown, field: readonly string[]): string | undefined {
  let v: unknown = item;
  for (const f of field) v = isPlainObject(v) ? v[f] : undefined;
  return typeof v === 'string' || typeof v === 'number' ? String(v) : undefined;
}

/** The field that names every item of both lists uniquely, if there is one. */
function listKeyField(a: readonly unknown[], b: readonly unknown[]): readonly string[] | undefined {
  if (a.length + b.length === 0) return undefined;
  return ITEM_KEYS.find((field) =>
    [a, b].every((list) => {
      const keys = list.map((item) => itemKey(item, field));
      return keys.every((k) => k !== undefined) && new Set(keys).size === keys.length;
    }),
  );
}

/** Every place where `a` and `b` differ, in a stable order (map keys sorted, list items in list order). */
export function diffValues(a: unknown, b: unknown, at: readonly PathStep[] = []): ValueChange[] {
  const out: ValueChange[] = [];
  walk(a, b, at, out);
  return out;
}

function walk(a: unknown, b: unknown, at: readonly PathStep[], out: ValueChange[]): void {
  if (deepEqual(a, b)) return;
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    for (const k of keys) walk(a[k], b[k], [...at, { kind: 'key', name: k }], out);
    return;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    const field = listKeyField(a, b);
    if (field) {
      const before = new Map(a.map((item) => [itemKey(item, field)!, item]));
      const after = new Map(b.map((item) => [itemKey(item, field)!, item]));
      const keys = [...after.keys(), ...[...before.keys()].filter((k) => !after.has(k))];
      for (const k of keys) walk(before.get(k), after.get(k), [...at, { kind: 'item', name: k }], out);
      return;
    }
  }
  out.push({ path: at, from: a, to: b });
}

const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** `containers[pd].image`, `metadata.annotations[prometheus.io/port]`. */
export function formatPath(path: readonly PathStep[]): string {
  let s = '';
  for (const step of path) {
    if (step.kind === 'item' || !PLAIN_KEY.test(step.name)) s += `[${step.name}]`;
    else s += s === '' ? step.name : `.${step.name}`;
  }
  return s;
}

/** Longest value text shown inline; longer values are only said to have changed. */
export const SHORT_VALUE = 80;

/** A value as one short line (strings as they are, everything else as JSON), or undefined when it is too long. */
export function shortValue(v: unknown, max = SHORT_VALUE): string | undefined {
  if (v === undefined) return undefined;
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s.length <= max && !s.includes('\n') ? s : undefined;
}
