/**
 * The online config planner (src/controller/plan/online-config.ts): the normalization of sizes and
 * durations, which keys go to which member, and, as properties, that no key is sent that the
 * member's release does not change online or that the member already holds.
 */
import fc from 'fast-check';
import { parseToml, type TomlTable } from '../../../../src/base/toml';
import {
  flattenConfig,
  normalize,
  parseDurationMs,
  parseSize,
  planOnlineConfig,
  reportsValues,
  sameValue,
  type OnlineMember,
} from '../../../../src/controller/plan/online-config';
import { onlineConfigOf } from '../../../../src/controller/records/online-config';
import type { ConfigType } from '../../../../src/tidbcluster/config-schema';

/** A small schema: the keys' types, and the first release line that changes each online (none: never). */
const FIXTURE: Record<string, { t: ConfigType; online?: number }> = {
  'raftstore.apply-pool-size': { t: 'int', online: 7.1 },
  'raftstore.store-pool-size': { t: 'int', online: 7.1 },
  'raftstore.region-split-check-diff': { t: 'size', online: 7.1 },
  'raftstore.raft-base-tick-interval': { t: 'duration' },
  'storage.reserve-space': { t: 'size' },
  'storage.flow-control.enable': { t: 'bool', online: 8.5 },
  'log.level': { t: 'string', online: 7.1 },
  'server.labels': { t: 'array', online: 7.1 },
  'gc.ratio-threshold': { t: 'float', online: 7.1 },
};
const typeOf = (path: readonly string[]) => FIXTURE[path.join('.')]?.t;
/** A member at a release line: the fixture says what it changes online. */
const at =
  (line: number) =>
  (path: readonly string[]): boolean => {
    const o = FIXTURE[path.join('.')]?.online;
    return o !== undefined && line >= o;
  };
const member = (name: string, reported: unknown, line = 8.5, extra: Partial<OnlineMember> = {}): OnlineMember => ({
  name,
  online: at(line),
  reported,
  ...extra,
});

describe('sizes and durations', () => {
  it('reads sizes in binary units, as PD (go-units RAMInBytes) and TiKV (ReadableSize) do', () => {
    expect(parseSize('512MiB')).toBe(512 * 1024 ** 2);
    expect(parseSize('1GB')).toBe(1024 ** 3);
    expect(parseSize('1GiB')).toBe(1024 ** 3);
    expect(parseSize('96MB')).toBe(96 * 1024 ** 2);
    expect(parseSize('1.5GiB')).toBe(1.5 * 1024 ** 3);
    expect(parseSize('0KiB')).toBe(0);
    expect(parseSize('1024')).toBe(1024);
    expect(parseSize('1024B')).toBe(1024);
    expect(parseSize('10s')).toBeUndefined();
    expect(parseSize('lots')).toBeUndefined();
  });

  it('reads durations to milliseconds, in Go and TiKV forms', () => {
    expect(parseDurationMs('10s')).toBe(10_000);
    expect(parseDurationMs('1m')).toBe(60_000);
    expect(parseDurationMs('1h0m0s')).toBe(3_600_000);
    expect(parseDurationMs('1m30s')).toBe(90_000);
    expect(parseDurationMs('250ms')).toBe(250);
    expect(parseDurationMs('1d')).toBe(86_400_000);
    expect(parseDurationMs('0s')).toBe(0);
    expect(parseDurationMs('10')).toBeUndefined();
    expect(parseDurationMs('1GiB')).toBeUndefined();
  });

  it('normalizes by the key type, and guesses without one', () => {
    expect(normalize('1GB', 'size')).toBe(normalize('1024MiB', 'size'));
    expect(normalize(1073741824, 'size')).toBe(normalize('1GiB', 'size'));
    expect(normalize('1h', 'duration')).toBe(normalize('60m', 'duration'));
    expect(normalize('1h0m0s', 'duration')).toBe(3_600_000);
    expect(normalize('true', 'bool')).toBe(true);
    expect(normalize('8', 'int')).toBe(8);
    expect(normalize('512MiB')).toBe(512 * 1024 ** 2);
    expect(normalize('10s')).toBe(10_000);
    expect(normalize('info')).toBe('info');
    expect(normalize({ a: 1 })).toBeUndefined();
    expect(sameValue(normalize('1GB'), normalize('1GiB'))).toBe(true);
    expect(sameValue(0.1 + 0.2, 0.3)).toBe(true);
    expect(sameValue(4, 8)).toBe(false);
    expect(sameValue('4', 4)).toBe(false);
  });

  it('flattens tables to dotted keys, arrays as leaves', () => {
    const flat = flattenConfig(
      parseToml('[raftstore]\napply-pool-size = 4\n[server]\nlabels = ["a"]\n[storage.flow-control]\nenable = false\n'),
    );
    expect(flat.map((k) => k.key)).toEqual(['raftstore.apply-pool-size', 'server.labels', 'storage.flow-control.enable']);
  });
});

