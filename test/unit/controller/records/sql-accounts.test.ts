/**
 * The records of the managed SQL accounts, read back from a status document: what was written comes
 * back, anything malformed is dropped rather than trusted, and nothing in them is a password.
 */
import { sqlAccountsOf, type SqlAccountRecord } from '../../../../src/controller/records/sql-accounts';

const app: SqlAccountRecord = {
  kind: 'SqlUser',
  document: 'app',
  deletionPolicy: 'Delete',
  secretVersion: 'uid-1/42',
  applied: {
    grants: [{ privileges: ['SELECT'], database: 'app', withGrantOption: true }],
    roles: [{ user: 'reader', host: '%' }],
    require: 'SSL',
    locked: true,
    resourceGroup: 'rg1',
  },
};

describe('sqlAccountsOf', () => {
  test('reads back what was written', () => {
    const role: SqlAccountRecord = { kind: 'SqlRole', document: 'reader', deletionPolicy: 'Retain', retained: true };
    const doc = JSON.parse(JSON.stringify({ sqlAccountRecords: { "'app'@'%'": app, "'reader'@'%'": role } }));
    expect(sqlAccountsOf(doc)).toEqual({ "'app'@'%'": app, "'reader'@'%'": role });
  });

  test('drops what it cannot trust: an unknown kind or policy; an applied state that is not one', () => {
    expect(
      sqlAccountsOf({
        sqlAccountRecords: {
          a: { ...app, kind: 'Table' },
          b: { ...app, deletionPolicy: 'Orphan' },
          c: { ...app, applied: { grants: 'SELECT', roles: [] } },
          d: { kind: 'SqlRole', document: 'd', deletionPolicy: 'Retain', password: 'never-kept' },
        },
      }),
    ).toEqual({
      c: { kind: 'SqlUser', document: 'app', deletionPolicy: 'Delete', secretVersion: 'uid-1/42' },
      d: { kind: 'SqlRole', document: 'd', deletionPolicy: 'Retain' },
    });
    expect(sqlAccountsOf(undefined)).toEqual({});
    expect(sqlAccountsOf({ sqlAccountRecords: 'x' })).toEqual({});
  });
});
