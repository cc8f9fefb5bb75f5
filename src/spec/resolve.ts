/**
 * `resolve(spec) -> ResolvedCluster`: applies every default once (from `defaults.ts`) and the
 * operator's cluster-vs-component precedence rules, so constructs never re-default.
 */
import type {
  Affinity,
  Container,
  EnvFromSource,
  EnvVar,
  Lifecycle,
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
import { isTomlTable, parseToml, TomlSyntaxError, type TomlTable, type TomlValue } from '../render/config/toml';
import { suggest } from './crd-schema';
import { DEFAULTS } from './defaults';
import { SpecError, type SpecIssue } from './errors';
import { FORCE_UPGRADE_ANNOTATION, LABEL, LABEL_VALUE, names, type ComponentKind } from './names';
import { resolveDiscovery, type ResolvedDiscovery } from './discovery';
import { resolvePump, type ResolvedPump } from './pump';
import { resolveTiCDC, type ResolvedTiCDC } from './ticdc';
import { resolveTiFlash, type ResolvedTiFlash } from './tiflash';
import { resolveTiProxy, type ResolvedTiProxy } from './tiproxy';
import { DEFAULT_KUBE_VERSION, featureCheck, KUBE_FEATURES, kubeVersionText, parseKubeVersion, type KubeFeature } from './kube-version';
import { quantityToBytes } from './quantity';
import type {
  ComponentConfig,
  ComponentSpec,
  LogTailerSpec,
  PodSettings,
  ResourceList,
  ServiceSpec,
  TiDBServiceSpec,
  TidbCluster,
  TidbClusterSpec,
} from './types';
import { DNS1123_LABEL, DNS_DOMAIN, PLUGIN_NAME, SUB_DIR } from './patterns';

export interface ResolveOptions {
  /** Namespace for a cluster whose metadata has none. @default none (objects carry no namespace) */
  readonly namespace?: string;
  /**
   * Image of the discovery Deployment (the tidb-gitops controller) when `spec.discovery` names none.
   * @default ghcr.io/tidb-gitops/tidb-gitops:<this release>
   */
  readonly controllerImage?: string;
  /**
   * The Kubernetes version to render for: `1.31` to `1.36` (also `v1.34.2`, `1.34+`); newer minors
   * render as the newest known. @default 1.31, the oldest supported
   */
  readonly kubeVersion?: string;
}

/** v2 start-script switches (`spec.startScriptV2FeatureFlags`). */
export interface ScriptFeatureFlags {
  readonly waitForDnsNameIpMatch: boolean;
  readonly preferPdAddressesOverDiscovery: boolean;
  readonly noWaitDns: boolean;
}

export interface ResolvedCluster {
  readonly name: string;
  readonly namespace?: string;
  /** The Kubernetes minor the manifests are rendered for (31 for 1.31). */
  readonly kubeMinor: number;
  /** Problems that do not stop the render (a field the target has only behind a feature gate). */
  readonly warnings: readonly SpecIssue[];
  /** Value of the `app.kubernetes.io/instance` label: the TidbCluster's own such label, else its name. */
  readonly instance: string;
  readonly clusterDomain: string;
  readonly scheme: 'http' | 'https';
  readonly timezone: string;
  readonly startScriptVersion: 'v1' | 'v2';
  readonly featureFlags: ScriptFeatureFlags;
  readonly enableDynamicConfiguration: boolean;
  readonly preferIPv6: boolean;
  readonly helper: { readonly image: string; readonly imagePullPolicy: string };
  /** `spec.tlsCluster.enabled`: every component mounts its cluster certificate and speaks https. */
  readonly tlsCluster: boolean;
  /** `spec.tlsCluster.enableDiscoveryMTLS` (only counts with tlsCluster). */
  readonly discoveryMtls: boolean;
  /** `spec.acrossK8s`. */
  readonly acrossK8s: boolean;
  /** `spec.pdAddresses`, checked to be http(s) URLs. */
  readonly pdAddresses: readonly string[];
  /** `spec.cluster`: the TidbCluster whose PD this one joins (namespace defaulted to this one's). */
  readonly joinCluster?: ResolvedClusterRef;
  /** `spec.tidb.tlsClient` when enabled: TLS for MySQL clients. */
  readonly sqlTls?: ResolvedSqlTls;
  /** The TidbCluster's own annotations (a few operator switches live there). */
  readonly annotations: Readonly<Record<string, string>>;
  readonly pd?: ResolvedPD;
  readonly tikv?: ResolvedTiKV;
  readonly tidb?: ResolvedTiDB;
  readonly tiflash?: ResolvedTiFlash;
  readonly ticdc?: ResolvedTiCDC;
  readonly pump?: ResolvedPump;
  readonly tiproxy?: ResolvedTiProxy;
  /** The discovery Deployment running the companion controller: rendered for every cluster. */
  readonly discovery: ResolvedDiscovery;
}

export interface ResolvedClusterRef {
  readonly name: string;
  readonly namespace?: string;
  readonly clusterDomain: string;
}

export interface ResolvedSqlTls {
  readonly disableClientAuthn: boolean;
  readonly skipInternalClientCA: boolean;
}

/** Pod-level settings after the cluster/component precedence rules. */
export interface ResolvedPod {
  readonly schedulerName?: string;
  readonly affinity?: Affinity;
  readonly priorityClassName?: string;
  readonly nodeSelector: Record<string, string>;
  readonly annotations: Record<string, string>;
  readonly labels: Record<string, string>;
  readonly tolerations: Toleration[];
  readonly dnsConfig?: PodDNSConfig;
  readonly dnsPolicy: string;
  readonly hostNetwork: boolean;
  readonly imagePullSecrets: LocalObjectReference[];
  readonly securityContext?: PodSecurityContext;
  readonly topologySpreadConstraints: TopologySpreadConstraint[];
  readonly terminationGracePeriodSeconds?: number;
  readonly automountServiceAccountToken?: boolean;
  readonly serviceAccountName?: string;
}

export interface ResolvedStorageVolume {
  readonly name: string;
  readonly storageClassName?: string;
  readonly volumeAttributesClassName?: string;
  readonly storageSize: string;
  readonly mountPath?: string;
}

export interface ResolvedProbe {
  readonly type: 'tcp' | 'command';
  readonly initialDelaySeconds: number;
  readonly periodSeconds?: number;
}

export interface ResolvedLogTailer {
  readonly image: string;
  readonly imagePullPolicy: string;
  readonly resources: ResourceRequirements;
  readonly securityContext?: SecurityContext;
  /** Native sidecars (init containers with `restartPolicy: Always`) rather than plain containers. */
  readonly useSidecar: boolean;
  /** With useSidecar: seconds to wait after SIGTERM before exiting. */
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
  readonly securityContext?: SecurityContext;
  readonly readinessProbe?: ResolvedProbe;
  /** Container resources: requests/limits without `storage`. */
  readonly resources: ResourceRequirements;
  /** Size of the data volume (`requests.storage`). */
  readonly storageRequest?: string;
  readonly storageClassName?: string;
  readonly volumeAttributesClassName?: string;
  readonly storageVolumes: ResolvedStorageVolume[];
  /** The user's config as a TOML table (before the keys the renderer owns are overlaid). */
  readonly config: TomlTable;
  /** Operation settings for the controller, written as JSON into an annotation. */
  readonly settings: Record<string, unknown>;
}

export interface ResolvedService {
  readonly type: string;
  readonly annotations: Record<string, string>;
  readonly labels: Record<string, string>;
  readonly portName: string;
  readonly loadBalancerIP?: string;
  readonly clusterIP?: string;
  readonly loadBalancerSourceRanges?: string[];
  readonly loadBalancerClass?: string;
}

export interface ResolvedPD extends ResolvedComponent {
  readonly kind: 'pd';
  readonly service: ResolvedService;
  readonly dataSubDir: string;
  readonly startTimeout: number;
  readonly initWaitTime: number;
  readonly startUpScriptVersion: '' | 'v1';
  readonly enableDashboardInternalProxy?: boolean;
  /** Mount `<cluster>-cluster-client-secret` (only with tlsCluster). */
  readonly mountClusterClientSecret: boolean;
  /** Secret of the dashboard's client certificate towards TiDB (with `tidb.tlsClient`). */
  readonly tlsClientSecretName: string;
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
  readonly rocksDBLog?: { readonly volumeName?: string };
  readonly raftLog?: { readonly volumeName?: string };
  readonly logTailer: ResolvedLogTailer;
  /** Mount `<cluster>-cluster-client-secret` (only with tlsCluster). */
  readonly mountClusterClientSecret: boolean;
}

export interface ResolvedTiDBService extends ResolvedService {
  readonly port: number;
  readonly externalTrafficPolicy?: string;
  readonly exposeStatus: boolean;
  readonly mysqlNodePort?: number;
  readonly statusNodePort?: number;
  readonly additionalPorts: NonNullable<TiDBServiceSpec['additionalPorts']>;
}

export interface ResolvedTiDB extends ResolvedComponent {
  readonly kind: 'tidb';
  readonly service?: ResolvedTiDBService;
  readonly binlogEnabled: boolean;
  readonly separateSlowLog: boolean;
  readonly slowLogVolumeName?: string;
  readonly slowLogTailer: ResolvedLogTailer;
  readonly tokenBasedAuthEnabled: boolean;
  readonly bootstrapSQLConfigMapName?: string;
  readonly plugins: string[];
  readonly arguments: string[];
  readonly lifecycle?: Lifecycle;
  readonly customizedStartupProbe?: NonNullable<import('./types').TiDBSpec['customizedStartupProbe']>;
}

const COMPONENT_FIELDS = ['pd', 'tikv', 'tidb', 'tiflash', 'ticdc', 'pump', 'tiproxy'] as const;

/** `spec.pdAddresses` become script words and discovery answers: only plain http(s) URLs are taken. */
function resolvePdAddresses(addresses: string[], issues: SpecIssue[]): string[] {
  addresses.forEach((a, i) => {
    const problem = pdAddressProblem(a);
    if (problem) issues.push({ path: `spec.pdAddresses[${i}]`, message: problem });
  });
  return addresses;
}

/** Characters a start script cannot carry in a double-quoted word, and what they are called. */
const UNSCRIPTABLE: readonly [RegExp, string][] = [
  [/\s/, 'white space'],
  [/["'`\\]/, 'a quote or backslash'],
  [/\$/, 'a $ (the shell would expand it)'],
  [/[\u0000-\u001f\u007f]/, 'a control character'],
];

/**
 * What tidb-operator accepts (its webhook: a URL with scheme http or https), minus what would break
 * the start scripts that carry it or the URL PD and the controller read: a missing host, a bad port,
 * characters a shell expands or that end a quoted word.
 */
export function pdAddressProblem(address: string): string | undefined {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)/.exec(address);
  if (!m || !/^https?$/i.test(m[1])) {
    return `expected a PD client URL such as http://pd.example.com:2379, got ${JSON.stringify(address)} (tidb-operator takes http:// and https:// URLs only)`;
  }
  for (const [pattern, what] of UNSCRIPTABLE) {
    if (pattern.test(address)) return `${JSON.stringify(address)} contains ${what}, which the start scripts cannot carry`;
  }
  const hostPort = m[2].slice(m[2].lastIndexOf('@') + 1);
  const hp = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]*)(?::(\d*))?$/.exec(hostPort);
  if (!hp || hp[1] === '') return `${JSON.stringify(address)} has no host name or address (such as pd.example.com, 10.0.0.1 or [fd00::1])`;
  if (hp[2] !== undefined && !(Number(hp[2]) >= 1 && Number(hp[2]) <= 65535)) {
    return `${JSON.stringify(address)} has port ${JSON.stringify(hp[2])}; expected 1 to 65535`;
  }
  return undefined;
}

