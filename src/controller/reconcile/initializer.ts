/**
 * Each pass, the cluster's initializer: root's password from its Secret, more users, and the initial
 * SQL, carried out once by logging in to a ready TiDB Pod as root over the MySQL protocol. Root's
 * password is set only while root has none (an empty password still logs in); the Secrets are read,
 * never written; no password is ever logged, recorded or put in an Event. The record in the status
 * ConfigMap says how far it got before each step, so that a restart takes up only what cannot run
 * twice, and the outcome goes on the `<cluster>-tidb-initializer` ConfigMap
 * (`tidb-gitops.io/phase`, `tidb-gitops.io/message`) and into Events on it: `InitializerWaiting`,
 * `InitializerComplete`, `InitializerFailed`, `InitializerLost`, `InitializerChanged`. A side task of
 * the pass.
 */
import { splitSql } from '../../base/sql';
import { hidePasswords } from '../../base/sql-secrets';
import { ANNOTATION, BACKUP_LABEL, names, PORT } from '../../tidbcluster/names';
import type { InitializerInfo } from '../../tidbcluster/contract';
import { BackupAccess } from '../clients/backups';
import { type KubeAccess } from '../clients/kube';
import { describe } from '../clients/kube-errors';
import type { PdClient } from '../clients/pd';
import { passwordOf } from '../clients/secrets';
import { connectMysql, ER_ACCESS_DENIED, MysqlError, sqlString, type MysqlConnection, type MysqlOptions } from '../clients/mysql';
import { podHost, type ClusterInfo } from '../model/cluster';
import { isReady } from '../model/objects';
import { planInitializer } from '../plan/initializer';
import { initializerMessage, type InitializerRecord, type InitializerStep } from '../records/initializer';
import type { StatusRecords } from '../records/store';
import type { Logger } from '../runtime/log';
import { compareCodeUnits } from '../../base/order';
import type { SidePass, SideTask } from './side-task';

export interface InitializerDeps {
  readonly cluster: ClusterInfo;
  readonly kube: Pick<KubeAccess, 'send' | 'path' | 'namespace' | 'event'>;
  /** PD, for the cluster's ID: the instance of the cluster a run initialized. */
  readonly pd: Pick<PdClient, 'clusterId'>;
  readonly log: Logger;
  /** Where a TiDB Pod's MySQL port is. @default `<pod>.<cluster>-tidb-peer.<namespace>:4000` */
  readonly sqlAddress?: (pod: string) => { readonly host: string; readonly port: number };
  /** How long one statement may take, ms. @default 120000 */
  readonly statementTimeoutMs?: number;
}

/** What the initializer reads before it logs in. */
interface Inputs {
  /** Root's password, when the Secret has one. */
  readonly root?: string;
  /** The other users and their passwords, by name. */
  readonly users: readonly (readonly [string, string])[];
  readonly statements: readonly { readonly text: string; readonly line: number }[];
  readonly tls?: MysqlOptions['tls'];
}

/** An input that is not there yet: the initializer waits for it. */
class Missing extends Error {}

/** A step that failed for good: the record says Failed with this message. */
class Refused extends Error {}

export class InitializerRunner implements SideTask {
  readonly name = 'initializer';
  readonly readsOnly = false;
  private access?: BackupAccess;
  /** The phase and message last noted on the ConfigMap by this process. */
  private published?: string;

  constructor(
    private readonly d: InitializerDeps,
    private readonly records: StatusRecords,
  ) {}

