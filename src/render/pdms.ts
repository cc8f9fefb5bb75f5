import type { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import type { Container, VolumeMount } from '../../imports/k8s';
import type { ResolvedCluster, ResolvedPdms } from '../tidbcluster/resolve';
import { imageVersionAtLeast } from '../base/version';
import { names, PORT } from '../tidbcluster/names';
import {
  ANNOTATIONS_MOUNT,
  ANNOTATIONS_VOLUME,
  basePodSpec,
  configVolumes,
  fieldRefEnv,
  finishPodSpec,
  hasResources,
  mergeContainers,
  mergeEnv,
  podAnnotations,
  statefulSet,
  storageVolumeClaims,
  preStopHook,
} from './component';
import { pdmsConfig } from './config/components';
import { componentConfigMap } from './configmap';
import { kubeObject } from './kube';
import { refuseAtSynthesis } from './checked';
import { pdmsStartScript } from './scripts';
import { pdmsScriptContext } from './script-context';
import { pdClientService, pdPeerService } from './pd';
import { secretMount, TLS_DIR, type SecretMount } from './tls';

/** The first pd-server release that takes `--name` for its micro-services (tikv/pd#8157). */
export const PDMS_NAME_SINCE = 'v8.3.0';

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
export class PdmsComponent extends Construct {
  /** ConfigMap `<cluster>-<name>`: the micro-service's config file and start script. */
  readonly configMap: ApiObject;
  /** The client Service `<cluster>-<name>` (`tso`, `scheduling`). */
  readonly service: ApiObject;
  /** The headless Service `<cluster>-<name>-peer`. */
  readonly peerService: ApiObject;
  /** StatefulSet `<cluster>-<name>`. */
  readonly statefulSet: ApiObject;

  constructor(scope: Construct, id: string, props: PdmsComponentProps) {
    super(scope, id);
    refuseAtSynthesis(this, props.cluster.kubeMinor);
    const { cluster, pdms } = props;
    const configMap = componentConfigMap(cluster, pdms, {
      'config-file': pdmsConfig(cluster, pdms),
      'startup-script': pdmsStartScript(pdmsScriptContext(cluster, pdms, imageVersionAtLeast(pdms.image, PDMS_NAME_SINCE) === true)),
    });
    this.configMap = kubeObject(this, 'config', configMap);
    this.service = kubeObject(this, 'service', pdClientService(cluster, pdms.kind, pdms.service));
    this.peerService = kubeObject(this, 'peer', pdPeerService(cluster, pdms.kind));
    this.statefulSet = kubeObject(this, 'statefulset', pdmsStatefulSet(cluster, pdms, configMap.metadata!.name!));
  }
}

/** PD's cluster certificate (the operator reuses PD's Secret), and the cluster client one if asked. */
function pdmsSecrets(cluster: ResolvedCluster, pdms: ResolvedPdms): SecretMount[] {
  if (!cluster.tlsCluster) return [];
  return [
    secretMount('pd-tls', names.clusterSecret(cluster.name, 'pd'), TLS_DIR.pd),
    ...(pdms.mountClusterClientSecret ? [secretMount('cluster-client-tls', names.clusterClientSecret(cluster.name), TLS_DIR.clusterClient)] : []),
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
    name: kind,
    image: pdms.image,
    imagePullPolicy: pdms.imagePullPolicy as Container['imagePullPolicy'],
    command: ['/bin/sh', '/usr/local/bin/pdms_start_script.sh'],
    ports: [{ name: 'server', containerPort: PORT.pdClient, protocol: 'TCP' }],
    env,
    ...(pdms.envFrom.length > 0 && { envFrom: pdms.envFrom }),
    volumeMounts: mounts,
    ...(hasResources(pdms) && { resources: pdms.resources }),
    ...preStopHook(cluster, pdms, TLS_DIR.pd),
    ...(pdms.securityContext && { securityContext: pdms.securityContext }),
  };
  const podSpec = finishPodSpec(basePodSpec(cluster, pdms), mergeContainers([container], pdms.additionalContainers), [
    ANNOTATIONS_VOLUME,
    ...configVolumes(configMapName, 'pd.toml', 'pdms_start_script.sh'),
    ...secrets.map((s) => s.volume),
    ...pdms.additionalVolumes,
  ]);
  return statefulSet(cluster, pdms, podSpec, storage.claims, podAnnotations(pdms, PORT.pdClient));
}