describe('planOnlineConfig', () => {
  const config = parseToml(
    [
      '[raftstore]',
      'apply-pool-size = 4',
      'region-split-check-diff = "32MB"',
      'raft-base-tick-interval = "2s"',
      '[storage]',
      'reserve-space = "1GB"',
      '[log]',
      'level = "info"',
    ].join('\n'),
  );
  const reported = {
    raftstore: { 'apply-pool-size': 2, 'region-split-check-diff': '32MiB', 'raft-base-tick-interval': '1s' },
    storage: { 'reserve-space': '5GiB' },
    log: { level: 'info' },
  };

  it('sends the online keys whose value differs, and never those that need a restart', () => {
    const plan = planOnlineConfig({ config, typeOf, members: [member('tikv-0', reported)] });
    expect(plan.sends).toEqual([{ member: 'tikv-0', values: { 'raftstore.apply-pool-size': 4 } }]);
    expect(plan.onlineKeys).toEqual(['log.level', 'raftstore.apply-pool-size', 'raftstore.region-split-check-diff']);
    expect(plan.waitRestart).toEqual(['raftstore.raft-base-tick-interval', 'storage.reserve-space']);
  });

  it('sends nothing to a member already at the values (a member that just started read the file)', () => {
    const fresh = { ...reported, raftstore: { ...reported.raftstore, 'apply-pool-size': 4, 'raft-base-tick-interval': '2s' } };
    const plan = planOnlineConfig({ config, typeOf, members: [member('tikv-1', { ...fresh, storage: { 'reserve-space': '1GiB' } })] });
    expect(plan.sends).toEqual([]);
    expect(plan.waitRestart).toEqual([]);
  });

  it('plans each member by its own report and release', () => {
    const flow = parseToml('[storage.flow-control]\nenable = false\n');
    const on = { storage: { 'flow-control': { enable: true } } };
    const plan = planOnlineConfig({ config: flow, typeOf, members: [member('new', on, 8.5), member('old', on, 8.1)] });
    expect(plan.sends).toEqual([{ member: 'new', values: { 'storage.flow-control.enable': false } }]);
    expect(plan.waitRestart).toEqual(['storage.flow-control.enable']);
  });

  it('says why keys are not sent: arrays, unreported keys, unread members, standing refusals', () => {
    const cfg = parseToml('[server]\nlabels = ["zone"]\n[gc]\nratio-threshold = 1.5\n[raftstore]\napply-pool-size = 4\n');
    const plan = planOnlineConfig({
      config: cfg,
      typeOf,
      members: [
        member('a', { server: { labels: [] }, raftstore: { 'apply-pool-size': 2 } }),
        member('b', undefined, 8.5, { error: 'connection refused' }),
      ],
      refused: [{ member: 'a', key: 'raftstore.apply-pool-size', value: 4, error: 'config pool_size can not be changed' }],
    });
    expect(plan.sends).toEqual([]);
    expect(plan.notSent).toEqual([
      { key: 'gc.ratio-threshold', reason: 'a does not report it' },
      { key: 'server.labels', reason: 'a value of this kind is not changed online here; it waits for the next restart' },
    ]);
    expect(plan.unread).toEqual([{ member: 'b', error: 'connection refused' }]);
    expect(plan.refused.map((r) => r.key)).toEqual(['raftstore.apply-pool-size']);
  });

  it('sends a bool in the form the member shows it (the json ",string" bools of PD)', () => {
    const cfg = parseToml('[storage.flow-control]\nenable = false\n');
    const plan = planOnlineConfig({
      config: cfg,
      typeOf,
      members: [
        member('pd', { storage: { 'flow-control': { enable: 'true' } } }),
        member('tikv', { storage: { 'flow-control': { enable: true } } }),
      ],
    });
    expect(plan.sends).toEqual([
      { member: 'pd', values: { 'storage.flow-control.enable': 'false' } },
      { member: 'tikv', values: { 'storage.flow-control.enable': false } },
    ]);
  });

  it('sends again once Git asks another value than the one refused', () => {
    const plan = planOnlineConfig({
      config: parseToml('[raftstore]\napply-pool-size = 3\n'),
      typeOf,
      members: [member('a', { raftstore: { 'apply-pool-size': 2 } })],
      refused: [{ member: 'a', key: 'raftstore.apply-pool-size', value: 4, error: 'no' }],
    });
    expect(plan.sends).toEqual([{ member: 'a', values: { 'raftstore.apply-pool-size': 3 } }]);
  });

  it('keeps a removed applied key while a member has not restarted since, and forgets it after', () => {
    const applied = { 'log.level': { value: 'debug', at: 1000 }, 'raftstore.apply-pool-size': { value: 4, at: 1000 } };
    const cfg = parseToml('[raftstore]\napply-pool-size = 4\n');
    const r = { raftstore: { 'apply-pool-size': 4 } };
    const before = planOnlineConfig({
      config: cfg,
      typeOf,
      applied,
      members: [member('a', r, 8.5, { startedMs: 500 }), member('b', r, 8.5, { startedMs: 2000 })],
    });
    expect(before.lingering).toEqual(['log.level']);
    expect(Object.keys(before.keepApplied).sort()).toEqual(['log.level', 'raftstore.apply-pool-size']);
    const after = planOnlineConfig({
      config: cfg,
      typeOf,
      applied,
      members: [member('a', r, 8.5, { startedMs: 1500 }), member('b', r, 8.5, { startedMs: 2000 })],
    });
    expect(after.lingering).toEqual([]);
    expect(Object.keys(after.keepApplied)).toEqual(['raftstore.apply-pool-size']);
  });

  it('checks a report against the sent values, normalized', () => {
    const r = { raftstore: { 'apply-pool-size': 4, 'region-split-check-diff': '32MiB' } };
    expect(reportsValues(r, { 'raftstore.apply-pool-size': 4, 'raftstore.region-split-check-diff': '32MB' }, typeOf)).toEqual([]);
    expect(reportsValues(r, { 'raftstore.apply-pool-size': 3 }, typeOf)).toEqual(['raftstore.apply-pool-size']);
    expect(reportsValues({}, { 'log.level': 'warn' }, typeOf)).toEqual(['log.level']);
  });
});

