/**
 * What the cluster's controller is told, read back from the rendered Deployment's cluster JSON
 * (`TIDB_GITOPS_CLUSTER`): the one input of the risks about what the controller does in the database
 * (the initializer, SQL accounts, resource groups, changefeeds).
 */
import { CONTROLLER_ENV, type ControllerClusterInfo, parseControllerClusterInfo } from '../tidbcluster/contract';
import { kindOf, type ClusterModel } from './model';

/** The controller Deployment's cluster JSON; undefined when there is none, or it cannot be read. */
export function controllerInfoOf(cluster: ClusterModel | undefined): ControllerClusterInfo | undefined {
  for (const o of cluster?.objects.values() ?? []) {
    if (kindOf(o) !== 'Deployment') continue;
    const containers =
      (o as { spec?: { template?: { spec?: { containers?: { env?: { name?: string; value?: string }[] }[] } } } }).spec?.template?.spec
        ?.containers ?? [];
    for (const c of containers) {
      const value = c.env?.find((e) => e.name === CONTROLLER_ENV.cluster)?.value;
      if (value === undefined) continue;
      try {
        return parseControllerClusterInfo(value);
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}
