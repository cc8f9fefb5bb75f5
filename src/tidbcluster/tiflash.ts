/**
 * `spec.tiflash`: what TiFlash resolves beyond the common component fields (storage claims, log files,
 * config layout, init or mount-cm mode), the config tables the renderer owns, its defaults, the fields
 * it takes, and the checks the operator makes on its image version.
 */
import type { ResourceRequirements, SecurityContext } from '../../imports/k8s';
import { isTomlTable, type TomlTable, type TomlValue } from '../base/toml';
import type { DefaultEntry } from './defaults';
import type { SpecIssue } from './errors';
import {
  resolveComponent,
  requireFeature,
  resolveLogTailer,
  storageCapacity,
  type Ctx,
  type ResolvedComponent,
  type ResolvedLogTailer,
} from './component';
import { parseConfigToml } from './config-input';
import { KUBE_FEATURES } from './kube-version';
import type { ComponentFields } from './fields';
import type { ComponentSpec, Quantity, ResourceList } from './spec-parts';
import type { TiFlashStorageClaim } from './types';
import { imageTag } from '../base/version';
import { checkOwnedTables } from './config-tables';

/**
 * Tables the renderer writes keys into, per file. The resolver checks that a user's config has no
 * other value in their place.
 */
export const TIFLASH_CONFIG_TABLES = {
  config: [
    'flash.flash_cluster',
    'flash.proxy',
    'logger',
    'raft',
    'storage.main',
    'storage.raft',
    'security',
    'status',
    'application',
    'quotas.default.interval',
    'users.readonly.networks',
    'users.default.networks',
    'profiles.readonly',
    'profiles.default',
  ],
  proxy: ['server', 'security'],
} as const;

/** Pod annotation (in `spec.tiflash.annotations`) that selects "mount-cm" mode. */
export const TIFLASH_MOUNT_CM_ANNOTATION = 'tiflash.tidb.pingcap.com/mount-cm-in-tiflash-container';
/** TidbCluster annotation: TiFlash v7.1.0+ keeps its tcp/http ports (no restart when upgrading past 7.1). */
export const TIFLASH_KEEP_PORTS_ANNOTATION = 'tidb.pingcap.com/tiflash-710-keep-ports';

/** TiFlash's own defaults (tidb-operator v1's values). */
export const TIFLASH_DEFAULTS = {
  /** `TZ` when `spec.timezone` is empty: TiFlash, unlike PD/TiKV/TiDB, gets UTC. */
  timezone: 'UTC',
  privileged: false,
  recoverFailover: false,
  scaleParallelism: 1,
  serverLog: '/data0/logs/server.log',
  errorLog: '/data0/logs/error.log',
  clusterLog: '/data0/logs/flash_cluster_manager.log',
} as const;

/** TiFlash's defaults, for the defaults table of docs/reference.md. */
export const TIFLASH_DEFAULTS_TABLE: readonly DefaultEntry[] = [
  { field: 'spec.timezone', value: TIFLASH_DEFAULTS.timezone, note: 'TZ of TiFlash when spec.timezone is empty' },
  { field: 'spec.tiflash.privileged', value: TIFLASH_DEFAULTS.privileged, note: 'only when no securityContext is given' },
  { field: 'spec.tiflash.recoverFailover', value: TIFLASH_DEFAULTS.recoverFailover, note: 'read by the controller' },
  { field: 'spec.tiflash.scalePolicy.scaleInParallelism', value: TIFLASH_DEFAULTS.scaleParallelism, note: 'read by the controller' },
  { field: 'spec.tiflash.scalePolicy.scaleOutParallelism', value: TIFLASH_DEFAULTS.scaleParallelism, note: 'read by the controller' },
  {
    field: `spec.tiflash.annotations["${TIFLASH_MOUNT_CM_ANNOTATION}"]`,
    value: false,
    note: 'init mode: an init container writes the config; "true" mounts the ConfigMap into tiflash',
  },
  { field: 'spec.tiflash.config.config logger.log', value: TIFLASH_DEFAULTS.serverLog, note: 'tailed by the serverlog sidecar' },
  { field: 'spec.tiflash.config.config logger.errorlog', value: TIFLASH_DEFAULTS.errorLog, note: 'tailed by the errorlog sidecar' },
  {
    field: 'spec.tiflash.config.config flash.flash_cluster.log',
    value: TIFLASH_DEFAULTS.clusterLog,
    note: 'tailed by the clusterlog sidecar',
  },
];

