/**
 * What every component resolves the same way: the pod-level settings with the operator's cluster-vs-
 * component precedence, image, resources and storage, services, log tailers and the config table (read
 * by `config-input.ts`), plus the small checks the component modules share (each records an issue
 * with its path and goes on).
 */
import type {
  Affinity,
  Container,
  EnvFromSource,
  EnvVar,
  LocalObjectReference,
  PodDNSConfig,
  PodSecurityContext,
  ResourceRequirements,
  SecurityContext,
  Toleration,
  TopologySpreadConstraint,
  Volume,
  VolumeMount,
} from '../../imports/k8s';
import type { TomlTable } from '../base/toml';
import { configTable } from './config-input';
import { suggest } from '../base/suggest';
import { DEFAULTS } from './defaults';
import type { SpecIssue } from './errors';
import { upgradeChecks } from './upgrade-checks';
import { FORCE_UPGRADE_ANNOTATION, LABEL, LABEL_VALUE, names, type ComponentKind } from './names';
import type { ComponentSettings } from './contract';
import { dnsLabelProblem } from './api-rules';
import { drainHooks, TIKV_DRAIN_GRACE_SECONDS } from './guard-rails';
import { featureCheck, KUBE_FEATURES, kubeVersionText, type KubeFeature } from './kube-version';
import { quantityToBytes } from '../base/quantity';
import type { ComponentSpec, LogTailerSpec, PodSettings, ResourceList, ServiceSpec } from './spec-parts';
import type { TidbClusterManifest, TidbClusterSpec } from './types';
import { OWNED_CONFIG_TABLES, ownedTablesChecked } from './config-tables';
import { CHECKED_SERVERS, type CheckedServer, componentConfigIssues, uncheckedPrefixes } from './config-schema';

/** Pod-level settings after the cluster/component precedence rules. */
export interface ResolvedPod {
  /** @default none (the default scheduler) */
  readonly schedulerName?: string;
  /** @default none */
  readonly affinity?: Affinity;
  /** @default none */
  readonly priorityClassName?: string;
  readonly nodeSelector: Record<string, string>;
  readonly annotations: Record<string, string>;
  readonly labels: Record<string, string>;
  readonly tolerations: Toleration[];
  /** @default none */
  readonly dnsConfig?: PodDNSConfig;
  readonly dnsPolicy: string;
  readonly hostNetwork: boolean;
  readonly imagePullSecrets: LocalObjectReference[];
  /** @default none */
  readonly securityContext?: PodSecurityContext;
  readonly topologySpreadConstraints: TopologySpreadConstraint[];
  /** @default none (Kubernetes default: 30); TiKV with drain hooks: `TIKV_DRAIN_GRACE_SECONDS` (600) */
  readonly terminationGracePeriodSeconds?: number;
  /** @default none (Kubernetes mounts the token) */
  readonly automountServiceAccountToken?: boolean;
  /** @default none (the namespace's `default`) */
  readonly serviceAccountName?: string;
}

export interface ResolvedStorageVolume {
  readonly name: string;
  /** @default none (the cluster's default StorageClass) */
  readonly storageClassName?: string;
  /** @default none */
  readonly volumeAttributesClassName?: string;
  readonly storageSize: string;
  /** @default none (not mounted) */
  readonly mountPath?: string;
}

export interface ResolvedProbe {
  readonly type: 'tcp' | 'command';
  readonly initialDelaySeconds: number;
  /** @default none (Kubernetes default: 10) */
  readonly periodSeconds?: number;
}

export interface ResolvedLogTailer {
  readonly image: string;
  readonly imagePullPolicy: string;
  readonly resources: ResourceRequirements;
  /** @default none */
  readonly securityContext?: SecurityContext;
  /** Native sidecars (init containers with `restartPolicy: Always`) rather than plain containers. */
  readonly useSidecar: boolean;
  /** With useSidecar: seconds to wait after SIGTERM before exiting. @default none (exit at once) */
  readonly sleepTimeSeconds?: number;
}