describe('planOnlineConfig properties', () => {
  const keys = Object.keys(FIXTURE).filter((k) => FIXTURE[k].t !== 'array');
  const valueOf = (t: ConfigType) =>
    t === 'int'
      ? fc.integer({ min: 0, max: 8 })
      : t === 'float'
        ? fc.constantFrom(0.5, 1.1, 1.5)
        : t === 'bool'
          ? fc.boolean()
          : t === 'size'
            ? fc.constantFrom('32MB', '32MiB', '1GB', '1GiB', '1024MiB', 33554432)
            : t === 'duration'
              ? fc.constantFrom('1s', '1000ms', '2s', '1m', '60s')
              : fc.constantFrom('info', 'warn');
  const entries = fc.subarray(keys).chain((ks) => fc.tuple(...ks.map((k) => valueOf(FIXTURE[k].t).map((v) => [k, v] as const))));
  const table = (pairs: readonly (readonly [string, unknown])[]): TomlTable => {
    const out: TomlTable = {};
    for (const [k, v] of pairs) {
      const path = k.split('.');
      let t = out;
      for (const p of path.slice(0, -1)) t = (t[p] ??= {}) as TomlTable;
      t[path[path.length - 1]] = v as never;
    }
    return out;
  };
  const members = fc.array(fc.tuple(fc.constantFrom(7.1, 8.1, 8.5), entries), { minLength: 1, maxLength: 4 });

  it('never sends a key the member does not change online, nor one it already holds', () => {
    fc.assert(
      fc.property(entries, members, (file, ms) => {
        const list = ms.map(([line, rep], i) => member(`m${i}`, table(rep), line));
        const plan = planOnlineConfig({ config: table(file), typeOf, members: list });
        const wanted = new Map(file);
        for (const send of plan.sends) {
          const m = list.find((x) => x.name === send.member)!;
          for (const [key, value] of Object.entries(send.values)) {
            const path = key.split('.');
            expect(m.online(path)).toBe(true);
            const held = path.reduce<unknown>((a, p) => (a as Record<string, unknown> | undefined)?.[p], m.reported);
            expect(sameValue(normalize(value, typeOf(path)), normalize(held, typeOf(path)))).toBe(false);
            expect(sameValue(normalize(value, typeOf(path)), normalize(wanted.get(key), typeOf(path)))).toBe(true);
          }
        }
      }),
    );
  });

  it('after the sends, each member reports every online key it reports at the file value', () => {
    fc.assert(
      fc.property(entries, members, (file, ms) => {
        const list = ms.map(([line, rep], i) => member(`m${i}`, table(rep), line));
        const plan = planOnlineConfig({ config: table(file), typeOf, members: list });
        const applied = list.map((m) => {
          const send = plan.sends.find((s) => s.member === m.name);
          const merged = new Map(ms[Number(m.name.slice(1))][1]);
          for (const [k, v] of Object.entries(send?.values ?? {})) merged.set(k, v);
          return member(m.name, table([...merged]), ms[Number(m.name.slice(1))][0]);
        });
        expect(planOnlineConfig({ config: table(file), typeOf, members: applied }).sends).toEqual([]);
      }),
    );
  });
});

describe('onlineConfigOf (records)', () => {
  it('reads back well-formed records and leaves out the rest', () => {
    const doc = {
      onlineConfigRecords: {
        tikv: {
          keys: { 'raftstore.apply-pool-size': { value: 4, at: 5 }, bad: { value: null, at: 1 } },
          members: ['c-tikv-0', 3],
          time: 't',
        },
        pd: { keys: {}, members: [] },
        tidb: { keys: {}, members: [], time: 't' },
      },
    };
    expect(onlineConfigOf(doc)).toEqual({
      tikv: { keys: { 'raftstore.apply-pool-size': { value: 4, at: 5 } }, members: ['c-tikv-0'], time: 't' },
    });
    expect(onlineConfigOf(undefined)).toEqual({});
  });
});