/** A resolved `storageClaims` entry. */
export interface ResolvedTiFlashClaim {
  readonly storage: string;
  /** As given; `""` is kept (it means "no class", unlike leaving it out). @default none (the cluster's default class) */
  readonly storageClassName?: string;
  /** @default none */
  readonly volumeAttributesClassName?: string;
}

/**
 * Which config defaults apply, by TiFlash version (read from the image tag as the operator does):
 * `current` from v5.4.0 (and `latest`/`nightly`/`master`), `legacy` before it and for tags that are
 * not versions.
 */
export type TiFlashConfigLayout = 'current' | 'legacy';

export interface ResolvedTiFlash extends ResolvedComponent {
  readonly kind: 'tiflash';
  readonly storageClaims: readonly ResolvedTiFlashClaim[];
  /** `CAPACITY` env: `0`, `<n>GB` or `<n>MB` from `limits.storage`. */
  readonly capacity: string;
  readonly privileged: boolean;
  /** `TZ` env: `spec.timezone`, else UTC. */
  readonly timezone: string;
  /** "mount-cm" mode: no init container; tiflash reads the ConfigMap templates directly. */
  readonly mountConfigMap: boolean;
  readonly configLayout: TiFlashConfigLayout;
  /**
   * TiFlash listens on its ClickHouse tcp/http ports (9000/8123): before v7.1.0, or with the
   * TidbCluster annotation `tidb.pingcap.com/tiflash-710-keep-ports`.
   */
  readonly keepPorts: boolean;
  /** `config.config` as a TOML table (before the keys the renderer owns are overlaid). */
  readonly commonConfig: TomlTable;
  /** `config.proxy` as a TOML table. */
  readonly proxyConfig: TomlTable;
  /** The files the log sidecars follow (from the config, else the defaults). */
  readonly logFiles: { readonly server: string; readonly error: string; readonly cluster: string };
  readonly initializer: {
    readonly resources: ResourceRequirements;
    /** @default none */
    readonly securityContext?: SecurityContext;
  };
  readonly logTailer: ResolvedLogTailer;
}

/** Fields of `spec.tiflash` beyond the common ones, and common ones it does not take (see `support.ts`). */
export const TIFLASH_FIELDS: ComponentFields = {
  extra: ['storageClaims', 'privileged', 'initializer', 'logTailer', 'recoverFailover', 'failover', 'scalePolicy'],
  // storageClassName and storageVolumes are not in TiFlash's CRD (each claim names its class); the
  // operator sets no probe on TiFlash, so readinessProbe would do nothing.
  except: ['storageClassName', 'volumeAttributesClassName', 'storageVolumes', 'readinessProbe'],
  reasons: {
    readinessProbe: 'tidb-operator v1 sets no probe on TiFlash, so the field would have no effect; remove it',
  },
};

