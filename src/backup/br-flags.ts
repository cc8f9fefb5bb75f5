/**
 * The values of `spec.br` that BR reads as typed flags, checked where the document is read, so that
 * BR does not refuse them at the first run. The command lines themselves are `br-args.ts`'s.
 */
import { GO_DURATION } from '../base/patterns';
import type { SpecIssue } from '../tidbcluster/errors';
import type { BRConfig } from './types';

/** The largest value of BR's unsigned 32-bit flags (`--concurrency`). */
const MAX_UINT32 = 2 ** 32 - 1;

/**
 * What BR refuses among the settings it takes as flags, at `at` (the `br` object): `--timeago` is
 * read with Go's `time.ParseDuration` (units ns to h, no `d`) and refused when negative
 * (br/pkg/task/backup.go `ParseFromFlags`); `--concurrency` is an unsigned 32-bit number and
 * `--ratelimit` an unsigned 64-bit one (br/pkg/task/common.go, `GetUint32`, `GetUint64`).
 */
export function brSettingsIssues(br: BRConfig | undefined, at: string): SpecIssue[] {
  const issues: SpecIssue[] = [];
  if (br === undefined || br === null) return issues;
  const { timeAgo, concurrency, rateLimit } = br;
  if (timeAgo !== undefined && timeAgo !== '') {
    if (typeof timeAgo !== 'string' || !GO_DURATION.test(timeAgo))
      issues.push({
        path: `${at}.timeAgo`,
        message: `expected a duration such as 30m or 1h30m (Go's units: ns, us, ms, s, m, h; no d), got ${JSON.stringify(timeAgo)}`,
      });
    else if (timeAgo.startsWith('-') && /[1-9]/.test(timeAgo))
      issues.push({
        path: `${at}.timeAgo`,
        message: `BR refuses a negative timeAgo, got ${JSON.stringify(timeAgo)}: give how long ago, such as 1h`,
      });
  }
  if (concurrency !== undefined && !(Number.isInteger(concurrency) && concurrency >= 0 && concurrency <= MAX_UINT32)) {
    issues.push({
      path: `${at}.concurrency`,
      message: `expected a whole number from 0 to ${MAX_UINT32} (BR's --concurrency is unsigned), got ${JSON.stringify(concurrency)}`,
    });
  }
  if (rateLimit !== undefined && !(Number.isSafeInteger(rateLimit) && rateLimit >= 0)) {
    issues.push({
      path: `${at}.rateLimit`,
      message: `expected a whole number of MiB/s, 0 (no limit) or more, got ${JSON.stringify(rateLimit)}`,
    });
  }
  return issues;
}
