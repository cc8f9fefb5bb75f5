/**
 * The SQL accounts a change adds, changes and removes (SqlUser and SqlRole documents), and their
 * risks: an account dropped (its document leaves Git with `deletionPolicy: Delete`), a privilege
 * revoked (a grant removed or narrowed, a grant option taken), a role taken away, a user locked.
 * Read from what the controller is told (`sql` of its cluster JSON), which is all that decides what it
 * does; an account whose document leaves Git with `Retain` stays in the database, which a note says.
 */
import { accountName, type SqlAccountInfo, type SqlGrantInfo } from '../tidbcluster/contract';
import { controllerInfoOf } from './controller-info';
import type { ClusterModel } from './model';
import { RISK, type AccountChange, type Risk } from './report';
import { deepEqual } from './values';

/** The accounts in the controller Deployment's cluster JSON, by `'user'@'host'`, roles first. */
function accountsOf(cluster: ClusterModel | undefined): Map<string, SqlAccountInfo> {
  return new Map((controllerInfoOf(cluster)?.sql?.accounts ?? []).map((a) => [accountName(a), a]));
}

/** Every account on either side, in the order the controller keeps them (roles first). */
function pairs(before: ClusterModel | undefined, after: ClusterModel | undefined) {
  const was = accountsOf(before);
  const now = accountsOf(after);
  const names = [...new Set([...was.keys(), ...now.keys()])];
  const kind = (n: string) => (now.get(n) ?? was.get(n))!.kind;
  names.sort((a, b) => (kind(a) === kind(b) ? (a < b ? -1 : a > b ? 1 : 0) : kind(a) === 'SqlRole' ? -1 : 1));
  return names.map((name) => ({ name, old: was.get(name), neu: now.get(name) }));
}

/** The fields of an account that differ, in a reader's words. */
function changedFields(old: SqlAccountInfo, neu: SqlAccountInfo): string[] {
  const fields: [string, (a: SqlAccountInfo) => unknown][] = [
    ['password Secret', (a) => a.password],
    ['require', (a) => a.require ?? 'NONE'],
    ['resourceGroup', (a) => a.resourceGroup],
    ['locked', (a) => a.locked ?? false],
    ['roles', (a) => a.roles ?? []],
    ['grants', (a) => a.grants ?? []],
    ['deletionPolicy', (a) => a.deletionPolicy ?? 'Retain'],
    ['drift', (a) => a.drift ?? 'report'],
    ['document', (a) => a.document],
  ];
  return fields.filter(([, get]) => !deepEqual(get(old), get(neu))).map(([name]) => name);
}

/** Each account added, changed or removed. */
export function accountChanges(before: ClusterModel | undefined, after: ClusterModel | undefined): AccountChange[] {
  const out: AccountChange[] = [];
  // A cluster removed takes its database with it: its accounts are no news.
  if (!after) return out;
  for (const { name, old, neu } of pairs(before, after)) {
    const a = (neu ?? old)!;
    const base = { kind: a.kind, document: a.document, account: name };
    if (!old) out.push({ ...base, change: 'added' });
    else if (!neu)
      out.push({
        ...base,
        change: 'removed',
        note:
          (old.deletionPolicy ?? 'Retain') === 'Delete'
            ? 'dropped from the database (deletionPolicy Delete)'
            : 'kept in the database (deletionPolicy Retain): the controller no longer manages it',
      });
    else {
      const fields = changedFields(old, neu);
      if (fields.length > 0) out.push({ ...base, change: 'changed', fields });
    }
  }
  return out;
}

/** The level a grant is on, as SQL writes it. */
const levelOf = (g: SqlGrantInfo) =>
  g.database === undefined ? '*.*' : `\`${g.database}\`.${g.table === undefined ? '*' : `\`${g.table}\``}`;

/** The privileges (and grant options) `old` has on a level that `neu` no longer has. */
function revoked(old: SqlAccountInfo, neu: SqlAccountInfo): string[] {
  const now = new Map((neu.grants ?? []).map((g) => [levelOf(g), g]));
  const out: string[] = [];
  for (const g of old.grants ?? []) {
    const level = levelOf(g);
    const kept = now.get(level);
    const gone = kept
      ? kept.privileges.includes('ALL PRIVILEGES')
        ? []
        : g.privileges.filter((p) => !kept.privileges.includes(p))
      : g.privileges;
    if (gone.length > 0) out.push(`${gone.join(', ')} on ${level}`);
    if (g.withGrantOption && kept && !kept.withGrantOption && gone.length < g.privileges.length) out.push(`the grant option on ${level}`);
  }
  return out;
}

/** The risks of the change to the cluster's accounts, in the order the controller keeps them. */
export function sqlAccountRisks(before: ClusterModel | undefined, after: ClusterModel | undefined): Risk[] {
  const out: Risk[] = [];
  if (!after) return out;
  for (const { name, old, neu } of pairs(before, after)) {
    if (!old) continue;
    const what = `${old.kind} ${old.document} (${name})`;
    if (!neu) {
      if (old.deletionPolicy === 'Delete')
        out.push({
          id: RISK.sqlAccountDropped,
          component: 'sql',
          message: `${what} leaves Git with deletionPolicy Delete: the controller drops the account${old.kind === 'SqlRole' ? ', and every account granted the role loses it' : ', and whoever logs in with it can no longer'}.`,
        });
      continue;
    }
    const gone = revoked(old, neu);
    if (gone.length > 0)
      out.push({
        id: RISK.sqlPrivilegeRevoked,
        component: 'sql',
        message: `${what} loses ${gone.join('; ')}: the controller revokes ${gone.length === 1 ? 'it' : 'them'}.`,
      });
    const roles = (old.roles ?? []).filter((r) => !(neu.roles ?? []).some((x) => x.user === r.user && x.host === r.host));
    if (roles.length > 0)
      out.push({
        id: RISK.sqlRoleRevoked,
        component: 'sql',
        message: `${what} loses the role${roles.length === 1 ? '' : 's'} ${roles.map(accountName).join(', ')} and what ${roles.length === 1 ? 'it grants' : 'they grant'}: the controller revokes ${roles.length === 1 ? 'it' : 'them'}.`,
      });
    if (!old.locked && neu.locked)
      out.push({ id: RISK.sqlUserLocked, component: 'sql', message: `${what} is locked (ACCOUNT LOCK): it can no longer log in.` });
  }
  return out;
}
