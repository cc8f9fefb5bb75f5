/**
 * The resource groups and TiCDC changefeeds a change adds, changes and removes (ResourceGroup and
 * Changefeed documents), and their risks: a resource group lowered (less RU, a lower priority, no
 * longer burstable) or dropped; a changefeed removed, re-pointed to another sink, or paused. Read from
 * what the controller is told (its cluster JSON), which is all that decides what it does.
 */
import { type ChangefeedInfo, PRIORITIES, type ResourceGroupInfo } from '../tidbcluster/contract';
import { controllerInfoOf } from './controller-info';
import type { ClusterModel } from './model';
import { type DatabaseChange, RISK, type Risk } from './report';
import { deepEqual } from './values';

function pairs<T>(was: readonly T[], now: readonly T[], key: (t: T) => string) {
  const a = new Map(was.map((t) => [key(t), t]));
  const b = new Map(now.map((t) => [key(t), t]));
  return [...new Set([...a.keys(), ...b.keys()])].sort().map((k) => ({ key: k, old: a.get(k), neu: b.get(k) }));
}

const groupsOf = (c: ClusterModel | undefined) => controllerInfoOf(c)?.sql?.resourceGroups ?? [];
const feedsOf = (c: ClusterModel | undefined) => controllerInfoOf(c)?.changefeeds?.feeds ?? [];

const GROUP_FIELDS: [string, (g: ResourceGroupInfo) => unknown][] = [
  ['ruPerSecond', (g) => g.ruPerSecond],
  ['priority', (g) => g.priority ?? 'MEDIUM'],
  ['burstable', (g) => g.burstable ?? false],
  ['queryLimit', (g) => g.queryLimit],
  ['deletionPolicy', (g) => g.deletionPolicy ?? 'Retain'],
  ['drift', (g) => g.drift ?? 'report'],
];
const FEED_FIELDS: [string, (f: ChangefeedInfo) => unknown][] = [
  ['sinkURI', (f) => f.sinkUri],
  ['sinkCredentials', (f) => f.credentials],
  ['targetTs', (f) => f.targetTs],
  ['paused', (f) => f.paused ?? false],
  ['replicaConfig', (f) => f.replicaConfig],
  ['startTs', (f) => f.startTs],
  ['deletionPolicy', (f) => f.deletionPolicy ?? 'Retain'],
];

function changes<T extends { document: string }>(
  kind: DatabaseChange['kind'],
  list: { key: string; old?: T; neu?: T }[],
  fields: [string, (t: T) => unknown][],
  removed: (old: T) => string,
): DatabaseChange[] {
  return list.flatMap(({ key, old, neu }): DatabaseChange[] => {
    const base = { kind, document: (neu ?? old)!.document, name: key };
    if (!old) return [{ ...base, change: 'added' }];
    if (!neu) return [{ ...base, change: 'removed', note: removed(old) }];
    const differ = fields.filter(([, get]) => !deepEqual(get(old), get(neu))).map(([name]) => name);
    return differ.length > 0 ? [{ ...base, change: 'changed', fields: differ }] : [];
  });
}

/** Each resource group and changefeed added, changed or removed. */
export function databaseChanges(before: ClusterModel | undefined, after: ClusterModel | undefined): DatabaseChange[] {
  // A cluster removed takes its database and TiCDC with it: what is in them is no news.
  if (!after) return [];
  return [
    ...changes(
      'ResourceGroup',
      pairs(groupsOf(before), groupsOf(after), (g) => g.name),
      GROUP_FIELDS,
      (g) =>
        (g.deletionPolicy ?? 'Retain') === 'Delete'
          ? 'dropped from the database (deletionPolicy Delete)'
          : 'kept in the database (deletionPolicy Retain): the controller no longer manages it',
    ),
    ...changes(
      'Changefeed',
      pairs(feedsOf(before), feedsOf(after), (f) => f.id),
      FEED_FIELDS,
      (f) =>
        (f.deletionPolicy ?? 'Retain') === 'Delete'
          ? 'removed from TiCDC (deletionPolicy Delete)'
          : 'kept in TiCDC (deletionPolicy Retain): it keeps replicating, and the controller no longer manages it',
    ),
  ];
}

/** Where a sink URI points: its scheme, host and path, without query or credentials. */
const target = (uri: string) => uri.replace(/^([a-z][a-z0-9+.-]*:\/\/)(?:[^@/?#]*@)?/i, '$1').replace(/[?#].*$/, '');

/** The risks of the change to the cluster's resource groups and changefeeds. */
export function databaseRisks(before: ClusterModel | undefined, after: ClusterModel | undefined): Risk[] {
  if (!after) return [];
  const out: Risk[] = [];
  for (const { key, old, neu } of pairs(groupsOf(before), groupsOf(after), (g) => g.name)) {
    if (!old) continue;
    const what = `ResourceGroup ${old.document} (${key})`;
    if (!neu) {
      if (old.deletionPolicy === 'Delete')
        out.push({
          id: RISK.resourceGroupLowered,
          component: 'sql',
          message: `${what} leaves Git with deletionPolicy Delete: the controller drops the group, and its sessions fall back to the default group.`,
        });
      continue;
    }
    const lower: string[] = [];
    if (neu.ruPerSecond < old.ruPerSecond) lower.push(`RU_PER_SEC ${old.ruPerSecond} → ${neu.ruPerSecond}`);
    const rank = (g: ResourceGroupInfo) => PRIORITIES.indexOf(g.priority ?? 'MEDIUM');
    if (rank(neu) < rank(old)) lower.push(`PRIORITY ${old.priority ?? 'MEDIUM'} → ${neu.priority ?? 'MEDIUM'}`);
    if (old.burstable && !neu.burstable) lower.push('no longer BURSTABLE');
    if (lower.length > 0)
      out.push({
        id: RISK.resourceGroupLowered,
        component: 'sql',
        message: `${what} is lowered (${lower.join(', ')}): its sessions get less of the cluster once the controller alters it.`,
      });
  }
  for (const { key, old, neu } of pairs(feedsOf(before), feedsOf(after), (f) => f.id)) {
    if (!old) continue;
    const what = `Changefeed ${old.document} (${key})`;
    if (!neu) {
      if (old.deletionPolicy === 'Delete')
        out.push({
          id: RISK.changefeedRemoved,
          component: 'ticdc',
          message: `${what} leaves Git with deletionPolicy Delete: the controller removes it from TiCDC, and ${target(old.sinkUri)} gets no more changes.`,
        });
      continue;
    }
    if (target(old.sinkUri) !== target(neu.sinkUri))
      out.push({
        id: RISK.changefeedRepointed,
        component: 'ticdc',
        message: `${what} is re-pointed from ${target(old.sinkUri)} to ${target(neu.sinkUri)}: the controller pauses, updates and resumes it, and the new sink gets changes from its checkpoint on, not the data already there.`,
      });
    if (!old.paused && neu.paused)
      out.push({
        id: RISK.changefeedPaused,
        component: 'ticdc',
        message: `${what} is paused: ${target(neu.sinkUri)} falls behind, and if the pause outlasts TiDB's GC life time the changefeed cannot resume.`,
      });
  }
  return out;
}
