import type { ApiObject } from 'cdk8s';
import type { Construct } from 'constructs';
import type { Container, VolumeMount } from '../../imports/k8s';
import type { ResolvedCluster, ResolvedPdms } from '../tidbcluster/resolve';
import { names, PORT } from '../tidbcluster/names';
import {
  ANNOTATIONS_MOUNT,
  ANNOTATIONS_VOLUME,
  basePodSpec,
  componentContainer,
  configVolumes,
  fieldRefEnv,
  finishPodSpec,
  mergeContainers,
  mergeEnv,
  podAnnotations,
  statefulSet,
  storageVolumeClaims,
  preStopHook,
} from './component';
import { ComponentConstruct } from './component-construct';
import { pdmsConfig } from './config/pdms';
import { pdmsScriptContext, pdmsStartScript } from './scripts/pdms';
import { pdClientService, pdPeerService } from './pd';
import { secretMount, TLS_DIR, type SecretMount } from './tls';

export interface PdmsComponentProps {
  /** The resolved cluster. */
  readonly cluster: ResolvedCluster;
  /** The micro-service: `cluster.tso` or `cluster.scheduling`. */
  readonly pdms: ResolvedPdms;
}

/**
 * A PD micro-service (TSO or scheduling): ConfigMap (TOML + start script), client Service
 * `<cluster>-<name>`, headless `<cluster>-<name>-peer`, and StatefulSet `<cluster>-<name>`, which
 * keeps no data.
 */
export class PdmsComponent extends ComponentConstruct {
  /** ConfigMap `<cluster>-<name>`: the micro-service's config file and start script. */
  declare readonly configMap: ApiObject;
  /** The client Service `<cluster>-<name>` (`tso`, `scheduling`). */
  declare readonly service: ApiObject;
  /** The headless Service `<cluster>-<name>-peer`. */
  declare readonly peerService: ApiObject;
  /** StatefulSet `<cluster>-<name>`. */
  declare readonly statefulSet: ApiObject;

  constructor(scope: Construct, id: string, props: PdmsComponentProps) {
    const { pdms } = props;
    super(scope, id, props.cluster, (cluster) => ({
      component: pdms,
      configData: { 'config-file': pdmsConfig(cluster, pdms), 'startup-script': pdmsStartScript(pdmsScriptContext(cluster, pdms)) },
      service: pdClientService(cluster, pdms.kind, pdms.service),
      peerService: pdPeerService(cluster, pdms.kind),
      statefulSet: (configMapName) => pdmsStatefulSet(cluster, pdms, configMapName!),
    }));
  }
}

/** PD's cluster certificate (the operator reuses PD's Secret), and the cluster client one if asked. */
function pdmsSecrets(cluster: ResolvedCluster, pdms: ResolvedPdms): SecretMount[] {
  if (!cluster.tlsCluster) return [];
  return [
    secretMount('pd-tls', names.clusterSecret(cluster.name, 'pd'), TLS_DIR.pd),
    ...(pdms.mountClusterClientSecret
      ? [secretMount('cluster-client-tls', names.clusterClientSecret(cluster.name), TLS_DIR.clusterClient)]
      : []),
  ];
}

export function pdmsStatefulSet(cluster: ResolvedCluster, pdms: ResolvedPdms, configMapName: string) {
  const { kind } = pdms;
  const storage = storageVolumeClaims(pdms);
  const secrets = pdmsSecrets(cluster, pdms);
  const mounts: VolumeMount[] = [
    ANNOTATIONS_MOUNT,
    { name: 'config', mountPath: '/etc/pd', readOnly: true },
    { name: 'startup-script', mountPath: '/usr/local/bin', readOnly: true },
    ...secrets.map((s) => s.mount),
    ...storage.mounts,
    ...pdms.additionalVolumeMounts,
  ];
  const peer = names.peerService(cluster.name, kind);
  const env = mergeEnv(
    [
      fieldRefEnv('NAMESPACE', 'metadata.namespace'),
      { name: 'PEER_SERVICE_NAME', value: peer },
      { name: 'SERVICE_NAME', value: names.service(cluster.name, kind) },
      { name: 'SET_NAME', value: names.statefulSet(cluster.name, kind) },
      { name: 'TZ', value: cluster.timezone },
      { name: 'CLUSTER_NAME', value: cluster.name },
      { name: 'HEADLESS_SERVICE_NAME', value: peer },
      ...(pdms.pod.hostNetwork ? [fieldRefEnv('POD_NAME', 'metadata.name')] : []),
    ],
    pdms.env,
  );
  const container: Container = {
    ...componentContainer(pdms),
    command: ['/bin/sh', '/usr/local/bin/pdms_start_script.sh'],
    ports: [{ name: 'server', containerPort: PORT.pdClient, protocol: 'TCP' }],
    env,
    volumeMounts: mounts,
    ...preStopHook(cluster, pdms, TLS_DIR.pd),
  };
  const podSpec = finishPodSpec(basePodSpec(cluster, pdms), mergeContainers([container], pdms.additionalContainers), [
    ANNOTATIONS_VOLUME,
    ...configVolumes(configMapName, 'pd.toml', 'pdms_start_script.sh'),
    ...secrets.map((s) => s.volume),
    ...pdms.additionalVolumes,
  ]);
  return statefulSet(cluster, pdms, podSpec, storage.claims, podAnnotations(pdms, PORT.pdClient));
}