  /** One pass, with TiDB's Pods as observed. Failures are logged and tried again next pass. */
  async run({ view, tidbPods }: SidePass): Promise<void> {
    const now = view.now;
    const info = this.d.cluster.initializer;
    if (!info) return;
    this.access ??= new BackupAccess(this.d.kube);
    try {
      const readyPod = tidbPods
        .filter(isReady)
        .map((p) => p.metadata.name)
        .sort()[0];
      const clusterId = await this.d.pd.clusterId().catch(() => undefined);
      const plan = planInitializer({
        info,
        record: this.records.initializer,
        ...(readyPod !== undefined && { readyPod }),
        ...(clusterId !== undefined && { clusterId }),
      });
      if (plan.kind === 'record') {
        await this.records.setInitializer(plan.record);
        if (plan.news) await this.announce(plan.record, plan.news, now);
      } else if (plan.kind === 'run') {
        await this.initialize(info, plan.pod, plan.resume, now, {
          ...(clusterId !== undefined && { clusterId }),
          ...(plan.formerCluster !== undefined && { formerCluster: plan.formerCluster }),
        });
      }
      const r = this.records.initializer;
      if (r?.name === info.name) await this.publish(r);
    } catch (err) {
      this.d.log.warn('could not bring the initializer up to date', { error: describe(err) });
    }
  }

  private async initialize(
    info: InitializerInfo,
    pod: string,
    resume: InitializerRecord | undefined,
    now: number,
    bound: Pick<InitializerRecord, 'clusterId' | 'formerCluster'>,
  ): Promise<void> {
    let inputs: Inputs;
    try {
      inputs = await this.read(info);
    } catch (err) {
      if (!(err instanceof Missing)) throw err;
      const r = this.records.initializer;
      if (resume || (r?.name === info.name && r.reason === err.message)) return;
      const waiting: InitializerRecord = {
        name: info.name,
        phase: 'Waiting',
        reason: err.message,
        ...(bound.formerCluster !== undefined && { formerCluster: bound.formerCluster }),
      };
      await this.records.setInitializer(waiting);
      await this.announce(waiting, 'waiting', now);
      return;
    }
    // Every password the run knows, hidden from whatever it says: an error of the server may quote a
    // statement, and the SQL may set passwords of its own.
    const known = [...(inputs.root === undefined ? [] : [inputs.root]), ...inputs.users.map(([, p]) => p)];
    const hide = (text: string, statement?: string) => hidePasswords(text, { known, ...(statement !== undefined && { statement }) });
    // A cluster set up before, with no record of this initializer: what it runs may have run there
    // (a cluster moved from tidb-operator ran its initializer), and SQL never runs twice on a guess.
    if (
      !resume &&
      bound.formerCluster === undefined &&
      info.existingCluster !== 'run' &&
      (inputs.statements.length > 0 || info.permitHost !== '%')
    ) {
      const before = await this.setUpBefore(info, inputs, pod);
      if (before !== undefined) {
        const reason = `${hide(before)}, and there is no record that this initializer ran: its SQL is not run on a guess. If it ran before (in tidb-operator), set the annotation ${ANNOTATION.existingCluster}: skip on the TidbInitializer; to run it in this cluster as it is, set ${ANNOTATION.existingCluster}: run`;
        const r = this.records.initializer;
        if (r?.name === info.name && r.phase === 'Waiting' && r.reason === reason) return;
        const waiting: InitializerRecord = { name: info.name, phase: 'Waiting', reason };
        await this.records.setInitializer(waiting);
        await this.announce(waiting, 'waiting', now);
        return;
      }
    }
    const started = resume?.started ?? iso(now);
    let record: InitializerRecord = resume ?? {
      name: info.name,
      phase: 'Running',
      step: 'connect',
      digest: info.digest,
      started,
      ...bound,
    };
    const step = async (s: InitializerStep, more: Partial<InitializerRecord> = {}) => {
      record = { ...record, ...more, step: s };
      await this.records.setInitializer(record);
    };
    if (!resume) await this.records.setInitializer(record);
    let conn: MysqlConnection | undefined;
    try {
      const login = await this.login(info, inputs, pod, resume?.step === 'password');
      if ('done' in login) return await this.finish({ ...record, phase: 'Complete', root: login.done }, now);
      conn = login.conn;
      const mode = (await conn.query('SELECT @@SESSION.sql_mode')).rows[0]?.[0] ?? '';
      const q = (s: string) => sqlString(s, /NO_BACKSLASH_ESCAPES/i.test(mode));
      let root = record.root ?? login.root;
      if (inputs.root !== undefined && root === undefined) {
        await step('password');
        await secret(conn, `ALTER USER 'root'@'%' IDENTIFIED BY ${q(inputs.root)}`, "setting root's password");
        root = 'set';
      }
      const created: string[] = [...(record.users ?? [])];
      if (inputs.users.length > 0) {
        await step('users', { ...(root && { root }) });
        for (const [user, password] of inputs.users) {
          const exists = await conn.query(`SELECT COUNT(*) FROM mysql.user WHERE User = ${q(user)} AND Host = ${q(info.permitHost)}`);
          if (exists.rows[0]?.[0] !== '0') continue;
          await secret(conn, `CREATE USER ${q(user)}@${q(info.permitHost)} IDENTIFIED BY ${q(password)}`, `creating the user ${user}`);
          created.push(user);
          await step('users', { users: [...created] });
        }
      }
      if (info.timezone !== undefined)
        await refusedAs(`the time zone ${info.timezone}`, () => conn!.query(`SET time_zone = ${q(info.timezone!)}`), hide);
      let ran = 0;
      if (inputs.statements.length > 0) {
        await step('sql', { ...(root && { root }), users: created, statements: 0 });
        for (const [i, s] of inputs.statements.entries()) {
          try {
            await conn.query(s.text);
          } catch (err) {
            throw new Refused(
              statementFailure(err, { index: i, total: inputs.statements.length, line: s.line }, (text) => hide(text, s.text)),
            );
          }
          ran++;
        }
      }
      if (info.permitHost !== '%') {
        await step('host', { ...(root && { root }), users: created, statements: ran });
        await refusedAs(
          `moving root to the host ${info.permitHost}`,
          () => conn!.query(`RENAME USER 'root'@'%' TO 'root'@${q(info.permitHost)}`),
          hide,
        );
      }
      await refusedAs('FLUSH PRIVILEGES', () => conn!.query('FLUSH PRIVILEGES'), hide);
      await this.finish(
        {
          ...record,
          phase: 'Complete',
          ...(root && { root }),
          ...(created.length > 0 && { users: created }),
          ...(inputs.statements.length > 0 && { statements: ran }),
        },
        now,
      );
    } catch (err) {
      if (err instanceof Refused) {
        await this.finish({ ...record, phase: 'Failed', error: hide(err.message) }, now);
        return;
      }
      // Not reached, or cut off before anything that cannot run twice: the next pass tries again from
      // the record, which says how far it got.
      if (record.step === 'sql' || record.step === 'host') {
        await this.finish(
          {
            ...record,
            phase: 'Failed',
            error: hide(
              `the connection to TiDB was lost ${record.step === 'sql' ? 'while the SQL ran' : "while root's host was changed"} (${describe(err)}); it is not run again: see in the database what ran, and finish by hand`,
            ),
          },
          now,
        );
        return;
      }
      this.d.log.warn('the initializer could not reach TiDB; tried again next pass', { pod, error: hide(describe(err)) });
    } finally {
      conn?.close().catch(() => undefined);
    }
  }

