/** Which Pods' own servers the controller asks before it plans (the reconciler asks them). */
import { EVICT_BEGIN_ANNOTATION } from '../model/annotations';
import { isReady, isTerminating, podRevision } from '../model/objects';
import { isRolling } from '../model/settings';
import { isUpgrading } from '../view/lookups';
import type { ComponentState } from '../view/view';
import { requests } from './evict-requests';
import { tiflashStatusChecked } from './upgrade-tiflash';
import { hasGate } from './serving';

/**
 * The Pods whose servers the controller asks before planning: every Ready Pod at the update
 * revision of an upgrading PD (its `/pd/api/v2/ready`) or TiFlash (its `/tiflash/store-status`), and
 * every TiKV Pod of an upgrading TiKV whose leaders are being evicted for its restart (its `/metrics`),
 * and every running TiDB Pod whose readiness gate the controller keeps (its `/status`, `serving.ts`).
 */
export function probesWanted(components: readonly ComponentState[]): { pdReady: string[]; tiflashStatus: string[]; tikvLeaders: string[]; tidbStatus: string[] } {
  const out = { pdReady: [] as string[], tiflashStatus: [] as string[], tikvLeaders: [] as string[], tidbStatus: [] as string[] };
  for (const c of components) {
    if (c.kind === 'tidb') out.tidbStatus.push(...c.pods.filter((p) => hasGate(p) && !isTerminating(p) && p.status?.phase === 'Running').map((p) => p.metadata.name!));
    out.tikvLeaders.push(...requests(c).filter((r) => r.deletePod).map((r) => r.pod.metadata.name!));
    if (!isRolling(c.sts) || !isUpgrading(c.sts, c.pods)) continue;
    const update = c.sts.status?.updateRevision;
    if (c.kind === 'tikv') {
      const evicting = c.pods.filter((p) => podRevision(p) !== update && !isTerminating(p) && p.metadata.annotations?.[EVICT_BEGIN_ANNOTATION] !== undefined);
      out.tikvLeaders.push(...evicting.map((p) => p.metadata.name!).filter((n) => !out.tikvLeaders.includes(n)));
      continue;
    }
    if (c.kind !== 'pd' && !(c.kind === 'tiflash' && tiflashStatusChecked(c.sts))) continue;
    const pods = c.pods.filter((p) => podRevision(p) === update && isReady(p)).map((p) => p.metadata.name!);
    (c.kind === 'pd' ? out.pdReady : out.tiflashStatus).push(...pods);
  }
  return out;
}
