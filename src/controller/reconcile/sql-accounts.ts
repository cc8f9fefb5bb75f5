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
import { names, PORT } from '../../tidbcluster/names';
import { runAccountStep } from '../actions/sql-accounts';
import type { EventRecorder } from '../clients/events';
import type { KubeAccess } from '../clients/kube';
import { describe } from '../clients/kube-errors';
import { connectMysql, ER_ACCESS_DENIED, MysqlError, type MysqlConnection, type MysqlOptions } from '../clients/mysql';
import { passwordOf, readSecret, type VersionedSecret } from '../clients/secrets';
import { dialectOf, SqlAccountReader, type ObservedAccount } from '../clients/sql-accounts';
import { podHost, type ClusterInfo } from '../model/cluster';
import { isReady } from '../model/objects';
import { planSqlAccounts, type AccountReport, type SecretVersion } from '../plan/sql-accounts';
import type { StatusRecords } from '../records/store';
import type { Logger } from '../runtime/log';
import { hidePasswords } from '../../base/sql-secrets';
import type { SidePass, SideTask } from './side-task';

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

export interface SqlAccountsDeps {
  readonly cluster: ClusterInfo;
  readonly kube: Pick<KubeAccess, 'send' | 'path'>;
  readonly event: EventRecorder;
  readonly log: Logger;
  /** Where a TiDB Pod's MySQL port is. @default `<pod>.<cluster>-tidb-peer.<namespace>:4000` */
  readonly sqlAddress?: (pod: string) => { readonly host: string; readonly port: number };
  /** How long one statement may take, ms. @default 120000 */
  readonly statementTimeoutMs?: number;
}

/** An input that is not there yet: every account waits for it. */
class Missing extends Error {}

export class SqlAccountsKeeper implements SideTask {
  readonly name = 'sql accounts';
  readonly readsOnly = false;
  private status?: SqlAccountsStatus;
  /** What was last announced per account (drift, failure), so that a standing one is said once. */
  private readonly announced = new Map<string, string>();

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
    const init = this.d.cluster.initializer;
    const r = this.records.initializer;
    if (init && !(r?.name === init.name && r.phase === 'Complete'))
      return this.wait(
        info,
        `the initializer ${init.name} is ${r?.name === init.name ? r.phase : 'not started'}: the accounts wait until it is Complete`,
      );
    const pod = tidbPods
      .filter(isReady)
      .map((p) => p.metadata.name)
      .sort()[0];
    if (pod === undefined) return this.wait(info, 'no TiDB Pod is ready');
    const known: string[] = [];
    try {
      const login = await this.read(info.loginSecret, (s) => `the Secret ${info.loginSecret} with root's password (key root) ${s}`);
      const root = login.data.root === undefined ? undefined : passwordOf(login.data.root);
      if (root === undefined) throw new Missing(`the Secret ${info.loginSecret} has no key root`);
      known.push(root);
      const tls = await this.tls(info);
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
      await this.keep(info, pod, root, tls, secrets, known);
    } catch (err) {
      if (err instanceof Missing) return this.wait(info, err.message);
      this.d.log.warn('could not bring the SQL accounts up to date; tried again next pass', {
        pod,
        error: hidePasswords(describe(err), { known }),
      });
    }
  }

  private async keep(
    info: SqlAccountsInfo,
    pod: string,
    root: string,
    tls: MysqlOptions['tls'],
    secrets: ReadonlyMap<string, VersionedSecret>,
    known: readonly string[],
  ): Promise<void> {
    const { host, port } = this.d.sqlAddress?.(pod) ?? { host: podHost(this.d.cluster, 'tidb', pod), port: PORT.tidbServer };
    let conn: MysqlConnection;
    try {
      conn = await connectMysql({
        host,
        port,
        user: 'root',
        password: root,
        timeoutMs: this.d.statementTimeoutMs ?? 120_000,
        ...(tls && { tls }),
      });
    } catch (err) {
      if (err instanceof MysqlError && err.code === ER_ACCESS_DENIED)
        throw new Missing(`root's password is not the one in the Secret ${info.loginSecret} (key root)`);
      throw err;
    }
    try {
      const mode = (await conn.query('SELECT @@SESSION.sql_mode')).rows[0]?.[0] ?? '';
      const noBackslashEscapes = /NO_BACKSLASH_ESCAPES/i.test(mode);
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
            names.statefulSet(this.d.cluster.name, 'tidb'),
            'Normal',
            reason,
            `${step.account}: ${step.news ?? 'changed'} (${step.statements.map((s) => s.kind).join(', ')})`,
            true,
          );
          this.announced.delete(step.account);
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
    if (sql) return sql;
    if (Object.keys(this.records.sqlAccounts).length === 0 || initializer?.passwordSecret === undefined) return undefined;
    return { loginSecret: initializer.passwordSecret, ...(initializer.tls && { tls: initializer.tls }), accounts: [] };
  }

  /** An Event said once for as long as the same thing stands. */
  private async announce(account: string, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    const key = `${reason}\n${message}`;
    if (this.announced.get(account) === key) return;
    this.announced.set(account, key);
    this.d.log.warn(message, { account });
    await this.d.event(names.statefulSet(this.d.cluster.name, 'tidb'), type, reason, message, true);
  }

  private wait(info: SqlAccountsInfo, why: string): void {
    this.status = {
      waiting: why,
      accounts: info.accounts.map((a) => ({ document: a.document, account: accountName(a), kind: a.kind, state: 'waiting', reason: why })),
      unmanaged: this.status?.unmanaged ?? [],
      kept: this.status?.kept ?? [],
    };
  }

  private async read(name: string, missing: (s: string) => string): Promise<VersionedSecret> {
    const s = await readSecret(this.d.kube, name);
    if (!s) throw new Missing(missing('is not there'));
    return s;
  }

  private async tls(info: SqlAccountsInfo): Promise<MysqlOptions['tls']> {
    if (!info.tls) return undefined;
    const { data } = await this.read(info.tls.secret, (w) => `the Secret ${info.tls!.secret} with TiDB's client certificate ${w}`);
    if (!data['tls.crt'] || !data['tls.key'] || (!info.tls.skipCA && !data['ca.crt']))
      throw new Missing(`the Secret ${info.tls.secret} lacks tls.crt, tls.key${info.tls.skipCA ? '' : ' or ca.crt'}`);
    return { cert: data['tls.crt'], key: data['tls.key'], ...(!info.tls.skipCA && { ca: data['ca.crt'] }) };
  }
}