  /**
   * Logs in as root: with no password while root has none; else with the Secret's root password, when
   * it has one. `done`: nothing else to do (only root's password was asked for, and root has one).
   */
  private async login(
    info: InitializerInfo,
    inputs: Inputs,
    pod: string,
    passwordStep: boolean,
  ): Promise<{ conn: MysqlConnection; root?: 'set' | 'kept' } | { done: 'kept' }> {
    const { host, port } = this.d.sqlAddress?.(pod) ?? { host: podHost(this.d.cluster, 'tidb', pod), port: PORT.tidbServer };
    const options = { host, port, user: 'root', timeoutMs: this.d.statementTimeoutMs ?? 120_000, ...(inputs.tls && { tls: inputs.tls }) };
    try {
      return { conn: await connectMysql({ ...options, password: '' }) };
    } catch (err) {
      if (!(err instanceof MysqlError) || err.code !== ER_ACCESS_DENIED) throw err;
    }
    const nothingElse = inputs.users.length === 0 && inputs.statements.length === 0 && info.permitHost === '%';
    if (inputs.root === undefined) {
      throw new Refused(
        `root has a password, and ${info.passwordSecret === undefined ? 'there is no passwordSecret' : `the Secret ${info.passwordSecret} has no root key`} to log in with: nothing was done`,
      );
    }
    try {
      // Root's password is the Secret's: set by an earlier run cut off after it, or by someone else.
      return { conn: await connectMysql({ ...options, password: inputs.root }), root: passwordStep ? 'set' : 'kept' };
    } catch (err) {
      if (!(err instanceof MysqlError) || err.code !== ER_ACCESS_DENIED) throw err;
      if (nothingElse) return { done: 'kept' };
      throw new Refused(`root has a password, and it is not the one in the Secret ${info.passwordSecret} (key root): nothing was done`);
    }
  }

