/**
 * The cluster the controller runs for: what the renderer tells it (the `TIDB_GITOPS_CLUSTER` JSON)
 * and the namespace it runs in, and the host names of the cluster's Pods.
 */
import { COMPONENTS, names, removesData, type BackupRetentionInfo, type ComponentKind, type ControllerClusterInfo, type InitializerInfo } from '../../tidbcluster/names';

/**
 * What the renderer tells the controller about the cluster (the `TIDB_GITOPS_CLUSTER` JSON), plus the
 * namespace the controller runs in.
 */
export interface ClusterInfo extends ControllerClusterInfo {
  readonly namespace: string;
}

/** A Pod's host name under its component's headless Service: `<pod>.<cluster>-<kind>-peer.<ns>` (what the operator's clients dial). */
export const podHost = (c: Pick<ClusterInfo, 'name' | 'namespace'>, kind: ComponentKind, pod: string): string => `${pod}.${names.peerService(c.name, kind)}.${c.namespace}`;

/** Parses and checks the cluster JSON; errors say which key is wrong. */
export function parseClusterInfo(json: string, namespace: string): ClusterInfo {
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
  if (!Array.isArray(operations) || operations.some((n) => typeof n !== 'string' || !/^(backup|restore)-[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(n))) {
    throw new Error('TIDB_GITOPS_CLUSTER.operations: expected a list of Job names, backup-<name> or restore-<name>');
  }
  const logBackups = (o.logBackups ?? []) as unknown[];
  if (!Array.isArray(logBackups) || logBackups.some((n) => typeof n !== 'string' || !/^backup-[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(n))) {
    throw new Error('TIDB_GITOPS_CLUSTER.logBackups: expected a list of ConfigMap names, backup-<name>');
  }
  const initializer = initializerOf(o.initializer);
  return {
    name: str('name'),
    namespace,
    clusterDomain: str('clusterDomain', ''),
    acrossK8s: bool('acrossK8s'),
    tls: bool('tls'),
    discoveryMtls: bool('discoveryMtls'),
    pdAddresses: pdAddresses as string[],
    cluster: ref ? { name: ref.name as string, namespace: String(ref.namespace ?? ''), clusterDomain: String(ref.clusterDomain ?? '') } : null,
    // Keep the reconcile order whatever order the list came in.
    components: COMPONENTS.filter((c) => components.includes(c)),
    ...(bool('readsNodes') && { readsNodes: true as const }),
    ...(bool('patchesVolumes') && { patchesVolumes: true as const }),
    ...(schedules.length > 0 && { backupSchedules: schedules as string[] }),
    ...(retention && { backupRetention: retention }),
    ...(operations.length > 0 && { operations: operations as string[] }),
    ...(logBackups.length > 0 && { logBackups: logBackups as string[] }),
    ...(initializer && { initializer }),
  };
}

/** `initializer`: what to set up in the database, once. */
function initializerOf(raw: unknown): InitializerInfo | undefined {
  if (raw === undefined) return undefined;
  const bad = new Error('TIDB_GITOPS_CLUSTER.initializer: expected {name, digest, permitHost} and optionally passwordSecret, rootOnly, sql {configMap, key}, timezone, tls {secret, skipCA}, existingCluster (run or skip)');
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw bad;
  const r = raw as Record<string, unknown>;
  const text = (v: unknown, optional = true) => (optional && v === undefined) || (typeof v === 'string' && v !== '');
  const sql = r.sql as Record<string, unknown> | undefined;
  const tls = r.tls as Record<string, unknown> | undefined;
  const ok =
    text(r.name, false) && text(r.digest, false) && text(r.permitHost, false) && text(r.passwordSecret) && text(r.timezone) &&
    (r.rootOnly === undefined || r.rootOnly === true) &&
    (r.existingCluster === undefined || r.existingCluster === 'run' || r.existingCluster === 'skip') &&
    (sql === undefined || (typeof sql === 'object' && sql !== null && text(sql.configMap, false) && text(sql.key, false))) &&
    (tls === undefined || (typeof tls === 'object' && tls !== null && text(tls.secret, false) && (tls.skipCA === undefined || tls.skipCA === true)));
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
      (!removesData(r) || (typeof r.bucket === 'string' && typeof r.prefix === 'string' && (typeof r.secretName === 'string' || (r.storageKind === 'azblob' && typeof r.sasToken === 'string' && typeof r.account === 'string'))));
    if (!ok) {
      throw bad(
        `${name}: expected one of maxBackups and maxReservedSeconds, a cleanPolicy of Retain, Delete or OnFailure, a storageKind of s3, gcs or azblob, and bucket, prefix and secretName where it removes data (on Azure, sasToken and account may stand for secretName)`,
      );
    }
    out[name] = r as unknown as BackupRetentionInfo;
  }
  return out;
}
