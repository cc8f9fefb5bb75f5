/**
 * The changefeed planner: created when missing (and paused at once when Git asks), adopted when made
 * by hand, updated the way TiCDC requires (paused, updated, resumed), a rotated credential applied,
 * Git's pause kept, a failed one reported, removed only when managed and its document left Git with
 * Delete; and the credentials put into what is sent. What must never happen (an update of a running
 * changefeed, a create over an existing one, a removal Git did not ask) is a property over generated
 * cases.
 */
import fc from 'fast-check';
import { withCredentials } from '../../../../src/controller/actions/changefeeds';
import type { ChangefeedStatus } from '../../../../src/controller/clients/changefeeds';
import { appliedOf, matchesGit, planChangefeeds, tsoTime, type ChangefeedsInput } from '../../../../src/controller/plan/changefeeds';
import type { ChangefeedRecord } from '../../../../src/controller/records/changefeeds';
import type { ChangefeedInfo } from '../../../../src/tidbcluster/contract/changefeeds';

const NOW = Date.UTC(2026, 11, 8, 3, 0, 0);
const tsoAt = (ms: number) => String(BigInt(ms) << 18n);
const feed = (f: Partial<ChangefeedInfo> = {}): ChangefeedInfo => ({
  document: 'f',
  id: 'f',
  sinkUri: 'kafka://k:9092/t?protocol=canal-json',
  ...f,
});
const observed = (s: Partial<ChangefeedStatus> = {}): ChangefeedStatus => ({
  id: 'f',
  state: 'normal',
  sinkUri: 'kafka://k:9092/t?protocol=canal-json',
  checkpointTs: tsoAt(NOW - 1500),
  ...s,
});
const record = (f: ChangefeedInfo, r: Partial<ChangefeedRecord> = {}): ChangefeedRecord => ({
  document: f.document,
  deletionPolicy: f.deletionPolicy ?? 'Retain',
  applied: appliedOf(f, f.credentials ? 'uid/1' : undefined),
  ...r,
});
const plan = (i: Partial<ChangefeedsInput>) =>
  planChangefeeds({ feeds: [], observed: new Map(), records: {}, secrets: new Map(), now: NOW, ...i });
const there = (...s: ChangefeedStatus[]) => new Map(s.map((x) => [x.id, x]));