  /**
   * How the cluster shows it was set up before (databases of its own, or root with a password), or
   * undefined for a fresh one, or one the run itself refuses to log in to (it says why). Logs in and
   * out again; a failure to reach TiDB is thrown, and the next pass asks again.
   */
  private async setUpBefore(info: InitializerInfo, inputs: Inputs, pod: string): Promise<string | undefined> {
    let login: Awaited<ReturnType<InitializerRunner['login']>>;
    try {
      login = await this.login(info, inputs, pod, false);
    } catch (err) {
      if (err instanceof Refused) return undefined;
      throw err;
    }
    if ('done' in login) return undefined;
    try {
      const schemas = (await login.conn.query('SELECT SCHEMA_NAME FROM information_schema.SCHEMATA')).rows
        .map((r) => String(r[0] ?? ''))
        .filter((s) => !SYSTEM_SCHEMAS.has(s.toLowerCase()))
        .sort();
      if (schemas.length > 0) return `the cluster holds databases (${schemas.slice(0, 5).join(', ')}${schemas.length > 5 ? ', ...' : ''})`;
      return login.root === 'kept' ? 'root already has a password' : undefined;
    } finally {
      login.conn.close().catch(() => undefined);
    }
  }

  /** The Secrets and SQL the run needs; an input that is not there is {@link Missing}. */
  private async read(info: InitializerInfo): Promise<Inputs> {
    const access = this.access!;
    const users: [string, string][] = [];
    let root: string | undefined;
    if (info.passwordSecret !== undefined) {
      const data = await access.secretData(info.passwordSecret);
      if (!data)
        throw new Missing(
          `the Secret ${info.passwordSecret} is not there; create it with ${info.rootOnly ? 'the key root' : 'a key per user (root for root)'} and the password as its value`,
        );
      for (const [key, value] of Object.entries(data).sort(([a], [b]) => compareCodeUnits(a, b))) {
        const password = passwordOf(value);
        if (key === 'root') root = password;
        else if (!info.rootOnly) users.push([key, password]);
      }
      if (info.rootOnly && root === undefined) throw new Missing(`the Secret ${info.passwordSecret} has no key root`);
    }
    let statements: Inputs['statements'] = [];
    if (info.sql) {
      const data = await access.configMapData(info.sql.configMap);
      const text = data?.[info.sql.key];
      if (text === undefined)
        throw new Missing(
          data ? `the ConfigMap ${info.sql.configMap} has no key ${info.sql.key}` : `the ConfigMap ${info.sql.configMap} is not there`,
        );
      const split = splitSql(text);
      if (split.problem !== undefined)
        throw new Missing(`the SQL in the ConfigMap ${info.sql.configMap} cannot be read as statements (${split.problem}); correct it`);
      statements = split.statements;
    }
    let tls: Inputs['tls'];
    if (info.tls) {
      const data = await access.secretData(info.tls.secret);
      if (!data || !data['tls.crt'] || !data['tls.key'])
        throw new Missing(
          `the Secret ${info.tls.secret} with TiDB's client certificate (tls.crt, tls.key${info.tls.skipCA ? '' : ', ca.crt'}) is not there`,
        );
      if (!info.tls.skipCA && !data['ca.crt']) throw new Missing(`the Secret ${info.tls.secret} has no ca.crt`);
      tls = { cert: data['tls.crt'], key: data['tls.key'], ...(!info.tls.skipCA && { ca: data['ca.crt'] }) };
    }
    return { ...(root !== undefined && { root }), users, statements, ...(tls && { tls }) };
  }

