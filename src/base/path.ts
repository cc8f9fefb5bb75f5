/**
 * Paths into a document as messages print them: `spec.tidb.env[0]`, and `labels["app.kubernetes.io/name"]`
 * for a key that is no plain word.
 */

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** `path.key`, or `path["key"]` for a key that is no plain word (what {@link parsePath} reads back). */
export function joinKey(path: string, key: string): string {
  if (!IDENTIFIER.test(key)) return `${path}[${JSON.stringify(key)}]`;
  return path === '' ? key : `${path}.${key}`;
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
