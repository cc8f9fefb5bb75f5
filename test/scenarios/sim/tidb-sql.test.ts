/**
 * The TiDB SQL simulator (test/sim/tidb-sql.ts) through the controller's own MySQL client: per release
 * (v7.1, v7.5, v8.1, v8.5 and the post-v8.5 master line), logging in, the version and sql_mode, the
 * resource-group statements each release parses or refuses, TiDB's errors, and the formats of
 * `information_schema.resource_groups`.
 */
import { connectMysql, MysqlError, type MysqlConnection } from '../../../src/controller/clients/mysql';
import { goDuration, parseGoDuration } from '../../sim/tidb-rg-grammar';
import { TIDB_DEFAULT_SQL_MODE, TidbSqlSim } from '../../sim/tidb-sql';

const PASSWORD = 'root-pw';
/** The statement the controller reads the groups with. */
const READ_GROUPS = 'SELECT NAME, RU_PER_SEC, PRIORITY, BURSTABLE, QUERY_LIMIT FROM information_schema.resource_groups';
const SYNTAX = 'You have an error in your SQL syntax; check the manual that corresponds to your TiDB version for the right syntax to use';

const sims: TidbSqlSim[] = [];
const conns: MysqlConnection[] = [];

afterEach(async () => {
  await Promise.all(conns.splice(0).map((c) => c.close()));
  await Promise.all(sims.splice(0).map((s) => s.stop()));
});

async function tidb(version: string): Promise<{ sim: TidbSqlSim; c: MysqlConnection; port: number }> {
  const sim = new TidbSqlSim({ version, rootPassword: PASSWORD });
  sims.push(sim);
  const port = await sim.start();
  const c = await connectMysql({ host: '127.0.0.1', port, user: 'root', password: PASSWORD });
  conns.push(c);
  return { sim, c, port };
}

/** The error `sql` is refused with. */
async function refusal(c: MysqlConnection, sql: string): Promise<{ code: number; sqlState: string; message: string }> {
  const err = await c.query(sql).then(
    () => new Error(`expected a refusal of ${sql}`),
    (e: unknown) => e,
  );
  if (!(err instanceof MysqlError)) throw err;
  return { code: err.code, sqlState: err.sqlState, message: err.message };
}

const rows = async (c: MysqlConnection, sql: string) => (await c.query(sql)).rows;

const RELEASES = [
  { version: 'v7.1.5', prefix: '5.7.25', queryLimitColumn: false, yes: 'YES', no: 'NO' },
  { version: 'v7.5.4', prefix: '8.0.11', queryLimitColumn: true, yes: 'YES', no: 'NO' },
  { version: 'v8.1.2', prefix: '8.0.11', queryLimitColumn: true, yes: 'YES', no: 'NO' },
  { version: 'v8.5.1', prefix: '8.0.11', queryLimitColumn: true, yes: 'YES', no: 'NO' },
  { version: 'v9.0.0', prefix: '8.0.11', queryLimitColumn: true, yes: 'UNLIMITED', no: 'OFF' },
];

