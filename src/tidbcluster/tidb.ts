/** `spec.tidb`: what TiDB resolves beyond the common component fields. */
import type { Lifecycle } from '../../imports/k8s';
import { DEFAULTS } from './defaults';
import {
  checked,
  ONE_LINE,
  resolveComponent,
  resolveLogTailer,
  resolveService,
  type Ctx,
  type ResolvedComponent,
  type ResolvedLogTailer,
  type ResolvedService,
} from './component';
import { asTable } from './config-input';
import { PLUGIN_NAME } from '../base/patterns';
import type { TiDBServiceSpec, TiDBSpec } from './types';

export interface ResolvedTiDBService extends ResolvedService {
  readonly port: number;
  /** @default none */
  readonly externalTrafficPolicy?: string;
  readonly exposeStatus: boolean;
  /** @default none */
  readonly mysqlNodePort?: number;
  /** @default none */
  readonly statusNodePort?: number;
  readonly additionalPorts: NonNullable<TiDBServiceSpec['additionalPorts']>;
}

export interface ResolvedTiDB extends ResolvedComponent {
  readonly kind: 'tidb';
  /** @default none (no client Service) */
  readonly service?: ResolvedTiDBService;
  readonly binlogEnabled: boolean;
  readonly separateSlowLog: boolean;
  /** @default none (the `slowlog` emptyDir) */
  readonly slowLogVolumeName?: string;
  readonly slowLogTailer: ResolvedLogTailer;
  readonly tokenBasedAuthEnabled: boolean;
  /** @default none */
  readonly bootstrapSQLConfigMapName?: string;
  readonly plugins: string[];
  readonly arguments: string[];
  /** @default none */
  readonly lifecycle?: Lifecycle;
  /** @default none */
  readonly customizedStartupProbe?: NonNullable<TiDBSpec['customizedStartupProbe']>;
}

export function resolveTiDB(ctx: Ctx): ResolvedTiDB {
  const tidb = ctx.spec.tidb!;
  const base = resolveComponent(ctx, 'tidb', tidb);
  const config = { ...base.config };
  const log = asTable(config.log);
  const file = asTable(log.file);
  if (file['max-backups'] === undefined) {
    config.log = { ...log, file: { ...file, 'max-backups': DEFAULTS.tidbLogMaxBackups } };
  }
  return {
    ...base,
    kind: 'tidb',
    config,
    service: tidb.service && resolveTiDBService(tidb.service),
    binlogEnabled: tidb.binlogEnabled ?? ctx.spec.pump !== undefined,
    separateSlowLog: tidb.separateSlowLog ?? DEFAULTS.tidbSeparateSlowLog,
    slowLogVolumeName: tidb.slowLogVolumeName || undefined,
    slowLogTailer: resolveLogTailer(ctx, tidb.slowLogTailer, 'spec.tidb.slowLogTailer'),
    tokenBasedAuthEnabled: tidb.tokenBasedAuthEnabled ?? false,
    bootstrapSQLConfigMapName: tidb.bootstrapSQLConfigMapName || undefined,
    plugins: (tidb.plugins ?? []).map((p, i) =>
      checked(ctx, `spec.tidb.plugins[${i}]`, p, PLUGIN_NAME, 'a plugin name (letters, digits, ., _ and -)'),
    ),
    arguments: (tidb.arguments ?? []).map((a, i) =>
      checked(ctx, `spec.tidb.arguments[${i}]`, a, ONE_LINE, 'one line (the start script puts each argument on its own line)'),
    ),
    lifecycle: tidb.lifecycle,
    customizedStartupProbe: tidb.customizedStartupProbe,
    settings: {
      ...base.settings,
      scaleInParallelism: tidb.scalePolicy?.scaleInParallelism ?? DEFAULTS.tikvScaleParallelism,
      scaleOutParallelism: tidb.scalePolicy?.scaleOutParallelism ?? DEFAULTS.tikvScaleParallelism,
      serverLabels: tidb.serverLabels ?? {},
    },
  };
}

function resolveTiDBService(svc: TiDBServiceSpec): ResolvedTiDBService {
  return {
    ...resolveService(svc, DEFAULTS.tidbServicePortName, svc.type || 'ClusterIP'),
    port: svc.port ?? 4000,
    externalTrafficPolicy: svc.externalTrafficPolicy,
    exposeStatus: svc.exposeStatus ?? DEFAULTS.tidbExposeStatus,
    mysqlNodePort: svc.mysqlNodePort || undefined,
    statusNodePort: svc.statusNodePort || undefined,
    additionalPorts: svc.additionalPorts ?? [],
  };
}
