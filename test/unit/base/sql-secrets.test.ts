/**
 * Passwords hidden in what a server says about a statement: over generated statements that set a
 * password (in either quote, with backslash escapes or doubled quotes), generated passwords (quotes
 * and backslashes included) and the ways MySQL, MariaDB and TiDB quote a statement in an error (the
 * rest of it from any token, cut at 80 characters or whole), nothing of the password is left, whether
 * the caller knows the password or only the statement.
 */
import fc from 'fast-check';
import { hidePasswords, passwordLiterals } from '../../../src/base/sql-secrets';
import { sqlString } from '../../../src/controller/clients/mysql';

const SEED = 20261127;
const RUNS = 3000;

/** Characters passwords are made of: the quotes and escapes that SQL writes specially, and plain ones. */
const CHARS = [...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789\'"\\%_ -;#@!é€'];

/** A password as one statement writes it, in either quote, escaped either way. */
function literal(p: string, quote: "'" | '"', doubled: boolean): string {
  if (quote === "'") return doubled ? `'${p.split("'").join("''")}'` : sqlString(p);
  return doubled ? `"${p.split('"').join('""')}"` : `"${p.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/** Statements that carry a password, `<PW>` standing for its literal; a few of them bad SQL. */
const TEMPLATES = [
  "CREATE USER 'app'@'%' IDENTIFIED BY <PW>",
  "CREATE USERR 'app'@'%' IDENTIFIED BY <PW>",
  "ALTER USER 'root'@'%' IDENTIFIED WITH mysql_native_password BY <PW> REPLACE 'old-one'",
  "SET PASSWORD FOR 'app'@'10.0.%' = PASSWORD(<PW>)",
  'SET PASSWORD = <PW>',
  "GRANT ALL ON app.* TO 'app'@'%' IDENTIFIED BY <PW> WITH GRANT OPTION",
  "CREATE USER IF NOT EXISTS 'a'@'%' IDENTIFIED BY <PW>, 'b'@'%' IDENTIFIED BY 'other'",
  "CREATE USER 'app'@'%' IDENTIFIED BY <PW> FOO BAR",
  "/*T! CREATE USER 'app'@'%' IDENTIFIED BY <PW> */",
  "CREATE USER 'app'@'%' IDENTIFIED WITH 'mysql_native_password' AS _utf8mb4<PW>",
  "ALTER USER 'app'@'%' IDENTIFIED BY 'new-one' REPLACE <PW>",
];

/** Where a server's error may start quoting: the start of a token (the literal's, not within it). */
function tokenStarts(statement: string, lit: string): number[] {
  const at = statement.indexOf(lit);
  const starts = [0, at];
  for (let i = 1; i < statement.length; i++) {
    if (/\s/.test(statement[i - 1]) && !/\s/.test(statement[i]) && (i < at || i >= at + lit.length)) starts.push(i);
  }
  return starts;
}

/** The error a server gives about `statement`, quoting it from `from`. */
function serverError(form: 'mysql' | 'tidb' | 'whole', statement: string, from: number): string {
  const rest = statement.slice(from);
  switch (form) {
    case 'mysql':
      return `You have an error in your SQL syntax; check the manual that corresponds to your MariaDB server version for the right syntax to use near '${[...rest].slice(0, 80).join('')}' at line 1`;
    case 'tidb':
      return `You have an error in your SQL syntax; check the manual that corresponds to your TiDB version for the right syntax to use line 1 column ${from} near "${rest}" `;
    case 'whole':
      return `statement refused: ${statement}`;
  }
}

const caseOf = fc.record({
  password: fc.string({ unit: fc.constantFrom(...CHARS), minLength: 6, maxLength: 40 }),
  template: fc.constantFrom(...TEMPLATES),
  quote: fc.constantFrom<"'" | '"'>("'", '"'),
  doubled: fc.boolean(),
  form: fc.constantFrom<'mysql' | 'tidb' | 'whole'>('mysql', 'tidb', 'whole'),
  at: fc.nat(),
  known: fc.boolean(),
});

/** The four-character pieces of a text. */
const pieces = (s: string): string[] => Array.from({ length: Math.max(0, s.length - 3) }, (_, i) => s.slice(i, i + 4));

describe('passwords are hidden from what a server says about a statement', () => {
  test('no piece of the password is left, for any statement, quoting, cut or password', () => {
    fc.assert(
      fc.property(caseOf, ({ password, template, quote, doubled, form, at, known }) => {
        const lit = literal(password, quote, doubled);
        const statement = template.replace('<PW>', () => lit);
        const starts = tokenStarts(statement, lit);
        const from = starts[at % starts.length];
        const said = serverError(form, statement, from);
        // The same error about the same statement with a password of nothing special: a piece found
        // there belongs to the words around the password, not to it.
        const neutral = template.replace('<PW>', `${quote}x${quote}`);
        const plain = (['mysql', 'tidb', 'whole'] as const).map((f) => serverError(f, neutral, 0)).join('\n');
        const secret = [...pieces(password), ...pieces(lit.slice(1, -1))];
        fc.pre(secret.every((p) => !plain.includes(p)));
        const out = hidePasswords(said, { statement, ...(known && { known: [password] }) });
        for (const p of secret) expect(out).not.toContain(p);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  test('a known password is hidden without its statement, in any quoting and as it is', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom(...CHARS), minLength: 4, maxLength: 30 }),
        fc.constantFrom<"'" | '"'>("'", '"'),
        fc.boolean(),
        (password, quote, doubled) => {
          const lit = literal(password, quote, doubled);
          for (const said of [
            `near 'BY ${lit} FOO' at line 1`,
            `near 'BY ${lit.slice(0, -2)}' at line 1`,
            `Operation failed for ${password}`,
          ]) {
            const out = hidePasswords(said, { known: [password] });
            expect(out).not.toContain(password);
            expect(out).not.toContain(lit);
          }
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
  });

  test('the literals after IDENTIFIED or PASSWORD are the ones hidden; the rest of the error stays', () => {
    // Read with and without backslash escapes (the session's sql_mode is not known): both readings.
    expect(passwordLiterals("CREATE USER 'app'@'%' IDENTIFIED BY 's3cr\\'et' -- it's fine")).toEqual(["'s3cr\\'et'", "'s3cr\\'"]);
    // User and host names stay; a charset introducer does not hide a password.
    expect(passwordLiterals('SET PASSWORD FOR \'a\'@\'%\' = PASSWORD("p""w")')).toEqual(['"p""w"']);
    expect(
      passwordLiterals(
        "CREATE USER 'a'@'%' IDENTIFIED WITH 'mysql_native_password' AS _utf8mb4'*hash', 'b'@'%' IDENTIFIED BY PASSWORD '*h2' REPLACE 'old'",
      ),
    ).toEqual(["'*hash'", "'*h2'", "'old'"]);
    expect(passwordLiterals("CREATE TABLE t (c VARCHAR(10) DEFAULT 'password')")).toEqual([]);
    const statement = "CREATE USERR 'app'@'%' IDENTIFIED BY 'hunter2-long'";
    expect(
      hidePasswords(
        `You have an error in your SQL syntax; check the manual that corresponds to your MariaDB server version for the right syntax to use near 'USERR 'app'@'%' IDENTIFIED BY 'hunter2-long'' at line 1`,
        { statement },
      ),
    ).toBe(
      "You have an error in your SQL syntax; check the manual that corresponds to your MariaDB server version for the right syntax to use near 'USERR 'app'@'%' IDENTIFIED BY '***'' at line 1",
    );
    // Cut by the server at 80 characters, in the middle of the password.
    expect(hidePasswords(`near 'USERR 'app'@'%' IDENTIFIED BY 'hunt' at line 1`, { statement })).toBe(
      "near 'USERR 'app'@'%' IDENTIFIED BY '***' at line 1",
    );
    // Without the statement: what follows the keyword in the error is hidden to its closing quote, or to the end.
    expect(hidePasswords(`near "IDENTIFIED BY 'x\\'y' FOO"`)).toBe(`near "IDENTIFIED BY '***' FOO"`);
    const untouched = "Table 'app.runs' doesn't exist";
    expect(hidePasswords(untouched, { statement: 'INSERT INTO app.runs VALUES (1)', known: ['s3cret-pass'] })).toBe(untouched);
  });
});
