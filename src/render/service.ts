import type { ServiceSpec } from '../../imports/k8s';
import type { ResolvedCluster } from '../spec/resolve';

/** With `preferIPv6`, every Service asks for both address families. */
export function dualStack(cluster: ResolvedCluster): Pick<ServiceSpec, 'ipFamilyPolicy'> {
  return cluster.preferIPv6 ? { ipFamilyPolicy: 'PreferDualStack' } : {};
}
