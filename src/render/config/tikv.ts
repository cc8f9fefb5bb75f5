/** TiKV's `tikv.toml`: the user's table, its duration strings made integers, the certificate paths overlaid. */
import type { ResolvedCluster, ResolvedTiKV } from '../../tidbcluster/resolve';
import { TLS_DIR, tlsFile } from '../tls';
import { encodeToml, isTomlTable, mergeTables, type TomlTable } from '../../base/toml';

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
      security: {
        'ca-path': tlsFile(TLS_DIR.tikv, 'ca'),
        'cert-path': tlsFile(TLS_DIR.tikv, 'cert'),
        'key-path': tlsFile(TLS_DIR.tikv, 'key'),
      },
    });
  }
  return encodeToml(config);
}
