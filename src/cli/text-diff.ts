/**
 * A unified diff of two texts, line by line, for `render --check -v`: the shortest edit script
 * (Myers' greedy search), in hunks with three lines of context, as `diff -u` prints them.
 */

type Op = { readonly op: ' ' | '-' | '+'; readonly text: string; readonly oldLine: number; readonly newLine: number };

/** Edits beyond this many make the search quadratic in memory: the rest is shown as replaced whole. */
const MAX_EDITS = 2000;
const CONTEXT = 3;

/** The unified diff from `before` to `after`, with the `---` / `+++` header naming them; "" when equal. */
export function unifiedDiff(before: string, after: string, names: { readonly from: string; readonly to: string }): string {
  if (before === after) return '';
  const a = lines(before);
  const b = lines(after);
  const hunks = hunksOf(editScript(a, b));
  return [`--- ${names.from}`, `+++ ${names.to}`, ...hunks].join('\n') + '\n';
}

/** The first line of `before` (1-based) where `after` differs from it. */
export function firstDifferentLine(before: string, after: string): number {
  const a = lines(before);
  const b = lines(after);
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return Math.min(i, Math.max(a.length - 1, 0)) + 1;
}

function lines(text: string): string[] {
  if (text === '') return [];
  const out = text.split('\n');
  if (out[out.length - 1] === '') out.pop();
  return out;
}

/** Every line of both texts in order, each kept, removed or added. */
function editScript(a: readonly string[], b: readonly string[]): Op[] {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const ops: Op[] = [];
  const keep = (i: number, j: number) => ops.push({ op: ' ', text: a[i], oldLine: i + 1, newLine: j + 1 });
  for (let i = 0; i < start; i++) keep(i, i);
  ops.push(...middle(a.slice(start, endA), b.slice(start, endB), start));
  for (let i = endA, j = endB; i < a.length; i++, j++) keep(i, j);
  return ops;
}

/** The edits between two runs of lines that differ at both ends (offset: lines before them). */
function middle(a: readonly string[], b: readonly string[], offset: number): Op[] {
  const removed = (i: number): Op => ({ op: '-', text: a[i], oldLine: offset + i + 1, newLine: offset });
  const added = (j: number): Op => ({ op: '+', text: b[j], oldLine: offset, newLine: offset + j + 1 });
  const n = a.length;
  const m = b.length;
  // trace[d][k + d]: how far along `a` the furthest path with d edits on diagonal k reaches.
  const trace: Int32Array[] = [];
  let found = -1;
  for (let d = 0; d <= Math.min(n + m, MAX_EDITS) && found < 0; d++) {
    const prev = trace[d - 1];
    const v = new Int32Array(2 * d + 1);
    for (let k = -d; k <= d; k += 2) {
      const down = k === -d || (k !== d && prev[k - 1 + d - 1] < prev[k + 1 + d - 1]);
      let x = d === 0 ? 0 : down ? prev[k + 1 + d - 1] : prev[k - 1 + d - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[k + d] = x;
      if (x >= n && y >= m) found = d;
    }
    trace.push(v);
  }
  if (found < 0) return [...a.map((_, i) => removed(i)), ...b.map((_, j) => added(j))];
  const out: Op[] = [];
  let x = n;
  let y = m;
  for (let d = found; d > 0; d--) {
    const prev = trace[d - 1];
    const k = x - y;
    const down = k === -d || (k !== d && prev[k - 1 + d - 1] < prev[k + 1 + d - 1]);
    const px = down ? prev[k + 1 + d - 1] : prev[k - 1 + d - 1];
    const py = px - (down ? k + 1 : k - 1);
    const mx = down ? px : px + 1;
    while (x > mx) out.push({ op: ' ', text: a[--x], oldLine: offset + x + 1, newLine: offset + --y + 1 });
    out.push(down ? added(py) : removed(px));
    x = px;
    y = py;
  }
  while (x > 0) out.push({ op: ' ', text: a[--x], oldLine: offset + x + 1, newLine: offset + --y + 1 });
  return out.reverse();
}

/** The changes with their context, one `@@ -l,s +l,s @@` header per group. */
function hunksOf(ops: readonly Op[]): string[] {
  const changed = ops.map((o, i) => (o.op === ' ' ? -1 : i)).filter((i) => i >= 0);
  const out: string[] = [];
  let i = 0;
  while (i < changed.length) {
    let end = changed[i];
    let j = i;
    // Two changes closer than twice the context share a hunk.
    while (j + 1 < changed.length && changed[j + 1] - end <= 2 * CONTEXT) end = changed[++j];
    const from = Math.max(0, changed[i] - CONTEXT);
    const to = Math.min(ops.length - 1, end + CONTEXT);
    const part = ops.slice(from, to + 1);
    const oldCount = part.filter((o) => o.op !== '+').length;
    const newCount = part.filter((o) => o.op !== '-').length;
    const oldStart = oldCount === 0 ? part[0].oldLine : part.find((o) => o.op !== '+')!.oldLine;
    const newStart = newCount === 0 ? part[0].newLine : part.find((o) => o.op !== '-')!.newLine;
    out.push(`@@ -${oldStart},${oldCount} +${newStart},${newCount} @@`, ...part.map((o) => `${o.op}${o.text}`));
    i = j + 1;
  }
  return out;
}
