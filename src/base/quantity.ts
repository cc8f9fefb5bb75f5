/** Kubernetes resource quantities (`10Gi`, `500M`, `1e3`), as far as sizes need them. */

const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const DECIMAL: Record<string, number> = { '': 1, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };
const QUANTITY = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E))?$/;

/** A quantity's value (exact enough to compare and to tell its sign), or undefined when it is not one. */
export function quantityValue(q: unknown): number | undefined {
  if (typeof q === 'number') return Number.isFinite(q) ? q : undefined;
  if (typeof q !== 'string') return undefined;
  const m = QUANTITY.exec(q);
  if (!m) return undefined;
  const [, num, exp, suffix] = m;
  return Number(num) * (exp ? 10 ** Number(exp.slice(1)) : suffix ? (BINARY[suffix] ?? DECIMAL[suffix]) : 1);
}

/** Bytes in a quantity, rounded up to a whole byte; undefined when it is not a quantity. */
export function quantityToBytes(q: string | number): number | undefined {
  const v = quantityValue(typeof q === 'string' ? q.trim() : q);
  return v === undefined ? undefined : Math.ceil(v);
}
