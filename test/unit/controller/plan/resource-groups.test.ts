/**
 * The resource-group planner: created when missing, adopted and altered when there, drift reported or
 * corrected, dropped only when managed and its document left Git with Delete; and the statements and
 * the reading of `information_schema.resource_groups` as each TiDB release has them. The rule that a
 * group is never dropped but by Git's Delete is a property over generated cases.
 */
import fc from 'fast-check';
import {
  alterGroupSql,
  createGroupSql,
  groupGrammar,
  parseQueryLimit,
  tidbRelease,
  type ObservedGroup,
} from '../../../../src/controller/clients/resource-groups';
import { planResourceGroups } from '../../../../src/controller/plan/resource-groups';
import type { ResourceGroupRecord } from '../../../../src/controller/records/resource-groups';
import type { ResourceGroupInfo } from '../../../../src/tidbcluster/contract/resource-groups';

const V85 = groupGrammar([8, 5, 1]);
const DEFAULT: ObservedGroup = { name: 'default', ruPerSecond: 'UNLIMITED', priority: 'MEDIUM', burstable: true };
const observed = (g: Partial<ObservedGroup> & { name: string }): ObservedGroup => ({
  ruPerSecond: 1000,
  priority: 'MEDIUM',
  burstable: false,
  ...g,
});
const group = (g: Partial<ResourceGroupInfo> & { name: string }): ResourceGroupInfo => ({ document: g.name, ruPerSecond: 1000, ...g });
const server = (...groups: ObservedGroup[]) => new Map([DEFAULT, ...groups].map((g) => [g.name, g]));
const applied = (g: ResourceGroupInfo) => ({ ruPerSecond: g.ruPerSecond, ...(g.priority && { priority: g.priority }) });

describe('statements per release', () => {
  test('create names every option; a rule with Go durations', () => {
    expect(
      createGroupSql(
        group({
          name: 'rg',
          ruPerSecond: 500,
          priority: 'HIGH',
          burstable: true,
          queryLimit: { execElapsedMs: 90_000, action: 'KILL', watch: { type: 'SIMILAR', durationMs: 600_000 } },
        }),
      ),
    ).toBe(
      "CREATE RESOURCE GROUP IF NOT EXISTS `rg` RU_PER_SEC = 500, PRIORITY = HIGH, BURSTABLE, QUERY_LIMIT = (EXEC_ELAPSED = '1m30s', ACTION = KILL, WATCH = SIMILAR DURATION = '10m0s')",
    );
  });

  test('turning BURSTABLE off and removing a rule: FALSE up to v8.5, OFF after, refused on v7.1', () => {
    const has = observed({ name: 'rg', burstable: true, queryLimit: { execElapsedMs: 1000, action: 'DRYRUN' } });
    expect(alterGroupSql(group({ name: 'rg' }), has, V85)).toBe(
      'ALTER RESOURCE GROUP `rg` RU_PER_SEC = 1000, PRIORITY = MEDIUM, BURSTABLE = FALSE, QUERY_LIMIT = NULL',
    );
    expect(alterGroupSql(group({ name: 'rg' }), has, groupGrammar(tidbRelease('8.0.11-TiDB-v9.0.0')))).toBe(
      'ALTER RESOURCE GROUP `rg` RU_PER_SEC = 1000, PRIORITY = MEDIUM, BURSTABLE = OFF, QUERY_LIMIT = NULL',
    );
    expect(
      alterGroupSql(group({ name: 'rg' }), { ...has, queryLimit: undefined }, groupGrammar(tidbRelease('5.7.25-TiDB-v7.1.6'))),
    ).toEqual({
      refused: expect.stringContaining('no way to turn BURSTABLE off'),
    });
  });

  test('QUERY_LIMIT read back as TiDB writes it; what is not known is kept as text', () => {
    expect(parseQueryLimit("EXEC_ELAPSED='1m0s', ACTION=KILL, WATCH=SIMILAR DURATION='10m0s'")).toEqual({
      execElapsedMs: 60_000,
      action: 'KILL',
      watch: { type: 'SIMILAR', durationMs: 600_000 },
    });
    expect(parseQueryLimit("EXEC_ELAPSED='15s', ACTION=COOLDOWN, WATCH=PLAN DURATION=UNLIMITED")).toEqual({
      execElapsedMs: 15_000,
      action: 'COOLDOWN',
      watch: { type: 'PLAN' },
    });
    expect(parseQueryLimit("EXEC_ELAPSED='15s', PROCESSED_KEYS=100, ACTION=KILL")).toEqual({
      unread: "EXEC_ELAPSED='15s', PROCESSED_KEYS=100, ACTION=KILL",
    });
  });
});

