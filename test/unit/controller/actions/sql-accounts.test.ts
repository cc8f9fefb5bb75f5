/**
 * Carrying out an account's statements: the password goes into the text only as it is sent; a
 * refusal of a statement that carries one is said by its error number alone; other refusals keep the
 * server's words, with the pass's passwords hidden; the run stops at the first failure.
 */
import { runAccountStep } from '../../../../src/controller/actions/sql-accounts';
import { MysqlError } from '../../../../src/controller/clients/mysql';
import type { AccountStep } from '../../../../src/controller/plan/sql-accounts';

const PASSWORD = "n3w'Pass\\word";

const step: AccountStep = {
  account: "'app'@'%'",
  kind: 'SqlUser',
  document: 'app',
  news: 'created',
  record: undefined,
  statements: [
    { kind: 'CREATE USER', parts: ["CREATE USER 'app'@'%' IDENTIFIED BY ", ' REQUIRE SSL'], password: { secret: 's', key: 'app' } },
    { kind: 'GRANT', parts: ["GRANT SELECT ON `app`.* TO 'app'@'%'"] },
  ],
};

function conn(fail?: (sql: string) => Error | undefined) {
  const sent: string[] = [];
  return {
    sent,
    query: async (sql: string) => {
      sent.push(sql);
      const err = fail?.(sql);
      if (err) throw err;
      return { columns: [], rows: [], affectedRows: 0 };
    },
  };
}

const ctx = (c: ReturnType<typeof conn>, noBackslashEscapes = false) => ({
  conn: c,
  noBackslashEscapes,
  password: (s: string, k: string) => (s === 's' && k === 'app' ? PASSWORD : undefined),
  known: [PASSWORD],
});

describe('runAccountStep', () => {
  test('the password is written as a string literal for the session, only in what is sent', async () => {
    const c = conn();
    expect(await runAccountStep(step, ctx(c))).toEqual({ ok: true });
    expect(c.sent).toEqual(["CREATE USER 'app'@'%' IDENTIFIED BY 'n3w''Pass\\\\word' REQUIRE SSL", "GRANT SELECT ON `app`.* TO 'app'@'%'"]);
    const d = conn();
    await runAccountStep(step, ctx(d, true));
    expect(d.sent[0]).toBe("CREATE USER 'app'@'%' IDENTIFIED BY 'n3w''Pass\\word' REQUIRE SSL");
  });

  test("a refused password statement: its number, never the server's words; nothing after it runs", async () => {
    const c = conn((sql) => (sql.startsWith('CREATE') ? new MysqlError(`syntax near '${PASSWORD}'`, 1064, '42000') : undefined));
    const out = await runAccountStep(step, ctx(c));
    expect(out).toEqual({
      ok: false,
      ran: 0,
      refused: true,
      error:
        "CREATE USER 'app'@'%' IDENTIFIED BY <the password in Secret s, key app> REQUIRE SSL failed: ERROR 1064 (42000); the server's message is not shown, as it may quote the password",
    });
    expect(c.sent).toHaveLength(1);
  });

  test("another refusal keeps the server's words, the passwords hidden; a lost connection is not a refusal", async () => {
    const c = conn((sql) => (sql.startsWith('GRANT') ? new MysqlError(`no such grant, and ${PASSWORD}`, 1141, '42000') : undefined));
    const out = await runAccountStep(step, ctx(c));
    expect(out).toMatchObject({ ok: false, ran: 1, refused: true });
    expect(JSON.stringify(out)).not.toContain('n3w');
    expect((out as { error: string }).error).toMatch(
      /^GRANT SELECT ON `app`\.\* TO 'app'@'%' failed: ERROR 1141 \(42000\): no such grant, and \*\*\*/,
    );
    const lost = conn((sql) => (sql.startsWith('GRANT') ? new MysqlError('the connection is closed', 0, '') : undefined));
    expect(await runAccountStep(step, ctx(lost))).toMatchObject({ ok: false, ran: 1, refused: false });
  });
});
