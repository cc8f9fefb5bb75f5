import type { ObjectMeta, Service, ServicePort, ServiceSpec } from '../../imports/k8s';
import type { ResolvedCluster, ResolvedService } from '../tidbcluster/resolve';
import { LABEL, names, selectorLabels, type ComponentKind } from '../tidbcluster/names';
import { namespaced } from './component';

/** With `preferIPv6`, every Service asks for both address families. */
export function dualStack(cluster: ResolvedCluster): Pick<ServiceSpec, 'ipFamilyPolicy'> {
  return cluster.preferIPv6 ? { ipFamilyPolicy: 'PreferDualStack' } : {};
}

/**
 * `<cluster>-<component>-peer`: headless, and publishing Pods before they are ready so peers can find
 * each other. The `used-by: peer` label is the operator's on PD, TiKV, TiDB and TiProxy only.
 */
export function peerService(
  cluster: ResolvedCluster,
  kind: ComponentKind,
  ports: ServicePort[],
  options: { usedBy?: boolean } = {},
): Service {
  const selector = selectorLabels(cluster.instance, kind);
  const labels = options.usedBy === false ? selector : { ...selector, [LABEL.usedBy]: 'peer' };
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: namespaced(cluster, names.peerService(cluster.name, kind), labels),
    spec: {
      clusterIP: 'None',
      ports,
      selector,
      publishNotReadyAddresses: true,
      ...dualStack(cluster),
    },
  };
}

/**
 * Metadata of the client Service `<cluster>-<component>`: the user's labels (`spec.<component>.service`)
 * under the selector labels and `used-by: end-user`, and the user's annotations.
 */
export function clientServiceMetadata(
  cluster: ResolvedCluster,
  kind: ComponentKind,
  svc?: Pick<ResolvedService, 'labels' | 'annotations'>,
): ObjectMeta {
  const labels = { ...svc?.labels, ...selectorLabels(cluster.instance, kind), [LABEL.usedBy]: 'end-user' };
  return namespaced(cluster, names.service(cluster.name, kind), labels, svc?.annotations);
}
