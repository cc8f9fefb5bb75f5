/**
 * Label and field selectors: the `labelSelector` / `fieldSelector` query strings of LIST and WATCH,
 * and the structured `LabelSelector` of a StatefulSet's `spec.selector`.
 */
import { badRequest } from './kube-errors';
import { isObject } from './kube-util';

/** A compiled selector: true when the object matches. */
export type Matcher = (obj: Record<string, any>) => boolean;

type Requirement = (labels: Record<string, string>) => boolean;

/** Own-key test (`in` would also see `constructor` and friends). */
function has(labels: Record<string, string>, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(labels, key);
}

/** Splits on commas that are not inside `in (a,b)` parentheses. */
function splitTerms(text: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      terms.push(text.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(text.slice(start));
  return terms.map((t) => t.trim()).filter((t) => t !== '');
}

function parseRequirement(term: string, whole: string): Requirement {
  const set = /^(\S+)\s+(in|notin)\s*\(([^)]*)\)$/.exec(term);
  if (set) {
    const [, key, op, list] = set;
    const values = new Set(list.split(',').map((v) => v.trim()));
    return op === 'in' ? (l) => has(l, key) && values.has(l[key]) : (l) => !has(l, key) || !values.has(l[key]);
  }
  const cmp = /^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(term);
  if (cmp) {
    const [, key, op, value] = cmp;
    return op === '!=' ? (l) => l[key] !== value : (l) => has(l, key) && l[key] === value;
  }
  const absent = /^!\s*([^=!\s]+)$/.exec(term);
  if (absent) return (l) => !has(l, absent[1]);
  if (/^[^=!\s()]+$/.test(term)) return (l) => has(l, term);
  throw badRequest(`unable to parse requirement: invalid label selector: "${whole}"`);
}

/** Compiles a `labelSelector` query value (`a=b,c!=d,e,!f,g in (x,y)`); empty matches everything. */
export function parseLabelSelector(text: string | undefined): Matcher {
  if (!text) return () => true;
  const reqs = splitTerms(text).map((t) => parseRequirement(t, text));
  return (obj) => {
    const labels: Record<string, string> = obj.metadata?.labels ?? {};
    return reqs.every((r) => r(labels));
  };
}

/** The value at a dotted path such as `metadata.name` or `status.phase`, as a string. */
function fieldValue(obj: Record<string, any>, path: string): string {
  let v: unknown = obj;
  for (const part of path.split('.')) v = isObject(v) ? v[part] : undefined;
  return v === undefined || v === null ? '' : String(v);
}

/** Compiles a `fieldSelector` query value (`metadata.name=x,status.phase!=Running`). */
export function parseFieldSelector(text: string | undefined): Matcher {
  if (!text) return () => true;
  const reqs = splitTerms(text).map((term) => {
    const m = /^([A-Za-z0-9_.]+)\s*(==|=|!=)\s*(.*)$/.exec(term);
    if (!m) throw badRequest(`invalid field selector: "${text}"`);
    const [, path, op, value] = m;
    return op === '!='
      ? (o: Record<string, any>) => fieldValue(o, path) !== value
      : (o: Record<string, any>) => fieldValue(o, path) === value;
  });
  return (obj) => reqs.every((r) => r(obj));
}

/**
 * Compiles a structured `LabelSelector` (`matchLabels` plus `matchExpressions`). An absent or empty
 * selector matches nothing, as a workload controller treats it.
 */
export function labelSelectorMatcher(sel: unknown): Matcher {
  if (!isObject(sel)) return () => false;
  const reqs: Requirement[] = [];
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) reqs.push((l) => l[k] === v);
  for (const e of (sel.matchExpressions ?? []) as Array<{ key: string; operator: string; values?: string[] }>) {
    const values = new Set(e.values ?? []);
    switch (e.operator) {
      case 'In':
        reqs.push((l) => has(l, e.key) && values.has(l[e.key]));
        break;
      case 'NotIn':
        reqs.push((l) => !has(l, e.key) || !values.has(l[e.key]));
        break;
      case 'Exists':
        reqs.push((l) => has(l, e.key));
        break;
      case 'DoesNotExist':
        reqs.push((l) => !has(l, e.key));
        break;
      default:
        reqs.push(() => false);
    }
  }
  if (reqs.length === 0) return () => false;
  return (obj) => {
    const labels: Record<string, string> = obj.metadata?.labels ?? {};
    return reqs.every((r) => r(labels));
  };
}
