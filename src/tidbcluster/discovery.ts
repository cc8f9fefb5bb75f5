/**
 * `spec.discovery`: the Deployment `<cluster>-discovery` that runs the companion controller (PD
 * bootstrap discovery on 10261, partition stepping). Spec type, resolution and the fields accepted.
 */
import type {
  Container,
  EnvFromSource,
  EnvVar,
  PodSecurityContext,
  ResourceRequirements,
  SecurityContext,
  Volume,
  VolumeMount,
} from '../../imports/k8s';
import { CONTROLLER_REPOSITORY, DEFAULTS, type DefaultEntry } from './defaults';
import { names } from './names';
import { resolvePod, resolvePullPolicy, splitResources, type Ctx, type ResolvedPod } from './component';
import type { ComponentFields } from './fields';
import type { DiscoveryProbeSpec, DiscoverySpec } from './types';

/** The controller's HTTP probe timing after the user's overrides. */
export interface ResolvedDiscoveryProbe {
  /** @default none (Kubernetes default: 0) */
  readonly initialDelaySeconds?: number;
  readonly periodSeconds: number;
  readonly failureThreshold: number;
}

export interface ResolvedDiscovery {
  readonly image: string;
  readonly imagePullPolicy: string;
  /** `serviceAccountName` is always `<cluster>-discovery`; `securityContext` is never empty. */
  readonly pod: ResolvedPod;
  readonly resources: ResourceRequirements;
  readonly securityContext: SecurityContext;
  readonly env: EnvVar[];
  readonly envFrom: EnvFromSource[];
  readonly initContainers: Container[];
  readonly additionalContainers: Container[];
  readonly additionalVolumes: Volume[];
  readonly additionalVolumeMounts: VolumeMount[];
  readonly readinessProbe: ResolvedDiscoveryProbe;
  readonly livenessProbe: ResolvedDiscoveryProbe;
}

const POD_SECURITY_CONTEXT: PodSecurityContext = {
  runAsNonRoot: true,
  runAsUser: 65532,
  runAsGroup: 65532,
  fsGroup: 65532,
  seccompProfile: { type: 'RuntimeDefault' },
};

const SECURITY_CONTEXT: SecurityContext = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  runAsNonRoot: true,
  capabilities: { drop: ['ALL'] },
};

/** Defaults of the discovery Deployment (this project's: the operator set none). */
export const DISCOVERY_DEFAULTS = {
  requests: { cpu: '50m', memory: '96Mi' },
  limits: { memory: '256Mi' },
  /** 65532 is the user the controller image runs as. */
  podSecurityContext: POD_SECURITY_CONTEXT,
  securityContext: SECURITY_CONTEXT,
  readinessProbe: { periodSeconds: 5, failureThreshold: 3 },
  livenessProbe: { initialDelaySeconds: 10, periodSeconds: 10, failureThreshold: 3 },
  /**
   * How the controller's Node runs, each unless `spec.discovery.env` sets it: two malloc arenas rather
   * than glibc's eight per core, and a young generation of 1 MiB per semi-space rather than V8's 16.
   * Measured with `npm run bench` on Node 24: a peak of 80 MiB rather than 89, and 1 MiB more after
   * 10,000 watch events and 1,000 requests rather than 9, for about 1 ms more CPU per pass.
   */
  env: [
    { name: 'MALLOC_ARENA_MAX', value: '2' },
    { name: 'NODE_OPTIONS', value: '--max-semi-space-size=1' },
  ],
} as const;

export const DISCOVERY_DEFAULTS_TABLE: readonly DefaultEntry[] = [
  {
    field: 'spec.discovery.image',
    value: DEFAULTS.controllerImage,
    note: '`--controller-image` when given; `spec.discovery.version` sets the tag',
  },
  { field: 'spec.discovery.requests', value: '{cpu: 50m, memory: 96Mi}', note: 'only when requests and limits are both unset' },
  { field: 'spec.discovery.limits', value: '{memory: 256Mi}', note: 'only when requests and limits are both unset' },
  ...DISCOVERY_DEFAULTS.env.map((e) => ({
    field: `spec.discovery.env ${e.name}`,
    value: e.value,
    note: 'unless spec.discovery.env sets it',
  })),
  {
    field: 'spec.discovery.podSecurityContext',
    value: 'non-root 65532, RuntimeDefault seccomp',
    note: 'when neither it nor spec.podSecurityContext is set',
  },
  { field: 'spec.discovery.securityContext', value: 'no privilege escalation, read-only root, no capabilities' },
  { field: 'spec.discovery.readinessProbe', value: 'GET /readyz :10263 every 5s', note: 'initialDelaySeconds and periodSeconds override' },
  {
    field: 'spec.discovery.livenessProbe',
    value: 'GET /healthz :10263 every 10s after 10s',
    note: 'initialDelaySeconds and periodSeconds override',
  },
];

