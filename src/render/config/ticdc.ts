/** TiCDC's `ticdc.toml`: the user's whole config, the four flag keys included (as the operator writes it). */
import type { ResolvedTiCDC } from '../../tidbcluster/ticdc';
import { encodeToml } from '../../base/toml';

export function ticdcConfig(ticdc: ResolvedTiCDC): string {
  return encodeToml(ticdc.config);
}
