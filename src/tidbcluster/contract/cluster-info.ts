/**
 * What the controller's Pod is told by the renderer: its environment variables, the JSON of the
 * cluster it runs for (`TIDB_GITOPS_CLUSTER`), with its initializer and backup retention, which the
 * renderer encodes and the controller parses back, and the HTTP paths its probes call.
 */
import { type ChangefeedsInfo, parseChangefeeds } from './changefeeds';
import { parseResourceGroups } from './resource-groups';
import type { SqlAccountsInfo } from './sql-accounts';
import { stableJson } from '../../base/stable-json';
import { COMPONENTS, type ComponentKind } from '../names';

/** HTTP paths the controller serves on `PORT.discoveryMetrics`; the rendered probes call them. */
export const CONTROLLER_HTTP = {
  ready: '/readyz',
  live: '/healthz',
} as const;

/** Environment variables of the controller container, in the order they are rendered. */
export const CONTROLLER_ENV = {
  /** The Pod's namespace (downward API): where the cluster's objects live. */
  podNamespace: 'MY_POD_NAMESPACE',
  /** The Pod's name (downward API): the Lease holder identity. */
  podName: 'MY_POD_NAME',
  /** `spec.timezone`, or `UTC`. */
  timezone: 'TZ',
  /** The TidbCluster's name (as with tidb-operator's discovery). */
  clusterName: 'TC_NAME',
  /** JSON of {@link ControllerClusterInfo}. */
  cluster: 'TIDB_GITOPS_CLUSTER',
} as const;

/**
 * What the controller knows about its cluster beyond the objects it reads: the JSON of the
 * `TIDB_GITOPS_CLUSTER` env var (keys sorted, no whitespace).
 */
export interface ControllerClusterInfo {
  /** `metadata.name`. */
  readonly name: string;
  /** `spec.clusterDomain`, "" when unset. */
  readonly clusterDomain: string;
  /** `spec.acrossK8s`. */
  readonly acrossK8s: boolean;
  /** `spec.tlsCluster.enabled`: PD speaks https; the client certificate is mounted. */
  readonly tls: boolean;
  /** `spec.tlsCluster.enableDiscoveryMTLS` (with tls only): discovery serves https with client certificates. */
  readonly discoveryMtls: boolean;
  /** `spec.pdAddresses`. */
  readonly pdAddresses: readonly string[];
  /**
   * `spec.cluster`, the TidbCluster whose PD this one joins, or null. An empty namespace means the
   * controller's own.
   */
  readonly cluster: { readonly name: string; readonly namespace: string; readonly clusterDomain: string } | null;
  /** The component StatefulSets rendered for this cluster, in reconcile order (a subset of COMPONENTS). */
  readonly components: readonly ComponentKind[];
  /**
   * Present (true) when a ClusterRole lets the controller read Nodes, to copy their topology labels
   * onto stores and TiDB servers. @default absent (the controller reads no Node)
   */
  readonly readsNodes?: true;
  /**
   * Present (true) when a ClusterRole lets the controller get and patch PersistentVolumes, to set
   * `spec.pvReclaimPolicy` on those bound to the cluster's claims. @default absent (no PV is touched)
   */
  readonly patchesVolumes?: true;
  /**
   * The cluster's BackupSchedules, by name: the controller records their runs, and its Role lets it
   * read Jobs. @default absent (no schedule; the controller reads no Job)
   */
  readonly backupSchedules?: readonly string[];
  /**
   * The schedules that keep only some backups, by name: how many, and the bucket (or Azure
   * container) the controller removes the others from. @default absent (no retention)
   */
  readonly backupRetention?: Readonly<Record<string, BackupRetentionInfo>>;
  /**
   * The cluster's one-shot Backups and Restores, by Job name (`backup-<name>`, `restore-<name>`, also
   * their ConfigMaps' names): the controller runs each exactly once. @default absent (none)
   */
  readonly operations?: readonly string[];
  /**
   * The cluster's log backups, by ConfigMap name (`backup-<name>`): the controller keeps each task in
   * the state its document asks for. @default absent (none)
   */
  readonly logBackups?: readonly string[];
  /**
   * Root's password, more users and the initial SQL, set once (`spec.tidb.initializer.createPassword`
   * or a TidbInitializer). @default absent (the controller logs in to no database)
   */
  readonly initializer?: InitializerInfo;
  /** The SQL accounts and resource groups Git declares (`SqlUser`, `SqlRole`, `ResourceGroup`). @default absent (none: the controller manages no account) */
  readonly sql?: SqlAccountsInfo;
  /** The TiCDC changefeeds Git declares (`Changefeed`). @default absent (none: the controller manages no changefeed) */
  readonly changefeeds?: ChangefeedsInfo;
}