describe('planning', () => {
  test('a missing group is created and recorded; one there and equal is only recorded', () => {
    const plan = planResourceGroups({
      groups: [group({ name: 'a' }), group({ name: 'b' })],
      server: server(observed({ name: 'b' })),
      records: {},
      grammar: V85,
    });
    expect(plan.steps).toEqual([
      {
        group: 'a',
        statement: 'CREATE RESOURCE GROUP IF NOT EXISTS `a` RU_PER_SEC = 1000, PRIORITY = MEDIUM',
        news: 'created',
        record: { document: 'a', deletionPolicy: 'Retain', applied: { ruPerSecond: 1000 } },
      },
      { group: 'b', record: { document: 'b', deletionPolicy: 'Retain', applied: { ruPerSecond: 1000 } } },
    ]);
    expect(plan.groups.map((g) => g.state)).toEqual(['changing', 'ok']);
    expect(plan.unmanaged).toEqual([]);
  });

  test('adopted: a group made by hand is altered to Git, never dropped and created again', () => {
    const plan = planResourceGroups({
      groups: [group({ name: 'a', ruPerSecond: 2000 })],
      server: server(observed({ name: 'a', ruPerSecond: 10 })),
      records: {},
      grammar: V85,
    });
    expect(plan.steps.map((s) => s.statement)).toEqual(['ALTER RESOURCE GROUP `a` RU_PER_SEC = 2000, PRIORITY = MEDIUM']);
  });

  test('drift: reported when Git did not change, corrected with drift: correct; a change in Git is applied', () => {
    const g = group({ name: 'a' });
    const records: Record<string, ResourceGroupRecord> = { a: { document: 'a', deletionPolicy: 'Retain', applied: applied(g) } };
    const byHand = server(observed({ name: 'a', ruPerSecond: 5 }));
    const report = planResourceGroups({ groups: [g], server: byHand, records, grammar: V85 });
    expect(report.steps).toEqual([]);
    expect(report.groups).toEqual([{ document: 'a', group: 'a', state: 'drift', drift: ['RU_PER_SEC is 5, not 1000'] }]);
    const correct = planResourceGroups({ groups: [{ ...g, drift: 'correct' }], server: byHand, records, grammar: V85 });
    expect(correct.steps.map((s) => s.statement)).toEqual(['ALTER RESOURCE GROUP `a` RU_PER_SEC = 1000, PRIORITY = MEDIUM']);
    expect(correct.groups[0]).toMatchObject({ state: 'changing', corrected: true });
    const lowered = planResourceGroups({ groups: [{ ...g, ruPerSecond: 100 }], server: byHand, records, grammar: V85 });
    expect(lowered.groups[0].state).toBe('changing');
  });

  test('a group that left Git: dropped with Delete, kept with Retain, default never; unmanaged ones listed', () => {
    const records: Record<string, ResourceGroupRecord> = {
      gone: { document: 'gone', deletionPolicy: 'Delete', applied: { ruPerSecond: 1 } },
      kept: { document: 'kept', deletionPolicy: 'Retain', applied: { ruPerSecond: 1 } },
      default: { document: 'd', deletionPolicy: 'Delete', applied: { ruPerSecond: 1 } },
      vanished: { document: 'v', deletionPolicy: 'Delete' },
    };
    const plan = planResourceGroups({
      groups: [],
      server: server(observed({ name: 'gone' }), observed({ name: 'kept' }), observed({ name: 'byhand' })),
      records,
      grammar: V85,
    });
    expect(plan.steps).toEqual([
      { group: 'default', record: { ...records.default, retained: true } },
      { group: 'gone', statement: 'DROP RESOURCE GROUP IF EXISTS `gone`', news: 'dropped', record: undefined },
      { group: 'kept', record: { ...records.kept, retained: true } },
      { group: 'vanished', record: undefined },
    ]);
    expect(plan.kept).toEqual(['default', 'kept']);
    expect(plan.unmanaged).toEqual(['byhand']);
  });

  test('property: a group is dropped only when managed, gone from Git, Delete, and not default', () => {
    const names = fc.constantFrom('default', 'a', 'b', 'c', 'd');
    const rec = fc.record({ document: fc.constant('x'), deletionPolicy: fc.constantFrom('Retain' as const, 'Delete' as const) });
    fc.assert(
      fc.property(fc.uniqueArray(names), fc.uniqueArray(names), fc.dictionary(names, rec), (declared, there, records) => {
        const plan = planResourceGroups({
          groups: declared.map((n) => group({ name: n })),
          server: new Map(there.map((n) => [n, observed({ name: n })])),
          records,
          grammar: V85,
        });
        for (const s of plan.steps)
          if (s.statement?.startsWith('DROP')) {
            expect(declared).not.toContain(s.group);
            expect(s.group).not.toBe('default');
            expect(records[s.group]?.deletionPolicy).toBe('Delete');
            expect(there).toContain(s.group);
          }
        for (const n of declared) expect(plan.steps.filter((s) => s.group === n).every((s) => s.record !== undefined)).toBe(true);
      }),
    );
  });
});
