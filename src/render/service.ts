import type { Service, ServicePort, ServiceSpec } from '../../imports/k8s';
import type { ResolvedCluster } from '../spec/resolve';
import { LABEL, names, selectorLabels, type ComponentKind } from '../spec/names';
import { namespaced } from './component';

/** With `preferIPv6`, every Service asks for both address families. */
export function dualStack(cluster: ResolvedCluster): Pick<ServiceSpec, 'ipFamilyPolicy'> {
  return cluster.preferIPv6 ? { ipFamilyPolicy: 'PreferDualStack' } : {};
}

/** `<cluster>-<component>-peer`: headless, and publishing Pods before they are ready so peers can find each other. */
export function peerService(cluster: ResolvedCluster, kind: ComponentKind, ports: ServicePort[]): Service {
  const selector = selectorLabels(cluster.instance, kind);
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: namespaced(cluster, names.peerService(cluster.name, kind), { ...selector, [LABEL.usedBy]: 'peer' }),
    spec: {
      clusterIP: 'None',
      ports,
      selector,
      publishNotReadyAddresses: true,
      ...dualStack(cluster),
    },
  };
}
