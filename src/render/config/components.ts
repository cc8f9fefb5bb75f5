/**
 * Each component's config: the user's table with the keys the renderer owns overlaid. Pure functions
 * of the resolved spec.
 */
import type { ResolvedCluster, ResolvedPD, ResolvedPdms, ResolvedTiDB, ResolvedTiKV } from '../../tidbcluster/resolve';
import { imageVersionBelow } from '../../base/version';
import { SKIP_TLS_TO_TIDB } from '../../tidbcluster/names';
import { TLS_DIR, tlsFile } from '../tls';
import { encodeToml, isTomlTable, mergeTables, type TomlTable } from '../../base/toml';


/**
 * PD's dashboard talks to TiDB with a client certificate when TiDB serves TLS to clients; PD before
 * v4.0 has no dashboard.
 */
export function pdDashboardUsesTidbTls(cluster: ResolvedCluster, pd: ResolvedPD): boolean {
  return !!cluster.tidb && !!cluster.sqlTls && !(SKIP_TLS_TO_TIDB in cluster.annotations) && !imageVersionBelow(pd.image, '4.0.0');
}

export function pdConfig(cluster: ResolvedCluster, pd: ResolvedPD): string {
  const overlay: TomlTable = pdTlsOverlay(cluster);
  const dashboard: TomlTable = {};
  if (pdDashboardUsesTidbTls(cluster, pd)) {
    if (!cluster.sqlTls!.skipInternalClientCA) dashboard['tidb-cacert-path'] = tlsFile(TLS_DIR.tidbClient, 'ca');
    dashboard['tidb-cert-path'] = tlsFile(TLS_DIR.tidbClient, 'cert');
    dashboard['tidb-key-path'] = tlsFile(TLS_DIR.tidbClient, 'key');
  }
  if (pd.enableDashboardInternalProxy !== undefined) dashboard['internal-proxy'] = pd.enableDashboardInternalProxy;
  if (Object.keys(dashboard).length > 0) overlay.dashboard = dashboard;
  return encodeToml(mergeTables(pd.config, overlay));
}

/** A PD micro-service's config: the user's, with PD's cluster certificate when TLS is on (the operator reuses PD's). */
export function pdmsConfig(cluster: ResolvedCluster, pdms: ResolvedPdms): string {
  return encodeToml(mergeTables(pdms.config, pdTlsOverlay(cluster)));
}

/** PD's cluster certificate in `security`, with TLS on; PD and its micro-services read it alike. */
function pdTlsOverlay(cluster: ResolvedCluster): TomlTable {
  if (!cluster.tlsCluster) return {};
  return { security: { 'cacert-path': tlsFile(TLS_DIR.pd, 'ca'), 'cert-path': tlsFile(TLS_DIR.pd, 'cert'), 'key-path': tlsFile(TLS_DIR.pd, 'key') } };
}

/** TiKV durations given as digit strings are written as bare integers, as the operator does. */
const TIKV_BARE_INTEGER_KEYS = ['wait-for-lock-timeout', 'wake-up-delay-duration'];

export function tikvConfig(cluster: ResolvedCluster, tikv: ResolvedTiKV): string {
  let config = tikv.config;
  const txn = config['pessimistic-txn'];
  if (isTomlTable(txn)) {
    const fixed: TomlTable = { ...txn };
    for (const key of TIKV_BARE_INTEGER_KEYS) {
      const v = fixed[key];
      if (typeof v === 'string' && /^\d+$/.test(v)) fixed[key] = Number(v);
    }
    config = { ...config, 'pessimistic-txn': fixed };
  }
  if (cluster.tlsCluster) {
    config = mergeTables(config, {
      security: { 'ca-path': tlsFile(TLS_DIR.tikv, 'ca'), 'cert-path': tlsFile(TLS_DIR.tikv, 'cert'), 'key-path': tlsFile(TLS_DIR.tikv, 'key') },
    });
  }
  return encodeToml(config);
}

export const TIDB_AUTH_TOKEN_DIR = '/var/lib/tidb-auth-token';
export const TIDB_BOOTSTRAP_DIR = '/etc/tidb-bootstrap';

export function tidbConfig(cluster: ResolvedCluster, tidb: ResolvedTiDB): string {
  const overlay: TomlTable = {};
  const security: TomlTable = {};
  if (tidb.tokenBasedAuthEnabled) security['auth-token-jwks'] = `${TIDB_AUTH_TOKEN_DIR}/tidb_auth_token_jwks.json`;
  if (cluster.tlsCluster) {
    security['cluster-ssl-ca'] = tlsFile(TLS_DIR.tidb, 'ca');
    security['cluster-ssl-cert'] = tlsFile(TLS_DIR.tidb, 'cert');
    security['cluster-ssl-key'] = tlsFile(TLS_DIR.tidb, 'key');
    // TiProxy migrates sessions between TiDB servers with tokens signed by the cluster certificate.
    if (cluster.tiproxy && cluster.tiproxy.replicas !== 0) {
      security['session-token-signing-key'] = tlsFile(TLS_DIR.tidb, 'key');
      security['session-token-signing-cert'] = tlsFile(TLS_DIR.tidb, 'cert');
    }
  }
  if (cluster.sqlTls) {
    if (!cluster.sqlTls.disableClientAuthn) security['ssl-ca'] = tlsFile(TLS_DIR.tidbServer, 'ca');
    security['ssl-cert'] = tlsFile(TLS_DIR.tidbServer, 'cert');
    security['ssl-key'] = tlsFile(TLS_DIR.tidbServer, 'key');
  }
  if (Object.keys(security).length > 0) overlay.security = security;
  if (tidb.bootstrapSQLConfigMapName) {
    overlay['initialize-sql-file'] = `${TIDB_BOOTSTRAP_DIR}/bootstrap.sql`;
  }
  return encodeToml(mergeTables(tidb.config, overlay));
}
