/**
 * Cron expressions as a CronJob reads them: Kubernetes parses `spec.schedule` with robfig/cron's
 * standard parser (`cron.ParseStandard`, kubernetes/kubernetes pkg/apis/batch/validation
 * `validateScheduleFormat`), five fields or a descriptor, and refuses a `TZ=` prefix in favour of
 * `spec.timeZone`. tidb-operator's BackupSchedule uses the same parser
 * (pkg/controller/backupschedule/backup_schedule_manager.go, `calculateNextBackupTime`).
 */

/** [name, lowest, highest, names usable in place of numbers] */
type Field = readonly [name: string, low: number, high: number, names?: readonly string[]];

const FIELDS: readonly Field[] = [
  ['minute', 0, 59],
  ['hour', 0, 23],
  ['day of month', 1, 31],
  ['month', 1, 12, ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec']],
  ['day of week', 0, 6, ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat']],
];

const DESCRIPTORS = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);

/** Why `schedule` is not a cron expression a CronJob takes, or undefined when it is one. */
export function cronProblem(schedule: string): string | undefined {
  const text = schedule.trim();
  if (text === '') return 'expected a cron expression such as "0 2 * * *" (every day at 02:00), got ""';
  if (/^(CRON_)?TZ=/.test(text))
    return "a time zone prefix is not accepted in a CronJob schedule (Kubernetes refuses it); the schedule runs in the controller manager's time zone, UTC on most clusters";
  if (text.startsWith('@')) {
    if (DESCRIPTORS.has(text)) return undefined;
    const every = /^@every\s+(.+)$/.exec(text);
    if (every) return /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/.test(every[1]) ? undefined : `"${every[1]}" is not a duration such as 1h30m`;
    return `unknown descriptor ${JSON.stringify(text)}: expected one of ${[...DESCRIPTORS].join(', ')} or @every <duration>`;
  }
  const parts = text.split(/\s+/);
  if (parts.length !== 5)
    return `expected 5 fields (minute hour day-of-month month day-of-week), got ${parts.length} in ${JSON.stringify(text)}`;
  for (let i = 0; i < 5; i++) {
    const problem = fieldProblem(parts[i], FIELDS[i]);
    if (problem) return `${FIELDS[i][0]} ${JSON.stringify(parts[i])}: ${problem}`;
  }
  return undefined;
}

function fieldProblem(field: string, [, low, high, names]: Field): string | undefined {
  for (const part of field.split(',')) {
    const [range, step, ...extra] = part.split('/');
    if (extra.length > 0) return 'more than one "/"';
    if (step !== undefined && !/^\d+$/.test(step)) return `step ${JSON.stringify(step)} is not a number`;
    if (step !== undefined && Number(step) === 0) return 'a step of 0';
    if (range === '*' || range === '?') continue;
    const bounds = range.split('-');
    if (bounds.length > 2) return `${JSON.stringify(range)} is not a value or a range`;
    const values: number[] = [];
    for (const b of bounds) {
      const n = /^\d+$/.test(b) ? Number(b) : names ? names.indexOf(b.toLowerCase()) + (low === 1 ? 1 : 0) : Number.NaN;
      if (!Number.isInteger(n) || (names && !/^\d+$/.test(b) && names.indexOf(b.toLowerCase()) < 0))
        return `${JSON.stringify(b)} is not a number${names ? ' or a name' : ''}`;
      if (n < low || n > high) return `${n} is out of range ${low}-${high}`;
      values.push(n);
    }
    if (values.length === 2 && values[0] > values[1]) return `range ${range} starts after it ends`;
  }
  return undefined;
}
