/**
 * TiFlash's two config templates: `config_templ.toml` (TiFlash itself) and `proxy_templ.toml` (its
 * Raft proxy). The user's tables with the keys the renderer owns filled in where the user left them
 * unset (TLS keys always). The literal `POD_NUM` stands for the pod ordinal: the init container
 * replaces it (init mode); in mount-cm mode the per-pod addresses come as command-line flags instead.
 *
 * Two layouts, by TiFlash version (see `ResolvedTiFlash.configLayout`): from v5.4.0 only the paths,
 * addresses and ports; before it also the ClickHouse-era defaults (users, quotas, profiles...).
 */
import type { ResolvedCluster } from '../../tidbcluster/resolve';
import type { ResolvedTiFlash } from '../../tidbcluster/tiflash';
import { names, PORT } from '../../tidbcluster/names';
import { TLS_DIR, tlsFile } from '../tls';
import { encodeToml, getPath, TomlEditor, type TomlTable, type TomlValue } from '../../base/toml';

/** Where the init container writes the per-pod files (init mode). */
export const TIFLASH_INIT_CONFIG = '/data0/config.toml';
export const TIFLASH_INIT_PROXY_CONFIG = '/data0/proxy.toml';
/** Where the ConfigMap is mounted (init container, or tiflash itself in mount-cm mode). */
export const TIFLASH_CONFIG_DIR = '/etc/tiflash';
export const TIFLASH_CONFIG_KEY = 'config_templ.toml';
export const TIFLASH_PROXY_KEY = 'proxy_templ.toml';
/** Placeholder the init script replaces with the pod ordinal. */
export const POD_NUM = 'POD_NUM';
/** Placeholder the init script replaces with the pod's namespace, when the cluster names none. */
export const POD_NAMESPACE = 'POD_NAMESPACE';
/** Placeholder (acrossK8s) the init script replaces with the PD endpoints discovery verified. */
export const PD_ADDR = 'PD_ADDR';

/** The ConfigMap data: both templates. */
export function tiflashConfigData(cluster: ResolvedCluster, tiflash: ResolvedTiFlash): Record<string, string> {
  return {
    [TIFLASH_CONFIG_KEY]: encodeToml(tiflashCommonConfig(cluster, tiflash)),
    [TIFLASH_PROXY_KEY]: encodeToml(tiflashProxyConfig(cluster, tiflash)),
  };
}

/** Addresses and switches both files need. */
interface Addresses {
  readonly listen: string;
  /** `<cluster>-tiflash-POD_NUM.<cluster>-tiflash-peer.<ns>.svc[.<domain>]`: this pod's FQDN in the templates. */
  readonly podHost: string;
  readonly tidbStatus: string;
  readonly pd: string;
}

function addresses(cluster: ResolvedCluster, tiflash: ResolvedTiFlash): Addresses {
  const ns = cluster.namespace ?? POD_NAMESPACE;
  const name = cluster.name;
  const domain = (d: string) => (d ? `.${d}` : '');
  const ref = cluster.joinCluster;
  const refHost = (service: string) => `${service}.${ref!.namespace}.svc${domain(ref!.clusterDomain)}`;
  let tidbStatus = `${names.service(name, 'tidb')}.${ns}.svc:${PORT.tidbStatus}`;
  if (!cluster.tidb && ref) {
    // Without a TiDB of its own, TiFlash asks the joined cluster's (its headless Service across Kubernetes clusters).
    const service = cluster.acrossK8s ? names.peerService(ref.name, 'tidb') : names.service(ref.name, 'tidb');
    tidbStatus = `${refHost(service)}:${PORT.tidbStatus}`;
  }
  let pd = `${names.service(name, 'pd')}.${ns}.svc:${PORT.pdClient}`;
  if (cluster.acrossK8s) pd = PD_ADDR;
  else if (!cluster.pd && ref) pd = `${refHost(names.service(ref.name, 'pd'))}:${PORT.pdClient}`;
  if (tiflash.configLayout === 'current' && preferPdAddresses(cluster)) pd = cluster.pdAddresses.join(',');
  return {
    listen: cluster.preferIPv6 ? '[::]' : '0.0.0.0',
    podHost: `${names.statefulSet(name, 'tiflash')}-${POD_NUM}.${names.peerService(name, 'tiflash')}.${ns}.svc${domain(cluster.clusterDomain)}`,
    tidbStatus,
    pd,
  };
}

