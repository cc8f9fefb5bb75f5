/**
 * Durations as Go reads and writes them (`time.ParseDuration`, `time.Duration.String()`), which is
 * how TiDB reads a resource group's rule and shows it back, in whole milliseconds.
 */

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * A duration as TiDB reads it (Go's `time.ParseDuration`: `90s`, `1m30s`, `1.5h`), in whole
 * milliseconds, at least 1 ms: TiDB keeps these rules in milliseconds.
 */
export function parseDurationMs(text: string): number | undefined {
  const parts = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h))+$/.test(text) ? text.match(/\d+(?:\.\d+)?(?:ms|s|m|h)/g) : null;
  if (!parts) return undefined;
  let ms = 0;
  for (const p of parts) {
    const [, n, unit] = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(p)!;
    ms += Number(n) * UNIT_MS[unit];
  }
  // Decimal fractions are not exact in binary (1.005 * 1000 is 1004.999…): a whole number of
  // milliseconds within rounding error is that number, as Go's integer arithmetic has it.
  const whole = Math.round(ms);
  return Math.abs(ms - whole) < 1e-6 && Number.isSafeInteger(whole) && whole >= 1 ? whole : undefined;
}

/**
 * A duration in milliseconds as Go's `time.Duration.String()` writes it, which is how TiDB shows
 * rules in `information_schema.resource_groups` (`1m0s`, `1.5s`, `500ms`).
 */
export function goDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = (ms % 60_000) / 1000;
  const sec = `${Number.isInteger(s) ? s : s.toFixed(3).replace(/0+$/, '')}s`;
  if (h > 0) return `${h}h${m}m${sec}`;
  if (m > 0) return `${m}m${sec}`;
  return sec;
}