export function resolveTiFlash(ctx: Ctx): ResolvedTiFlash {
  const spec = ctx.spec.tiflash!;
  const base = resolveComponent(ctx, 'tiflash', spec as ComponentSpec);
  const commonConfig = subConfig(base.config.config, 'spec.tiflash.config.config', ctx.issues);
  const proxyConfig = subConfig(base.config.proxy, 'spec.tiflash.config.proxy', ctx.issues);
  checkOwnedTables(commonConfig, TIFLASH_CONFIG_TABLES.config, 'spec.tiflash.config.config', ctx.issues);
  checkOwnedTables(proxyConfig, TIFLASH_CONFIG_TABLES.proxy, 'spec.tiflash.config.proxy', ctx.issues);
  const storageClaims = resolveClaims(ctx, spec.storageClaims);
  if (spec.requests?.storage !== undefined) {
    ctx.issues.push({
      path: 'spec.tiflash.requests.storage',
      message: 'not supported yet: tidb-operator v1 ignores it for TiFlash, whose volumes are sized by storageClaims; remove it',
    });
  }
  const version = tiflashVersion(base.image);
  // Read from the component's own annotations only, not the cluster-wide ones (as the operator does).
  const mountConfigMap = spec.annotations?.[TIFLASH_MOUNT_CM_ANNOTATION] === 'true';
  // The config names the namespace. Without one the init container fills it in at start (it knows its
  // own); mount-cm mode and the acrossK8s discovery call have no such step.
  if (ctx.namespace === undefined && (mountConfigMap || ctx.spec.acrossK8s)) {
    ctx.issues.push({
      path: 'metadata.namespace',
      message: `required with spec.tiflash ${mountConfigMap ? 'in mount-cm mode' : 'and acrossK8s'}, whose config names the namespace; set it here or pass --namespace`,
    });
  }
  // The init container asks discovery which PD endpoints to use; over mTLS it does so with curl,
  // which the busybox helper image does not have: the Pod would wait in Init for ever.
  if (
    !mountConfigMap &&
    ctx.spec.acrossK8s &&
    ctx.spec.tlsCluster?.enabled &&
    ctx.spec.tlsCluster.enableDiscoveryMTLS &&
    /(^|\/)busybox(:|@|$)/.test(ctx.helper.image)
  ) {
    ctx.issues.push({
      path: 'spec.tlsCluster.enableDiscoveryMTLS',
      message:
        `with acrossK8s, TiFlash's init container asks discovery over mTLS with curl, which the helper image ${ctx.helper.image} does not have; ` +
        `set spec.tiflash.annotations["${TIFLASH_MOUNT_CM_ANNOTATION}"]: "true" (TiFlash v5.4.0+ then asks from its own container), or spec.helper.image to an image with sh and curl`,
    });
  }
  if (mountConfigMap && !version.atLeast540) {
    ctx.issues.push({
      path: `spec.tiflash.annotations["${TIFLASH_MOUNT_CM_ANNOTATION}"]`,
      message: `mount-cm mode needs TiFlash v5.4.0 or newer (image ${base.image}): older TiFlash reads its proxy config from /data0/proxy.toml, which only the init container writes`,
    });
  }
  return {
    ...base,
    kind: 'tiflash',
    config: { config: commonConfig, proxy: proxyConfig },
    commonConfig,
    proxyConfig,
    storageClaims,
    capacity: storageCapacity(spec.limits?.storage, 'spec.tiflash.limits.storage', ctx.issues),
    privileged: spec.privileged ?? TIFLASH_DEFAULTS.privileged,
    timezone: ctx.spec.timezone || TIFLASH_DEFAULTS.timezone,
    mountConfigMap,
    configLayout: version.atLeast540 ? 'current' : 'legacy',
    keepPorts: version.below710 || TIFLASH_KEEP_PORTS_ANNOTATION in (ctx.tc.metadata.annotations ?? {}),
    logFiles: resolveLogFiles(commonConfig, storageClaims.length, spec.additionalVolumes ?? [], ctx.issues),
    initializer: {
      resources: containerResources(spec.initializer),
      ...(spec.initializer?.securityContext && { securityContext: spec.initializer.securityContext }),
    },
    logTailer: { ...resolveLogTailer(ctx, spec.logTailer, 'spec.tiflash.logTailer'), resources: containerResources(spec.logTailer) },
    settings: {
      ...base.settings,
      recoverFailover: spec.recoverFailover ?? TIFLASH_DEFAULTS.recoverFailover,
      recoverByUID: spec.failover?.recoverByUID,
      scaleInParallelism: spec.scalePolicy?.scaleInParallelism ?? TIFLASH_DEFAULTS.scaleParallelism,
      scaleOutParallelism: spec.scalePolicy?.scaleOutParallelism ?? TIFLASH_DEFAULTS.scaleParallelism,
    },
  };
}

/** `config.config` / `config.proxy`: a TOML string is parsed, a mapping was converted by resolveComponent. */
function subConfig(value: TomlValue | undefined, path: string, issues: SpecIssue[]): TomlTable {
  if (value === undefined) return {};
  if (isTomlTable(value)) return value;
  if (typeof value === 'string') return parseConfigToml(value, path, issues);
  issues.push({ path, message: `expected a TOML document (a string) or a mapping, got ${JSON.stringify(value)}` });
  return {};
}

const REFUSED_CLAIM_FIELD =
  'not supported yet: tidb-operator v1 ignores it for TiFlash (only resources.requests.storage sizes the claim); remove it';

function resolveClaims(ctx: Ctx, claims: TiFlashStorageClaim[] | undefined): ResolvedTiFlashClaim[] {
  const { issues } = ctx;
  const list = claims ?? [];
  if (list.length === 0) {
    issues.push({
      path: 'spec.tiflash.storageClaims',
      message: 'at least one storage claim is required: TiFlash keeps its data, metadata and logs on the first one (data0)',
    });
  }
  const out: ResolvedTiFlashClaim[] = [];
  list.forEach((claim, i) => {
    const path = `spec.tiflash.storageClaims[${i}]`;
    if (claim.volumeAttributesClassName !== undefined)
      requireFeature(ctx, `${path}.volumeAttributesClassName`, KUBE_FEATURES.volumeAttributesClass);
    const resources = claim.resources ?? {};
    if (resources.limits !== undefined) issues.push({ path: `${path}.resources.limits`, message: REFUSED_CLAIM_FIELD });
    if (resources.claims !== undefined) issues.push({ path: `${path}.resources.claims`, message: REFUSED_CLAIM_FIELD });
    for (const key of Object.keys(resources.requests ?? {})) {
      if (key !== 'storage') issues.push({ path: `${path}.resources.requests.${key}`, message: REFUSED_CLAIM_FIELD });
    }
    const storage: Quantity | undefined = resources.requests?.storage;
    if (storage === undefined) {
      issues.push({
        path: `${path}.resources.requests.storage`,
        message: `required field is missing: the size of volume data${i}, such as 100Gi`,
      });
      return;
    }
    out.push({
      storage: String(storage),
      ...(claim.storageClassName !== undefined && { storageClassName: claim.storageClassName }),
      ...(claim.volumeAttributesClassName !== undefined && { volumeAttributesClassName: claim.volumeAttributesClassName }),
    });
  });
  return out;
}