const FEATURE_FLAGS: Record<string, keyof ScriptFeatureFlags> = {
  WaitForDnsNameIpMatch: 'waitForDnsNameIpMatch',
  PreferPDAddressesOverDiscovery: 'preferPdAddressesOverDiscovery',
  NoWaitDNS: 'noWaitDns',
};

/**
 * Resolves a schema-valid TidbCluster. Throws SpecError listing every problem found (bad TOML,
 * contradictory settings) with its path.
 */
export function resolveCluster(tc: TidbCluster, options: ResolveOptions = {}): ResolvedCluster {
  const issues: SpecIssue[] = [];
  const spec = tc.spec ?? {};
  const namespace = tc.metadata.namespace ?? options.namespace;
  const startScriptVersion = spec.startScriptVersion === 'v2' ? 'v2' : 'v1';
  const featureFlags = resolveFeatureFlags(spec, issues);
  if (startScriptVersion === 'v2' && !namespace) {
    issues.push({
      path: 'metadata.namespace',
      message: 'required with startScriptVersion v2, whose scripts name the namespace; set it here or pass --namespace',
    });
  }
  const imagePullPolicy = spec.imagePullPolicy ?? DEFAULTS.imagePullPolicy;
  const helper = {
    image: spec.helper?.image ?? spec.tidb?.slowLogTailer?.image ?? DEFAULTS.helperImage,
    imagePullPolicy: spec.helper?.imagePullPolicy ?? spec.tidb?.slowLogTailer?.imagePullPolicy ?? imagePullPolicy,
  };
  const target = parseKubeVersion(options.kubeVersion ?? DEFAULT_KUBE_VERSION);
  if ('error' in target) throw new Error(`kubeVersion: ${target.error}`);
  const warnings: SpecIssue[] = [];
  const ctx: Ctx = { tc, spec, issues, helper, namespace, controllerImage: options.controllerImage, kubeMinor: target.minor, warnings };
  const tlsCluster = spec.tlsCluster?.enabled ?? false;
  oneOf(ctx, 'spec.configUpdateStrategy', spec.configUpdateStrategy, CONFIG_UPDATE_STRATEGIES);
  if (spec.clusterDomain) checked(ctx, 'spec.clusterDomain', spec.clusterDomain, DNS_DOMAIN, 'a DNS domain such as cluster.local (lowercase letters, digits, - and .)');
  if (spec.cluster?.name !== undefined) checked(ctx, 'spec.cluster.name', spec.cluster.name, DNS1123_LABEL, "the name of a TidbCluster (a DNS label: lowercase letters, digits and '-')");
  const cluster: ResolvedCluster = {
    name: tc.metadata.name,
    namespace,
    kubeMinor: target.minor,
    warnings,
    instance: tc.metadata.labels?.[LABEL.instance] ?? tc.metadata.name,
    clusterDomain: spec.clusterDomain ?? DEFAULTS.clusterDomain,
    scheme: tlsCluster ? 'https' : 'http',
    timezone: spec.timezone ?? DEFAULTS.timezone,
    startScriptVersion,
    featureFlags,
    enableDynamicConfiguration: spec.enableDynamicConfiguration ?? false,
    preferIPv6: spec.preferIPv6 ?? false,
    helper,
    tlsCluster,
    discoveryMtls: tlsCluster && (spec.tlsCluster?.enableDiscoveryMTLS ?? false),
    acrossK8s: spec.acrossK8s ?? false,
    pdAddresses: resolvePdAddresses(spec.pdAddresses ?? [], issues),
    joinCluster: spec.cluster && {
      name: spec.cluster.name,
      namespace: spec.cluster.namespace || namespace,
      clusterDomain: spec.cluster.clusterDomain ?? '',
    },
    sqlTls: spec.tidb?.tlsClient?.enabled
      ? {
          disableClientAuthn: spec.tidb.tlsClient.disableClientAuthn ?? false,
          skipInternalClientCA: spec.tidb.tlsClient.skipInternalClientCA ?? false,
        }
      : undefined,
    annotations: tc.metadata.annotations ?? {},
    pd: spec.pd && resolvePD(ctx),
    tikv: spec.tikv && resolveTiKV(ctx),
    tidb: spec.tidb && resolveTiDB(ctx),
    tiflash: spec.tiflash && resolveTiFlash(ctx),
    ticdc: spec.ticdc && resolveTiCDC(ctx),
    pump: spec.pump && resolvePump(ctx),
    tiproxy: spec.tiproxy && resolveTiProxy(ctx),
    discovery: resolveDiscovery(ctx),
  };
  const rendered = COMPONENT_FIELDS.filter((c) => spec[c]);
  if (rendered.length === 0) {
    issues.push({ path: 'spec', message: `no component to render: set at least one of ${COMPONENT_FIELDS.join(', ')}` });
  }
  if (issues.length > 0) throw new SpecError(issues);
  return cluster;
}

