/**
 * The health of a BackupSchedule's CronJob: why the controller calls a schedule unwell
 * (`scheduleProblem`, noted on the CronJob in tidb-gitops.io/backup-health), and how Argo CD
 * (argocd/health/cronjob.lua, run in a Lua VM as Argo CD runs it) and Flux (the example
 * Kustomization's healthCheckExprs, run with a real CEL implementation) read it. Every CronJob
 * tidb-gitops did not render gets the verdicts of Argo CD's built-in check.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { parse } from 'yaml';
import { scheduleProblem } from '../../../src/controller/view/backup-runs';
import type { BackupRun } from '../../../src/controller/records/backup-runs';
import { builtinCronJobHealth } from '../../support/argocd-builtin-health';
import { CRONJOB_HEALTH_LUA, runHealth } from '../../support/argocd-lua';
import { TEST_DIR } from '../../support/paths';

type Obj = Record<string, any>;

const root = join(TEST_DIR, '..');
const kustomization = parse(readFileSync(join(root, 'examples/gitops/flux/tidb-clusters.yaml'), 'utf8'));
const exprs = kustomization.spec.healthCheckExprs.find((h: Obj) => h.apiVersion === 'batch/v1' && h.kind === 'CronJob');

function flux(objects: readonly Obj[]): string[] {
  const r = spawnSync(process.execPath, [join(TEST_DIR, 'support/flux-cel.mjs')], {
    input: JSON.stringify({ exprs, objects }),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout);
}

const argo = (obj: Obj) => runHealth(obj, 'float', CRONJOB_HEALTH_LUA);

describe('scheduleProblem: when the controller calls a schedule unwell', () => {
  const run = (minute: number, phase: BackupRun['phase'], extra: Partial<BackupRun> = {}): BackupRun => ({
    schedule: 'n',
    job: `backup-n-${minute}`,
    phase,
    started: new Date(minute * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    ...extra,
  });
  const byJob = (...runs: BackupRun[]) => Object.fromEntries(runs.map((r) => [r.job, r]));

  test('the newest run with an outcome decides; a run under way is passed over', () => {
    expect(scheduleProblem('n', {})).toBeUndefined();
    expect(scheduleProblem('n', byJob(run(1, 'Failed', { error: 'Error: x' }), run(2, 'Complete')))).toBeUndefined();
    expect(scheduleProblem('n', byJob(run(1, 'Complete'), run(2, 'Failed', { error: 'Error: NoSuchBucket' }), run(3, 'Running')))).toBe(
      'the last run backup-n-2 failed: Error: NoSuchBucket',
    );
    expect(scheduleProblem('n', byJob(run(1, 'Complete'), run(2, 'Lost', { error: 'its Job was deleted before it finished' })))).toBe(
      'the last run backup-n-2 was lost: its Job was deleted before it finished',
    );
    // Another schedule's runs, and runs retention let go, say nothing about this one.
    expect(
      scheduleProblem('n', byJob(run(1, 'Complete'), { ...run(2, 'Failed'), schedule: 'o', job: 'backup-o-2' }, run(0, 'Released'))),
    ).toBeUndefined();
  });

  test('a run that cannot start, and a failing retention, are problems too', () => {
    const stuck = byJob(run(1, 'Complete'), run(2, 'Running', { error: 'CreateContainerConfigError: secret "s3" not found' }));
    expect(scheduleProblem('n', stuck)).toBe('the run backup-n-2 cannot start: CreateContainerConfigError: secret "s3" not found');
    expect(scheduleProblem('n', byJob(run(1, 'Complete')), 'AccessDenied')).toBe(
      'retention could not remove expired backups: AccessDenied',
    );
    expect(scheduleProblem('n', byJob(run(1, 'Failed', { error: 'e' })), 'AccessDenied')).toBe(
      'the last run backup-n-1 failed: e; retention could not remove expired backups: AccessDenied',
    );
  });
});

const cronJob = (opts: { ours?: boolean; annotations?: Obj; suspend?: boolean; status?: Obj | null }): Obj => ({
  apiVersion: 'batch/v1',
  kind: 'CronJob',
  metadata: {
    name: 'backup-n',
    ...(opts.ours !== false && { labels: { 'tidb.pingcap.com/backup-schedule': 'n' } }),
    ...(opts.annotations && { annotations: opts.annotations }),
  },
  spec: { schedule: '0 2 * * *', ...(opts.suspend !== undefined && { suspend: opts.suspend }) },
  ...(opts.status !== null && { status: opts.status ?? {} }),
});
const unwell = {
  'tidb-gitops.io/backup-health': 'Degraded',
  'tidb-gitops.io/message': 'the last run backup-n-2 failed: Error: NoSuchBucket',
};
const ran = { lastScheduleTime: '2026-11-28T02:00:00Z', lastSuccessfulTime: '2026-11-27T02:04:10Z' };

const CASES: [string, Obj, string, string, string][] = [
  ['noted unwell', cronJob({ annotations: unwell, status: ran }), 'Degraded', 'Failed', unwell['tidb-gitops.io/message']],
  [
    'noted unwell while a run that cannot start counts as active',
    cronJob({ annotations: unwell, status: { active: [{ name: 'backup-n-2' }], lastScheduleTime: '2026-11-28T02:00:00Z' } }),
    'Degraded',
    'Failed',
    unwell['tidb-gitops.io/message'],
  ],
  [
    'noted unwell before any run succeeded (Argo CD alone would say Healthy)',
    cronJob({ annotations: unwell, status: { lastScheduleTime: '2026-11-28T02:00:00Z' } }),
    'Degraded',
    'Failed',
    unwell['tidb-gitops.io/message'],
  ],
  ['paused', cronJob({ annotations: unwell, suspend: true, status: ran }), 'Suspended', 'Failed', 'CronJob is Suspended'],
  [
    'well, the last run succeeded',
    cronJob({ status: { lastScheduleTime: '2026-11-27T02:00:00Z', lastSuccessfulTime: '2026-11-27T02:04:10Z' } }),
    'Healthy',
    'Current',
    'CronJob has completed its last execution successfully',
  ],
  ['well, never run', cronJob({ status: {} }), 'Healthy', 'Current', 'CronJob has not been scheduled yet'],
  [
    'a run under way',
    cronJob({ status: { ...ran, active: [{ name: 'backup-n-3' }] } }),
    'Healthy',
    'InProgress',
    'The job is running. Its last execution may not have been successful',
  ],
  [
    'the annotation on a CronJob tidb-gitops did not render counts for nothing',
    cronJob({
      ours: false,
      annotations: unwell,
      status: { lastScheduleTime: '2026-11-27T02:00:00Z', lastSuccessfulTime: '2026-11-27T02:04:10Z' },
    }),
    'Healthy',
    'Failed',
    'CronJob has completed its last execution successfully',
  ],
];

describe("a BackupSchedule's CronJob in Argo CD and Flux", () => {
  const verdicts = flux(CASES.map((c) => c[1]));
  test.each(CASES.map((c, i) => [c[0], c, i] as const))('%s', (_name, [, obj, status, fluxStatus, message], i) => {
    expect(argo(obj)).toEqual({ status, message });
    expect(verdicts[i]).toBe(fluxStatus);
  });
});

test('every CronJob tidb-gitops did not render gets what the built-in check gives (property)', () => {
  const time = fc.integer({ min: 0, max: 5 }).map((d) => `2026-11-2${d}T02:00:00Z`);
  const status = fc.option(
    fc.record(
      { lastScheduleTime: time, lastSuccessfulTime: time, active: fc.array(fc.constant({ name: 'j' }), { maxLength: 2 }) },
      { requiredKeys: [] },
    ),
    { nil: null },
  );
  fc.assert(
    fc.property(status, fc.option(fc.boolean(), { nil: undefined }), fc.boolean(), (s, suspend, annotated) => {
      const obj = cronJob({ ours: false, ...(annotated && { annotations: unwell }), suspend, status: s });
      for (const mode of ['float', 'integer'] as const) expect(runHealth(obj, mode, CRONJOB_HEALTH_LUA)).toEqual(builtinCronJobHealth(obj));
    }),
    { seed: 51, numRuns: 300 },
  );
});

test('uses nothing Lua 5.1 or the base and table libraries lack', () => {
  const code = CRONJOB_HEALTH_LUA.split('\n')
    .map((line) => line.replace(/--.*$/, ''))
    .join('\n');
  expect(code).not.toMatch(/\/\/|\bgoto\b|::|[&|~]\s*\d|<<|>>/); // integer division, goto, labels, bit operators
  expect(code).not.toMatch(/\b(string|math|os|io|utf8)\.|:\w+\(/); // libraries Argo CD does not open, string methods
});
