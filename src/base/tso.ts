/**
 * Times as BR reads them (pingcap/tidb br/pkg/task/common.go `ParseTSString`): a TSO (an unsigned
 * 64-bit number), or a date and time read as TiDB reads a TIMESTAMP literal (`types.ParseTime` with
 * `mysql.TypeTimestamp`): a real calendar date and time of day, an optional zone from -14:00 to
 * +14:00 (not -00:00), within TIMESTAMP's range, 1970-01-01 00:00:01 to 2038-01-19 03:14:07.999999
 * UTC. `--start-ts`, `--until` and `--restored-ts` need the zone; `--backupts` reads a time without
 * one in the Pod's zone. A time's TSO is its Unix milliseconds shifted left by 18 bits
 * (`oracle.GoTimeToTS`).
 *
 * TiDB takes more spellings of a date than these (`20260511014223`, `26-5-11 1:42:23`); the one taken
 * here is the one its documentation and the operator's examples use.
 */

/** Whether a time must name its zone (`required`) or may be read in the Pod's zone, UTC (`optional`). */
export type TsZone = 'required' | 'optional';

const MAX_TSO = (1n << 64n) - 1n;
const SHAPE = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|[+-]\d{2}(?::?\d{2})?)?$/;
/** TIMESTAMP's range, in microseconds since the epoch (TiDB's `MinTimestamp` and `MaxTimestamp`). */
const MIN_MICROS = 1_000_000n;
const MAX_MICROS = 2_147_483_647_999_999n;
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** The TSO BR makes of `text`, or why BR refuses it. */
export function parseTs(text: string, zone: TsZone): { tso?: string; problem?: string } {
  if (/^\d+$/.test(text)) {
    return BigInt(text) <= MAX_TSO
      ? { tso: BigInt(text).toString() }
      : { problem: `a TSO is a number of at most 64 bits (up to ${MAX_TSO}), got ${text}` };
  }
  const m = SHAPE.exec(text);
  if (!m || (m[8] === undefined && zone === 'required')) {
    const what =
      zone === 'required'
        ? 'a time with its zone such as "2026-05-11 01:42:23+08:00" (BR refuses a time without one)'
        : 'a time such as "2026-05-11 01:42:23+08:00"';
    return { problem: `expected a TSO (digits) or ${what}, got ${JSON.stringify(text)}` };
  }
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  const calendar = calendarProblem(year, month, day, hour, minute, second);
  if (calendar) return { problem: `${JSON.stringify(text)} is not a time BR takes: ${calendar}` };
  const offset = m[8] === undefined ? 0 : zoneMinutes(m[8]);
  if (offset === undefined)
    return {
      problem: `${JSON.stringify(text)} has the zone ${m[8]}, which BR refuses: expected Z or an offset from -14:00 to +14:00 (not -00:00)`,
    };
  // Fractions beyond microseconds round, as TiDB's `ParseFrac` does for its 6 digits.
  const fraction = m[7] ?? '';
  const micros = BigInt(Math.round(Number(`0.${fraction || '0'}`) * 1e6));
  const utc = BigInt(Date.UTC(year, month - 1, day, hour, minute, second)) * 1000n - BigInt(offset) * 60_000_000n + micros;
  if (utc < MIN_MICROS)
    return { problem: `${JSON.stringify(text)} is before 1970-01-01 00:00:01 UTC, the earliest time BR takes (TiDB's TIMESTAMP range)` };
  if (utc > MAX_MICROS)
    return {
      problem: `${JSON.stringify(text)} is after 2038-01-19 03:14:07 UTC, the latest time BR takes (TiDB's TIMESTAMP range); give a TSO instead`,
    };
  return { tso: ((utc / 1000n) << 18n).toString() };
}

function calendarProblem(year: number, month: number, day: number, hour: number, minute: number, second: number): string | undefined {
  if (month < 1 || month > 12) return `there is no month ${month}`;
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day < 1 || day > days) return `there is no day ${day} in ${MONTHS[month - 1]} ${year}`;
  if (hour > 23) return `hour ${hour} is out of range 00-23`;
  if (minute > 59) return `minute ${minute} is out of range 00-59`;
  if (second > 59) return `second ${second} is out of range 00-59`;
  return undefined;
}

/** The zone's offset east of UTC in minutes, or undefined when TiDB refuses it. */
function zoneMinutes(zone: string): number | undefined {
  if (zone === 'Z') return 0;
  const digits = zone.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = digits.length > 2 ? Number(digits.slice(2)) : 0;
  if (hours > 14 || minutes > 59 || (hours === 14 && minutes !== 0) || (zone[0] === '-' && hours === 0 && minutes === 0)) return undefined;
  return (zone[0] === '-' ? -1 : 1) * (hours * 60 + minutes);
}