describe.each(RELEASES)('TiDB $version', ({ version, prefix, queryLimitColumn, yes, no }) => {
  test('logs root in with its password and answers the version and the default sql_mode', async () => {
    const { sim, c, port } = await tidb(version);
    expect(c.serverVersion).toBe(`${prefix}-TiDB-${version}`);
    expect(await c.query('SELECT VERSION()')).toEqual({ columns: ['VERSION()'], rows: [[`${prefix}-TiDB-${version}`]], affectedRows: 0 });
    expect(await rows(c, 'SELECT @@version')).toEqual([[sim.serverVersion]]);
    expect(await rows(c, 'SELECT @@SESSION.sql_mode')).toEqual([[TIDB_DEFAULT_SQL_MODE]]);
    const wrong = await connectMysql({ host: '127.0.0.1', port, user: 'root', password: 'nope' }).catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(MysqlError);
    expect([(wrong as MysqlError).code, (wrong as MysqlError).sqlState]).toEqual([1045, '28000']);
    expect((wrong as MysqlError).message).toBe("Access denied for user 'root'@'127.0.0.1' (using password: YES)");
  });

  test('the default group is there from the start; QUERY_LIMIT is a column from v7.2 on', async () => {
    const { c } = await tidb(version);
    if (!queryLimitColumn) {
      expect(await refusal(c, READ_GROUPS)).toEqual({
        code: 1054,
        sqlState: '42S22',
        message: "Unknown column 'QUERY_LIMIT' in 'field list'",
      });
      expect(await rows(c, 'SELECT NAME, RU_PER_SEC, PRIORITY, BURSTABLE FROM information_schema.resource_groups')).toEqual([
        ['default', 'UNLIMITED', 'MEDIUM', 'YES'],
      ]);
      return;
    }
    expect(await c.query(READ_GROUPS)).toEqual({
      columns: ['NAME', 'RU_PER_SEC', 'PRIORITY', 'BURSTABLE', 'QUERY_LIMIT'],
      rows: [['default', 'UNLIMITED', 'MEDIUM', yes, null]],
      affectedRows: 0,
    });
  });

  test('create, alter (the options not named are kept), drop; names are case-insensitive and shown lower-case', async () => {
    const { sim, c } = await tidb(version);
    const read = 'SELECT NAME, RU_PER_SEC, PRIORITY, BURSTABLE FROM information_schema.resource_groups';
    await c.query('CREATE RESOURCE GROUP App_1 RU_PER_SEC = 1000, PRIORITY = HIGH BURSTABLE');
    const bare = version === 'v9.0.0' ? 'MODERATED' : 'YES';
    expect(await rows(c, read)).toEqual([
      ['app_1', '1000', 'HIGH', bare],
      ['default', 'UNLIMITED', 'MEDIUM', yes],
    ]);
    await c.query('ALTER RESOURCE GROUP app_1 RU_PER_SEC = 2000');
    expect((await rows(c, read))[0]).toEqual(['app_1', '2000', 'HIGH', bare]);
    await c.query('CREATE RESOURCE GROUP IF NOT EXISTS APP_1 RU_PER_SEC = 5');
    expect((await rows(c, read))[0]).toEqual(['app_1', '2000', 'HIGH', bare]);
    await c.query('CREATE RESOURCE GROUP batch RU_PER_SEC 300');
    expect(sim.groups().map((g) => [g.name, g.ruPerSec, g.priority, g.burstable])).toEqual([
      ['app_1', '2000', 'HIGH', bare],
      ['batch', '300', 'MEDIUM', no],
      ['default', 'UNLIMITED', 'MEDIUM', yes],
    ]);
    expect((await c.query('DROP RESOURCE GROUP App_1')).affectedRows).toBe(0);
    await c.query('DROP RESOURCE GROUP IF EXISTS app_1');
    await c.query('ALTER RESOURCE GROUP IF EXISTS app_1 RU_PER_SEC = 1');
    expect(sim.groups().map((g) => g.name)).toEqual(['batch', 'default']);
    expect(sim.statements).toHaveLength(10);
    expect(sim.statements[0]).toBe('CREATE RESOURCE GROUP App_1 RU_PER_SEC = 1000, PRIORITY = HIGH BURSTABLE');
  });

  test("TiDB's errors: exists, unknown, the reserved group, name length, no RU, resource control off, anything else", async () => {
    const { sim, c } = await tidb(version);
    await c.query('CREATE RESOURCE GROUP rg1 RU_PER_SEC = 100');
    expect(await refusal(c, 'CREATE RESOURCE GROUP RG1 RU_PER_SEC = 200')).toEqual({
      code: 8248,
      sqlState: 'HY000',
      message: "Resource group 'RG1' already exists",
    });
    const unknown = { code: 8249, sqlState: 'HY000', message: "Unknown resource group 'nope'" };
    expect(await refusal(c, 'ALTER RESOURCE GROUP nope RU_PER_SEC = 1')).toEqual(unknown);
    expect(await refusal(c, 'DROP RESOURCE GROUP nope')).toEqual(unknown);
    const reserved = { code: 1105, sqlState: 'HY000', message: "can't drop reserved resource group" };
    expect(await refusal(c, 'DROP RESOURCE GROUP `default`')).toEqual(reserved);
    expect(await refusal(c, 'DROP RESOURCE GROUP IF EXISTS `DEFAULT`')).toEqual(reserved);
    expect((await refusal(c, `CREATE RESOURCE GROUP ${'g'.repeat(33)} RU_PER_SEC = 1`)).message).toBe('resource group name too long');
    await c.query(`CREATE RESOURCE GROUP ${'g'.repeat(32)} RU_PER_SEC = 1`);
    expect(await refusal(c, 'CREATE RESOURCE GROUP rg2 PRIORITY = LOW')).toEqual({
      code: 1105,
      sqlState: 'HY000',
      message: 'unknown resource group mode',
    });
    expect((await refusal(c, 'ALTER RESOURCE GROUP rg1 RU_PER_SEC = 0')).message).toBe('unknown resource group mode');
    expect(await refusal(c, 'SHOW CREATE RESOURCE GROUP rg1')).toEqual({
      code: 1105,
      sqlState: 'HY000',
      message: 'statement not simulated: SHOW CREATE RESOURCE GROUP rg1',
    });
    await c.query("SET GLOBAL tidb_enable_resource_control = 'off'");
    expect(await refusal(c, 'CREATE RESOURCE GROUP rg3 RU_PER_SEC = 1')).toEqual({
      code: 8250,
      sqlState: 'HY000',
      message: "Resource control feature is disabled. Run `SET GLOBAL tidb_enable_resource_control='on'` to enable the feature",
    });
    expect((await refusal(c, 'DROP RESOURCE GROUP rg1')).code).toBe(8250);
    expect(sim.groups().map((g) => g.name)).toEqual(['default', 'g'.repeat(32), 'rg1']);
  });

  test('a group changed or dropped by hand shows in the table, and is not among the statements', async () => {
    const { sim, c } = await tidb(version);
    await c.query('CREATE RESOURCE GROUP rg RU_PER_SEC = 100');
    sim.alterByHand('rg', 'RU_PER_SEC = 50, PRIORITY = LOW');
    expect(await rows(c, "SELECT NAME, RU_PER_SEC, PRIORITY FROM information_schema.resource_groups WHERE NAME = 'rg'")).toEqual([
      ['rg', '50', 'LOW'],
    ]);
    expect(() => sim.alterByHand('gone', 'RU_PER_SEC = 1')).toThrow("8249: Unknown resource group 'gone'");
    sim.dropByHand('rg');
    expect(sim.groups().map((g) => g.name)).toEqual(['default']);
    expect(sim.statements).toEqual(['CREATE RESOURCE GROUP rg RU_PER_SEC = 100', expect.stringMatching(/^SELECT NAME/)]);
  });
});

