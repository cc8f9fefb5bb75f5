import { ApiObject, Chart } from 'cdk8s';
import { Construct } from 'constructs';
import { COMPONENTS, names, selectorLabels, VOLUME_SIZES_KEY, VOLUME_SIZES_LABEL, type ComponentKind } from '../tidbcluster/names';
import type { ResolvedCluster } from '../tidbcluster/resolve';
import { namespaced } from './component';
import { givenJson } from './kube';

/** `{"<component>": {"<volumeClaimTemplate>": "<storage request>"}}` of the StatefulSets given. */
export function volumeSizes(cluster: string, statefulSets: readonly any[]): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  for (const kind of COMPONENTS) {
    const sts = statefulSets.find((s) => s?.kind === 'StatefulSet' && s.metadata?.name === names.statefulSet(cluster, kind as ComponentKind));
    const sizes: Record<string, string> = {};
    for (const t of sts?.spec?.volumeClaimTemplates ?? []) {
      const storage = t?.spec?.resources?.requests?.storage;
      if (t?.metadata?.name && storage !== undefined && storage !== null) sizes[t.metadata.name] = String(storage);
    }
    if (Object.keys(sizes).length > 0) out[kind] = sizes;
  }
  return out;
}

export interface VolumeSizesProps {
  readonly cluster: ResolvedCluster;
}

/**
 * The ConfigMap `<cluster>-volume-sizes`: the storage size Git asks for, per component and claim
 * template, taken from the chart's StatefulSets. The companion controller grows the claims to it and
 * re-creates a StatefulSet whose templates are smaller; this object is how it learns the sizes while
 * the API server still refuses the StatefulSet itself (its claim templates cannot change in place).
 * Add it after the components.
 */
export class VolumeSizesConfigMap extends Construct {
  constructor(scope: Construct, id: string, props: VolumeSizesProps) {
    super(scope, id);
    const c = props.cluster;
    const chart = Chart.of(this);
    const statefulSets = chart.node
      .findAll()
      .filter((n): n is ApiObject => n instanceof ApiObject && n.kind === 'StatefulSet' && Chart.of(n) === chart)
      .map(givenJson);
    const sizes = volumeSizes(c.name, statefulSets);
    const labels = { ...selectorLabels(c.instance, 'discovery'), [VOLUME_SIZES_LABEL]: 'true' };
    new ApiObject(this, 'configmap', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: namespaced(c, names.volumeSizes(c.name), labels),
      data: { [VOLUME_SIZES_KEY]: `${JSON.stringify(sizes, null, 2)}\n` },
    });
  }
}
