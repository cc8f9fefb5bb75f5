/** `spec.tikv`: what TiKV resolves beyond the common component fields. */
import { DEFAULTS } from './defaults';
import {
  checked,
  resolveComponent,
  resolveLogTailer,
  storageCapacity,
  type Ctx,
  type ResolvedComponent,
  type ResolvedLogTailer,
} from './component';
import { GO_DURATION, SUB_DIR } from '../base/patterns';

/** A separate TiKV log (RocksDB's or Raft's) followed by its own tailer. */
export interface ResolvedTiKVLog {
  /** The storage volume or additional mount that holds the log. @default none (the data volume) */
  readonly volumeName?: string;
}

export interface ResolvedTiKV extends ResolvedComponent {
  readonly kind: 'tikv';
  readonly dataSubDir: string;
  /** `CAPACITY` env: `0`, `<n>GB` or `<n>MB` from `limits.storage`. */
  readonly capacity: string;
  readonly privileged: boolean;
  readonly enableNamedStatusPort: boolean;
  /** PD start timeout, also used by the TiKV v2 script's optional DNS wait. */
  readonly startTimeout: number;
  /** The `rocksdblog` tailer, with `separateRocksDBLog`. @default none (no tailer) */
  readonly rocksDBLog?: ResolvedTiKVLog;
  /** The `raftlog` tailer, with `separateRaftLog`. @default none (no tailer) */
  readonly raftLog?: ResolvedTiKVLog;
  readonly logTailer: ResolvedLogTailer;
  /** Mount `<cluster>-cluster-client-secret` (only with tlsCluster). */
  readonly mountClusterClientSecret: boolean;
}

export function resolveTiKV(ctx: Ctx): ResolvedTiKV {
  const tikv = ctx.spec.tikv!;
  const base = resolveComponent(ctx, 'tikv', tikv);
  return {
    ...base,
    kind: 'tikv',
    dataSubDir: checked(ctx, 'spec.tikv.dataSubDir', tikv.dataSubDir ?? '', SUB_DIR, 'a relative path of letters, digits, ., _, / and -'),
    capacity: storageCapacity(tikv.limits?.storage, 'spec.tikv.limits.storage', ctx.issues),
    mountClusterClientSecret: tikv.mountClusterClientSecret ?? false,
    privileged: tikv.privileged ?? false,
    enableNamedStatusPort: tikv.enableNamedStatusPort ?? false,
    startTimeout: ctx.spec.pd?.startTimeout || DEFAULTS.pdStartTimeout,
    rocksDBLog: tikv.separateRocksDBLog ? { volumeName: tikv.rocksDBLogVolumeName } : undefined,
    raftLog: tikv.separateRaftLog ? { volumeName: tikv.raftLogVolumeName } : undefined,
    logTailer: resolveLogTailer(ctx, tikv.logTailer, 'spec.tikv.logTailer'),
    settings: {
      ...base.settings,
      evictLeaderTimeout: goDuration(ctx, 'spec.tikv.evictLeaderTimeout', tikv.evictLeaderTimeout) ?? DEFAULTS.tikvEvictLeaderTimeout,
      waitLeaderTransferBackTimeout:
        goDuration(ctx, 'spec.tikv.waitLeaderTransferBackTimeout', tikv.waitLeaderTransferBackTimeout) ??
        DEFAULTS.tikvWaitLeaderTransferBackTimeout,
      recoverFailover: tikv.recoverFailover ?? false,
      recoverByUID: tikv.failover?.recoverByUID,
      storeLabels: tikv.storeLabels ?? [],
      scaleInParallelism: tikv.scalePolicy?.scaleInParallelism ?? DEFAULTS.tikvScaleParallelism,
      scaleOutParallelism: tikv.scalePolicy?.scaleOutParallelism ?? DEFAULTS.tikvScaleParallelism,
      spareVolReplaceReplicas: tikv.spareVolReplaceReplicas ?? DEFAULTS.pdSpareVolReplaceReplicas,
    },
  };
}

/** A duration the controller reads as the operator does (Go's time.ParseDuration); other text is refused, not replaced by the default. */
function goDuration(ctx: Ctx, path: string, value: string | undefined): string | undefined {
  if (value === undefined || GO_DURATION.test(value)) return value;
  ctx.issues.push({ path, message: `expected a Go duration such as 1500m, 400s or 1h30m, got ${JSON.stringify(value)}` });
  return value;
}