  private async finish(record: InitializerRecord, now: number): Promise<void> {
    const { step: _s, reason: _r, ...rest } = record;
    const done = { ...rest, finished: iso(now) };
    await this.records.setInitializer(done);
    this.d.log.info('the initializer is over', { phase: done.phase, message: initializerMessage(done) });
    await this.announce(done, 'over', now);
  }

  private async announce(r: InitializerRecord, news: 'waiting' | 'changed' | 'lost' | 'over', now: number): Promise<void> {
    const cm = await this.configMap();
    if (!cm) return;
    const reason = news === 'waiting' ? 'InitializerWaiting' : news === 'changed' ? 'InitializerChanged' : `Initializer${r.phase}`;
    const type = reason === 'InitializerComplete' || reason === 'InitializerWaiting' ? 'Normal' : 'Warning';
    await this.d.kube.event({ kind: 'ConfigMap', name: cm.name, uid: cm.uid }, type, reason, initializerMessage(r), now);
  }

  /** Where it stands, on the ConfigMap for the health checks; written when it changes. */
  private async publish(r: InitializerRecord): Promise<void> {
    const want = { [ANNOTATION.operationPhase]: r.phase, [ANNOTATION.operationMessage]: initializerMessage(r).slice(0, 1000) };
    const key = JSON.stringify(want);
    if (key === this.published) return;
    const cm = await this.configMap();
    if (!cm) return;
    const patch = Object.fromEntries(Object.entries(want).filter(([k, v]) => cm.annotations[k] !== v));
    if (Object.keys(patch).length > 0) await this.access!.annotateConfigMap(cm.name, patch);
    this.published = key;
  }

  private async configMap() {
    const name = names.initializer(this.d.cluster.name);
    return (await this.access!.listConfigMaps(`${BACKUP_LABEL.operation}=${name}`)).find((c) => c.name === name);
  }
}

/**
 * A statement that carries a password: an error from the server may quote the statement, so only its
 * number is kept.
 */
async function secret(conn: MysqlConnection, sql: string, what: string): Promise<void> {
  try {
    await conn.query(sql);
  } catch (err) {
    if (err instanceof MysqlError && err.code !== 0)
      throw new Refused(
        `${what} failed: ERROR ${err.code} (${err.sqlState}); the server's message is not shown, as it may quote the password`,
      );
    throw err;
  }
}

/** A statement without a password whose refusal by the server ends the run; `hide` keeps passwords out of its words. */
async function refusedAs<T>(what: string, run: () => Promise<T>, hide: (text: string) => string): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof MysqlError && err.code !== 0)
      throw new Refused(hide(`${what} failed: ERROR ${err.code} (${err.sqlState}): ${err.message}`));
    throw err;
  }
}

/** Where a statement of the initial SQL stands among the others. */
export interface StatementPlace {
  /** From 0. */
  readonly index: number;
  readonly total: number;
  /** The line of the SQL it starts on. */
  readonly line: number;
}

/**
 * What the record says of a statement of the initial SQL that failed: its number and line, the
 * server's error or the lost answer, and what ran; passed through `hide`, as the server's words may
 * quote the statement and any password in it.
 */
export function statementFailure(err: unknown, at: StatementPlace, hide: (text: string) => string): string {
  const count = `statement ${at.index + 1} of ${at.total} (line ${at.line} of the SQL)`;
  const before = at.index === 0 ? 'none ran before it' : `the ${at.index} before it ran`;
  if (err instanceof MysqlError && err.code !== 0)
    return hide(`${count} failed: ERROR ${err.code} (${err.sqlState}): ${err.message}; ${before}, none after it`);
  return hide(`${count} got no answer (${(err as Error).message}): it may have run or not; ${before}, none after it`);
}

const iso = (now: number) => new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The schemas every TiDB (and MySQL-protocol server) has before anyone writes to it. */
const SYSTEM_SCHEMAS = new Set(['mysql', 'information_schema', 'performance_schema', 'metrics_schema', 'sys', 'test']);