export interface Ctx {
  readonly tc: TidbCluster;
  readonly spec: TidbClusterSpec;
  /** The cluster's namespace: its own, else the one given with `--namespace`. */
  readonly namespace?: string;
  readonly issues: SpecIssue[];
  readonly helper: { readonly image: string; readonly imagePullPolicy: string };
  /** `--controller-image`: the discovery image when `spec.discovery` names none. */
  readonly controllerImage?: string;
  /** The target Kubernetes minor (31 for 1.31). */
  readonly kubeMinor: number;
  /** Things worth saying that do not stop the render, with their paths. */
  readonly warnings: SpecIssue[];
}

function resolveFeatureFlags(spec: TidbClusterSpec, issues: SpecIssue[]): ScriptFeatureFlags {
  const flags = { waitForDnsNameIpMatch: false, preferPdAddressesOverDiscovery: false, noWaitDns: false };
  (spec.startScriptV2FeatureFlags ?? []).forEach((flag, i) => {
    const key = FEATURE_FLAGS[flag];
    if (key) flags[key] = true;
    else if (flag === 'BashShebang') {
      // Our scripts are POSIX sh and run under /bin/sh either way; the shebang changes nothing.
    } else {
      issues.push({
        path: `spec.startScriptV2FeatureFlags[${i}]`,
        message: `expected one of ${[...Object.keys(FEATURE_FLAGS), 'BashShebang'].join(', ')}, got ${JSON.stringify(flag)}`,
      });
    }
  });
  return flags;
}

