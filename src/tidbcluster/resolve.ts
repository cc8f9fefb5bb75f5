/**
 * `resolve(spec) -> ResolvedCluster`: applies every default once (from `defaults.ts`) and the
 * operator's cluster-vs-component precedence rules, so constructs never re-default.
 */
import { uncheckedAnnotationIssues } from './config-schema';
import { DEFAULTS } from './defaults';
import { SpecError, type SpecIssue } from './errors';
import { LABEL } from './names';
import { apiIssues } from './api-input';
import { CONFIG_UPDATE_STRATEGIES, PV_RECLAIM_POLICIES, checked, oneOf, type Ctx } from './component';
import { resolveDiscovery, type ResolvedDiscovery } from './discovery';
import { resolvePD, type ResolvedPD } from './pd';
import { resolvePdms, type ResolvedPdms } from './pdms';
import { resolvePump, type ResolvedPump } from './pump';
import { resolveTiCDC, type ResolvedTiCDC } from './ticdc';
import { resolveTiDB, type ResolvedTiDB } from './tidb';
import { resolveTiFlash, type ResolvedTiFlash } from './tiflash';
import { resolveTiKV, type ResolvedTiKV } from './tikv';
import { resolveTiProxy, type ResolvedTiProxy } from './tiproxy';
import { DEFAULT_KUBE_VERSION, parseKubeVersion } from './kube-version';
import { parseApiVersions } from './api-versions';
import type { TidbClusterManifest, TidbClusterSpec } from './types';
import { DNS1123_LABEL, DNS_DOMAIN, NAMESPACE } from '../base/patterns';
import { checkStoreLabelKeys, resolveNodeAccess, type ResolvedNodeAccess } from './topology';
import { checkBudgetQuorum, maxReplicas } from './budget-quorum';
import {
  DISRUPTION_BUDGETS_ANNOTATION,
  MONITORING_ANNOTATION,
  disruptionBudgets,
  drainHooks,
  hostNetworkIssues,
  metricsFromIssue,
  monitoringSettings,
  networkPolicy,
  pvReclaimPolicyAccess,
  unknownClusterSettings,
  type DisruptionBudgets,
  type MonitoringSettings,
  type NetworkPolicySettings,
} from './guard-rails';
import { replaceRequests } from './replace';
import { hasServingGate } from './serving';
import type { ComponentKind } from './names';
import type { ComponentSettings } from './contract';

// The per-component types live with their resolvers; the renderer reads them all from here.
export type {
  Ctx,
  PodFields,
  ResolvedComponent,
  ResolvedLogTailer,
  ResolvedPod,
  ResolvedProbe,
  ResolvedService,
  ResolvedStorageVolume,
} from './component';
export type { ResolvedPD } from './pd';
export type { ResolvedPdms } from './pdms';
export type { ResolvedTiKV } from './tikv';
export type { ResolvedTiDB, ResolvedTiDBService } from './tidb';

export interface ResolveOptions {
  /** Namespace for a cluster whose metadata has none. @default none (objects carry no namespace) */
  readonly namespace?: string;
  /**
   * Image of the discovery Deployment (the tidb-gitops controller) when `spec.discovery` names none.
   * @default ghcr.io/tidb-gitops/tidb-gitops:<this release>
   */
  readonly controllerImage?: string;
  /**
   * The Kubernetes version to render for: `1.31` to `1.37` (also `v1.34.2`, `1.34+`); newer minors
   * render as the newest known. @default 1.31, the oldest supported
   */
  readonly kubeVersion?: string;
  /**
   * The API versions the target cluster serves, comma-separated (`v1,apps/v1,monitoring.coreos.com/v1`,
   * as `kubectl api-versions` prints them and Argo CD passes them in `KUBE_API_VERSIONS`).
   * @default unset: not known
   */
  readonly apiVersions?: string;
}

/** v2 start-script switches (`spec.startScriptV2FeatureFlags`). */
export interface ScriptFeatureFlags {
  readonly waitForDnsNameIpMatch: boolean;
  readonly preferPdAddressesOverDiscovery: boolean;
  readonly noWaitDns: boolean;
}