export interface ResolvedComponent {
  readonly kind: ComponentKind;
  readonly replicas: number;
  readonly image: string;
  readonly imagePullPolicy: string;
  readonly pod: ResolvedPod;
  readonly configUpdateStrategy: 'InPlace' | 'RollingUpdate';
  readonly statefulSetUpdateStrategy: 'RollingUpdate' | 'OnDelete';
  readonly podManagementPolicy: 'Parallel' | 'OrderedReady';
  readonly env: EnvVar[];
  readonly envFrom: EnvFromSource[];
  readonly initContainers: Container[];
  readonly additionalContainers: Container[];
  readonly additionalVolumes: Volume[];
  readonly additionalVolumeMounts: VolumeMount[];
  /** @default none */
  readonly securityContext?: SecurityContext;
  /** @default none (no probe, except TiDB's) */
  readonly readinessProbe?: ResolvedProbe;
  /** Container resources: requests/limits without `storage`. */
  readonly resources: ResourceRequirements;
  /** Size of the data volume (`requests.storage`). @default none (no data volume) */
  readonly storageRequest?: string;
  /** @default none (the cluster's default StorageClass) */
  readonly storageClassName?: string;
  /** @default none */
  readonly volumeAttributesClassName?: string;
  readonly storageVolumes: ResolvedStorageVolume[];
  /** The user's config as a TOML table (before the keys the renderer owns are overlaid). */
  readonly config: TomlTable;
  /** Operation settings for the controller, written as JSON into an annotation. */
  readonly settings: ComponentSettings;
}

export interface ResolvedService {
  readonly type: string;
  readonly annotations: Record<string, string>;
  readonly labels: Record<string, string>;
  readonly portName: string;
  /** @default none */
  readonly loadBalancerIP?: string;
  /** @default none (Kubernetes allocates one) */
  readonly clusterIP?: string;
  /** @default none */
  readonly loadBalancerSourceRanges?: string[];
  /** @default none */
  readonly loadBalancerClass?: string;
}

export interface Ctx {
  readonly tc: TidbClusterManifest;
  readonly spec: TidbClusterSpec;
  /** The cluster's namespace: its own, else the one given with `--namespace`. @default none (objects take the namespace they are applied to) */
  readonly namespace?: string;
  readonly issues: SpecIssue[];
  readonly helper: { readonly image: string; readonly imagePullPolicy: string };
  /** `--controller-image`: the discovery image when `spec.discovery` names none. @default this release's image */
  readonly controllerImage?: string;
  /** The target Kubernetes minor (31 for 1.31). */
  readonly kubeMinor: number;
  /** Things worth saying that do not stop the render, with their paths. */
  readonly warnings: SpecIssue[];
}

export function resolveComponent(ctx: Ctx, kind: ComponentKind, comp: ComponentSpec, path = `spec.${kind}`): ResolvedComponent {
  const { spec } = ctx;
  const { resources, storage } = splitResources(comp.requests, comp.limits, (comp as { claims?: unknown[] }).claims);
  if (comp.volumeAttributesClassName !== undefined)
    requireFeature(ctx, `${path}.volumeAttributesClassName`, KUBE_FEATURES.volumeAttributesClass);
  const claimNames = new Set<string>();
  (comp.storageVolumes ?? []).forEach((v, i) => {
    // The claim template is `<component>-<name>`, and the Pod's volume takes that name: a DNS label.
    const claim = names.storageVolume(kind, v.name);
    const problem = dnsLabelProblem(claim, `volume name once prefixed (${claim})`);
    if (problem) ctx.issues.push({ path: `${path}.storageVolumes[${i}].name`, message: problem });
    else if (claimNames.has(claim))
      ctx.issues.push({
        path: `${path}.storageVolumes[${i}].name`,
        message: `two storage volumes are named ${v.name}; each needs its own name`,
      });
    claimNames.add(claim);
    if (v.volumeAttributesClassName) {
      requireFeature(ctx, `${path}.storageVolumes[${i}].volumeAttributesClassName`, KUBE_FEATURES.volumeAttributesClass);
    }
  });
  const updateStrategy =
    comp.statefulSetUpdateStrategy ?? spec.statefulSetUpdateStrategy ?? (DEFAULTS.statefulSetUpdateStrategy as 'RollingUpdate');
  const image = resolveImage(kind, comp, spec.version);
  return {
    kind,
    replicas: comp.replicas,
    image,
    imagePullPolicy: resolvePullPolicy(ctx, comp),
    pod: resolvePod(ctx, kind, comp),
    configUpdateStrategy:
      oneOf(ctx, `${path}.configUpdateStrategy`, comp.configUpdateStrategy, CONFIG_UPDATE_STRATEGIES) ??
      oneOf(ctx, 'spec.configUpdateStrategy', spec.configUpdateStrategy, CONFIG_UPDATE_STRATEGIES) ??
      (DEFAULTS.configUpdateStrategy as 'InPlace'),
    statefulSetUpdateStrategy: updateStrategy,
    podManagementPolicy: (comp.podManagementPolicy ?? spec.podManagementPolicy) === 'OrderedReady' ? 'OrderedReady' : 'Parallel',
    env: comp.env ?? [],
    envFrom: comp.envFrom ?? [],
    initContainers: comp.initContainers ?? [],
    additionalContainers: comp.additionalContainers ?? [],
    additionalVolumes: comp.additionalVolumes ?? [],
    additionalVolumeMounts: comp.additionalVolumeMounts ?? [],
    securityContext: comp.securityContext,
    readinessProbe: comp.readinessProbe && {
      type: comp.readinessProbe.type ?? 'tcp',
      initialDelaySeconds: comp.readinessProbe.initialDelaySeconds ?? DEFAULTS.probeInitialDelaySeconds,
      periodSeconds: comp.readinessProbe.periodSeconds,
    },
    resources,
    storageRequest: storage,
    storageClassName: comp.storageClassName,
    volumeAttributesClassName: comp.volumeAttributesClassName,
    storageVolumes: (comp.storageVolumes ?? []).map((v) => ({
      name: v.name,
      storageClassName: v.storageClassName || comp.storageClassName,
      // An empty name counts as unset, as for the class.
      volumeAttributesClassName: v.volumeAttributesClassName || comp.volumeAttributesClassName,
      storageSize: String(v.storageSize),
      mountPath: v.mountPath || undefined,
    })),
    config: checkedConfig(ctx, kind, comp, image, path),
    settings: {
      ...clusterSettings(ctx.tc),
      // Read by nobody but `diff`, which reports a change of target like any other setting.
      kubeVersion: kubeVersionText(ctx.kubeMinor),
      maxFailoverCount: comp.maxFailoverCount ?? DEFAULTS.maxFailoverCount,
      // The controller owns the StatefulSet's updateStrategy and writes it with the partition.
      updateStrategy,
      ...upgradeChecks(ctx.tc.metadata.annotations, kind, ctx.issues),
    },
  };
}