function resolvePD(ctx: Ctx): ResolvedPD {
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
function legacyServiceType(type: string | undefined): string {
  return type === 'NodePort' || type === 'LoadBalancer' ? type : 'ClusterIP';
}

function resolveTiKV(ctx: Ctx): ResolvedTiKV {
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
      evictLeaderTimeout: tikv.evictLeaderTimeout ?? DEFAULTS.tikvEvictLeaderTimeout,
      waitLeaderTransferBackTimeout: tikv.waitLeaderTransferBackTimeout ?? DEFAULTS.tikvWaitLeaderTransferBackTimeout,
      recoverFailover: tikv.recoverFailover ?? false,
      recoverByUID: tikv.failover?.recoverByUID,
      storeLabels: tikv.storeLabels ?? [],
      scaleInParallelism: tikv.scalePolicy?.scaleInParallelism ?? DEFAULTS.tikvScaleParallelism,
      scaleOutParallelism: tikv.scalePolicy?.scaleOutParallelism ?? DEFAULTS.tikvScaleParallelism,
      spareVolReplaceReplicas: tikv.spareVolReplaceReplicas ?? DEFAULTS.pdSpareVolReplaceReplicas,
    },
  };
}

function resolveTiDB(ctx: Ctx): ResolvedTiDB {
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
    plugins: (tidb.plugins ?? []).map((p, i) => checked(ctx, `spec.tidb.plugins[${i}]`, p, PLUGIN_NAME, 'a plugin name (letters, digits, ., _ and -)')),
    arguments: (tidb.arguments ?? []).map((a, i) => checked(ctx, `spec.tidb.arguments[${i}]`, a, ONE_LINE, 'one line (the start script puts each argument on its own line)')),
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

export function resolveComponent(ctx: Ctx, kind: ComponentKind, comp: ComponentSpec): ResolvedComponent {
  const { spec } = ctx;
  const path = `spec.${kind}`;
  const { resources, storage } = splitResources(comp.requests, comp.limits, (comp as { claims?: unknown[] }).claims);
  if (comp.volumeAttributesClassName !== undefined) requireFeature(ctx, `${path}.volumeAttributesClassName`, KUBE_FEATURES.volumeAttributesClass);
  (comp.storageVolumes ?? []).forEach((v, i) => {
    if (v.volumeAttributesClassName) {
      requireFeature(ctx, `${path}.storageVolumes[${i}].volumeAttributesClassName`, KUBE_FEATURES.volumeAttributesClass);
    }
  });
  const updateStrategy = comp.statefulSetUpdateStrategy ?? spec.statefulSetUpdateStrategy ?? (DEFAULTS.statefulSetUpdateStrategy as 'RollingUpdate');
  return {
    kind,
    replicas: comp.replicas,
    image: resolveImage(kind, comp, spec.version),
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
    config: configTable(comp.config, `${path}.config`, ctx.issues),
    settings: {
      ...clusterSettings(ctx.tc),
      // Read by nobody but `diff`, which reports a change of target like any other setting.
      kubeVersion: kubeVersionText(ctx.kubeMinor),
      maxFailoverCount: comp.maxFailoverCount ?? DEFAULTS.maxFailoverCount,
      // The controller owns the StatefulSet's updateStrategy and writes it with the partition.
      updateStrategy,
    },
  };
}

/** The pod-level fields a component takes from the cluster-wide ones (`PodSettings`) and a few of its own. */
export interface PodFields extends PodSettings {
  terminationGracePeriodSeconds?: number;
  automountServiceAccountToken?: boolean;
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
    terminationGracePeriodSeconds: comp.terminationGracePeriodSeconds,
    automountServiceAccountToken: comp.automountServiceAccountToken,
    serviceAccountName: comp.serviceAccount ?? spec.serviceAccount,
  };
}