export interface ResolvedCluster {
  readonly name: string;
  /** @default none (objects take the namespace they are applied to) */
  readonly namespace?: string;
  /** The Kubernetes minor the manifests are rendered for (31 for 1.31). */
  readonly kubeMinor: number;
  /** The API versions the target serves, sorted, when the render was told. @default none (not known) */
  readonly apiVersions?: readonly string[];
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
  /** `spec.cluster`: the TidbCluster whose PD this one joins (namespace defaulted to this one's). @default none (the cluster has its own PD) */
  readonly joinCluster?: ResolvedClusterRef;
  /** `spec.tidb.tlsClient` when enabled: TLS for MySQL clients. @default none (no TLS for MySQL clients) */
  readonly sqlTls?: ResolvedSqlTls;
  /**
   * `spec.tidb.initializer.createPassword`: the controller sets root's password from the Secret
   * `<cluster>-init`, once. @default absent (the controller sets no password)
   */
  readonly createPassword?: true;
  /** The TidbCluster's own annotations (a few operator switches live there). */
  readonly annotations: Readonly<Record<string, string>>;
  /** @default none (no PD) */
  readonly pd?: ResolvedPD;
  /** PD's TSO micro-service (`spec.pdms`, with `spec.pd.mode: ms`). @default none */
  readonly tso?: ResolvedPdms;
  /** PD's scheduling micro-service (`spec.pdms`, with `spec.pd.mode: ms`). @default none */
  readonly scheduling?: ResolvedPdms;
  /** @default none (no TiKV) */
  readonly tikv?: ResolvedTiKV;
  /** @default none (no TiDB) */
  readonly tidb?: ResolvedTiDB;
  /** @default none (no TiFlash) */
  readonly tiflash?: ResolvedTiFlash;
  /** @default none (no TiCDC) */
  readonly ticdc?: ResolvedTiCDC;
  /** @default none (no Pump) */
  readonly pump?: ResolvedPump;
  /** @default none (no TiProxy) */
  readonly tiproxy?: ResolvedTiProxy;
  /** The discovery Deployment running the companion controller: rendered for every cluster. */
  readonly discovery: ResolvedDiscovery;
  /**
   * Set when the cluster asks for topology labels (PD's location-labels, TiKV's storeLabels): the
   * controller reads Nodes through a ClusterRole. @default none (no ClusterRole; everything namespaced)
   */
  readonly nodeAccess?: ResolvedNodeAccess;
  /**
   * With `tidb-gitops.io/pv-reclaim-policy: "true"`: the controller sets `spec.pvReclaimPolicy` on the
   * PersistentVolumes bound to the cluster's claims, through a ClusterRole (`get`, `patch`
   * persistentvolumes). @default false (no ClusterRole; PVs keep their StorageClass's policy)
   */
  readonly patchesVolumes: boolean;
  /**
   * The PodDisruptionBudget of each component that has one (`tidb-gitops.io/disruption-budgets`).
   * @default maxUnavailable 1 for every component the cluster has
   */
  readonly disruptionBudgets: DisruptionBudgets;
  /**
   * The components whose Pods carry the readiness gate `tidb-gitops.io/serving` (see `serving.ts`):
   * PD, TiKV, TiFlash and TiDB, when the cluster's annotation gives them a budget.
   * @default every one of them the cluster has
   */
  readonly servingGates: readonly ComponentKind[];
  /**
   * Whether PD, TiKV and TiCDC Pods get the preStop hook that waits, bounded, for their leadership,
   * region leaders or tables to be handed over (`tidb-gitops.io/drain-hooks`). @default true
   */
  readonly drainHooks: boolean;
  /**
   * With `tidb-gitops.io/network-policy: "true"`: a NetworkPolicy per component admitting only the
   * ports each needs. @default none (no NetworkPolicy)
   */
  readonly networkPolicy?: NetworkPolicySettings;
  /**
   * The cluster's monitoring annotations (`tidb-gitops.io/monitoring`, `-labels`); whether monitoring
   * is rendered is decided with the TidbMonitor naming the cluster, if any (`monitoring/read.ts`).
   * @default { labels: {} }
   */
  readonly monitoring: MonitoringSettings;
}

