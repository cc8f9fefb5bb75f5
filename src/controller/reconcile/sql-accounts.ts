/**
 * Each pass, the SQL accounts Git declares (`SqlUser`, `SqlRole`; `ControllerClusterInfo.sql`): once
 * the initializer (when the cluster has one) is Complete, the controller logs in to a ready TiDB Pod
 * as root with the password in `sql.loginSecret` (key `root`), reads the accounts, plans
 * (plan/sql-accounts.ts) and runs each account's statements (actions/sql-accounts.ts), recording each
 * account it manages once its statements ran. Events on the TiDB StatefulSet: `SqlAccountCreated`,
 * `SqlAccountChanged`, `SqlAccountDropped`, `SqlAccountDrift`, `SqlAccountFailed`; `status.json` says
 * under `sqlAccounts` how each declared account stands, which accounts are unmanaged and which kept.
 * No password reaches a log, an Event, a record or the status. A side task of the pass.
 */
import { accountName, type SqlAccountsInfo } from '../../tidbcluster/contract/sql-accounts';
import { runAccountStep } from '../actions/sql-accounts';
import type { EventRecorder } from '../clients/events';
import { describe } from '../clients/kube-errors';
import { passwordOf, readSecret, type VersionedSecret } from '../clients/secrets';
import { dialectOf, SqlAccountReader, type ObservedAccount } from '../clients/sql-accounts';
import { planSqlAccounts, type AccountReport, type SecretVersion } from '../plan/sql-accounts';
import type { StatusRecords } from '../records/store';
import type { Logger } from '../runtime/log';
import { hidePasswords } from '../../base/sql-secrets';
import { SaidOnce } from './said-once';
import type { SidePass, SideTask } from './side-task';
import {
  connectAsRoot,
  noBackslashEscapes as sessionNoBackslashEscapes,
  rootLogin,
  type RootLogin,
  type SqlLoginDeps,
  sqlEventTarget,
  sqlTarget,
  SqlWait,
} from './sql-login';

/** How a declared account stands, in `status.json`. */
export interface SqlAccountStatus extends Omit<AccountReport, 'state'> {
  /** `failed`: a statement failed this pass (`reason` says which and why). */
  readonly state: AccountReport['state'] | 'failed';
}

/** The `sqlAccounts` part of `status.json`. */
export interface SqlAccountsStatus {
  /** Why nothing was looked at this pass. @default none */
  readonly waiting?: string;
  /** The declared accounts. */
  readonly accounts: readonly SqlAccountStatus[];
  /** Accounts on the server neither declared nor managed, left alone. */
  readonly unmanaged: readonly string[];
  /** Managed accounts whose document left Git with `Retain`: kept on the server, no longer changed. */
  readonly kept: readonly string[];
}

export interface SqlAccountsDeps extends SqlLoginDeps {
  readonly event: EventRecorder;
  readonly log: Logger;
}

export class SqlAccountsKeeper implements SideTask {
  readonly name = 'sql accounts';
  readonly readsOnly = false;
  private status?: SqlAccountsStatus;
  /** What was last said per account (a failure, drift), so that a standing one is said once. */
  private readonly announced = new SaidOnce();

  constructor(
    private readonly d: SqlAccountsDeps,
    private readonly records: StatusRecords,
  ) {}

  /** The status of the last pass, for `status.json`. */
  current(): SqlAccountsStatus | undefined {
    return this.status;
  }

  async run({ tidbPods }: SidePass): Promise<void> {
    const info = this.declared();
    if (!info) {
      this.status = undefined;
      return;
    }
    const target = sqlTarget(this.d.cluster, this.records, tidbPods, 'the accounts');
    if ('waiting' in target) return this.wait(info, target.waiting);
    const { pod } = target;
    const known: string[] = [];
    try {
      const login = await rootLogin(this.d, info);
      known.push(login.password);
      const secrets = new Map<string, VersionedSecret>();
      for (const a of info.accounts) {
        const s = a.password?.secret;
        if (s === undefined || secrets.has(s)) continue;
        const got = await readSecret(this.d.kube, s);
        if (got) secrets.set(s, got);
      }
      for (const a of info.accounts) {
        const v = a.password && secrets.get(a.password.secret)?.data[a.password.key];
        if (v) known.push(passwordOf(v));
      }
      await this.keep(info, pod, login, secrets, known);
    } catch (err) {
      if (err instanceof SqlWait) return this.wait(info, err.message);
      this.d.log.warn('could not bring the SQL accounts up to date; tried again next pass', {
        pod,
        error: hidePasswords(describe(err), { known }),
      });
    }
  }