/** What the controller sets up in the database, once, and where it reads it from. */
export interface InitializerInfo {
  /** The TidbInitializer's name, or `create-password` for `spec.tidb.initializer.createPassword`. */
  readonly name: string;
  /** `sha256:` of what Git asks (the rest of this object and the inline SQL): a change after it ran is announced. */
  readonly digest: string;
  /**
   * A Secret whose keys are user names and values their passwords: `root` sets root's password, other
   * keys create users. @default none (no password is set)
   */
  readonly passwordSecret?: string;
  /** Only the Secret's `root` key counts (`createPassword`). @default absent (every key) */
  readonly rootOnly?: true;
  /** Where the SQL is: a ConfigMap and its key. @default none (no SQL) */
  readonly sql?: { readonly configMap: string; readonly key: string };
  /** The host root and the created users may log in from. */
  readonly permitHost: string;
  /** The session time zone of the SQL. @default none (the server's) */
  readonly timezone?: string;
  /** TLS to TiDB's MySQL port: the client certificate's Secret, and whether its CA goes unchecked. @default none (plain) */
  readonly tls?: {
    readonly secret: string;
    /** @default absent (the CA is checked) */
    readonly skipCA?: true;
  };
  /**
   * What to do in a cluster set up before (root has a password, or databases of its own), where the
   * initializer has no record: `skip` marks it done without running anything (a cluster moved from
   * tidb-operator, whose initializer ran there), `run` runs it. Not part of the digest.
   * @default absent (it waits for one of them, running nothing)
   */
  readonly existingCluster?: 'run' | 'skip';
}

/**
 * What retention does with an expired run's data, as tidb-operator's `cleanPolicy`: `Retain` keeps it
 * (the run leaves the records, which say where it stays), `Delete` removes it, `OnFailure` removes a
 * failed or lost run's partial backup only.
 */
export type CleanPolicy = 'Retain' | 'Delete' | 'OnFailure';

/** A schedule's retention as the controller carries it out. */
export interface BackupRetentionInfo {
  /** @default none */
  readonly maxBackups?: number;
  /** @default none */
  readonly maxReservedSeconds?: number;
  /** @default 'Retain' */
  readonly cleanPolicy?: CleanPolicy;
  /** The kind of storage the runs write to, whose URL schemes name their folders. @default 's3' */
  readonly storageKind?: 's3' | 'gcs' | 'azblob';
  /**
   * The bucket (Azure: the container), prefix and keys below are given when the policy removes data.
   * @default none
   */
  readonly bucket?: string;
  /** The schedule's prefix: each run's folder is under it. @default none */
  readonly prefix?: string;
  /**
   * Where the storage's API is: S3's endpoint; for GCS the JSON API's root, for Azure the account's
   * Blob service URL (neither has a field for it in the storage spec: an emulator's address).
   * @default none (AWS's endpoint for the region; https://storage.googleapis.com; `https://<account>.blob.core.windows.net`)
   */
  readonly endpoint?: string;
  /** @default the bucket's own region for AWS (provider none or `aws`), asked of S3 as BR asks it; else us-east-1 */
  readonly region?: string;
  /** BR's `--s3.provider`, which decides whether the region is asked of S3. @default none (AWS) */
  readonly provider?: string;
  /** @default true */
  readonly forcePathStyle?: boolean;
  /**
   * The Secret with the storage's credentials, as tidb-operator reads them: S3 `access_key` and
   * `secret_key`; GCS `credentials` (a service account key); Azure `AZURE_STORAGE_KEY`, with
   * `AZURE_STORAGE_ACCOUNT` when `account` is not given. @default none (Azure with `sasToken` and `account`)
   */
  readonly secretName?: string;
  /** Azure: the storage account (`azblob.storageAccount`). @default none (the Secret's `AZURE_STORAGE_ACCOUNT`) */
  readonly account?: string;
  /** Azure: the SAS token requests carry (`azblob.sasToken`), used before any key in the Secret. @default none */
  readonly sasToken?: string;
}

