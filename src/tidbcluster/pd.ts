/** `spec.pd`: what PD resolves beyond the common component fields. */
import { DEFAULTS } from './defaults';
import { names } from './names';
import { atLeast, checked, resolveComponent, resolveService, type Ctx, type ResolvedComponent, type ResolvedService } from './component';
import { SUB_DIR } from '../base/patterns';

export interface ResolvedPD extends ResolvedComponent {
  readonly kind: 'pd';
  readonly service: ResolvedService;
  readonly dataSubDir: string;
  readonly startTimeout: number;
  readonly initWaitTime: number;
  readonly startUpScriptVersion: '' | 'v1';
  /** @default none (`dashboard.internal-proxy` is left out of the config) */
  readonly enableDashboardInternalProxy?: boolean;
  /** Mount `<cluster>-cluster-client-secret` (only with tlsCluster). */
  readonly mountClusterClientSecret: boolean;
  /** Secret of the dashboard's client certificate towards TiDB (with `tidb.tlsClient`). */
  readonly tlsClientSecretName: string;
}

export function resolvePD(ctx: Ctx): ResolvedPD {
  const pd = ctx.spec.pd!;
  const base = resolveComponent(ctx, 'pd', pd);
  const legacyType = ctx.spec.services?.find((s) => s.name === 'pd')?.type;
  return {
    ...base,
    kind: 'pd',
    service: resolveService(pd.service, DEFAULTS.pdServicePortName, pd.service?.type ?? legacyServiceType(legacyType)),
    dataSubDir: checked(ctx, 'spec.pd.dataSubDir', pd.dataSubDir ?? '', SUB_DIR, 'a relative path of letters, digits, ., _, / and -'),
    // 0 counts as unset, as in the operator.
    startTimeout: atLeast(ctx, 'spec.pd.startTimeout', pd.startTimeout || DEFAULTS.pdStartTimeout, 1),
    initWaitTime: atLeast(ctx, 'spec.pd.initWaitTime', pd.initWaitTime ?? DEFAULTS.pdInitWaitTime, 0),
    startUpScriptVersion: pd.startUpScriptVersion ?? '',
    enableDashboardInternalProxy: pd.enableDashboardInternalProxy,
    mountClusterClientSecret: pd.mountClusterClientSecret ?? false,
    tlsClientSecretName: pd.tlsClientSecretName || names.tidbClientSecret(ctx.tc.metadata.name),
    settings: {
      ...base.settings,
      spareVolReplaceReplicas: pd.spareVolReplaceReplicas ?? DEFAULTS.pdSpareVolReplaceReplicas,
    },
  };
}

/** The deprecated `spec.services` entry knows NodePort and LoadBalancer; anything else is ClusterIP. */
export function legacyServiceType(type: string | undefined): string {
  return type === 'NodePort' || type === 'LoadBalancer' ? type : 'ClusterIP';
}