/**
 * The component's config as a table, the tables the renderer writes refused, and, for PD, TiKV and
 * TiDB, every key checked against what the image's release reads (config-schema/).
 */
function checkedConfig(ctx: Ctx, kind: ComponentKind, comp: ComponentSpec, image: string, path: string): TomlTable {
  const before = ctx.issues.length;
  const config = ownedTablesChecked(
    configTable(comp.config, `${path}.config`, ctx.issues),
    OWNED_CONFIG_TABLES[kind] ?? [],
    `${path}.config`,
    ctx.issues,
  );
  if (!(kind in CHECKED_SERVERS)) return config;
  const found = componentConfigIssues(kind as CheckedServer, image, config, {
    path: `${path}.config`,
    ...(typeof comp.config === 'string' && { text: comp.config }),
    unchecked: uncheckedPrefixes(ctx.tc.metadata.annotations, kind),
  });
  // A key already refused by its reading (a table the renderer writes) is said once.
  const said = new Set(ctx.issues.slice(before).map((i) => i.path));
  ctx.issues.push(...found.errors.filter((i) => !said.has(i.path)));
  ctx.warnings.push(...found.warnings.filter((i) => !said.has(i.path)));
  return config;
}

/** The pod-level fields a component takes from the cluster-wide ones (`PodSettings`) and a few of its own. */
export interface PodFields extends PodSettings {
  /** @default none (Kubernetes default: 30) */
  terminationGracePeriodSeconds?: number;
  /** @default none (Kubernetes mounts the token) */
  automountServiceAccountToken?: boolean;
  /** @default spec.serviceAccount */
  serviceAccount?: string;
}

/** Pod-level settings with the operator's cluster-vs-component precedence (maps merged, lists and objects replaced). */
export function resolvePod(ctx: Ctx, kind: ComponentKind | 'discovery', comp: PodFields): ResolvedPod {
  const { spec, tc } = ctx;
  const hostNetwork = comp.hostNetwork ?? spec.hostNetwork ?? false;
  return {
    schedulerName: comp.schedulerName ?? spec.schedulerName,
    affinity: comp.affinity ?? spec.affinity,
    priorityClassName: comp.priorityClassName ?? spec.priorityClassName,
    nodeSelector: { ...spec.nodeSelector, ...comp.nodeSelector },
    annotations: { ...spec.annotations, ...comp.annotations },
    labels: { ...spec.labels, ...comp.labels },
    tolerations: nonEmpty(comp.tolerations) ?? spec.tolerations ?? [],
    dnsConfig: comp.dnsConfig ?? spec.dnsConfig,
    dnsPolicy: comp.dnsPolicy ?? spec.dnsPolicy ?? (hostNetwork ? 'ClusterFirstWithHostNet' : 'ClusterFirst'),
    hostNetwork,
    imagePullSecrets: nonEmpty(comp.imagePullSecrets) ?? spec.imagePullSecrets ?? [],
    securityContext: comp.podSecurityContext ?? spec.podSecurityContext,
    topologySpreadConstraints: topologySpread(
      nonEmpty(comp.topologySpreadConstraints) ?? spec.topologySpreadConstraints ?? [],
      kind,
      tc.metadata.name,
    ),
    terminationGracePeriodSeconds:
      comp.terminationGracePeriodSeconds ??
      (kind === 'tikv' && drainHooks(tc.metadata.annotations ?? {}, []) ? TIKV_DRAIN_GRACE_SECONDS : undefined),
    automountServiceAccountToken: comp.automountServiceAccountToken,
    serviceAccountName: comp.serviceAccount ?? spec.serviceAccount,
  };
}