/** A path the sidecar can `touch` and `tail` inside `sh -c` without quoting. */
const SAFE_PATH = /^\/[A-Za-z0-9._/-]+$/;

/**
 * The three files the sidecars follow. Each sidecar mounts the volume named by the file's first
 * directory at `/<name>`, so that must be a data volume (or an additional volume).
 */
function resolveLogFiles(
  common: TomlTable,
  claims: number,
  additionalVolumes: { name: string }[],
  issues: SpecIssue[],
): ResolvedTiFlash['logFiles'] {
  const volumes = new Set([...Array.from({ length: Math.max(claims, 1) }, (_, i) => `data${i}`), ...additionalVolumes.map((v) => v.name)]);
  const file = (keys: string[], fallback: string): string => {
    let cur: TomlValue | undefined = common;
    for (const k of keys) cur = isTomlTable(cur) ? cur[k] : undefined;
    if (cur === undefined) return fallback;
    const path = `spec.tiflash.config.config.${keys.join('.')}`;
    if (typeof cur !== 'string' || !SAFE_PATH.test(cur)) {
      issues.push({ path, message: `expected an absolute file path of letters, digits, ., _, / and -, got ${JSON.stringify(cur)}` });
      return fallback;
    }
    const parts = cur.split('/');
    if (parts.length < 3) {
      issues.push({
        path,
        message: `expected a file in a directory on a volume, such as /data0/logs/${parts[1]}, got ${JSON.stringify(cur)}`,
      });
      return fallback;
    }
    if (!volumes.has(parts[1])) {
      issues.push({
        path,
        message: `a log sidecar mounts the volume named by the first directory (${parts[1]}); put the file under /data0 (or another /data<i>), or add a volume named ${parts[1]}`,
      });
    }
    return cur;
  };
  return {
    server: file(['logger', 'log'], TIFLASH_DEFAULTS.serverLog),
    error: file(['logger', 'errorlog'], TIFLASH_DEFAULTS.errorLog),
    cluster: file(['flash', 'flash_cluster', 'log'], TIFLASH_DEFAULTS.clusterLog),
  };
}

/** Container resources as the operator copies them: requests, limits and claims, without `storage`. */
function containerResources(
  spec: { requests?: ResourceList; limits?: ResourceList; claims?: unknown[] } | undefined,
): ResourceRequirements {
  const strip = (list: ResourceList | undefined) => {
    const entries = Object.entries(list ?? {}).filter(([k]) => k !== 'storage');
    return entries.length > 0 ? Object.fromEntries(entries.map(([k, v]) => [k, String(v)])) : undefined;
  };
  const limits = strip(spec?.limits);
  const requests = strip(spec?.requests);
  return {
    ...(limits && { limits }),
    ...(requests && { requests }),
    ...(spec?.claims && spec.claims.length > 0 && { claims: spec.claims as ResourceRequirements['claims'] }),
  };
}

/**
 * The version checks the operator makes on the TiFlash image tag (Masterminds semver, loose: `v7`,
 * `7.1`, `v5.4.0-rc.1` all parse; pre-release suffixes are ignored; `latest`, `nightly`, `master` and
 * their `-suffix` forms are newer than everything). A tag that does not parse is neither at least
 * v5.4.0 nor below v7.1.0.
 */
export function tiflashVersion(image: string): { atLeast540: boolean; below710: boolean } {
  const tag = imageTag(image);
  if (/^(latest|nightly|master)(-.*)?$/.test(tag)) return { atLeast540: true, below710: false };
  const m = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/.exec(tag);
  if (!m) return { atLeast540: false, below710: false };
  const v = [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)];
  const cmp = (w: number[]) => v[0] - w[0] || v[1] - w[1] || v[2] - w[2];
  return { atLeast540: cmp([5, 4, 0]) >= 0, below710: cmp([7, 1, 0]) < 0 };
}
