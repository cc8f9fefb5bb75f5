/**
 * What retention must never do to data, as properties over generated schedules, runs, policies and
 * clocks (src/controller/plan/retention.ts with the records of src/controller/records/backup-runs.ts).
 * Each case is stepped as the controller steps it: the records cut to what they keep and read back
 * from the status document, one expired run acted on a pass, until retention has nothing left to do.
 */
import fc from 'fast-check';
import { expiredRuns, keyPrefixOf, ownFolder, truncationPoint, type Expired } from '../../../../src/controller/plan/retention';
import {
  backupRunsOf,
  listRuns,
  newestFirst,
  RUNS_KEPT,
  type BackupRun,
  type BackupRunPhase,
} from '../../../../src/controller/records/backup-runs';
import type { BackupRetentionInfo, CleanPolicy } from '../../../../src/tidbcluster/contract';

const SEED = Number(process.env.FUZZ_SEED ?? 47);
const RUNS = Number(process.env.RETENTION_RUNS ?? 150);
const DAY = 86_400_000;
const START = Date.UTC(2026, 0, 1);

interface Case {
  readonly policy: BackupRetentionInfo;
  readonly runs: Record<string, BackupRun>;
  readonly now: number;
}

/** The UID of run `i` of a cluster: another cluster of the same name has other UIDs. */
const uidOf = (i: number, cluster = 0) => `${(cluster * 0x10000 + i).toString(16).padStart(8, '0')}-0000-4000-8000-000000000000`;

/**
 * Runs of schedule `n` (and of another schedule `o` under the same prefix), hourly, some beyond any
 * record limit, each writing to one of: its own folder under its schedule's, with its Job UID; the
 * layout shared by schedules (from before, and tidb-operator's), which another schedule's run of the
 * same minute writes too; a folder under the schedule's that carries another cluster's UID; the
 * schedule's folder itself; a folder another run names too; somewhere not the schedule's; nowhere.
 */
