/**
 * Each component's config: the user's table with the keys the renderer owns overlaid. Pure functions
 * of the resolved spec.
 */
import type { ResolvedPD, ResolvedTiDB, ResolvedTiKV } from '../../spec/resolve';
import { encodeToml, isTomlTable, mergeTables, type TomlTable } from './toml';

export function pdConfig(pd: ResolvedPD): string {
  const overlay: TomlTable = {};
  if (pd.enableDashboardInternalProxy !== undefined) {
    overlay.dashboard = { 'internal-proxy': pd.enableDashboardInternalProxy };
  }
  return encodeToml(mergeTables(pd.config, overlay));
}

/** TiKV durations given as digit strings are written as bare integers, as the operator does. */
const TIKV_BARE_INTEGER_KEYS = ['wait-for-lock-timeout', 'wake-up-delay-duration'];

export function tikvConfig(tikv: ResolvedTiKV): string {
  const txn = tikv.config['pessimistic-txn'];
  if (!isTomlTable(txn)) return encodeToml(tikv.config);
  const fixed: TomlTable = { ...txn };
  for (const key of TIKV_BARE_INTEGER_KEYS) {
    const v = fixed[key];
    if (typeof v === 'string' && /^\d+$/.test(v)) fixed[key] = Number(v);
  }
  return encodeToml({ ...tikv.config, 'pessimistic-txn': fixed });
}

export const TIDB_AUTH_TOKEN_DIR = '/var/lib/tidb-auth-token';
export const TIDB_BOOTSTRAP_DIR = '/etc/tidb-bootstrap';

export function tidbConfig(tidb: ResolvedTiDB): string {
  const overlay: TomlTable = {};
  if (tidb.tokenBasedAuthEnabled) {
    overlay.security = { 'auth-token-jwks': `${TIDB_AUTH_TOKEN_DIR}/tidb_auth_token_jwks.json` };
  }
  if (tidb.bootstrapSQLConfigMapName) {
    overlay['initialize-sql-file'] = `${TIDB_BOOTSTRAP_DIR}/bootstrap.sql`;
  }
  return encodeToml(mergeTables(tidb.config, overlay));
}