  private async keep(
    info: SqlAccountsInfo,
    pod: string,
    login: RootLogin,
    secrets: ReadonlyMap<string, VersionedSecret>,
    known: readonly string[],
  ): Promise<void> {
    const conn = await connectAsRoot(this.d, info.loginSecret, pod, login);
    try {
      const noBackslashEscapes = await sessionNoBackslashEscapes(conn);
      const dialect = dialectOf(conn.serverVersion);
      const reader = new SqlAccountReader(conn, dialect, noBackslashEscapes);
      const server = await reader.accounts();
      const onServer = new Set(server.map(accountName));
      const observed = new Map<string, ObservedAccount>();
      for (const a of info.accounts)
        if (onServer.has(accountName(a))) observed.set(accountName(a), await reader.account(a, a.kind === 'SqlRole'));
      const versions = new Map<string, SecretVersion>([...secrets].map(([n, s]) => [n, { version: s.version, keys: Object.keys(s.data) }]));
      const plan = planSqlAccounts({
        accounts: info.accounts,
        dialect,
        noBackslashEscapes,
        server,
        observed,
        records: this.records.sqlAccounts,
        secrets: versions,
        login: { user: 'root', host: '%' },
      });
      const failed = new Map<string, string>();
      for (const step of plan.steps) {
        const before = this.records.sqlAccounts[step.account];
        if (step.statements.length > 0) {
          const out = await runAccountStep(step, {
            conn,
            noBackslashEscapes,
            password: (s, k) => {
              const v = secrets.get(s)?.data[k];
              return v === undefined ? undefined : passwordOf(v);
            },
            known,
          });
          if (!out.ok) {
            failed.set(step.account, out.error);
            await this.announce(step.account, 'Warning', 'SqlAccountFailed', `${step.account}: ${out.error}`);
            if (!out.refused) throw new Error(out.error);
            continue;
          }
          this.d.log.info(`SQL account ${step.account} ${step.news ?? 'changed'}`, {
            account: step.account,
            statements: step.statements.length,
          });
          const reason =
            step.news === 'created' ? 'SqlAccountCreated' : step.news === 'dropped' ? 'SqlAccountDropped' : 'SqlAccountChanged';
          await this.d.event(
            sqlEventTarget(this.d.cluster),
            'Normal',
            reason,
            `${step.account}: ${step.news ?? 'changed'} (${step.statements.map((s) => s.kind).join(', ')})`,
            true,
          );
          this.announced.forget(step.account);
        }
        if (JSON.stringify(before) !== JSON.stringify(step.record)) await this.records.setSqlAccount(step.account, step.record);
      }
      for (const a of plan.accounts)
        if (a.drift && !a.corrected && !failed.has(a.account))
          await this.announce(a.account, 'Warning', 'SqlAccountDrift', `${a.account} was changed by hand: ${a.drift.join('; ')}`);
      this.status = {
        accounts: plan.accounts.map((a) => {
          const error = failed.get(a.account);
          if (error !== undefined) return { ...a, state: 'failed', reason: error };
          if (a.state !== 'changing') return a;
          // Ran: as Git says, but for drift reported and left as it is.
          const { corrected, ...rest } = a;
          if (a.drift && !corrected) return { ...rest, state: 'drift' };
          return { ...rest, state: 'ok', ...(a.drift && { drift: a.drift.map((x) => `${x} (corrected)`) }) };
        }),
        unmanaged: plan.unmanaged,
        kept: plan.kept,
      };
    } finally {
      conn.close().catch(() => undefined);
    }
  }

  /**
   * What Git declares; with no account declared but some still managed (their documents all left
   * Git), none, logging in as the initializer does, so that those with `Delete` are dropped.
   */
  private declared(): SqlAccountsInfo | undefined {
    const { sql, initializer } = this.d.cluster;
    const managed = Object.keys(this.records.sqlAccounts).length > 0;
    // Only resource groups declared, and no account managed: nothing for this task to read.
    if (sql && (sql.accounts.length > 0 || managed)) return sql;
    if (!managed || initializer?.passwordSecret === undefined) return undefined;
    return { loginSecret: initializer.passwordSecret, ...(initializer.tls && { tls: initializer.tls }), accounts: [] };
  }

  /** An Event said once for as long as the same thing stands. */
  private async announce(account: string, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    const key = `${reason}\n${message}`;
    if (!this.announced.news(account, key)) return;
    this.d.log.warn(message, { account });
    await this.d.event(sqlEventTarget(this.d.cluster), type, reason, message, true);
  }

  private wait(info: SqlAccountsInfo, why: string): void {
    this.status = {
      waiting: why,
      accounts: info.accounts.map((a) => ({ document: a.document, account: accountName(a), kind: a.kind, state: 'waiting', reason: why })),
      unmanaged: this.status?.unmanaged ?? [],
      kept: this.status?.kept ?? [],
    };
  }
}