export interface ResolvedClusterRef {
  readonly name: string;
  /** @default none (the joining cluster has no namespace either) */
  readonly namespace?: string;
  readonly clusterDomain: string;
}

export interface ResolvedSqlTls {
  readonly disableClientAuthn: boolean;
  readonly skipInternalClientCA: boolean;
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
export function resolveCluster(tc: TidbClusterManifest, options: ResolveOptions = {}): ResolvedCluster {
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
  const served = options.apiVersions === undefined ? undefined : parseApiVersions(options.apiVersions);
  if (served && 'error' in served) throw new Error(`apiVersions: ${served.error}`);
  const warnings: SpecIssue[] = [];
  const ctx: Ctx = { tc, spec, issues, helper, namespace, controllerImage: options.controllerImage, kubeMinor: target.minor, warnings };
  issues.push(...uncheckedAnnotationIssues(tc.metadata.annotations));
  const tlsCluster = spec.tlsCluster?.enabled ?? false;
  // What the API server would refuse in the objects this cluster becomes.
  issues.push(...apiIssues(tc, target.minor));
  oneOf(ctx, 'spec.configUpdateStrategy', spec.configUpdateStrategy, CONFIG_UPDATE_STRATEGIES);
  oneOf(ctx, 'spec.pvReclaimPolicy', spec.pvReclaimPolicy, PV_RECLAIM_POLICIES);
  if (spec.clusterDomain)
    checked(
      ctx,
      'spec.clusterDomain',
      spec.clusterDomain,
      DNS_DOMAIN,
      'a DNS domain such as cluster.local (lowercase letters, digits, - and .)',
    );
  if (spec.cluster?.name !== undefined)
    checked(
      ctx,
      'spec.cluster.name',
      spec.cluster.name,
      DNS1123_LABEL,
      "the name of a TidbCluster (a DNS label: lowercase letters, digits and '-')",
    );
  // The namespace ends up in PD's join address (`<name>-pd.<namespace>:2379`) and in the controller's RBAC.
  if (spec.cluster?.namespace)
    checked(
      ctx,
      'spec.cluster.namespace',
      spec.cluster.namespace,
      NAMESPACE,
      "a namespace (a DNS label: lowercase letters, digits and '-', at most 63)",
    );
  if (spec.cluster?.clusterDomain)
    checked(
      ctx,
      'spec.cluster.clusterDomain',
      spec.cluster.clusterDomain,
      DNS_DOMAIN,
      'a DNS domain such as cluster.local (lowercase letters, digits, - and .)',
    );
  const pd = spec.pd && resolvePD(ctx);
  if (spec.tikv?.storeLabels) checkStoreLabelKeys(spec.tikv.storeLabels, issues);
  const budgets = disruptionBudgets(tc.metadata.annotations ?? {}, renderedKinds(spec), issues);
  const cluster: ResolvedCluster = {
    name: tc.metadata.name,
    namespace,
    kubeMinor: target.minor,
    ...(served && { apiVersions: served.list }),
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
    ...(spec.tidb?.initializer?.createPassword === true && { createPassword: true as const }),
    annotations: tc.metadata.annotations ?? {},
    pd,
    ...resolvePdms(ctx),
    tikv: spec.tikv && resolveTiKV(ctx),
    tidb: spec.tidb && resolveTiDB(ctx),
    tiflash: spec.tiflash && resolveTiFlash(ctx),
    ticdc: spec.ticdc && resolveTiCDC(ctx),
    pump: spec.pump && resolvePump(ctx),
    tiproxy: spec.tiproxy && resolveTiProxy(ctx),
    discovery: resolveDiscovery(ctx),
    nodeAccess: resolveNodeAccess({ pdConfig: pd?.config, storeLabels: spec.tikv?.storeLabels, namespace }, issues),
    patchesVolumes: pvReclaimPolicyAccess(tc.metadata.annotations ?? {}, namespace, issues),
    disruptionBudgets: budgets,
    servingGates: renderedKinds(spec).filter((kind) => hasServingGate(kind, budgets)),
    drainHooks: drainHooks(tc.metadata.annotations ?? {}, issues),
    networkPolicy: networkPolicy(
      tc.metadata.annotations ?? {},
      issues,
      spec.acrossK8s ? 'not with spec.acrossK8s: the peers in other Kubernetes clusters have no Pods a NetworkPolicy can name' : undefined,
    ),
    monitoring: monitoringSettings(tc.metadata.annotations ?? {}, issues),
  };
  unknownClusterSettings(tc.metadata.annotations ?? {}, issues);
  if (cluster.networkPolicy) {
    hostNetworkIssues(hostNetworkFields(spec, cluster), issues);
    const scrape =
      cluster.monitoring.enabled === true && metricsFromIssue(cluster.networkPolicy, `${MONITORING_ANNOTATION}: "true"`, namespace);
    if (scrape) issues.push(scrape);
  }
  checkBudgetQuorum(
    {
      budgets: cluster.disruptionBudgets,
      annotation: tc.metadata.annotations?.[DISRUPTION_BUDGETS_ANNOTATION],
      pdReplicas: cluster.pd?.replicas,
      tikvReplicas: cluster.tikv?.replicas,
      maxReplicas: maxReplicas(cluster.pd?.config),
    },
    issues,
    warnings,
  );
  const replace = replaceRequests(
    tc.metadata.annotations ?? {},
    tc.metadata.name,
    { pd: cluster.pd?.replicas, tikv: cluster.tikv?.replicas, tiflash: cluster.tiflash?.replicas },
    issues,
  );
  const rendered = COMPONENT_FIELDS.filter((c) => spec[c]);
  if (rendered.length === 0) {
    issues.push({ path: 'spec', message: `no component to render: set at least one of ${COMPONENT_FIELDS.join(', ')}` });
  }
  if (issues.length > 0) throw new SpecError(issues);
  // Each component is handed the Pods it is to replace, with its other operation settings.
  const withReplace = <T extends { readonly settings: ComponentSettings }>(
    comp: T | undefined,
    pods: string[] | undefined,
  ): T | undefined => (comp && pods ? { ...comp, settings: { ...comp.settings, replace: pods } } : comp);
  return {
    ...cluster,
    pd: withReplace(cluster.pd, replace.pd),
    tikv: withReplace(cluster.tikv, replace.tikv),
    tiflash: withReplace(cluster.tiflash, replace.tiflash),
  };
}

/**
 * The `hostNetwork` fields that put components on their nodes' network, each with the components it
 * decides (the resolved Pods say which run there; the field is the component's own where it sets one).
 */
function hostNetworkFields(spec: TidbClusterSpec, cluster: ResolvedCluster): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const add = (component: string, own: { hostNetwork?: boolean } | undefined, ownPath: string, on: boolean | undefined) => {
    if (!on) return;
    const where = own?.hostNetwork !== undefined ? ownPath : 'spec.hostNetwork';
    out.set(where, [...(out.get(where) ?? []), component]);
  };
  for (const k of COMPONENT_FIELDS) add(k, spec[k], `spec.${k}.hostNetwork`, cluster[k]?.pod.hostNetwork);
  for (const ms of ['tso', 'scheduling'] as const) {
    const i = (spec.pdms ?? []).findIndex((e) => e.name === ms);
    add(ms, spec.pdms?.[i], `spec.pdms[${i}].hostNetwork`, cluster[ms]?.pod.hostNetwork);
  }
  add('the controller (discovery)', spec.discovery, 'spec.discovery.hostNetwork', cluster.discovery.pod.hostNetwork);
  return out;
}

/** The components a spec renders as StatefulSets (PD's micro-services with `spec.pd.mode: ms`). */
function renderedKinds(spec: TidbClusterSpec): ComponentKind[] {
  const kinds: ComponentKind[] = [];
  if (spec.pd) kinds.push('pd');
  if (spec.pd?.mode === 'ms') {
    for (const ms of spec.pdms ?? []) if ((ms.name === 'tso' || ms.name === 'scheduling') && !kinds.includes(ms.name)) kinds.push(ms.name);
  }
  for (const k of ['tikv', 'tiflash', 'tidb', 'ticdc', 'pump', 'tiproxy'] as const) if (spec[k]) kinds.push(k);
  return kinds;
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
