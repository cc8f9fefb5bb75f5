/**
 * `spec.tiproxy`: what TiProxy resolves beyond the common component fields (certificate layout, TLS
 * towards TiDB), the fields it takes and its defaults.
 */
import { getPath, isTomlTable, tomlKindOf, type TomlTable } from '../base/toml';
import type { DefaultEntry } from './defaults';
import { names } from './names';
import { resolveComponent, type Ctx, type ResolvedComponent, type ResolvedProbe } from './component';
import type { ComponentFields } from './fields';
import type { TiProxySpec } from './types';

/** Where TiProxy's own cluster certificate is mounted with `certLayout: v1`. */
export const TIPROXY_CLUSTER_TLS_DIR = '/var/lib/tiproxy-tls';

/** `spec.tiproxy.certLayout` after resolution. */
export type TiProxyCertLayout = '' | 'v1';

export interface ResolvedTiProxy extends ResolvedComponent {
  readonly kind: 'tiproxy';
  /** TiProxy's ConfigMap is always updated in place (`<cluster>-tiproxy`), as with the operator. */
  readonly configUpdateStrategy: 'InPlace';
  readonly certLayout: TiProxyCertLayout;
  readonly sslEnableTiDB: boolean;
  /** Secret of the client certificate towards TiDB (legacy layout with `tidb.tlsClient`). */
  readonly tlsClientSecretName: string;
}

/** Fields of `spec.tiproxy` beyond the common ones, and common ones it does not take (see `support.ts`). */
export const TIPROXY_FIELDS: ComponentFields = {
  extra: ['sslEnableTiDB', 'tlsClientSecretName', 'certLayout', 'serverLabels'],
  // Not in TiProxy's CRD either: the schema check names it as an unknown field first.
  except: ['maxFailoverCount'],
  offValues: {
    configUpdateStrategy: ['InPlace'],
  },
  reasons: {
    configUpdateStrategy:
      "TiProxy's ConfigMap is always updated in place (tidb-operator ignores this field for TiProxy); remove it or set InPlace",
  },
};

/** TiProxy's defaults, for the defaults table of docs/reference.md. */
export const TIPROXY_DEFAULTS_TABLE: readonly DefaultEntry[] = [
  { field: 'spec.tiproxy.certLayout', value: '""', note: 'legacy certificate layout' },
  { field: 'spec.tiproxy.sslEnableTiDB', value: false },
  { field: 'spec.tiproxy.tlsClientSecretName', value: '<cluster>-tidb-client-secret' },
  { field: 'spec.tiproxy.readinessProbe', value: 'none', note: 'a probe only when readinessProbe.type is set' },
  { field: 'spec.tiproxy.readinessProbe.periodSeconds', value: 10 },
  { field: 'spec.tiproxy.configUpdateStrategy', value: 'InPlace', note: 'always' },
  { field: 'spec.tiproxy.config proxy.require-backend-tls', value: false, note: 'only when unset' },
  { field: 'spec.tiproxy.config security.server-tls.skip-ca', value: true, note: 'only when unset, with spec.tidb.tlsClient' },
];

const PROBE_PERIOD_SECONDS = 10;
const PROBE_INITIAL_DELAY_SECONDS = 10;
/** A Secret name (DNS-1123 subdomain). */
const SECRET_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** Config tables the renderer writes keys into: a value there must be a table. */
const OWNED_TABLES = [
  ['proxy'],
  ['security'],
  ['security', 'cluster-tls'],
  ['security', 'server-tls'],
  ['security', 'sql-tls'],
  ['security', 'server-http-tls'],
];

export function resolveTiProxy(ctx: Ctx): ResolvedTiProxy {
  const spec = ctx.spec.tiproxy!;
  const path = 'spec.tiproxy';
  const base = resolveComponent(ctx, 'tiproxy', spec);
  checkTopology(ctx, path);
  checkConfigTables(ctx, base.config, `${path}.config`);
  const certLayout = resolveCertLayout(ctx, spec, path);
  const tlsClientSecretName = spec.tlsClientSecretName || names.tidbClientSecret(ctx.tc.metadata.name);
  if (spec.tlsClientSecretName && !SECRET_NAME.test(spec.tlsClientSecretName)) {
    ctx.issues.push({
      path: `${path}.tlsClientSecretName`,
      message: `expected a Secret name (lowercase letters, digits, '-' and '.'), got ${JSON.stringify(spec.tlsClientSecretName)}`,
    });
  }
  // TiProxy has no failover: the shared maxFailoverCount does not apply.
  const { maxFailoverCount: _unused, ...settings } = base.settings;
  return {
    ...base,
    kind: 'tiproxy',
    configUpdateStrategy: 'InPlace',
    readinessProbe: resolveProbe(spec.readinessProbe),
    certLayout,
    sslEnableTiDB: spec.sslEnableTiDB ?? false,
    tlsClientSecretName,
    settings: { ...settings, serverLabels: spec.serverLabels ?? {} },
  };
}

/** Unlike the other components, no `type` means no probe at all (the operator's compatibility rule). */
function resolveProbe(probe: TiProxySpec['readinessProbe']): ResolvedProbe | undefined {
  if (!probe?.type) return undefined;
  return {
    type: probe.type,
    initialDelaySeconds: probe.initialDelaySeconds ?? PROBE_INITIAL_DELAY_SECONDS,
    periodSeconds: probe.periodSeconds ?? PROBE_PERIOD_SECONDS,
  };
}

/** The operator refuses to sync TiProxy across Kubernetes clusters; so does this renderer. */
function checkTopology(ctx: Ctx, path: string): void {
  if (ctx.spec.acrossK8s) {
    ctx.issues.push({
      path,
      message:
        'TiProxy cannot be rendered with spec.acrossK8s (tidb-operator does not support it either): remove spec.tiproxy or acrossK8s',
    });
  }
}

function checkConfigTables(ctx: Ctx, config: TomlTable, path: string): void {
  for (const keys of OWNED_TABLES) {
    const value = getPath(config, keys);
    if (value !== undefined && !isTomlTable(value)) {
      ctx.issues.push({
        path: `${path}.${keys.join('.')}`,
        message: `expected a table (the renderer sets keys in [${keys.join('.')}]), got a value of type ${tomlKindOf(value) ?? typeof value}`,
      });
    }
  }
}

function resolveCertLayout(ctx: Ctx, spec: TiProxySpec, path: string): TiProxyCertLayout {
  const layout = spec.certLayout ?? '';
  if (layout !== '' && layout !== 'v1') {
    ctx.issues.push({ path: `${path}.certLayout`, message: `expected "" (legacy) or "v1", got ${JSON.stringify(layout)}` });
    return '';
  }
  // The v1 layout always points TiProxy's HTTP API certificate at the TiProxy cluster certificate,
  // which is only mounted with tlsCluster: without it TiProxy cannot read the files and does not start.
  const mounted = (spec.additionalVolumeMounts ?? []).some((m) => m.mountPath.replace(/\/+$/, '') === TIPROXY_CLUSTER_TLS_DIR);
  if (layout === 'v1' && !ctx.spec.tlsCluster?.enabled && !mounted) {
    ctx.issues.push({
      path: `${path}.certLayout`,
      message:
        `"v1" configures TiProxy's HTTP API certificate (security.server-http-tls) from ${TIPROXY_CLUSTER_TLS_DIR}, which is mounted only ` +
        `with spec.tlsCluster.enabled, so TiProxy would not start: enable tlsCluster, mount a certificate there with ` +
        'additionalVolumes/additionalVolumeMounts, or leave certLayout unset',
    });
  }
  return layout;
}
