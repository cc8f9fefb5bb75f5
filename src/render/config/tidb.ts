/**
 * TiDB's `tidb.toml`: the user's table with the certificate paths, the JWKS file and the bootstrap
 * SQL file overlaid, and the directories the Pod mounts those two at.
 */
import type { ResolvedCluster, ResolvedTiDB } from '../../tidbcluster/resolve';
import { TLS_DIR, tlsFile } from '../tls';
import { encodeToml, mergeTables, type TomlTable } from '../../base/toml';

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