const STATEFULSET_ONLY = 'discovery runs as a Deployment, which has no such setting (tidb-operator ignored it too); remove it';

/** Fields of `spec.discovery`: the common component ones it has in the CRD, and the refused ones (see `support.ts`). */
export const DISCOVERY_FIELDS: ComponentFields = {
  extra: ['livenessProbe'],
  // Not in the CRD's discovery spec (the schema check names them as unknown) or refused below.
  except: [
    'replicas',
    'baseImage',
    'config',
    'serviceAccount',
    'storageClassName',
    'volumeAttributesClassName',
    'storageVolumes',
    'maxFailoverCount',
    'statefulSetUpdateStrategy',
    'podManagementPolicy',
    'configUpdateStrategy',
  ],
  offValues: {
    suspendAction: [{}, { suspendStatefulSet: false }],
    'readinessProbe.type': ['tcp'],
    'livenessProbe.type': ['tcp'],
  },
  reasons: {
    statefulSetUpdateStrategy: STATEFULSET_ONLY,
    podManagementPolicy: STATEFULSET_ONLY,
    configUpdateStrategy: 'discovery has no ConfigMap (tidb-operator ignored this field too); remove it',
    suspendAction: 'discovery runs as a Deployment, which suspendStatefulSet does not stop; remove it',
    'readinessProbe.type': 'the controller is checked over HTTP (/readyz); only initialDelaySeconds and periodSeconds are taken',
    'livenessProbe.type': 'the controller is checked over HTTP (/healthz); only initialDelaySeconds and periodSeconds are taken',
  },
};

/** An image of tidb-operator itself: its discovery binary is not the tidb-gitops controller. */
const OPERATOR_IMAGE = /(^|\/)tidb-operator(:|@|$)/;

export function resolveDiscovery(ctx: Ctx): ResolvedDiscovery {
  const spec: DiscoverySpec = ctx.spec.discovery ?? {};
  const path = 'spec.discovery';
  const pod = resolvePod(ctx, 'discovery', spec);
  if (spec.image && OPERATOR_IMAGE.test(spec.image)) {
    ctx.issues.push({
      path: `${path}.image`,
      message:
        `${JSON.stringify(spec.image)} is a tidb-operator image, which does not contain the tidb-gitops controller ` +
        '(tidb-operator ignored this field); remove it to use the tidb-gitops image, or name a tidb-gitops image',
    });
  }
  for (const list of ['requests', 'limits'] as const) {
    if (spec[list]?.storage !== undefined) {
      ctx.issues.push({ path: `${path}.${list}.storage`, message: 'discovery has no volume for storage to size; remove it' });
    }
  }
  const given = spec.requests !== undefined || spec.limits !== undefined;
  const { resources } = splitResources(
    given ? spec.requests : DISCOVERY_DEFAULTS.requests,
    given ? spec.limits : DISCOVERY_DEFAULTS.limits,
    spec.claims,
  );
  return {
    image: spec.image || (spec.version ? `${CONTROLLER_REPOSITORY}:${spec.version}` : (ctx.controllerImage ?? DEFAULTS.controllerImage)),
    imagePullPolicy: resolvePullPolicy(ctx, spec),
    pod: {
      ...pod,
      securityContext: pod.securityContext ?? structuredClone(DISCOVERY_DEFAULTS.podSecurityContext),
      serviceAccountName: names.discovery(ctx.tc.metadata.name),
    },
    resources,
    securityContext: spec.securityContext ?? structuredClone(DISCOVERY_DEFAULTS.securityContext),
    env: spec.env ?? [],
    envFrom: spec.envFrom ?? [],
    initContainers: spec.initContainers ?? [],
    additionalContainers: spec.additionalContainers ?? [],
    additionalVolumes: spec.additionalVolumes ?? [],
    additionalVolumeMounts: spec.additionalVolumeMounts ?? [],
    readinessProbe: resolveProbe(spec.readinessProbe, DISCOVERY_DEFAULTS.readinessProbe),
    livenessProbe: resolveProbe(spec.livenessProbe, DISCOVERY_DEFAULTS.livenessProbe),
  };
}

function resolveProbe(
  probe: DiscoveryProbeSpec | undefined,
  defaults: { readonly initialDelaySeconds?: number; readonly periodSeconds: number; readonly failureThreshold: number },
): ResolvedDiscoveryProbe {
  const initialDelaySeconds = probe?.initialDelaySeconds ?? defaults.initialDelaySeconds;
  return {
    ...(initialDelaySeconds !== undefined && { initialDelaySeconds }),
    periodSeconds: probe?.periodSeconds ?? defaults.periodSeconds,
    failureThreshold: defaults.failureThreshold,
  };
}
