import type { ConfigMap } from '../../imports/k8s';
import type { ResolvedCluster, ResolvedComponent } from '../spec/resolve';
import { names, selectorLabels } from '../spec/names';
import { namespaced } from './component';
import { configMapHash } from './config/hash';

/**
 * A component's ConfigMap. With `configUpdateStrategy: RollingUpdate` its name carries a hash of the
 * data (as the operator computes it), so a config change is a new pod template, i.e. a rolling restart;
 * with `InPlace` the name stays `<cluster>-<component>` and running Pods keep their config.
 */
export function componentConfigMap(cluster: ResolvedCluster, comp: ResolvedComponent, data: Record<string, string>): ConfigMap {
  const base = names.configMap(cluster.name, comp.kind);
  const name = comp.configUpdateStrategy === 'RollingUpdate' ? `${base}-${configMapHash(data)}` : base;
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: namespaced(cluster, name, selectorLabels(cluster.instance, comp.kind)),
    data,
  };
}
