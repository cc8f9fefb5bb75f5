/** A PD micro-service's `pd.toml`: the user's, with PD's cluster certificate when TLS is on (the operator reuses PD's). */
import type { ResolvedCluster, ResolvedPdms } from '../../tidbcluster/resolve';
import { encodeToml, mergeTables } from '../../base/toml';
import { pdTlsOverlay } from './pd';

export function pdmsConfig(cluster: ResolvedCluster, pdms: ResolvedPdms): string {
  return encodeToml(mergeTables(pdms.config, pdTlsOverlay(cluster)));
}
