/**
 * Reading what servers say of accounts: TiDB's `SHOW GRANTS` and `SHOW CREATE USER` as pingcap/tidb
 * writes them (`pkg/privilege/privileges/cache.go` `showGrants`, `pkg/executor/show.go`
 * `fetchShowCreateUser`), and MariaDB's (10.11, Debian 12), each case named for its server.
 */
import { dialectOf, parseCreateUser, parseGrantLine, parseGrants, SqlAccountReader } from '../../../../src/controller/clients/sql-accounts';

describe('SHOW GRANTS, TiDB', () => {
  test('privileges joined by commas, per level; USAGE is none; the option per level', () => {
    expect(
      parseGrants([
        "GRANT USAGE ON *.* TO 'app'@'%'",
        "GRANT SELECT,INSERT ON `app`.* TO 'app'@'%' WITH GRANT OPTION",
        "GRANT CREATE VIEW,SHOW VIEW ON `app`.`orders` TO 'app'@'%'",
        "GRANT BACKUP_ADMIN,RESTORE_ADMIN ON *.* TO 'app'@'%'",
        "GRANT SYSTEM_VARIABLES_ADMIN ON *.* TO 'app'@'%' WITH GRANT OPTION",
        "GRANT 'r1'@'%', 'r2'@'localhost' TO 'app'@'%'",
      ]),
    ).toEqual({
      grants: [
        { privileges: ['BACKUP_ADMIN', 'RESTORE_ADMIN', 'SYSTEM_VARIABLES_ADMIN'], withGrantOption: true },
        { privileges: ['INSERT', 'SELECT'], database: 'app', withGrantOption: true },
        { privileges: ['CREATE VIEW', 'SHOW VIEW'], database: 'app', table: 'orders' },
      ],
      roles: [
        { user: 'r1', host: '%' },
        { user: 'r2', host: 'localhost' },
      ],
      unread: 0,
    });
  });

  test('ALL PRIVILEGES; older releases write names unquoted and capitalized; column grants are left unread', () => {
    expect(parseGrantLine("GRANT ALL PRIVILEGES ON *.* TO 'root'@'%' WITH GRANT OPTION")).toEqual({
      kind: 'privileges',
      grant: { privileges: ['ALL PRIVILEGES'], withGrantOption: true },
    });
    expect(parseGrantLine("GRANT Select,Insert ON app.t1 TO 'u'@'%'")).toEqual({
      kind: 'privileges',
      grant: { privileges: ['INSERT', 'SELECT'], database: 'app', table: 't1' },
    });
    expect(parseGrantLine("GRANT SELECT(id, name) ON `app`.`t` TO 'u'@'%'")).toEqual({ kind: 'other' });
    expect(parseGrantLine("GRANT SELECT ON `we``ird`.`a.b` TO 'u'@'%'")).toEqual({
      kind: 'privileges',
      grant: { privileges: ['SELECT'], database: 'we`ird', table: 'a.b' },
    });
  });

  test("SHOW CREATE USER: REQUIRE and ACCOUNT; the password's hash never reads as either", () => {
    expect(
      parseCreateUser(
        "CREATE USER 'app'@'%' IDENTIFIED WITH 'mysql_native_password' AS '*6BB4837EB74329105EE4568DDA7DC67ED2CA2AD9' REQUIRE SSL PASSWORD EXPIRE DEFAULT ACCOUNT LOCK PASSWORD HISTORY DEFAULT PASSWORD REUSE INTERVAL DEFAULT",
      ),
    ).toEqual({ require: 'SSL', locked: true });
    expect(
      parseCreateUser(
        "CREATE USER 'app'@'%' IDENTIFIED WITH 'caching_sha2_password' AS '$A$005$ REQUIRE X509 ACCOUNT LOCK x' REQUIRE NONE PASSWORD EXPIRE DEFAULT ACCOUNT UNLOCK PASSWORD HISTORY DEFAULT PASSWORD REUSE INTERVAL DEFAULT",
      ),
    ).toEqual({ require: 'NONE', locked: false });
  });

  test('the dialect by the server version', () => {
    expect(dialectOf('8.0.11-TiDB-v8.5.0')).toBe('tidb');
    expect(dialectOf('10.11.6-MariaDB-0+deb12u1')).toBe('mariadb');
  });
});