describe('planning changefeeds', () => {
  test('missing: created, and paused at once when Git asks; the credentials Secret must be there first', () => {
    expect(plan({ feeds: [feed()] }).steps).toEqual([{ id: 'f', calls: ['create'], feed: feed(), record: record(feed()) }]);
    expect(plan({ feeds: [feed({ paused: true })] }).steps[0].calls).toEqual(['create', 'pause']);
    const withSecret = feed({ credentials: { secret: 'k', params: { 'sasl-password': 'pw' } } });
    const waiting = plan({ feeds: [withSecret] });
    expect(waiting.steps).toEqual([]);
    expect(waiting.feeds[0]).toMatchObject({ phase: 'Waiting', message: "waiting: the Secret k with the sink's credentials is not there" });
    const lacking = plan({ feeds: [withSecret], secrets: new Map([['k', { version: 'uid/1', keys: ['other'] }]]) });
    expect(lacking.feeds[0].message).toBe('waiting: the Secret k has no key pw');
  });

  test('in the state Git asks: Complete, with the checkpoint time and lag', () => {
    const p = plan({ feeds: [feed()], observed: there(observed()), records: { f: record(feed()) } });
    expect(p.steps).toEqual([]);
    expect(p.feeds[0]).toEqual({
      document: 'f',
      id: 'f',
      phase: 'Complete',
      state: 'normal',
      message: `normal, checkpoint ${new Date(NOW - 1500).toISOString()} (1.5 s behind)`,
      checkpointTs: tsoAt(NOW - 1500),
      checkpointTime: new Date(NOW - 1500).toISOString(),
      lagMs: 1500,
    });
    expect(tsoTime(tsoAt(NOW))).toBe(NOW);
  });

  test('adopted: one made by hand that matches Git is only recorded; one that differs is paused to be updated', () => {
    const made = observed({ sinkUri: 'kafka://k:9092/t?protocol=canal-json', config: { filter: { rules: ['*.*'] }, memory_quota: 1 } });
    const same = plan({ feeds: [feed({ replicaConfig: { filter: { rules: ['*.*'] } } })], observed: there(made) });
    expect(same.steps.map((s) => s.calls)).toEqual([[]]);
    const other = plan({ feeds: [feed({ replicaConfig: { filter: { rules: ['app.*'] } } })], observed: there(made) });
    expect(other.steps.map((s) => s.calls)).toEqual([['pause']]);
    expect(other.steps[0].record?.pausedForUpdate).toBe(true);
  });

  test('a change in Git: pause while it runs, then update and resume once stopped; a rotated Secret is a change', () => {
    const before = feed({ replicaConfig: { filter: { rules: ['app.*'] } } });
    const after = feed({ replicaConfig: { filter: { rules: ['app.*', 'audit.*'] } } });
    const first = plan({ feeds: [after], observed: there(observed()), records: { f: record(before) } });
    expect(first.steps.map((s) => s.calls)).toEqual([['pause']]);
    const second = plan({ feeds: [after], observed: there(observed({ state: 'stopped' })), records: { f: first.steps[0].record! } });
    expect(second.steps.map((s) => s.calls)).toEqual([['update', 'resume']]);
    expect(second.steps[0].record).toEqual(record(after));
    const paused = plan({
      feeds: [{ ...after, paused: true }],
      observed: there(observed({ state: 'stopped' })),
      records: { f: record(before) },
    });
    expect(paused.steps.map((s) => s.calls)).toEqual([['update']]);
    const creds = feed({ credentials: { secret: 'k', params: { 'sasl-password': 'pw' } } });
    const rotated = plan({
      feeds: [creds],
      observed: there(observed()),
      records: { f: record(creds) },
      secrets: new Map([['k', { version: 'uid/2', keys: ['pw'] }]]),
    });
    expect(rotated.steps.map((s) => s.calls)).toEqual([['pause']]);
  });

  test("Git's pause is kept both ways; a failed one is reported, not resumed, until Git changes", () => {
    const f = feed();
    expect(plan({ feeds: [{ ...f, paused: true }], observed: there(observed()), records: { f: record(f) } }).steps[0].calls).toEqual([
      'pause',
    ]);
    expect(plan({ feeds: [f], observed: there(observed({ state: 'stopped' })), records: { f: record(f) } }).steps[0].calls).toEqual([
      'resume',
    ]);
    const failed = plan({
      feeds: [f],
      observed: there(
        observed({
          state: 'failed',
          error: { code: 'CDC:ErrKafkaNewProducer', message: 'kafka: client has run out of available brokers' },
        }),
      ),
      records: { f: record(f) },
    });
    expect(failed.steps).toEqual([]);
    expect(failed.feeds[0]).toMatchObject({ phase: 'Failed', error: 'kafka: client has run out of available brokers' });
    expect(failed.feeds[0].message).toContain('TiCDC failed it: kafka: client has run out of available brokers');
  });

  test('left Git: removed with Delete, kept with Retain, forgotten when gone; unmanaged ones listed', () => {
    const records = {
      gone: record(feed({ id: 'gone', deletionPolicy: 'Delete' })),
      kept: record(feed({ id: 'kept' })),
      lost: record(feed({ id: 'lost' })),
    };
    const p = plan({ observed: there(observed({ id: 'gone' }), observed({ id: 'kept' }), observed({ id: 'byhand' })), records });
    expect(p.steps).toEqual([
      { id: 'gone', calls: ['remove'], record: undefined },
      { id: 'kept', calls: [], record: { ...records.kept, retained: true } },
      { id: 'lost', calls: [], record: undefined },
    ]);
    expect(p.kept).toEqual(['kept']);
    expect(p.unmanaged).toEqual(['byhand']);
  });

  test('property: never an update of a running changefeed, a create over one there, or a removal Git did not ask', () => {
    const ids = fc.constantFrom('a', 'b', 'c');
    const state = fc.constantFrom('normal', 'stopped', 'failed', 'warning', 'finished', 'error');
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.record({ id: ids, paused: fc.boolean(), rule: fc.constantFrom('x.*', 'y.*'), del: fc.boolean() }), {
          selector: (f) => f.id,
        }),
        fc.uniqueArray(fc.record({ id: ids, state, rule: fc.constantFrom('x.*', 'y.*') }), { selector: (o) => o.id }),
        fc.dictionary(ids, fc.record({ del: fc.boolean(), rule: fc.constantFrom('x.*', 'y.*'), pausedForUpdate: fc.boolean() })),
        (declared, seen, recs) => {
          const feeds = declared.map((d) =>
            feed({
              id: d.id,
              document: d.id,
              paused: d.paused,
              replicaConfig: { filter: { rules: [d.rule] } },
              ...(d.del && { deletionPolicy: 'Delete' as const }),
            }),
          );
          const records = Object.fromEntries(
            Object.entries(recs).map(([id, r]) => [
              id,
              record(
                feed({
                  id,
                  document: id,
                  replicaConfig: { filter: { rules: [r.rule] } },
                  ...(r.del && { deletionPolicy: 'Delete' as const }),
                }),
                {
                  ...(r.pausedForUpdate && { pausedForUpdate: true }),
                },
              ),
            ]),
          );
          const obs = there(...seen.map((o) => observed({ id: o.id, state: o.state, config: { filter: { rules: [o.rule] } } })));
          const p = plan({ feeds, observed: obs, records });
          for (const s of p.steps) {
            const state = obs.get(s.id)?.state;
            if (s.calls[0] === 'update') expect(['stopped', 'failed', 'error']).toContain(state);
            if (s.calls.includes('create')) expect(obs.has(s.id)).toBe(false);
            if (s.calls.includes('remove')) {
              expect(feeds.some((f) => f.id === s.id)).toBe(false);
              expect(records[s.id]?.deletionPolicy).toBe('Delete');
            }
          }
        },
      ),
    );
  });
});