/** Component, else cluster, else `IfNotPresent`. */
export function resolvePullPolicy(ctx: Ctx, comp: Pick<PodSettings, 'imagePullPolicy'>): string {
  return comp.imagePullPolicy ?? ctx.spec.imagePullPolicy ?? DEFAULTS.imagePullPolicy;
}

/** Cluster-wide operation settings; every component's settings annotation carries them too. */
export function clusterSettings(tc: TidbClusterManifest): {
  paused: boolean;
  pvReclaimPolicy: string;
  enablePVReclaim: boolean;
  forceUpgrade: boolean;
} {
  const spec = tc.spec ?? {};
  return {
    paused: spec.paused ?? false,
    pvReclaimPolicy: spec.pvReclaimPolicy ?? DEFAULTS.pvReclaimPolicy,
    enablePVReclaim: spec.enablePVReclaim ?? false,
    forceUpgrade: tc.metadata.annotations?.[FORCE_UPGRADE_ANNOTATION] === 'true',
  };
}

/** `baseImage[:version]`; the CRD fills baseImage by default, so `image` counts only when it is "". */
export function resolveImage(kind: ComponentKind, comp: ComponentSpec, clusterVersion: string | undefined): string {
  const base = comp.baseImage ?? DEFAULTS.baseImage[kind];
  if (base === '' && comp.image) return comp.image;
  const version = comp.version ?? clusterVersion;
  return version ? `${base}:${version}` : base;
}

export function resolveService(svc: ServiceSpec | undefined, defaultPortName: string, type: string): ResolvedService {
  return {
    type,
    annotations: svc?.annotations ?? {},
    labels: svc?.labels ?? {},
    portName: svc?.portName ?? defaultPortName,
    loadBalancerIP: svc?.loadBalancerIP,
    clusterIP: svc?.clusterIP,
    loadBalancerSourceRanges: svc?.loadBalancerSourceRanges,
    loadBalancerClass: svc?.loadBalancerClass,
  };
}

/** `path` is where the tailer spec sits (`spec.tikv.logTailer`), for messages. */
export function resolveLogTailer(ctx: Ctx, tailer: LogTailerSpec | undefined, path: string): ResolvedLogTailer {
  const useSidecar = tailer?.useSidecar ?? false;
  const sleep = tailer?.sleepTimeSeconds;
  if (useSidecar) requireFeature(ctx, `${path}.useSidecar`, KUBE_FEATURES.nativeSidecars);
  if (sleep !== undefined && !useSidecar) {
    ctx.issues.push({
      path: `${path}.sleepTimeSeconds`,
      message: `only read by native sidecars: set ${path}.useSidecar: true, or remove it (without useSidecar it has no effect)`,
    });
  } else if (sleep !== undefined && (!Number.isSafeInteger(sleep) || sleep < 0)) {
    ctx.issues.push({
      path: `${path}.sleepTimeSeconds`,
      message: `expected a whole number of seconds, 0 or more, got ${JSON.stringify(sleep)}`,
    });
  }
  return {
    image: ctx.helper.image,
    imagePullPolicy: ctx.helper.imagePullPolicy,
    resources: splitResources(tailer?.requests, tailer?.limits, undefined).resources,
    securityContext: tailer?.securityContext,
    useSidecar,
    ...(useSidecar && sleep !== undefined && { sleepTimeSeconds: sleep }),
  };
}

export const CONFIG_UPDATE_STRATEGIES = ['InPlace', 'RollingUpdate'] as const;

/**
 * `spec.pvReclaimPolicy`: what Kubernetes does with a PV once its claim is deleted. The CRD leaves
 * the field free-form; `Recycle` is deprecated in Kubernetes and never what a database wants.
 */
export const PV_RECLAIM_POLICIES = ['Retain', 'Delete'] as const;

// Values the start scripts carry as words: checked here, with their paths, so a script never meets them.
export const ONE_LINE = /^[^\r\n]*$/;

