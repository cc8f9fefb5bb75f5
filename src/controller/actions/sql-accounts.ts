/**
 * Carries out the statements of one SQL account (plan/sql-accounts.ts), one by one, on a connection
 * logged in as root. A statement that sets a password gets it here, from the Secrets read this pass,
 * only as it is sent; the server's words about such a statement are never kept (they may quote it),
 * only its error number. Any other refusal is said with the passwords of the pass hidden.
 */
import { hidePasswords } from '../../base/sql-secrets';
import { MysqlError, sqlString, type MysqlConnection } from '../clients/mysql';
import { statementText, type AccountStep } from '../plan/sql-accounts';

/** What a step's run came to: every statement ran, or where it stopped and why. */
export type StepOutcome =
  | { readonly ok: true }
  | {
      readonly ok: false;
      /** How many statements ran before the one that failed. */
      readonly ran: number;
      /** What went wrong, without any password. */
      readonly error: string;
      /** The server refused the statement (an error number), rather than the connection failing. */
      readonly refused: boolean;
    };

export interface StepContext {
  readonly conn: Pick<MysqlConnection, 'query'>;
  /** The session's `sql_mode` has `NO_BACKSLASH_ESCAPES`. */
  readonly noBackslashEscapes: boolean;
  /** The password in a Secret's key, read this pass; undefined when it is not there. */
  readonly password: (secret: string, key: string) => string | undefined;
  /** Every password of the pass, to hide from what is said. */
  readonly known: readonly string[];
}

/** Runs the step's statements in order, stopping at the first that fails. */
export async function runAccountStep(step: AccountStep, ctx: StepContext): Promise<StepOutcome> {
  for (const [i, s] of step.statements.entries()) {
    let text = s.parts.join('');
    if (s.password) {
      const password = ctx.password(s.password.secret, s.password.key);
      if (password === undefined)
        return { ok: false, ran: i, refused: false, error: `the Secret ${s.password.secret} has no key ${s.password.key} any more` };
      text = `${s.parts[0]}${sqlString(password, ctx.noBackslashEscapes)}${s.parts.slice(1).join('')}`;
    }
    try {
      await ctx.conn.query(text);
    } catch (err) {
      const refused = err instanceof MysqlError && err.code !== 0;
      const shown = statementText(s);
      const error = s.password
        ? refused
          ? `${shown} failed: ERROR ${(err as MysqlError).code} (${(err as MysqlError).sqlState}); the server's message is not shown, as it may quote the password`
          : `${shown} got no answer: it may have run or not`
        : hidePasswords(
            refused
              ? `${shown} failed: ERROR ${(err as MysqlError).code} (${(err as MysqlError).sqlState}): ${(err as Error).message}`
              : `${shown} got no answer (${(err as Error).message}): it may have run or not`,
            { known: ctx.known },
          );
      return { ok: false, ran: i, refused, error };
    }
  }
  return { ok: true };
}
