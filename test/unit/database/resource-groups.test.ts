/**
 * ResourceGroup documents read beside a cluster: their defaults, what the controller is told, and
 * every bad input refused with its file, document, path, line and what was expected, a group or a
 * rule before the TiDB release that has it among them.
 */
import fc from 'fast-check';
import { goDuration, parseDurationMs } from '../../../src/base/duration';
import { encodeControllerClusterInfo, parseControllerClusterInfo, type ControllerClusterInfo } from '../../../src/tidbcluster/contract';
import { clusterJson, errorsOf, loginCluster, read, renderAccounts, resourceGroup, sqlUser, yamlOf } from '../../support/sql-accounts';

const lineOf = (text: string, needle: string) => text.slice(0, text.indexOf(needle)).split('\n').length;
const groupsOf = (docs: Parameters<typeof read>[0]) => {
  const r = read(docs);
  expect(r.errors).toEqual([]);
  return r.clusters[0].operations.sql?.resourceGroups;
};
const olderCluster = (version: string) => loginCluster({ version });

describe('reading ResourceGroup', () => {
  test('defaults: the name from metadata.name with - as _, MEDIUM, not burstable, Retain, report', () => {
    expect(groupsOf([loginCluster(), resourceGroup('batch-jobs')])).toEqual([
      { document: 'batch-jobs', name: 'batch_jobs', ruPerSecond: 1000 },
    ]);
  });

  test('every field, the name in lower case, durations in milliseconds, groups sorted by name', () => {
    const groups = groupsOf([
      loginCluster(),
      resourceGroup('oltp', {
        name: 'OLTP_Main',
        ruPerSecond: 8000,
        priority: 'HIGH',
        burstable: true,
        queryLimit: { execElapsed: '1m30s', action: 'COOLDOWN', watch: { type: 'SIMILAR', duration: '10m' } },
        deletionPolicy: 'Delete',
        drift: 'correct',
      }),
      resourceGroup('analytics', {
        ruPerSecond: 500,
        priority: 'LOW',
        queryLimit: { execElapsed: '500ms', action: 'KILL', watch: { type: 'EXACT' } },
      }),
    ]);
    expect(groups).toEqual([
      {
        document: 'analytics',
        name: 'analytics',
        ruPerSecond: 500,
        priority: 'LOW',
        queryLimit: { execElapsedMs: 500, action: 'KILL', watch: { type: 'EXACT' } },
      },
      {
        document: 'oltp',
        name: 'oltp_main',
        ruPerSecond: 8000,
        priority: 'HIGH',
        burstable: true,
        queryLimit: { execElapsedMs: 90_000, action: 'COOLDOWN', watch: { type: 'SIMILAR', durationMs: 600_000 } },
        deletionPolicy: 'Delete',
        drift: 'correct',
      },
    ]);
  });

  test('rendered: the cluster JSON holds the groups beside the accounts, and parses back equal', () => {
    const objects = renderAccounts([
      loginCluster(),
      sqlUser('app', { resourceGroup: 'rg_app' }),
      resourceGroup('rg-app', { ruPerSecond: 2000 }),
    ]);
    const sql = clusterJson(objects).sql;
    expect(sql.resourceGroups).toEqual([{ document: 'rg-app', name: 'rg_app', ruPerSecond: 2000 }]);
    expect(sql.accounts.map((a: { user: string }) => a.user)).toEqual(['app']);
    const info = clusterJson(objects) as unknown as ControllerClusterInfo;
    expect(parseControllerClusterInfo(encodeControllerClusterInfo(info))).toEqual(info);
  });

  test('a resource group alone (no account) is kept too', () => {
    const objects = renderAccounts([loginCluster(), resourceGroup('rg')]);
    expect(clusterJson(objects).sql).toEqual({
      loginSecret: 'demo-init',
      accounts: [],
      resourceGroups: [{ document: 'rg', name: 'rg', ruPerSecond: 1000 }],
    });
  });
});

