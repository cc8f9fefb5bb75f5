/** Pump's `pump.toml`: the user's config, with the certificate paths overlaid under cluster TLS. */
import type { ResolvedCluster } from '../../tidbcluster/resolve';
import type { ResolvedPump } from '../../tidbcluster/pump';
import { TLS_DIR } from '../tls';
import { encodeToml, mergeTables, type TomlTable } from '../../base/toml';

export function pumpConfig(cluster: ResolvedCluster, pump: ResolvedPump): string {
  const overlay: TomlTable = {};
  if (cluster.tlsCluster) {
    overlay.security = {
      'ssl-ca': `${TLS_DIR.pump}/ca.crt`,
      'ssl-cert': `${TLS_DIR.pump}/tls.crt`,
      'ssl-key': `${TLS_DIR.pump}/tls.key`,
    };
  }
  return encodeToml(mergeTables(pump.config, overlay));
}