const runsOf = fc
  .array(
    fc.record({
      schedule: fc.constantFrom('n', 'n', 'n', 'o'),
      hour: fc.integer({ min: 0, max: 24 * 40 }),
      phase: fc.constantFrom<BackupRunPhase>('Complete', 'Complete', 'Complete', 'Failed', 'Lost', 'Running', 'Deleted', 'Released'),
      where: fc.constantFrom('own', 'own', 'own', 'own', 'legacy', 'legacy', 'foreign', 'schedule', 'shared', 'outside', 'none'),
      recorded: fc.boolean(),
    }),
    { minLength: 1, maxLength: RUNS_KEPT + 60, size: 'max' },
  )
  .map((specs) => {
    const runs: Record<string, BackupRun> = {};
    specs.forEach((s, i) => {
      // The CronJob names a run's Job after the minute it was scheduled for; its folder names that time.
      const minutes = 29453760 + s.hour * 60 + (i % 60);
      const started = new Date(minutes * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
      const time = started.slice(0, 19).replace('T', 't').replace(/:/g, '-');
      const job = `backup-${s.schedule}-${minutes}`;
      const uid = uidOf(i);
      const storage = {
        own: `s3://b/p/${s.schedule}/c-pd.ns-2379-${time}-${uid.slice(0, 8)}`,
        legacy: `s3://b/p/c-pd.ns-2379-${time}`,
        foreign: `s3://b/p/${s.schedule}/c-pd.ns-2379-${time}-${uidOf(i, 1).slice(0, 8)}`,
        schedule: `s3://b/p/${s.schedule}`,
        shared: 's3://b/p/shared',
        outside: `s3://b/q/f-${i}`,
        none: undefined,
      }[s.where];
      runs[job] = {
        schedule: s.schedule,
        job,
        // Runs recorded before the records kept the Job's UID have none.
        ...(s.recorded && { uid }),
        phase: s.phase,
        started,
        ...(storage && { storage }),
        ...(s.phase === 'Complete' && { backupTS: String(BigInt(minutes * 60_000) << 18n) }),
      };
    });
    return runs;
  });

const policyOf = fc
  .record({
    limit: fc.oneof(
      fc.record({ maxBackups: fc.integer({ min: 1, max: 30 }) }),
      fc.record({ maxReservedSeconds: fc.integer({ min: 1, max: 30 }).map((d) => d * 86_400) }),
    ),
    cleanPolicy: fc.constantFrom<CleanPolicy | undefined>(undefined, 'Retain', 'Delete', 'OnFailure'),
  })
  .map(
    ({ limit, cleanPolicy }): BackupRetentionInfo => ({
      ...limit,
      ...(cleanPolicy && { cleanPolicy }),
      bucket: 'b',
      prefix: 'p',
      secretName: 's',
    }),
  );

const caseOf: fc.Arbitrary<Case> = fc.record({
  policy: policyOf,
  runs: runsOf,
  now: fc.integer({ min: 0, max: 45 }).map((d) => START + d * DAY),
});

/** The records as the controller keeps them: cut, then read back from the status document. */
const stored = (runs: Record<string, BackupRun>): Record<string, BackupRun> =>
  backupRunsOf(JSON.parse(JSON.stringify({ backupRuns: listRuns(runs, new Set(['n', 'o'])) })));

/** What retention does with one expired run, in the records. */
function act(runs: Record<string, BackupRun>, e: Expired): Record<string, BackupRun> {
  return { ...runs, [e.run.job]: { ...e.run, phase: e.action === 'delete' ? 'Deleted' : 'Released', deleted: '2026-03-01T00:00:00Z' } };
}

const key = (e: Expired) => `${e.run.job} ${e.action}${e.action === 'delete' ? ` ${e.folder}` : ''}`;

test('no record limit changes what retention or log truncation decides', () => {
  fc.assert(
    fc.property(caseOf, ({ policy, runs, now }) => {
      let full = runs;
      let kept = stored(runs);
      for (let step = 0; step < 400; step++) {
        const fromFull = expiredRuns('n', full, policy, now);
        expect(expiredRuns('n', kept, policy, now).map(key)).toEqual(fromFull.map(key));
        expect(truncationPoint('n', kept)).toBe(truncationPoint('n', full));
        if (fromFull.length === 0) return;
        const next = fromFull[fromFull.length - 1];
        full = act(full, next);
        kept = stored(act(kept, next));
      }
      throw new Error('retention did not settle in 400 passes');
    }),
    // Shrinking a counterexample of 160 runs over many passes is slow: a failure stops it after a minute.
    { seed: SEED, numRuns: RUNS, interruptAfterTimeLimit: 60_000, markInterruptAsFailure: true },
  );
}, 120_000);

test("nothing is deleted that the policy keeps, another schedule or cluster wrote, another run names, or lies outside the schedule's prefix", () => {
  fc.assert(
    fc.property(caseOf, ({ policy, runs, now }) => {
      let records = stored(runs);
      const deleted: { run: BackupRun; folder: string }[] = [];
      const overlaps = (a: string, b: string) => a.startsWith(b) || b.startsWith(a);
      for (let step = 0; step < 400; step++) {
        const expired = expiredRuns('n', records, policy, now);
        if (expired.length === 0) break;
        for (const e of expired) {
          expect(e.run.schedule).toBe('n');
          if (e.action !== 'delete') continue;
          deleted.push(e);
          // Retain never deletes; OnFailure only what a failed or lost run left.
          expect(policy.cleanPolicy === 'Delete' || (policy.cleanPolicy === 'OnFailure' && e.run.phase !== 'Complete')).toBe(true);
          expect(e.folder).toBe(ownFolder(e.run, policy));
          // The run's own: under the schedule's folder with the run's Job UID, or, in the shared
          // layout, the folder a complete run wrote.
          const own = e.run.uid !== undefined && e.folder.startsWith('p/n/') && e.folder.endsWith(`-${e.run.uid.slice(0, 8)}/`);
          const legacy = /^p\/[^/]+\/$/.test(e.folder) && e.run.phase === 'Complete';
          expect(own || legacy).toBe(true);
          // No other run still to be kept, under way, or of another schedule names it, one inside it or one around it.
          for (const r of Object.values(records)) {
            if (r.job === e.run.job || r.phase === 'Deleted') continue;
            if (r.schedule === 'n' && r.phase !== 'Running' && r.phase !== 'Complete') continue;
            if (r.schedule === 'n' && r.phase === 'Complete' && expired.some((x) => x.run.job === r.job)) continue;
            const named = keyPrefixOf(r.storage, policy);
            if (named !== undefined) expect(overlaps(named, e.folder)).toBe(false);
          }
        }
        records = stored(act(records, expired[expired.length - 1]));
      }
      // The newest good backup stays, and no folder a remaining good backup (of any schedule) names was deleted.
      const complete = Object.values(runs).filter((r) => r.schedule === 'n' && r.phase === 'Complete');
      const newest = complete.sort(newestFirst)[0];
      if (newest) expect(records[newest.job]?.phase).toBe('Complete');
      const keptFolders = Object.values(records)
        .filter((r) => r.phase === 'Complete' || r.phase === 'Running')
        .flatMap((r) => keyPrefixOf(r.storage, policy) ?? []);
      for (const d of deleted) for (const k of keptFolders) expect(overlaps(k, d.folder)).toBe(false);
      // The log is never truncated past a snapshot still kept.
      const until = truncationPoint('n', records);
      if (until !== undefined) {
        for (const r of Object.values(records))
          if (r.schedule === 'n' && r.phase === 'Complete' && r.backupTS) expect(BigInt(r.backupTS) >= BigInt(until)).toBe(true);
      }
    }),
    // Shrinking a counterexample of 160 runs over many passes is slow: a failure stops it after a minute.
    { seed: SEED, numRuns: RUNS, interruptAfterTimeLimit: 60_000, markInterruptAsFailure: true },
  );
}, 120_000);

describe('maxReservedTime beside a log backup keeps every point of the window restorable', () => {
  const policy: BackupRetentionInfo = { maxReservedSeconds: 3 * 86_400, cleanPolicy: 'Delete', bucket: 'b', prefix: 'p', secretName: 's' };
  const tso = (ms: number) => String(BigInt(ms) << 18n);
  /** A complete daily snapshot taken `day` days after START, at 02:00. */
  const snap = (day: number): BackupRun => {
    const ms = START + day * DAY + 2 * 3_600_000;
    return {
      schedule: 'n',
      job: `backup-n-${day}`,
      phase: 'Complete',
      started: new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      storage: `s3://b/p/f-${day}`,
      backupTS: tso(ms),
    };
  };
  const byJob = (...runs: BackupRun[]) => Object.fromEntries(runs.map((r) => [r.job, r]));

  test('the newest snapshot before the window stays, and the log is truncated to it, not to the oldest inside', () => {
    const runs = byJob(snap(0), snap(1), snap(2), snap(3), snap(4), snap(5));
    const now = START + 5 * DAY + 12 * 3_600_000;
    // Without a log backup: the snapshots of the last three days by their start.
    expect(expiredRuns('n', runs, policy, now).map((e) => e.run.job)).toEqual(['backup-n-2', 'backup-n-1', 'backup-n-0']);
    // With one whose checkpoint is now: the window starts at day 2, 12:00; day 2's snapshot (02:00) is
    // the one its first hours are replayed on.
    const log = { kind: 'log' as const, checkpointMs: now };
    expect(expiredRuns('n', runs, policy, now, log).map((e) => e.run.job)).toEqual(['backup-n-1', 'backup-n-0']);
    // While the checkpoint cannot be read, nothing goes by time.
    expect(expiredRuns('n', runs, policy, now, { kind: 'unknown' })).toEqual([]);
  });

  test('as a property: every point from the window start to the checkpoint has a kept snapshot at or before it, after the truncation', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: 60 }), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 0, max: 48 }),
        (days, windowDays, lagHours) => {
          let runs = byJob(...days.map(snap));
          const newest = Math.max(...days.map((d) => START + d * DAY + 2 * 3_600_000));
          const checkpointMs = newest + 24 * 3_600_000 - lagHours * 3_600_000;
          const p: BackupRetentionInfo = { ...policy, maxReservedSeconds: windowDays * 86_400 };
          const log = { kind: 'log' as const, checkpointMs };
          for (let step = 0; step < 100; step++) {
            const expired = expiredRuns('n', runs, p, checkpointMs, log);
            if (expired.length === 0) break;
            const e = expired[expired.length - 1];
            runs = { ...runs, [e.run.job]: { ...e.run, phase: 'Deleted' } };
          }
          const kept = Object.values(runs)
            .filter((r) => r.phase === 'Complete')
            .map((r) => BigInt(r.backupTS!));
          const until = BigInt(truncationPoint('n', runs)!);
          const latest = checkpointMs > newest ? checkpointMs : newest;
          const windowStart = BigInt(latest - windowDays * DAY) << 18n;
          // The log keeps [until, checkpoint]: the window's start is in it whenever a snapshot was taken before it.
          if (days.some((d) => BigInt(tso(START + d * DAY + 2 * 3_600_000)) <= windowStart)) expect(until <= windowStart).toBe(true);
          expect(kept.every((t) => t >= until)).toBe(true);
          expect(kept).toContain(BigInt(tso(newest)));
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
  });
});
