/**
 * What `tidb-gitops status` makes of the objects it reads: every kind of trouble the controller's
 * status document can show is a problem (and so exit 3), a rolling restart in progress is not, and
 * the text keeps one line per component.
 */
import { statusMain } from '../../../src/cli/status';
import { statusReport, statusText, type StatusInputs } from '../../../src/cli/status-report';

const NOW = Date.parse('2026-12-07T12:00:00Z');
const sts = (kind: string, replicas: number, image: string) => ({
  metadata: { name: `c-${kind}`, labels: { 'app.kubernetes.io/component': kind } },
  spec: { replicas, template: { spec: { containers: [{ name: kind, image }] } } },
  status: { readyReplicas: replicas },
});
const component = (o: Record<string, unknown> = {}) => ({
  phase: 'Normal',
  desiredReplicas: 3,
  replicas: 3,
  readyReplicas: 3,
  partition: 3,
  currentRevision: 'r1',
  updateRevision: 'r1',
  reason: 'up to date',
  pods: [],
  lastOperation: null,
  ...o,
});

function inputs(doc: StatusInputs['doc'], extra: Partial<StatusInputs> = {}): StatusInputs {
  return {
    cluster: 'c',
    namespace: 'tidb',
    doc,
    statefulSets: [
      sts('pd', 3, 'pingcap/pd:v8.5.0'),
      sts('tikv', 3, 'pingcap/tikv:v8.5.0'),
      sts('tidb', 2, 'registry.example.com:5000/pingcap/tidb@sha256:0123456789abcdef0123'),
    ],
    controller: { status: { availableReplicas: 1 } },
    events: [],
    now: NOW,
    ...extra,
  };
}

const healthyDoc = {
  pd: { reachable: true },
  components: {
    pd: component({ members: [0, 1, 2].map((i) => ({ name: `c-pd-${i}`, pod: `c-pd-${i}`, health: true, leader: i === 1 })) }),
    tikv: component({
      stores: [0, 1, 2].map((i) => ({
        id: i + 1,
        pod: `c-tikv-${i}`,
        state: 'Up',
        leaderCount: 10,
        regionCount: 30,
        evictingLeaders: false,
        labels: {},
      })),
    }),
    tidb: component({ replicas: 2, readyReplicas: 2 }),
  },
};