/**
 * v2 scripts with `PreferPDAddressesOverDiscovery` use `spec.pdAddresses` directly. (The operator also
 * does this with an empty list, which leaves TiFlash without any PD; we keep the default then.)
 */
export function preferPdAddresses(cluster: ResolvedCluster): boolean {
  return cluster.startScriptVersion === 'v2' && cluster.featureFlags.preferPdAddressesOverDiscovery && cluster.pdAddresses.length > 0;
}

/** `config_templ.toml`. */
export function tiflashCommonConfig(cluster: ResolvedCluster, tiflash: ResolvedTiFlash): TomlTable {
  const c = new TomlEditor(tiflash.commonConfig);
  const a = addresses(cluster, tiflash);
  if (tiflash.configLayout === 'legacy') legacyCommonDefaults(c, cluster, tiflash, a);
  else currentCommonDefaults(c, tiflash, a);
  if (cluster.tlsCluster) {
    c.set('security.ca_path', tlsFile(TLS_DIR.tiflash, 'ca'));
    c.set('security.cert_path', tlsFile(TLS_DIR.tiflash, 'cert'));
    c.set('security.key_path', tlsFile(TLS_DIR.tiflash, 'key'));
    if (tiflash.configLayout === 'current' && tiflash.keepPorts) {
      c.setDefault('tcp_port_secure', PORT.tiflashTcp);
      c.setDefault('https_port', PORT.tiflashHttp);
    }
    c.delete('http_port');
    c.delete('tcp_port');
  } else if (tiflash.configLayout === 'legacy') {
    c.delete('https_port');
    c.delete('tcp_port_secure');
  }
  return c.table;
}

function currentCommonDefaults(c: TomlEditor, tiflash: ResolvedTiFlash, a: Addresses): void {
  // An old-style `path` or an explicit raft.kvstore_path means the user laid out the disks already.
  if (!c.has('path') && !c.has('storage.main.dir')) {
    c.set(
      'storage.main.dir',
      tiflash.storageClaims.map((_, i) => `/data${i}/db`),
    );
  }
  if (!c.has('raft.kvstore_path')) c.setDefault('storage.raft.dir', ['/data0/kvstore']);
  c.setDefault('tmp_path', '/data0/tmp');
  if (tiflash.keepPorts) {
    c.setDefault('tcp_port', PORT.tiflashTcp);
    c.setDefault('http_port', PORT.tiflashHttp);
  }
  c.setDefault('flash.tidb_status_addr', a.tidbStatus);
  if (!tiflash.mountConfigMap) c.setDefault('flash.service_addr', `${a.listen}:${PORT.tiflashFlash}`);
  c.setDefault('flash.flash_cluster.log', tiflash.logFiles.cluster);
  c.setDefault('flash.proxy.addr', `${a.listen}:${PORT.tiflashProxy}`);
  if (!tiflash.mountConfigMap) c.setDefault('flash.proxy.advertise-addr', `${a.podHost}:${PORT.tiflashProxy}`);
  c.setDefault('flash.proxy.data-dir', '/data0/proxy');
  c.setDefault('flash.proxy.config', tiflash.mountConfigMap ? `${TIFLASH_CONFIG_DIR}/${TIFLASH_PROXY_KEY}` : TIFLASH_INIT_PROXY_CONFIG);
  c.setDefault('logger.errorlog', tiflash.logFiles.error);
  c.setDefault('logger.log', tiflash.logFiles.server);
  // TiFlash before v7.1.0 needs some key in [raft] even when the address comes as a flag.
  c.setDefault('raft.pd_addr', a.pd);
  if (a.listen === '[::]') {
    c.setDefault('listen_host', '::');
    c.setDefault('status.metrics_port', PORT.tiflashMetrics);
  }
}