describe('credentials put into what is sent', () => {
  const values: Record<string, string> = { 'k/pw': 'p@ss:w/rd', 'k/tok': 'T0ken' };
  const get = (secret: string, key: string): string | undefined => values[`${secret}/${key}`];

  test('a MySQL password in the user info, encoded; root when the URI names no user', () => {
    const f = feed({ sinkUri: 'mysql://repl@db:4000/?time-zone=UTC', credentials: { secret: 'k', password: 'pw' } });
    expect(withCredentials(f, get).sinkUri).toBe('mysql://repl:p%40ss%3Aw%2Frd@db:4000/?time-zone=UTC');
    expect(withCredentials({ ...f, sinkUri: 'tidb://db:4000/' }, get).sinkUri).toBe('tidb://root:p%40ss%3Aw%2Frd@db:4000/');
  });

  test("a query parameter added, a replica config field set, Git's own config left as it was", () => {
    const config = { sink: { protocol: 'canal-json' } };
    const f = feed({
      credentials: { secret: 'k', params: { 'sasl-password': 'pw' }, fields: { 'sink.kafka_config.sasl_oauth_client_secret': 'tok' } },
      replicaConfig: config,
    });
    const sent = withCredentials(f, get);
    expect(sent.sinkUri).toBe('kafka://k:9092/t?protocol=canal-json&sasl-password=p%40ss%3Aw%2Frd');
    expect(sent.replicaConfig).toEqual({ sink: { protocol: 'canal-json', kafka_config: { sasl_oauth_client_secret: 'T0ken' } } });
    expect(config).toEqual({ sink: { protocol: 'canal-json' } });
    expect(() => withCredentials(feed({ credentials: { secret: 'k', password: 'nope' } }), get)).toThrow('the Secret k has no key nope');
  });
});

describe('adoption compares what TiCDC shows with Git', () => {
  test('credentials masked by TiCDC or absent from Git, and the order of parameters, do not count', () => {
    const f = feed({ sinkUri: 'mysql://repl@db:4000/?time-zone=UTC&safe-mode=true', credentials: { secret: 'k', password: 'pw' } });
    expect(matchesGit(f, observed({ sinkUri: 'mysql://repl:xxxxx@db:4000/?safe-mode=true&time-zone=UTC' }))).toBe(true);
    const s3 = feed({
      sinkUri: 's3://bucket/prefix?region=us-east-1',
      credentials: { secret: 'k', params: { 'secret-access-key': 'sk' } },
    });
    expect(matchesGit(s3, observed({ sinkUri: 's3://bucket/prefix?region=us-east-1&secret-access-key=xxxxx' }))).toBe(true);
    expect(matchesGit(s3, observed({ sinkUri: 's3://other/prefix?region=us-east-1' }))).toBe(false);
    expect(matchesGit(f, observed({ sinkUri: 'mysql://repl:xxxxx@db:4000/?time-zone=UTC' }))).toBe(false);
  });
});