/** `value`, after recording an error at `path` unless it matches `pattern`. */
export function checked(ctx: Ctx, path: string, value: string, pattern: RegExp, expected: string): string {
  if (!pattern.test(value)) ctx.issues.push({ path, message: `expected ${expected}, got ${JSON.stringify(value)}` });
  return value;
}

/** `value`, after recording an error at `path` unless it is a whole number of at least `min`. */
export function atLeast(ctx: Ctx, path: string, value: number, min: number): number {
  if (!Number.isSafeInteger(value) || value < min)
    ctx.issues.push({ path, message: `expected a whole number of seconds, ${min} or more, got ${JSON.stringify(value)}` });
  return value;
}

/**
 * `value` when it is one of `allowed`; otherwise an error (with a did-you-mean) and undefined. The CRD
 * leaves some of these fields free-form, but a typo there would silently mean the default.
 */
export function oneOf<T extends string>(ctx: Ctx, path: string, value: string | undefined, allowed: readonly T[]): T | undefined {
  if (value === undefined) return undefined;
  if ((allowed as readonly string[]).includes(value)) return value as T;
  // Reported once, though every component reads the cluster-wide value.
  if (!ctx.issues.some((i) => i.path === path)) {
    const hint = suggest(value, allowed);
    ctx.issues.push({
      path,
      message: `expected ${allowed.join(' or ')}, got ${JSON.stringify(value)}${hint ? `; did you mean ${hint}?` : ''}`,
    });
  }
  return undefined;
}

/** Records an error when the target Kubernetes lacks `feature`, a warning when it is off by default there. */
export function requireFeature(ctx: Ctx, path: string, feature: KubeFeature): void {
  const verdict = featureCheck(feature, ctx.kubeMinor);
  if (!verdict) return;
  if ('error' in verdict) ctx.issues.push({ path, message: verdict.error });
  else ctx.warnings.push({ path, message: verdict.warning });
}

/** Container resources never carry `storage`: that key sizes the PVC (requests) or TiKV (limits). */
export function splitResources(
  requests: ResourceList | undefined,
  limits: ResourceList | undefined,
  claims: unknown[] | undefined,
): { resources: ResourceRequirements; storage?: string } {
  const strip = (list: ResourceList | undefined) => {
    if (!list) return undefined;
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(list)) if (k !== 'storage') out[k] = String(v);
    return Object.keys(out).length > 0 ? out : undefined;
  };
  const resources: ResourceRequirements = {};
  const req = strip(requests);
  const lim = strip(limits);
  if (lim) resources.limits = lim;
  if (req) resources.requests = req;
  if (claims && claims.length > 0) resources.claims = claims as ResourceRequirements['claims'];
  const storage = requests?.storage;
  return { resources, storage: storage === undefined ? undefined : String(storage) };
}

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

/**
 * `CAPACITY` of TiKV and TiFlash from `limits.storage`: whole GiB as `<n>GB`, else whole MiB as
 * `<n>MB`; `0` means the disk size.
 */
export function storageCapacity(limit: string | number | undefined, path: string, issues: SpecIssue[]): string {
  if (limit === undefined) return '0';
  const bytes = quantityToBytes(limit);
  if (bytes === undefined) {
    issues.push({ path, message: `expected a Kubernetes quantity such as 100Gi, got ${JSON.stringify(limit)}` });
    return '0';
  }
  return bytes % GiB === 0 ? `${bytes / GiB}GB` : `${Math.floor(bytes / MiB)}MB`;
}

export function topologySpread(
  entries: NonNullable<PodSettings['topologySpreadConstraints']>,
  kind: ComponentKind | 'discovery',
  clusterName: string,
): TopologySpreadConstraint[] {
  return entries.map((e) => ({
    maxSkew: e.maxSkew ?? DEFAULTS.topologyMaxSkew,
    topologyKey: e.topologyKey,
    whenUnsatisfiable: 'DoNotSchedule',
    ...(e.minDomains !== undefined && { minDomains: e.minDomains }),
    ...(e.nodeAffinityPolicy !== undefined && { nodeAffinityPolicy: e.nodeAffinityPolicy }),
    labelSelector: {
      matchLabels: {
        [LABEL.name]: LABEL_VALUE.name,
        [LABEL.managedBy]: LABEL_VALUE.managedBy,
        [LABEL.component]: kind,
        [LABEL.instance]: clusterName,
        ...e.matchLabels,
      },
    },
  }));
}

export function nonEmpty<T>(list: T[] | undefined): T[] | undefined {
  return list && list.length > 0 ? list : undefined;
}