/** Before v5.4.0 TiFlash needed its ClickHouse-era settings spelled out. */
function legacyCommonDefaults(c: TomlEditor, cluster: ResolvedCluster, tiflash: ResolvedTiFlash, a: Addresses): void {
  if (!c.has('path')) c.set('path', tiflash.storageClaims.map((_, i) => `/data${i}/db`).join(','));
  const defaults: [string, TomlValue][] = [
    ['tmp_path', '/data0/tmp'],
    ['display_name', 'TiFlash'],
    ['default_profile', 'default'],
    ['path_realtime_mode', false],
    ['mark_cache_size', 5368709120],
    ['minmax_index_cache_size', 5368709120],
    ['tcp_port', PORT.tiflashTcp],
    ['tcp_port_secure', PORT.tiflashTcp],
    ['https_port', PORT.tiflashHttp],
    ['http_port', PORT.tiflashHttp],
    ['interserver_http_port', PORT.tiflashInternal],
    ['flash.tidb_status_addr', a.tidbStatus],
    ['flash.service_addr', `${a.listen}:${PORT.tiflashFlash}`],
    ['flash.overlap_threshold', 0.6],
    ['flash.compact_log_min_period', 200],
    ['flash.flash_cluster.cluster_manager_path', '/tiflash/flash_cluster_manager'],
    ['flash.flash_cluster.log', tiflash.logFiles.cluster],
    ['flash.flash_cluster.refresh_interval', 20],
    ['flash.flash_cluster.update_rule_interval', 10],
    ['flash.flash_cluster.master_ttl', 60],
    ['flash.proxy.addr', `${a.listen}:${PORT.tiflashProxy}`],
    ['flash.proxy.advertise-addr', `${a.podHost}:${PORT.tiflashProxy}`],
    ['flash.proxy.data-dir', '/data0/proxy'],
    ['flash.proxy.config', TIFLASH_INIT_PROXY_CONFIG],
    ['logger.errorlog', tiflash.logFiles.error],
    ['logger.size', '100M'],
    ['logger.log', tiflash.logFiles.server],
    ['logger.level', 'information'],
    ['logger.count', 10],
    ['application.runAsDaemon', true],
    ['raft.kvstore_path', '/data0/kvstore'],
    ['raft.storage_engine', 'dt'],
    ['raft.pd_addr', a.pd],
    // TiFlash wants the bare IPv6 wildcard here, not the bracketed form of addresses.
    ['listen_host', cluster.preferIPv6 ? '::' : a.listen],
    ['status.metrics_port', PORT.tiflashMetrics],
    ['quotas.default.interval.duration', 3600],
    ['quotas.default.interval.queries', 0],
    ['quotas.default.interval.errors', 0],
    ['quotas.default.interval.result_rows', 0],
    ['quotas.default.interval.read_rows', 0],
    ['quotas.default.interval.execution_time', 0],
    ['users.readonly.profile', 'readonly'],
    ['users.readonly.quota', 'default'],
    ['users.readonly.networks.ip', '::/0'],
    ['users.readonly.password', ''],
    ['users.default.profile', 'default'],
    ['users.default.quota', 'default'],
    ['users.default.networks.ip', '::/0'],
    ['users.default.password', ''],
    ['profiles.readonly.readonly', 1],
    ['profiles.default.max_memory_usage', 10000000000],
    ['profiles.default.load_balancing', 'random'],
    ['profiles.default.use_uncompressed_cache', 0],
  ];
  for (const [key, value] of defaults) c.setDefault(key, value);
}

/** `proxy_templ.toml`. */
export function tiflashProxyConfig(cluster: ResolvedCluster, tiflash: ResolvedTiFlash): TomlTable {
  const p = new TomlEditor(tiflash.proxyConfig);
  const a = addresses(cluster, tiflash);
  // The legacy layout advertises per-pod addresses in mount-cm mode too (flags override them there).
  const perPod = tiflash.configLayout === 'legacy' || !tiflash.mountConfigMap;
  p.setDefault('log-level', 'info');
  if (perPod) p.setDefault('server.engine-addr', `${a.podHost}:${PORT.tiflashFlash}`);
  p.setDefault('server.status-addr', `${a.listen}:${PORT.tiflashProxyStatus}`);
  if (perPod) p.setDefault('server.advertise-status-addr', `${a.podHost}:${PORT.tiflashProxyStatus}`);
  if (cluster.tlsCluster) {
    p.set('security.ca-path', tlsFile(TLS_DIR.tiflash, 'ca'));
    p.set('security.cert-path', tlsFile(TLS_DIR.tiflash, 'cert'));
    p.set('security.key-path', tlsFile(TLS_DIR.tiflash, 'key'));
    // TiFlash spells it cert_allowed_cn, the proxy cert-allowed-cn; one setting serves both.
    const allowed = getPath(tiflash.commonConfig, ['security', 'cert_allowed_cn']);
    if (allowed !== undefined && !p.has('security.cert-allowed-cn')) p.set('security.cert-allowed-cn', allowed);
  }
  return p.table;
}
