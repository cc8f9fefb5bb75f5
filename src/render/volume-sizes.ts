import { ApiObject, Lazy } from 'cdk8s';
import { Construct } from 'constructs';
import { COMPONENTS, names, selectorLabels, VOLUME_SIZES_KEY, VOLUME_SIZES_LABEL, type ComponentKind } from '../tidbcluster/names';
import type { ResolvedCluster } from '../tidbcluster/resolve';
import { namespaced } from './component';
import { givenJson } from './kube';
import { refuseAtSynthesis } from './checked';

/** `{"<component>": {"<volumeClaimTemplate>": "<storage request>"}}` of the StatefulSets given. */
export function volumeSizes(cluster: string, statefulSets: readonly any[]): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  for (const kind of COMPONENTS) {
    const sts = statefulSets.find(
      (s) => s?.kind === 'StatefulSet' && s.metadata?.name === names.statefulSet(cluster, kind as ComponentKind),
    );
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
 * template, taken from the StatefulSets in the same scope (the {@link TidbCluster}'s) as they are at
 * synthesis, JSON patches included. The companion controller grows the claims to it and re-creates a
 * StatefulSet whose templates are smaller; this object is how it learns the sizes while the API
 * server still refuses the StatefulSet itself (its claim templates cannot change in place).
 */
export class VolumeSizesConfigMap extends Construct {
  /** ConfigMap `<cluster>-volume-sizes`. */
  readonly configMap: ApiObject;

  constructor(scope: Construct, id: string, props: VolumeSizesProps) {
    super(scope, id);
    refuseAtSynthesis(this, props.cluster.kubeMinor);
    const c = props.cluster;
    const sizes = () =>
      volumeSizes(
        c.name,
        scope.node
          .findAll()
          .filter((n): n is ApiObject => n instanceof ApiObject && n.kind === 'StatefulSet')
          .map(givenJson),
      );
    const labels = { ...selectorLabels(c.instance, 'discovery'), [VOLUME_SIZES_LABEL]: 'true' };
    this.configMap = new ApiObject(this, 'configmap', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: namespaced(c, names.volumeSizes(c.name), labels),
      data: { [VOLUME_SIZES_KEY]: Lazy.any({ produce: () => `${JSON.stringify(sizes(), null, 2)}\n` }) },
    });
  }
}
