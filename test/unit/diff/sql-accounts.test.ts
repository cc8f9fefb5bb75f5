/**
 * The impact report lists each SqlUser and SqlRole added, changed and removed, and flags what takes
 * access away: an account dropped, a privilege revoked, a role taken away, a user locked; an account
 * whose document leaves Git with Retain stays in the database, which it notes.
 */
import { buildModel, compareModels, toMarkdown, type DiffReport, type KubeObject } from '../../../src/diff';
import { loadManifests } from '../../../src/diff/load';
import type { Obj } from '../../support/render';
import { loginCluster, renderAccounts, sqlRole, sqlUser, yamlOf } from '../../support/sql-accounts';

function diff(before: Obj[], after: Obj[]): DiffReport {
  return compareModels(buildModel(renderAccounts(before) as KubeObject[]), buildModel(renderAccounts(after) as KubeObject[]));
}
const risks = (r: DiffReport) => r.clusters[0].risks.filter((x) => x.component === 'sql').map((x) => `${x.id}: ${x.message}`);

const reader = sqlRole('reader', { grants: [{ privileges: ['SELECT'], level: 'app.*' }] });
const writer = sqlRole('writer', { grants: [{ privileges: ['INSERT'], level: 'app.*' }] });
const app = (spec: Obj = {}) =>
  sqlUser('app', {
    roles: [{ name: 'reader' }, { name: 'writer' }],
    grants: [
      { privileges: ['SELECT', 'INSERT', 'UPDATE'], level: 'app.t1', withGrantOption: true },
      { privileges: ['PROCESS'], level: '*.*' },
    ],
    ...spec,
  });
const BEFORE = [loginCluster(), reader, writer, app()];

describe('SQL accounts in the impact report', () => {
  test('an account added: listed, no risk', () => {
    const r = diff(BEFORE, [...BEFORE, sqlUser('report', { roles: [{ name: 'reader' }] })]);
    expect(r.clusters[0].accounts).toEqual([{ kind: 'SqlUser', document: 'report', account: "'report'@'%'", change: 'added' }]);
    expect(risks(r)).toEqual([]);
    expect(toMarkdown(r)).toContain("#### SQL accounts\n\n- SqlUser report (`'report'@'%'`): added");
  });

  test('a grant narrowed, a grant option taken, a level removed, a role taken away, a user locked', () => {
    const after = [
      loginCluster(),
      reader,
      writer,
      app({ roles: [{ name: 'reader' }], locked: true, grants: [{ privileges: ['SELECT', 'INSERT'], level: 'app.t1' }] }),
    ];
    const r = diff(BEFORE, after);
    expect(r.clusters[0].accounts).toEqual([
      { kind: 'SqlUser', document: 'app', account: "'app'@'%'", change: 'changed', fields: ['locked', 'roles', 'grants'] },
    ]);
    expect(risks(r)).toEqual([
      "sql-privilege-revoked: SqlUser app ('app'@'%') loses PROCESS on *.*; UPDATE on `app`.`t1`; the grant option on `app`.`t1`: the controller revokes them.",
      "sql-role-revoked: SqlUser app ('app'@'%') loses the role 'writer'@'%' and what it grants: the controller revokes it.",
      "sql-user-locked: SqlUser app ('app'@'%') is locked (ACCOUNT LOCK): it can no longer log in.",
    ]);
  });

  test('ALL PRIVILEGES keeps every privilege of its level; a password Secret changed is a change, not a risk', () => {
    const r = diff(BEFORE, [
      loginCluster(),
      reader,
      writer,
      app({
        passwordSecret: { name: 'app-password-2', key: 'password' },
        grants: [
          { privileges: ['ALL'], level: 'app.t1', withGrantOption: true },
          { privileges: ['PROCESS'], level: '*.*' },
        ],
      }),
    ]);
    expect(r.clusters[0].accounts?.[0].fields).toEqual(['password Secret', 'grants']);
    expect(risks(r)).toEqual([]);
  });

  test('a document removed: with Delete the account is dropped (a risk); with Retain it stays (a note)', () => {
    const kept = diff(BEFORE, [loginCluster(), reader, writer]);
    expect(kept.clusters[0].accounts).toEqual([
      {
        kind: 'SqlUser',
        document: 'app',
        account: "'app'@'%'",
        change: 'removed',
        note: 'kept in the database (deletionPolicy Retain): the controller no longer manages it',
      },
    ]);
    expect(risks(kept)).toEqual([]);
    const before = [loginCluster(), reader, sqlRole('writer', { deletionPolicy: 'Delete' }), app({ roles: [{ name: 'reader' }] })];
    const dropped = diff(before, [loginCluster(), reader, app({ roles: [{ name: 'reader' }] })]);
    expect(risks(dropped)).toEqual([
      "sql-account-dropped: SqlRole writer ('writer'@'%') leaves Git with deletionPolicy Delete: the controller drops the account, and every account granted the role loses it.",
    ]);
    expect(toMarkdown(dropped)).toContain("- SqlRole writer (`'writer'@'%'`): removed; dropped from the database (deletionPolicy Delete)");
  });

  test('read by diff as render reads them: the documents render with their cluster, never as objects of their own', () => {
    const loaded = loadManifests([{ file: 'in.yaml', text: yamlOf(BEFORE), explicit: true }]);
    expect(loaded.errors).toEqual([]);
    expect(loaded.objects.filter((o) => String(o.kind).startsWith('Sql'))).toEqual([]);
    const refused = loadManifests([
      {
        file: 'in.yaml',
        text: `${yamlOf(BEFORE)}---\napiVersion: tidb-gitops.io/v1alpha1\nkind: Changefeeds\nmetadata:\n  name: f\n`,
        explicit: true,
      },
    ]);
    expect(refused.errors.join('\n')).toContain('did you mean Changefeed?');
  });
});