describe('SHOW GRANTS, MariaDB', () => {
  test('names in backquotes, privileges joined by ", ", the hash in the USAGE line, roles without a host', () => {
    expect(
      parseGrants([
        "GRANT USAGE ON *.* TO `app`@`%` IDENTIFIED BY PASSWORD '*WITH GRANT OPTION'",
        'GRANT SELECT, INSERT ON `app`.* TO `app`@`%`',
        'GRANT DELETE ON `app`.`orders` TO `app`@`%` WITH GRANT OPTION',
        'GRANT `reader` TO `app`@`%`',
        "GRANT PROXY ON ''@'%' TO 'root'@'%' WITH GRANT OPTION",
      ]),
    ).toEqual({
      grants: [
        { privileges: ['INSERT', 'SELECT'], database: 'app' },
        { privileges: ['DELETE'], database: 'app', table: 'orders', withGrantOption: true },
      ],
      roles: [{ user: 'reader', host: '%' }],
      unread: 1,
    });
    expect(parseGrants(['GRANT USAGE ON *.* TO `reader`', 'GRANT SELECT ON `app`.* TO `reader`'])).toEqual({
      grants: [{ privileges: ['SELECT'], database: 'app' }],
      roles: [],
      unread: 0,
    });
  });

  test('SHOW CREATE USER: REQUIRE and ACCOUNT LOCK only when set', () => {
    expect(parseCreateUser("CREATE USER `app`@`%` IDENTIFIED BY PASSWORD '*6BB4837EB74329105EE4568DDA7DC67ED2CA2AD9'")).toEqual({
      require: 'NONE',
      locked: false,
    });
    expect(parseCreateUser("CREATE USER `app`@`%` IDENTIFIED BY PASSWORD '*6BB4' REQUIRE X509 ACCOUNT LOCK")).toEqual({
      require: 'X509',
      locked: true,
    });
  });
});

describe('SqlAccountReader', () => {
  const conn = (answers: Record<string, string[][]>) => {
    const asked: string[] = [];
    return {
      asked,
      query: async (sql: string) => {
        asked.push(sql);
        const key = Object.keys(answers).find((k) => sql.startsWith(k));
        if (!key) throw new Error(`unexpected ${sql}`);
        return { columns: [], rows: answers[key], affectedRows: 0 };
      },
    };
  };

  test("TiDB: an account's options, resource group and grants; nothing of its password kept", async () => {
    const c = conn({
      'SHOW GRANTS': [["GRANT SELECT ON `app`.* TO 'app'@'%'"], ["GRANT 'r'@'%' TO 'app'@'%'"]],
      'SHOW CREATE USER': [
        ["CREATE USER 'app'@'%' IDENTIFIED WITH 'mysql_native_password' AS '*HASH' REQUIRE NONE PASSWORD EXPIRE DEFAULT ACCOUNT UNLOCK"],
      ],
      SELECT: [['rg1']],
    });
    const a = await new SqlAccountReader(c, 'tidb', false).account({ user: 'app', host: '%' }, false);
    expect(a).toEqual({
      user: 'app',
      host: '%',
      require: 'NONE',
      locked: false,
      resourceGroup: 'rg1',
      grants: [{ privileges: ['SELECT'], database: 'app' }],
      roles: [{ user: 'r', host: '%' }],
      unread: 0,
    });
    expect(JSON.stringify(a)).not.toContain('HASH');
    expect(c.asked[0]).toBe("SHOW GRANTS FOR 'app'@'%'");
  });

  test("MariaDB: the accounts, its roles (host '') with host %; a role's grants alone, by its name", async () => {
    const c = conn({
      'SELECT User, Host': [
        ['root', '%'],
        ['reader', ''],
        ['app', '%'],
      ],
      'SHOW GRANTS FOR `reader`': [['GRANT SELECT ON `app`.* TO `reader`']],
    });
    const r = new SqlAccountReader(c, 'mariadb', false);
    expect(await r.accounts()).toEqual([
      { user: 'app', host: '%' },
      { user: 'reader', host: '%' },
      { user: 'root', host: '%' },
    ]);
    expect((await r.account({ user: 'reader', host: '%' }, true)).grants).toEqual([{ privileges: ['SELECT'], database: 'app' }]);
  });
});