/** Whether a policy ever removes data from the bucket (and so needs its storage and keys). */
export const removesData = (r: Pick<BackupRetentionInfo, 'cleanPolicy'>): boolean => (r.cleanPolicy ?? 'Retain') !== 'Retain';

/** The value of `TIDB_GITOPS_CLUSTER`: keys sorted, no whitespace. */
export const encodeControllerClusterInfo = (info: ControllerClusterInfo): string => stableJson(info);

/** Parses and checks the value of `TIDB_GITOPS_CLUSTER`; errors say which key is wrong. */
export function parseControllerClusterInfo(json: string): ControllerClusterInfo {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (e) {
    throw new Error(`TIDB_GITOPS_CLUSTER is not JSON: ${(e as Error).message}`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new Error('TIDB_GITOPS_CLUSTER must be a JSON object');
  const o = raw as Record<string, unknown>;
  const str = (k: string, dflt?: string): string => {
    const v = o[k] ?? dflt;
    if (typeof v !== 'string') throw new Error(`TIDB_GITOPS_CLUSTER.${k}: expected a string`);
    return v;
  };
  const bool = (k: string): boolean => {
    const v = o[k] ?? false;
    if (typeof v !== 'boolean') throw new Error(`TIDB_GITOPS_CLUSTER.${k}: expected true or false`);
    return v;
  };
  const components = (o.components ?? []) as unknown[];
  if (!Array.isArray(components) || components.some((c) => !(COMPONENTS as readonly unknown[]).includes(c))) {
    throw new Error(`TIDB_GITOPS_CLUSTER.components: expected a list of ${COMPONENTS.join(', ')}`);
  }
  const pdAddresses = (o.pdAddresses ?? []) as unknown[];
  if (!Array.isArray(pdAddresses) || pdAddresses.some((a) => typeof a !== 'string')) {
    throw new Error('TIDB_GITOPS_CLUSTER.pdAddresses: expected a list of URLs');
  }
  const ref = o.cluster as { name?: unknown; namespace?: unknown; clusterDomain?: unknown } | null | undefined;
  if (ref !== undefined && ref !== null && (typeof ref !== 'object' || typeof ref.name !== 'string')) {
    throw new Error('TIDB_GITOPS_CLUSTER.cluster: expected null or {name, namespace, clusterDomain}');
  }
  const schedules = (o.backupSchedules ?? []) as unknown[];
  if (!Array.isArray(schedules) || schedules.some((n) => typeof n !== 'string' || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(n))) {
    throw new Error('TIDB_GITOPS_CLUSTER.backupSchedules: expected a list of BackupSchedule names');
  }
  const retention = retentionOf(o.backupRetention);
  const operations = (o.operations ?? []) as unknown[];
  if (
    !Array.isArray(operations) ||
    operations.some((n) => typeof n !== 'string' || !/^(backup|restore)-[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(n))
  ) {
    throw new Error('TIDB_GITOPS_CLUSTER.operations: expected a list of Job names, backup-<name> or restore-<name>');
  }
  const logBackups = (o.logBackups ?? []) as unknown[];
  if (!Array.isArray(logBackups) || logBackups.some((n) => typeof n !== 'string' || !/^backup-[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(n))) {
    throw new Error('TIDB_GITOPS_CLUSTER.logBackups: expected a list of ConfigMap names, backup-<name>');
  }
  const initializer = initializerOf(o.initializer);
  const sql = sqlOf(o.sql);
  const changefeeds = parseChangefeeds(o.changefeeds);
  return {
    name: str('name'),
    clusterDomain: str('clusterDomain', ''),
    acrossK8s: bool('acrossK8s'),
    tls: bool('tls'),
    discoveryMtls: bool('discoveryMtls'),
    pdAddresses: pdAddresses as string[],
    cluster: ref
      ? { name: ref.name as string, namespace: String(ref.namespace ?? ''), clusterDomain: String(ref.clusterDomain ?? '') }
      : null,
    // Keep the reconcile order whatever order the list came in.
    components: COMPONENTS.filter((c) => components.includes(c)),
    ...(bool('readsNodes') && { readsNodes: true as const }),
    ...(bool('patchesVolumes') && { patchesVolumes: true as const }),
    ...(schedules.length > 0 && { backupSchedules: schedules as string[] }),
    ...(retention && { backupRetention: retention }),
    ...(operations.length > 0 && { operations: operations as string[] }),
    ...(logBackups.length > 0 && { logBackups: logBackups as string[] }),
    ...(initializer && { initializer }),
    ...(sql && { sql }),
    ...(changefeeds && { changefeeds }),
  };
}

/** `sql`: the accounts to keep, and the Secret to log in as root with. */
function sqlOf(raw: unknown): SqlAccountsInfo | undefined {
  if (raw === undefined) return undefined;
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  const text = (v: unknown, optional = false) => (optional && v === undefined) || (typeof v === 'string' && v !== '');
  if (!isObject(raw) || !text(raw.loginSecret) || !Array.isArray(raw.accounts))
    throw new Error('TIDB_GITOPS_CLUSTER.sql: expected {loginSecret, accounts} and optionally tls {secret, skipCA}, resourceGroups');
  const tls = raw.tls;
  if (tls !== undefined && !(isObject(tls) && text(tls.secret) && (tls.skipCA === undefined || tls.skipCA === true)))
    throw new Error('TIDB_GITOPS_CLUSTER.sql.tls: expected {secret} and optionally skipCA: true');
  const ref = (v: unknown) => isObject(v) && text(v.user) && text(v.host);
  const oneOf = (v: unknown, values: readonly string[]) => v === undefined || values.includes(v as string);
  const sortedUnique = (list: string[]) => list.every((p, i) => i === 0 || list[i - 1] < p);
  const grant = (g: unknown) =>
    isObject(g) &&
    Array.isArray(g.privileges) &&
    g.privileges.length > 0 &&
    g.privileges.every((p) => typeof p === 'string' && p !== '' && p === p.toUpperCase()) &&
    sortedUnique(g.privileges as string[]) &&
    text(g.database, true) &&
    text(g.table, true) &&
    (g.table === undefined || g.database !== undefined) &&
    (g.withGrantOption === undefined || typeof g.withGrantOption === 'boolean');
  raw.accounts.forEach((a: unknown, i) => {
    const user = isObject(a) && a.kind === 'SqlUser';
    const ok =
      isObject(a) &&
      (a.kind === 'SqlUser' || a.kind === 'SqlRole') &&
      text(a.document) &&
      ref(a) &&
      (user ? isObject(a.password) && text(a.password.secret) && text(a.password.key) : a.password === undefined) &&
      (user || (a.require === undefined && a.resourceGroup === undefined && a.locked === undefined)) &&
      oneOf(a.require, ['NONE', 'SSL', 'X509']) &&
      text(a.resourceGroup, true) &&
      (a.locked === undefined || typeof a.locked === 'boolean') &&
      (a.roles === undefined || (Array.isArray(a.roles) && a.roles.every(ref))) &&
      (a.grants === undefined || (Array.isArray(a.grants) && a.grants.every(grant))) &&
      oneOf(a.deletionPolicy, ['Retain', 'Delete']) &&
      oneOf(a.drift, ['report', 'correct']);
    if (!ok)
      throw new Error(
        `TIDB_GITOPS_CLUSTER.sql.accounts[${i}]: expected {kind (SqlUser or SqlRole), document, user, host}, a SqlUser's password {secret, key}, and optionally require (NONE, SSL or X509), resourceGroup, locked, roles [{user, host}], grants [{privileges (upper case, sorted, each once), database, table, withGrantOption}], deletionPolicy (Retain or Delete), drift (report or correct)`,
      );
  });
  parseResourceGroups(raw.resourceGroups);
  return raw as unknown as SqlAccountsInfo;
}

/** `initializer`: what to set up in the database, once. */
function initializerOf(raw: unknown): InitializerInfo | undefined {
  if (raw === undefined) return undefined;
  const bad = new Error(
    'TIDB_GITOPS_CLUSTER.initializer: expected {name, digest, permitHost} and optionally passwordSecret, rootOnly, sql {configMap, key}, timezone, tls {secret, skipCA}, existingCluster (run or skip)',
  );
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw bad;
  const r = raw as Record<string, unknown>;
  const text = (v: unknown, optional = true) => (optional && v === undefined) || (typeof v === 'string' && v !== '');
  const sql = r.sql as Record<string, unknown> | undefined;
  const tls = r.tls as Record<string, unknown> | undefined;
  const ok =
    text(r.name, false) &&
    text(r.digest, false) &&
    text(r.permitHost, false) &&
    text(r.passwordSecret) &&
    text(r.timezone) &&
    (r.rootOnly === undefined || r.rootOnly === true) &&
    (r.existingCluster === undefined || r.existingCluster === 'run' || r.existingCluster === 'skip') &&
    (sql === undefined || (typeof sql === 'object' && sql !== null && text(sql.configMap, false) && text(sql.key, false))) &&
    (tls === undefined ||
      (typeof tls === 'object' && tls !== null && text(tls.secret, false) && (tls.skipCA === undefined || tls.skipCA === true)));
  if (!ok) throw bad;
  return r as unknown as InitializerInfo;
}

/** `backupRetention`: per schedule, how many backups to keep and the bucket to remove the others from. */
function retentionOf(raw: unknown): Record<string, BackupRetentionInfo> | undefined {
  if (raw === undefined) return undefined;
  const bad = (why: string) => new Error(`TIDB_GITOPS_CLUSTER.backupRetention: ${why}`);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw bad('expected an object of schedules');
  const out: Record<string, BackupRetentionInfo> = {};
  for (const [name, r] of Object.entries(raw as Record<string, Record<string, unknown>>)) {
    const count = (k: string) => r[k] === undefined || (typeof r[k] === 'number' && Number(r[k]) > 0);
    const ok =
      typeof r === 'object' &&
      r !== null &&
      count('maxBackups') &&
      count('maxReservedSeconds') &&
      (r.maxBackups === undefined) !== (r.maxReservedSeconds === undefined) &&
      (r.cleanPolicy === undefined || ['Retain', 'Delete', 'OnFailure'].includes(r.cleanPolicy as string)) &&
      (r.storageKind === undefined || ['s3', 'gcs', 'azblob'].includes(r.storageKind as string)) &&
      ['endpoint', 'account', 'sasToken'].every((k) => r[k] === undefined || typeof r[k] === 'string') &&
      (!removesData(r) ||
        (typeof r.bucket === 'string' &&
          typeof r.prefix === 'string' &&
          (typeof r.secretName === 'string' ||
            (r.storageKind === 'azblob' && typeof r.sasToken === 'string' && typeof r.account === 'string'))));
    if (!ok) {
      throw bad(
        `${name}: expected one of maxBackups and maxReservedSeconds, a cleanPolicy of Retain, Delete or OnFailure, a storageKind of s3, gcs or azblob, and bucket, prefix and secretName where it removes data (on Azure, sasToken and account may stand for secretName)`,
      );
    }
    out[name] = r as unknown as BackupRetentionInfo;
  }
  return out;
}