describe('bad ResourceGroups are refused with file, document, path and line', () => {
  test('an unknown field (with a did-you-mean when one is near), a bad enum', () => {
    const text = yamlOf([loginCluster(), resourceGroup('rg', { ruPerSec: 10, burstible: true, priority: 'URGENT' })]);
    const errors = errorsOf(text).flatMap((e) => e.split('\n'));
    expect(errors).toEqual([
      `in.yaml: document 2: spec.ruPerSec (line ${lineOf(text, 'ruPerSec: 10')}): unknown field`,
      `in.yaml: document 2: spec.burstible (line ${lineOf(text, 'burstible: true')}): unknown field; did you mean burstable?`,
      `in.yaml: document 2: spec.priority (line ${lineOf(text, 'priority: URGENT')}): expected one of LOW, MEDIUM, HIGH, got "URGENT"`,
    ]);
  });

  test('a name TiDB would refuse, a bad duration, dropping the default group', () => {
    const text = yamlOf([
      loginCluster(),
      resourceGroup('rg', { name: 'x'.repeat(33) }),
      resourceGroup('rg2', { queryLimit: { execElapsed: '60 seconds', action: 'KILL' } }),
      resourceGroup('rg3', { name: 'Default', deletionPolicy: 'Delete' }),
    ]);
    const errors = errorsOf(text);
    expect(errors[0]).toBe(
      `in.yaml: document 2: spec.name (line ${lineOf(text, 'name: xxx')}): invalid resource group name "${'x'.repeat(33)}": expected at most 32 letters, digits and '_'`,
    );
    expect(errors[1]).toContain('document 3: spec.queryLimit.execElapsed');
    expect(errors[1]).toContain('invalid duration "60 seconds": expected a duration of at least 1ms such as 500ms, 60s, 10m or 1h30m');
    expect(errors[2]).toContain('document 4: spec.deletionPolicy');
    expect(errors[2]).toContain('the default resource group is never dropped');
  });

  test('a group named twice (names compared without case)', () => {
    const errors = errorsOf([loginCluster(), resourceGroup('a', { name: 'rg' }), resourceGroup('b', { name: 'RG' })]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain('document 3: spec.name');
    expect(errors[0]).toContain('the resource group rg is already declared by the ResourceGroup "a" at in.yaml: document 2');
  });

  test('before the release that has it: a group before v7.1, a rule before v7.2, a watch of PLAN or without a duration before v7.3', () => {
    const at = (version: string, spec: Record<string, unknown> = {}) => errorsOf([olderCluster(version), resourceGroup('rg', spec)]);
    expect(at('v6.5.12')[0]).toMatch(
      /document 2: kind \(line \d+\): resource groups come with TiDB v7\.1, and TidbCluster ns\/demo runs pingcap\/tidb:v6\.5\.12: leave the ResourceGroup out, or upgrade the cluster first$/,
    );
    const limit = { execElapsed: '60s', action: 'KILL' };
    expect(at('v7.1.6', { queryLimit: limit })[0]).toContain('spec.queryLimit (line');
    expect(at('v7.1.6', { queryLimit: limit })[0]).toContain('runaway-query rules (QUERY_LIMIT) come with TiDB v7.2');
    expect(at('v7.2.0', { queryLimit: { ...limit, watch: { type: 'EXACT' } } })[0]).toContain('spec.queryLimit.watch (line');
    expect(at('v7.2.0', { queryLimit: { ...limit, watch: { type: 'PLAN', duration: '1m' } } })[0]).toContain(
      'a watch of type PLAN comes with TiDB v7.3',
    );
    expect(
      read([olderCluster('v7.2.0'), resourceGroup('rg', { queryLimit: { ...limit, watch: { type: 'SIMILAR', duration: '1m' } } })]).errors,
    ).toEqual([]);
    expect(read([olderCluster('v7.3.0'), resourceGroup('rg', { queryLimit: { ...limit, watch: { type: 'EXACT' } } })]).errors).toEqual([]);
    expect(read([olderCluster('v7.1.0'), resourceGroup('rg')]).errors).toEqual([]);
  });

  test('a cluster that is not in the input', () => {
    const errors = errorsOf([loginCluster(), resourceGroup('rg', { cluster: { name: 'other' } })]);
    expect(errors[0]).toContain('spec.cluster.name');
    expect(errors[0]).toContain(
      'no TidbCluster "other" in namespace ns in the input (have: ns/demo); a ResourceGroup is kept by its cluster\'s controller',
    );
  });
});

describe('durations as TiDB reads and shows them', () => {
  test('parsed as Go parses them, shown as Go writes them', () => {
    expect(parseDurationMs('1m30s')).toBe(90_000);
    expect(parseDurationMs('1.5h')).toBe(5_400_000);
    expect(parseDurationMs('0s')).toBeUndefined();
    expect(parseDurationMs('60')).toBeUndefined();
    expect(goDuration(60_000)).toBe('1m0s');
    expect(goDuration(500)).toBe('500ms');
    expect(goDuration(1500)).toBe('1.5s');
    expect(goDuration(3_600_000)).toBe('1h0m0s');
    expect(goDuration(5_400_000)).toBe('1h30m0s');
  });

  test('property: what Go writes reads back to the same milliseconds', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 7 * 24 * 3_600_000 }), (ms) => {
        expect(parseDurationMs(goDuration(ms))).toBe(ms);
      }),
    );
  });
});