describe('status report', () => {
  test('a healthy cluster: its components, versions, the PD leader and stores, no problem', () => {
    const r = statusReport(inputs(healthyDoc));
    expect(r.problems).toEqual([]);
    expect(r.pd).toEqual({ reachable: true, leader: 'c-pd-1' });
    expect(r.components.map((c) => [c.component, `${c.ready}/${c.replicas}`, c.versions])).toEqual([
      ['pd', '3/3', ['v8.5.0']],
      ['tikv', '3/3', ['v8.5.0']],
      ['tidb', '2/2', ['sha256:0123456789ab']],
    ]);
    const text = statusText(r, NOW);
    expect(text.split('\n').slice(0, 4)).toEqual([
      'Cluster tidb/c: healthy',
      'Controller: running. PD: reachable, leader c-pd-1',
      '',
      'COMPONENT  PHASE   READY  VERSION              WHAT THE CONTROLLER DOES',
    ]);
    expect(text).not.toContain('Problems:');
  });

  test('everything that is stuck or failing is a problem; a restart under way is not', () => {
    const doc = {
      ...healthyDoc,
      components: {
        ...healthyDoc.components,
        pd: component({ phase: 'Upgrading', readyReplicas: 2, members: [{ name: 'c-pd-0', pod: 'c-pd-0', health: false, leader: false }] }),
        tikv: component({
          phase: 'Upgrading',
          reason: 'waiting for store 2 to be Up',
          stuck: { since: '2026-12-07T11:50:00.000Z', hint: 'look at the store' },
          stores: [{ id: 2, pod: 'c-tikv-1', state: 'Down', leaderCount: 0, regionCount: 30, evictingLeaders: true, labels: {} }],
        }),
        tidb: component({ replicas: 2, readyReplicas: 1 }),
      },
      backupRuns: [
        { schedule: 'nightly', job: 'backup-nightly-29000000', phase: 'Complete' as const },
        { schedule: 'nightly', job: 'backup-nightly-29001440', phase: 'Failed' as const, error: 'BR exited 1' },
      ],
      operations: [{ job: 'restore-r', phase: 'Lost' as const }],
      logBackups: [
        {
          name: 'log-nightly',
          state: 'Error' as const,
          startTS: '1',
          checkpointTS: '2',
          checkpointTime: '2026-12-07T10:00:00Z',
          lagSeconds: 7200,
          error: 'disk full',
        },
      ],
      initializer: { name: 'init', phase: 'Failed' as const, error: 'access denied' },
    };
    const r = statusReport(inputs(doc, { controller: { status: { availableReplicas: 0 } } }));
    expect(r.problems).toEqual([
      'the controller (c-discovery) is not running: nothing is reconciled, and what follows may be old',
      'PD member c-pd-0 is not healthy',
      'tikv upgrading is stuck since 2026-12-07T11:50:00.000Z: waiting for store 2 to be Up. look at the store',
      'tikv store 2 (c-tikv-1) is Down',
      'tidb: 1 of 2 Pods not Ready',
      'the last backup of schedule nightly (backup-nightly-29001440) is Failed: BR exited 1',
      'restore-r is Lost',
      'log backup log-nightly is paused by an error: disk full',
      'the initializer init is Failed: access denied',
    ]);
    // PD restarting one member (Upgrading, one not Ready) is no problem by itself.
    expect(r.problems.some((p) => p.startsWith('pd:'))).toBe(false);
    expect(statusText(r, NOW)).toContain('\nProblems:\n  - the controller (c-discovery) is not running');
  });

  test('the SQL accounts: each with its state, the unmanaged ones listed, a failed or hand-changed one a problem', () => {
    const doc = {
      ...healthyDoc,
      sqlAccounts: {
        accounts: [
          { document: 'reader', account: "'reader'@'%'", kind: 'SqlRole' as const, state: 'ok' as const },
          {
            document: 'app',
            account: "'app'@'%'",
            kind: 'SqlUser' as const,
            state: 'drift' as const,
            drift: ['GRANT DELETE ON app.* added'],
          },
          {
            document: 'etl',
            account: "'etl'@'%'",
            kind: 'SqlUser' as const,
            state: 'waiting' as const,
            reason: 'the Secret etl-password is not there',
          },
        ],
        unmanaged: ["'legacy'@'%'"],
        kept: [],
      },
    };
    const r = statusReport(inputs(doc));
    expect(r.problems).toEqual(["SQL account 'app'@'%' was changed by hand: GRANT DELETE ON app.* added"]);
    const text = statusText(r, NOW);
    expect(text).toMatch(/SQL ACCOUNT +KIND +STATE +NOTE\n'reader'@'%' +SqlRole +ok +-\n/);
    expect(text).toMatch(/'etl'@'%' +SqlUser +waiting +the Secret etl-password is not there/);
    expect(text).toContain("Unmanaged SQL accounts (left alone): 'legacy'@'%'");
    expect(statusText(statusReport(inputs(healthyDoc)), NOW)).not.toContain('SQL ACCOUNT');
  });

  test('resource groups and changefeeds: each with its state, a failed, refused or hand-changed one a problem', () => {
    const doc = {
      ...healthyDoc,
      resourceGroups: {
        groups: [
          { document: 'rg-app', group: 'rg_app', state: 'ok' as const },
          { document: 'rg-etl', group: 'rg_etl', state: 'drift' as const, drift: ['RU_PER_SEC is 5, not 1000'] },
        ],
        unmanaged: [],
        kept: [],
      },
      changefeeds: {
        feeds: [
          {
            document: 'to-kafka',
            id: 'to-kafka',
            phase: 'Complete' as const,
            state: 'normal',
            message: 'normal',
            checkpointTime: '2026-12-08T03:00:00.000Z',
            lagMs: 2400,
          },
          { document: 'to-dr', id: 'dr', phase: 'Failed' as const, state: 'failed', message: 'TiCDC failed it: connection refused' },
        ],
        unmanaged: [],
        kept: [],
      },
    };
    const r = statusReport(inputs(doc));
    expect(r.problems).toEqual([
      'resource group rg_etl was changed by hand: RU_PER_SEC is 5, not 1000',
      'changefeed dr: TiCDC failed it: connection refused',
    ]);
    const text = statusText(r, NOW);
    expect(text).toMatch(/RESOURCE GROUP +STATE +NOTE\nrg_app +ok +-\n/);
    expect(text).toMatch(
      /CHANGEFEED +PHASE +STATE +CHECKPOINT +LAG\nto-kafka +Complete +normal +2026-12-08T03:00:00.000Z +2s\ndr +Failed +failed +- +-/,
    );
    expect(statusText(statusReport(inputs(healthyDoc)), NOW)).not.toContain('CHANGEFEED');
  });

  test('no status yet, PD unreachable, a missing controller: each said', () => {
    expect(statusReport(inputs(undefined, { controller: undefined })).problems).toEqual([
      'the controller (c-discovery) is missing: nothing is reconciled, and what follows may be old',
      'no status from the controller yet (ConfigMap c-status has no status.json)',
    ]);
    expect(statusReport(inputs({ ...healthyDoc, pd: { reachable: false, error: 'connect ECONNREFUSED' } })).problems).toEqual([
      'PD does not answer the controller: connect ECONNREFUSED',
    ]);
  });

  test("the last hour's Warning Events about the cluster's objects, newest first", () => {
    const event = (name: string, minutesAgo: number, type = 'Warning') => ({
      type,
      reason: 'OperationStuck',
      message: `about ${name}`,
      involvedObject: { kind: 'Pod', name },
      lastTimestamp: new Date(NOW - minutesAgo * 60_000).toISOString(),
      count: 2,
    });
    const r = statusReport(
      inputs(healthyDoc, {
        events: [
          event('c-tikv-0', 5),
          event('c-pd-1', 1),
          event('other-pd-0', 1),
          event('c-tidb-0', 90),
          event('c-tidb-1', 2, 'Normal'),
          event('backup-nightly-1', 3),
        ],
      }),
    );
    expect(r.warnings.map((w) => w.object)).toEqual(['Pod/c-pd-1', 'Pod/backup-nightly-1', 'Pod/c-tikv-0']);
    expect(statusText(r, NOW)).toContain('Warning Events (last hour):\n  60s ago  Pod/c-pd-1  OperationStuck (x2): about c-pd-1\n');
  });
});

