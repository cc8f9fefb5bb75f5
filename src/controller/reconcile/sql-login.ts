/**
 * How the side tasks that keep what lives in the database (SQL accounts, resource groups) log in: as
 * root, with the password in `sql.loginSecret` (key `root`), to the first ready TiDB Pod, once the
 * initializer (when the cluster has one) is Complete, over TLS when the cluster's MySQL port asks for
 * it. What is not there yet (a Secret, a ready Pod, the initializer) is a {@link SqlWait} the task
 * reports as waiting; root's password is never logged.
 */
import { names, PORT } from '../../tidbcluster/names';
import type { SqlAccountsInfo } from '../../tidbcluster/contract/sql-accounts';
import type { KubeAccess } from '../clients/kube';
import { connectMysql, ER_ACCESS_DENIED, MysqlError, type MysqlConnection, type MysqlOptions } from '../clients/mysql';
import { passwordOf, readSecret, type VersionedSecret } from '../clients/secrets';
import { podHost, type ClusterInfo } from '../model/cluster';
import { isReady, type Pod } from '../model/objects';
import type { StatusRecords } from '../records/store';

/** An input that is not there yet: the task waits for it and says so. */
export class SqlWait extends Error {}

export interface SqlLoginDeps {
  readonly cluster: ClusterInfo;
  readonly kube: Pick<KubeAccess, 'send' | 'path'>;
  /** Where a TiDB Pod's MySQL port is. @default `<pod>.<cluster>-tidb-peer.<namespace>:4000` */
  readonly sqlAddress?: (pod: string) => { readonly host: string; readonly port: number };
  /** How long one statement may take, ms. @default 120000 */
  readonly statementTimeoutMs?: number;
}

/** What logging in takes: root's password and the TLS to TiDB (never logged). */
export interface RootLogin {
  readonly password: string;
  readonly tls?: MysqlOptions['tls'];
}

/** The TiDB Pod to log in to, or why there is none to log in to yet (`what` waits: `the accounts`). */
export function sqlTarget(
  cluster: ClusterInfo,
  records: StatusRecords,
  tidbPods: readonly Pod[],
  what: string,
): { pod: string } | { waiting: string } {
  const init = cluster.initializer;
  const r = records.initializer;
  if (init && !(r?.name === init.name && r.phase === 'Complete'))
    return {
      waiting: `the initializer ${init.name} is ${r?.name === init.name ? r.phase : 'not started'}: ${what} wait until it is Complete`,
    };
  const pod = tidbPods
    .filter(isReady)
    .map((p) => p.metadata.name)
    .sort()[0];
  return pod === undefined ? { waiting: 'no TiDB Pod is ready' } : { pod };
}

/** Root's password and the TLS to TiDB, from their Secrets; a missing one is a {@link SqlWait}. */
export async function rootLogin(d: SqlLoginDeps, info: Pick<SqlAccountsInfo, 'loginSecret' | 'tls'>): Promise<RootLogin> {
  const login = await required(d, info.loginSecret, (s) => `the Secret ${info.loginSecret} with root's password (key root) ${s}`);
  const password = login.data.root === undefined ? undefined : passwordOf(login.data.root);
  if (password === undefined) throw new SqlWait(`the Secret ${info.loginSecret} has no key root`);
  if (!info.tls) return { password };
  const { secret, skipCA } = info.tls;
  const { data } = await required(d, secret, (w) => `the Secret ${secret} with TiDB's client certificate ${w}`);
  if (!data['tls.crt'] || !data['tls.key'] || (!skipCA && !data['ca.crt']))
    throw new SqlWait(`the Secret ${secret} lacks tls.crt, tls.key${skipCA ? '' : ' or ca.crt'}`);
  return { password, tls: { cert: data['tls.crt'], key: data['tls.key'], ...(!skipCA && { ca: data['ca.crt'] }) } };
}

/** A connection as root to the Pod's MySQL port; a password TiDB refuses is a {@link SqlWait}. */
export async function connectAsRoot(d: SqlLoginDeps, loginSecret: string, pod: string, login: RootLogin): Promise<MysqlConnection> {
  const { host, port } = d.sqlAddress?.(pod) ?? { host: podHost(d.cluster, 'tidb', pod), port: PORT.tidbServer };
  try {
    return await connectMysql({
      host,
      port,
      user: 'root',
      password: login.password,
      timeoutMs: d.statementTimeoutMs ?? 120_000,
      ...(login.tls && { tls: login.tls }),
    });
  } catch (err) {
    if (err instanceof MysqlError && err.code === ER_ACCESS_DENIED)
      throw new SqlWait(`root's password is not the one in the Secret ${loginSecret} (key root)`);
    throw err;
  }
}

/** Whether the session's `sql_mode` has `NO_BACKSLASH_ESCAPES`, which changes how string literals are written. */
export async function noBackslashEscapes(conn: MysqlConnection): Promise<boolean> {
  const mode = (await conn.query('SELECT @@SESSION.sql_mode')).rows[0]?.[0] ?? '';
  return /NO_BACKSLASH_ESCAPES/i.test(mode);
}

/** Where the Events of the database's side tasks go: the TiDB StatefulSet. */
export const sqlEventTarget = (cluster: ClusterInfo): string => names.statefulSet(cluster.name, 'tidb');

async function required(d: SqlLoginDeps, name: string, missing: (s: string) => string): Promise<VersionedSecret> {
  const s = await readSecret(d.kube, name);
  if (!s) throw new SqlWait(missing('is not there'));
  return s;
}
