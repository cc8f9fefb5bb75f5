/**
 * `spec.pdms`: PD's micro-services. With `spec.pd.mode: ms`, PD runs as the API server and each
 * entry (`tso`, `scheduling`) becomes a StatefulSet `<cluster>-<name>` of its own, as tidb-operator v1
 * renders them: no data volume, the PD image, PD's cluster certificate.
 */
import { DEFAULTS } from './defaults';
import { resolveComponent, resolveImage, resolveService, type Ctx, type ResolvedComponent, type ResolvedService } from './component';
import { legacyServiceType } from './pd';
import type { PDMSSpec } from './types';

/** The PD micro-services tidb-operator v1 knows, in the order it reconciles them. */
export const PDMS_SERVICES = ['tso', 'scheduling'] as const;
export type PdmsService = (typeof PDMS_SERVICES)[number];

export interface ResolvedPdms extends ResolvedComponent {
  readonly kind: PdmsService;
  readonly service: ResolvedService;
  /** Mount `<cluster>-cluster-client-secret` (only with tlsCluster). */
  readonly mountClusterClientSecret: boolean;
}

/** Fields of a `spec.pdms[]` entry beyond the common component ones, and why some are refused (see `support.ts`). */
export const PDMS_FIELDS = {
  extra: ['name', 'service', 'mountClusterClientSecret'],
  except: ['readinessProbe'],
  offValues: {
    startUpScriptVersion: [''],
    suspendAction: [{}, { suspendStatefulSet: false }],
  },
  reasons: {
    readinessProbe: 'tidb-operator gives the TSO and scheduling servers no readiness probe',
    startUpScriptVersion: 'the micro-services always run the v2 start script, which waits with dig',
    startTimeout: "the micro-services' start script waits for spec.pd.startTimeout, as the operator's does; set that instead",
    tlsClientSecretName: 'only PD serves the dashboard, which uses that certificate; set spec.pd.tlsClientSecretName',
    suspendAction: 'to stop a micro-service, lower its replicas (the StatefulSet stays)',
  } as Readonly<Record<string, string>>,
} as const;

/**
 * The micro-services of `spec.pdms`, each checked where it is read: the list needs PD in mode `ms`
 * (and that mode needs the list), a name at most once, no data volume, and a namespace (their
 * scripts are v2 ones, which name it).
 */
export function resolvePdms(ctx: Ctx): Partial<Record<PdmsService, ResolvedPdms>> {
  const { spec } = ctx;
  const list = spec.pdms ?? [];
  const mode = spec.pd?.mode ?? '';
  if (mode === 'ms' && list.length === 0) {
    ctx.issues.push({
      path: 'spec.pd.mode',
      message: 'mode ms runs PD as the API server of its micro-services: list them in spec.pdms (tso, scheduling), or leave mode empty',
    });
  }
  if (list.length === 0) return {};
  if (!spec.pd) {
    ctx.issues.push({
      path: 'spec.pdms',
      message: "the PD micro-services need this cluster's own PD (spec.pd with mode: ms) as their API server",
    });
    return {};
  }
  if (mode !== 'ms') {
    ctx.issues.push({
      path: 'spec.pd.mode',
      message: `expected "ms" with spec.pdms set (PD must run as the micro-services' API server), got ${JSON.stringify(mode)}`,
    });
  }
  // (With start script v2 the resolver says so already.)
  if (!ctx.namespace && spec.startScriptVersion !== 'v2') {
    ctx.issues.push({
      path: 'metadata.namespace',
      message: 'required with spec.pdms, whose start scripts name the namespace; set it here or pass --namespace',
    });
  }
  const out: Partial<Record<PdmsService, ResolvedPdms>> = {};
  list.forEach((entry, i) => {
    const path = `spec.pdms[${i}]`;
    if (!(PDMS_SERVICES as readonly string[]).includes(entry.name)) {
      ctx.issues.push({ path: `${path}.name`, message: `expected one of ${PDMS_SERVICES.join(', ')}, got ${JSON.stringify(entry.name)}` });
      return;
    }
    if (out[entry.name]) {
      ctx.issues.push({
        path: `${path}.name`,
        message: `${entry.name} is listed twice in spec.pdms; each micro-service is one StatefulSet (<cluster>-${entry.name})`,
      });
      return;
    }
    out[entry.name] = resolveOne(ctx, entry, path);
  });
  return out;
}

function resolveOne(ctx: Ctx, entry: PDMSSpec, path: string): ResolvedPdms {
  const kind = entry.name;
  const base = resolveComponent(ctx, kind, entry, path);
  if (base.storageRequest !== undefined) {
    ctx.issues.push({
      path: `${path}.requests.storage`,
      message: 'the PD micro-services keep no data: there is no data volume to size (use storageVolumes for extra volumes)',
    });
  }
  // The operator takes PD's image when the entry names none at all.
  const image = entry.baseImage === '' && !entry.image && ctx.spec.pd ? resolveImage('pd', ctx.spec.pd, ctx.spec.version) : base.image;
  const legacyType = ctx.spec.services?.find((s) => s.name === kind)?.type;
  return {
    ...base,
    kind,
    image,
    // The operator sets the micro-services' account from the entry alone, not from spec.serviceAccount.
    pod: { ...base.pod, serviceAccountName: entry.serviceAccount },
    service: resolveService(entry.service, DEFAULTS.pdServicePortName, entry.service?.type ?? legacyServiceType(legacyType)),
    mountClusterClientSecret: entry.mountClusterClientSecret ?? false,
  };
}