/** `status` in process: its exit status and what it printed. */
async function status(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await statusMain(args, { stdout: (s) => (out += s), stderr: (s) => (err += s), env: {} });
  return { code, out, err };
}

describe('tidb-gitops status arguments', () => {
  test('a usage error exits 2 and says why', async () => {
    expect(await status(['-o', 'yaml'])).toMatchObject({
      code: 2,
      err: expect.stringMatching(/^tidb-gitops status: -o takes text or json, got "yaml"\n/),
    });
    expect(await status(['a', 'b'])).toMatchObject({ code: 2, err: expect.stringMatching(/one cluster at a time/) });
    expect(await status(['-n', 'Bad_NS'])).toMatchObject({ code: 2, err: expect.stringMatching(/is not a namespace name/) });
    expect((await status(['--help'])).out).toContain('Exit status: 0 all is well');
  });

  test('without a kubeconfig it says where it looked', async () => {
    let err = '';
    const code = await statusMain(['c'], { stdout: () => undefined, stderr: (s) => (err += s), env: { HOME: '/nonexistent' } });
    expect(code).toBe(1);
    expect(err).toBe(
      'tidb-gitops status: no Kubernetes configuration: give --kubeconfig, set KUBECONFIG, or run in a Pod with a service account token\n',
    );
  });
});