/** Component, else cluster, else `IfNotPresent`. */
export function resolvePullPolicy(ctx: Ctx, comp: Pick<PodSettings, 'imagePullPolicy'>): string {
  return comp.imagePullPolicy ?? ctx.spec.imagePullPolicy ?? DEFAULTS.imagePullPolicy;
}

/** Cluster-wide operation settings; every component's settings annotation carries them too. */
function clusterSettings(tc: TidbCluster): { paused: boolean; pvReclaimPolicy: string; enablePVReclaim: boolean; forceUpgrade: boolean } {
  const spec = tc.spec ?? {};
  return {
    paused: spec.paused ?? false,
    pvReclaimPolicy: spec.pvReclaimPolicy ?? DEFAULTS.pvReclaimPolicy,
    enablePVReclaim: spec.enablePVReclaim ?? false,
    forceUpgrade: tc.metadata.annotations?.[FORCE_UPGRADE_ANNOTATION] === 'true',
  };
}

/** `baseImage[:version]`; the CRD fills baseImage by default, so `image` counts only when it is "". */
function resolveImage(kind: ComponentKind, comp: ComponentSpec, clusterVersion: string | undefined): string {
  const base = comp.baseImage ?? DEFAULTS.baseImage[kind];
  if (base === '' && comp.image) return comp.image;
  const version = comp.version ?? clusterVersion;
  return version ? `${base}:${version}` : base;
}

