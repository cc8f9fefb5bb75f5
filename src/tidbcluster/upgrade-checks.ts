/**
 * The TidbCluster annotations by which a tidb-operator user tunes rolling upgrades, read into the
 * component settings the controller follows. The keys are the operator's own (`pd_upgrader.go`,
 * `tikv_upgrader.go`, `tidb_upgrader.go`, `tiflash_upgrader.go`, `tiproxy_upgrader.go`, and
 * `v1alpha1.AnnoKeySkipFlushLogBackup`), so a TidbCluster carries them over unchanged.
 *
 * Where the operator logs and ignores a value it cannot read, the render fails: a check someone
 * asked for and silently does not get is worse than an error at the line that asks for it.
 */
import type { ComponentKind } from './names';
import type { SpecIssue } from './errors';

/** `tidb.pingcap.com/<kind>-min-ready-seconds` (TiProxy's key has its own prefix). */
export const MIN_READY_ANNOTATION: Partial<Readonly<Record<ComponentKind, string>>> = {
  pd: 'tidb.pingcap.com/pd-min-ready-seconds',
  tikv: 'tidb.pingcap.com/tikv-min-ready-seconds',
  tiflash: 'tidb.pingcap.com/tiflash-min-ready-seconds',
  tidb: 'tidb.pingcap.com/tidb-min-ready-seconds',
  tiproxy: 'tiproxy.pingcap.com/tiproxy-min-ready-seconds',
};
/** "true": a PD member restarts only while more than a majority plus one of the members are healthy. */
export const PD_QUORUM_CHECK_ANNOTATION = 'tidb.pingcap.com/pd-check-quorum-before-upgrade';
/** "true": a TiKV store restarts only while every store PD knows is Up (or Tombstone). */
export const TIKV_STORES_UP_CHECK_ANNOTATION = 'tidb.pingcap.com/tikv-check-all-stores-up-before-upgrade';
/** Present (any value): TiKV restarts without asking log backup to flush first. */
export const SKIP_FLUSH_LOG_BACKUP_ANNOTATION = 'tidb.pingcap.com/tikv-restart-without-flush-log-backup';

/** The upgrade settings a component takes from the cluster's annotations; only the ones set appear. */
export interface UpgradeChecks {
  /** Seconds an upgraded Pod must have been Ready before the next one restarts. @default 0 */
  minReadySeconds?: number;
  /** PD: require a majority plus one healthy members before each restart. @default false */
  checkQuorumBeforeUpgrade?: boolean;
  /** TiKV: require every store Up (or Tombstone) in PD before each restart. @default false */
  checkStoresUpBeforeUpgrade?: boolean;
  /** TiKV: ask log backup to flush (`FlushNow`) once a store has no leaders, before it restarts. @default true */
  flushLogBackup?: boolean;
}

const path = (key: string): string => `metadata.annotations["${key}"]`;

/** Reads the annotations that apply to `kind`; bad values become issues at their annotation. */
export function upgradeChecks(
  annotations: Readonly<Record<string, string>> | undefined,
  kind: ComponentKind,
  issues: SpecIssue[],
): UpgradeChecks {
  const a = annotations ?? {};
  const out: UpgradeChecks = {};
  const minReadyKey = MIN_READY_ANNOTATION[kind];
  if (minReadyKey !== undefined && a[minReadyKey] !== undefined) {
    const text = a[minReadyKey];
    if (/^\d{1,9}$/.test(text)) out.minReadySeconds = Number(text);
    else
      issues.push({
        path: path(minReadyKey),
        message: `expected a whole number of seconds, 0 or more, as a string (such as "30"), got ${JSON.stringify(text)}`,
      });
  }
  const flag = (key: string): boolean | undefined => {
    const text = a[key];
    if (text === undefined) return undefined;
    if (text === 'true' || text === 'false') return text === 'true';
    issues.push({ path: path(key), message: `expected "true" or "false", got ${JSON.stringify(text)}` });
    return undefined;
  };
  if (kind === 'pd') {
    const check = flag(PD_QUORUM_CHECK_ANNOTATION);
    if (check !== undefined) out.checkQuorumBeforeUpgrade = check;
  }
  if (kind === 'tikv') {
    const check = flag(TIKV_STORES_UP_CHECK_ANNOTATION);
    if (check !== undefined) out.checkStoresUpBeforeUpgrade = check;
    // The operator looks only at whether the key is there.
    if (a[SKIP_FLUSH_LOG_BACKUP_ANNOTATION] !== undefined) out.flushLogBackup = false;
  }
  return out;
}
