/**
 * JSON with sorted keys and no undefined values: the same value always gives the same bytes, so an
 * annotation, an env value or a hash of it changes only when the value does.
 */

/** JSON with sorted keys and no undefined values, so the annotation is byte-stable. */
export function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    isPlainObject(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .filter((k) => v[k] !== undefined)
            .map((k) => [k, v[k]]),
        )
      : v,
  );
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
