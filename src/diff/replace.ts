/**
 * Risks of `tidb-gitops.io/replace`: each Pod Git newly asks to replace loses its data on purpose.
 */
import { ANNOTATION } from '../tidbcluster/names';
import { parseComponentSettings } from '../tidbcluster/contract';
import { compareComponents, type ClusterModel } from './model';
import { RISK, type Risk } from './report';

/** The Pods a cluster's components are asked to replace, from their settings annotation. */
function replacing(cluster: ClusterModel | undefined): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [component, c] of cluster?.components ?? []) {
    const text = (c.workload?.metadata as { annotations?: Record<string, string> } | undefined)?.annotations?.[ANNOTATION.settings];
    const replace = parseComponentSettings(text).replace as unknown;
    if (Array.isArray(replace))
      out.set(
        component,
        replace.filter((p): p is string => typeof p === 'string'),
      );
  }
  return out;
}

const WHAT_GOES: Readonly<Record<string, string>> = {
  pd: 'its PD member is deleted (after its leadership moves), then its volumes and Pod; it joins again as a new member on an empty volume',
  tikv: 'its store is taken offline until PD has moved every region away (Tombstone), then its volumes and Pod are deleted; it starts again as a new, empty store',
  tiflash:
    'its store is taken offline until PD has moved its replicas away (Tombstone), then its volumes and Pod are deleted; it starts again as a new, empty store',
};

export function replaceRisks(before: ClusterModel | undefined, after: ClusterModel): Risk[] {
  const was = replacing(before);
  const out: Risk[] = [];
  for (const [component, pods] of [...replacing(after)].sort(([a], [b]) => compareComponents(a, b))) {
    for (const pod of pods) {
      if (was.get(component)?.includes(pod)) continue;
      out.push({
        id: RISK.replace,
        component,
        message: `${pod} is replaced, once: ${WHAT_GOES[component] ?? 'its volumes and Pod are deleted'}. Its data is gone for good; keep the annotation until the status says it is done.`,
      });
    }
  }
  return out;
}