function resolveService(svc: ServiceSpec | undefined, defaultPortName: string, type: string): ResolvedService {
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
    ctx.issues.push({ path: `${path}.sleepTimeSeconds`, message: `expected a whole number of seconds, 0 or more, got ${JSON.stringify(sleep)}` });
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

const CONFIG_UPDATE_STRATEGIES = ['InPlace', 'RollingUpdate'] as const;

// Values the start scripts carry as words: checked here, with their paths, so a script never meets them.
const ONE_LINE = /^[^\r\n]*$/;

/** `value`, after recording an error at `path` unless it matches `pattern`. */
function checked(ctx: Ctx, path: string, value: string, pattern: RegExp, expected: string): string {
  if (!pattern.test(value)) ctx.issues.push({ path, message: `expected ${expected}, got ${JSON.stringify(value)}` });
  return value;
}

/** `value`, after recording an error at `path` unless it is a whole number of at least `min`. */
function atLeast(ctx: Ctx, path: string, value: number, min: number): number {
  if (!Number.isSafeInteger(value) || value < min) ctx.issues.push({ path, message: `expected a whole number of seconds, ${min} or more, got ${JSON.stringify(value)}` });
  return value;
}

/**
 * `value` when it is one of `allowed`; otherwise an error (with a did-you-mean) and undefined. The CRD
 * leaves some of these fields free-form, but a typo there would silently mean the default.
 */
function oneOf<T extends string>(ctx: Ctx, path: string, value: string | undefined, allowed: readonly T[]): T | undefined {
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

function topologySpread(
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

/** A TOML string is parsed; a mapping is taken as the same table. Bad input becomes an issue. */
function configTable(config: ComponentConfig | undefined, path: string, issues: SpecIssue[]): TomlTable {
  if (config === undefined || config === null) return {};
  if (typeof config === 'string') return parseConfigToml(config, path, issues);
  return toTable(config, path, issues);
}

/** A config given as TOML text; a syntax error becomes an issue at `path` and the table is empty. */
export function parseConfigToml(text: string, path: string, issues: SpecIssue[]): TomlTable {
  try {
    return parseToml(text);
  } catch (e) {
    // One line per problem: the parser's own message carries a code excerpt.
    const message =
      e instanceof TomlSyntaxError
        ? `invalid TOML at line ${e.line}, column ${e.column} of the config: ${e.reason}`
        : `invalid TOML: ${(e as Error).message.split('\n')[0]}`;
    issues.push({ path, message });
    return {};
  }
}

function toTable(obj: Record<string, unknown>, path: string, issues: SpecIssue[]): TomlTable {
  const out: TomlTable = {};
  for (const [key, value] of Object.entries(obj)) {
    const v = toTomlValue(value, `${path}.${key}`, issues);
    if (v !== undefined) out[key] = v;
  }
  return out;
}

function toTomlValue(value: unknown, path: string, issues: SpecIssue[]): TomlValue | undefined {
  if (value === null || value === undefined) {
    issues.push({ path, message: 'a config value cannot be empty (null); remove the key or give it a value' });
    return undefined;
  }
  if (Array.isArray(value)) {
    return value.map((v, i) => toTomlValue(v, `${path}[${i}]`, issues)).filter((v): v is TomlValue => v !== undefined);
  }
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return toTable(value as Record<string, unknown>, path, issues);
  }
  return value as TomlValue;
}

export function asTable(value: TomlValue | undefined): TomlTable {
  return isTomlTable(value) ? value : {};
}

function nonEmpty<T>(list: T[] | undefined): T[] | undefined {
  return list && list.length > 0 ? list : undefined;
}