describe('the grammar per release', () => {
  /** What `sql` gets from each release: 'ok' or the 1064 text after the prefix. */
  async function across(sql: string): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    for (const { version } of RELEASES) {
      const { c } = await tidb(version);
      out[version] = await c.query(sql).then(
        () => 'ok',
        (e: MysqlError) =>
          e.code === 1064 && e.sqlState === '42000' && e.message.startsWith(`${SYNTAX} `)
            ? e.message.slice(SYNTAX.length + 1)
            : `${e.code} ${e.message}`,
      );
    }
    return out;
  }

  test('BURSTABLE = TRUE: v7.2 to v8.5 only; BURSTABLE = MODERATED|UNLIMITED|OFF and RU_PER_SEC = UNLIMITED: master only', async () => {
    expect(await across('CREATE RESOURCE GROUP rg RU_PER_SEC = 100 BURSTABLE = TRUE')).toEqual({
      'v7.1.5': 'line 1 column 53 near "= TRUE" ',
      'v7.5.4': 'ok',
      'v8.1.2': 'ok',
      'v8.5.1': 'ok',
      'v9.0.0': 'line 1 column 58 near "TRUE" ',
    });
    const modes = await across('CREATE RESOURCE GROUP rg RU_PER_SEC = UNLIMITED, BURSTABLE = OFF');
    expect(modes['v9.0.0']).toBe('ok');
    for (const v of ['v7.1.5', 'v7.5.4', 'v8.1.2', 'v8.5.1']) expect(modes[v]).toBe('line 1 column 47 near "UNLIMITED, BURSTABLE = OFF" ');
  });

  test('QUERY_LIMIT from v7.2; PROCESSED_KEYS, RU and SWITCH_GROUP from v8.4; duplicated options', async () => {
    const ql = await across("CREATE RESOURCE GROUP rg RU_PER_SEC = 1 QUERY_LIMIT = (EXEC_ELAPSED = '60s', ACTION = KILL)");
    expect(ql).toEqual({
      'v7.1.5': `line 1 column 51 near "QUERY_LIMIT = (EXEC_ELAPSED = '60s', ACTION = KILL)" `,
      'v7.5.4': 'ok',
      'v8.1.2': 'ok',
      'v8.5.1': 'ok',
      'v9.0.0': 'ok',
    });
    const keys = await across('CREATE RESOURCE GROUP rg RU_PER_SEC = 1 QUERY_LIMIT = (PROCESSED_KEYS = 100, ACTION = KILL)');
    expect(keys['v8.1.2']).toBe('line 1 column 69 near "PROCESSED_KEYS = 100, ACTION = KILL)" ');
    expect(keys['v9.0.0']).toBe('ok');
    expect((await across('CREATE RESOURCE GROUP rg RU_PER_SEC = 1, PRIORITY = LOW, PRIORITY = HIGH'))['v8.5.1']).toBe(
      'line 1 column 72 near ""Dupliated options specified ',
    );
  });

  test('an unquoted DEFAULT names the reserved group from v7.5 on; v7.1 takes it backquoted only', async () => {
    expect(await across('ALTER RESOURCE GROUP default PRIORITY = LOW')).toEqual({
      'v7.1.5': 'line 1 column 28 near "default PRIORITY = LOW" ',
      'v7.5.4': 'ok',
      'v8.1.2': 'ok',
      'v8.5.1': 'ok',
      'v9.0.0': 'ok',
    });
    expect(Object.values(await across('ALTER RESOURCE GROUP `default` PRIORITY = LOW'))).toEqual(['ok', 'ok', 'ok', 'ok', 'ok']);
  });

  test('QUERY_LIMIT as the table shows it, with Go durations; NULL and () remove it', async () => {
    const { sim, c } = await tidb('v8.5.1');
    await c.query(
      "CREATE RESOURCE GROUP rg RU_PER_SEC = 10 QUERY_LIMIT = (EXEC_ELAPSED = '90s' ACTION = COOLDOWN, WATCH = SIMILAR DURATION = '10m')",
    );
    expect((await rows(c, READ_GROUPS))[1]).toEqual([
      'rg',
      '10',
      'MEDIUM',
      'NO',
      "EXEC_ELAPSED='1m30s', ACTION=COOLDOWN, WATCH=SIMILAR DURATION='10m0s'",
    ]);
    await c.query("ALTER RESOURCE GROUP rg QUERY_LIMIT = (EXEC_ELAPSED = '1h', ACTION = DRYRUN, WATCH = PLAN)");
    expect(sim.groups()[1].queryLimit).toBe("EXEC_ELAPSED='1h0m0s', ACTION=DRYRUN, WATCH=PLAN DURATION=UNLIMITED");
    await c.query('ALTER RESOURCE GROUP rg PRIORITY = LOW');
    expect(sim.groups()[1].queryLimit).toBe("EXEC_ELAPSED='1h0m0s', ACTION=DRYRUN, WATCH=PLAN DURATION=UNLIMITED");
    await c.query('ALTER RESOURCE GROUP rg QUERY_LIMIT = NULL');
    expect(sim.groups()[1].queryLimit).toBeNull();
    await c.query("ALTER RESOURCE GROUP rg QUERY_LIMIT = (EXEC_ELAPSED = '1500ms', ACTION = SWITCH_GROUP(`default`))");
    expect(sim.groups()[1].queryLimit).toBe("EXEC_ELAPSED='1.5s', ACTION=SWITCH_GROUP(default)");
    await c.query('ALTER RESOURCE GROUP rg QUERY_LIMIT = ()');
    expect((await rows(c, READ_GROUPS))[1][4]).toBeNull();
    expect((await refusal(c, "ALTER RESOURCE GROUP rg QUERY_LIMIT = (EXEC_ELAPSED = '10')")).message).toBe(
      `${SYNTAX} line 1 column 59 near ")"The EXEC_ELAPSED option is not a valid duration: time: missing unit in duration "10" `,
    );
    expect((await refusal(c, "ALTER RESOURCE GROUP rg QUERY_LIMIT = (EXEC_ELAPSED = '10s')")).message).toBe(
      'unknown resource group runaway action',
    );
  });

  test('master shows BURSTABLE as OFF, MODERATED or UNLIMITED and keeps it across an ALTER of the rate', async () => {
    const { sim, c } = await tidb('v9.0.0');
    await c.query('CREATE RESOURCE GROUP a RU_PER_SEC = 100 BURSTABLE = UNLIMITED');
    await c.query('CREATE RESOURCE GROUP b RU_PER_SEC = UNLIMITED');
    await c.query('ALTER RESOURCE GROUP a RU_PER_SEC = 200');
    expect(sim.groups().map((g) => [g.name, g.ruPerSec, g.burstable])).toEqual([
      ['a', '200', 'UNLIMITED'],
      ['b', 'UNLIMITED', 'OFF'],
      ['default', 'UNLIMITED', 'UNLIMITED'],
    ]);
    await c.query('ALTER RESOURCE GROUP a BURSTABLE = OFF');
    expect(sim.groups()[0].burstable).toBe('OFF');
  });
});

describe("Go's durations", () => {
  test('parse and print as time.ParseDuration and Duration.String do, to the millisecond', () => {
    expect([
      parseGoDuration('60s'),
      parseGoDuration('1h30m'),
      parseGoDuration('1.5s'),
      parseGoDuration('250ms'),
      parseGoDuration('0'),
    ]).toEqual([60_000, 5_400_000, 1_500, 250, 0]);
    expect(() => parseGoDuration('abc')).toThrow('time: invalid duration "abc"');
    expect(() => parseGoDuration('5d')).toThrow('time: unknown unit "d" in duration "5d"');
    expect([0, 250, 15_000, 60_000, 90_500, 3_600_000, 3_723_000].map(goDuration)).toEqual([
      '0s',
      '250ms',
      '15s',
      '1m0s',
      '1m30.5s',
      '1h0m0s',
      '1h2m3s',
    ]);
  });
});
