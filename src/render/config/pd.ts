/**
 * PD's `pd.toml`: the user's table with the certificate paths and the dashboard's keys overlaid; and
 * the `security` table PD's micro-services share with it. Pure functions of the resolved spec.
 */
import type { ResolvedCluster, ResolvedPD } from '../../tidbcluster/resolve';
import { imageVersionBelow } from '../../base/version';
import { SKIP_TLS_TO_TIDB } from '../../tidbcluster/names';
import { TLS_DIR, tlsFile } from '../tls';
import { encodeToml, mergeTables, type TomlTable } from '../../base/toml';

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

/** PD's cluster certificate in `security`, with TLS on; PD and its micro-services read it alike. */
export function pdTlsOverlay(cluster: ResolvedCluster): TomlTable {
  if (!cluster.tlsCluster) return {};
  return {
    security: {
      'cacert-path': tlsFile(TLS_DIR.pd, 'ca'),
      'cert-path': tlsFile(TLS_DIR.pd, 'cert'),
      'key-path': tlsFile(TLS_DIR.pd, 'key'),
    },
  };
}
