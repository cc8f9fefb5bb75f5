/**
 * The cluster the controller runs for: what the renderer tells it (the `TIDB_GITOPS_CLUSTER` JSON)
 * and the namespace it runs in, and the host names of the cluster's Pods.
 */
import { parseControllerClusterInfo, type ControllerClusterInfo } from '../../tidbcluster/contract';
import { names, type ComponentKind } from '../../tidbcluster/names';

/**
 * What the renderer tells the controller about the cluster (the `TIDB_GITOPS_CLUSTER` JSON), plus the
 * namespace the controller runs in.
 */
export interface ClusterInfo extends ControllerClusterInfo {
  readonly namespace: string;
}

/** A Pod's host name under its component's headless Service: `<pod>.<cluster>-<kind>-peer.<ns>` (what the operator's clients dial). */
export const podHost = (c: Pick<ClusterInfo, 'name' | 'namespace'>, kind: ComponentKind, pod: string): string =>
  `${pod}.${names.peerService(c.name, kind)}.${c.namespace}`;

/** Parses and checks the cluster JSON (`parseControllerClusterInfo`) and adds the namespace. */
export function parseClusterInfo(json: string, namespace: string): ClusterInfo {
  const { name, ...rest } = parseControllerClusterInfo(json);
  return { name, namespace, ...rest };
}
