import type { ApiObject } from 'cdk8s';
import type { Construct } from 'constructs';
import type { Container, Service, StatefulSet, Volume, VolumeMount } from '../../imports/k8s';
import type { ResolvedCluster } from '../tidbcluster/resolve';
import type { ResolvedTiCDC } from '../tidbcluster/ticdc';
import { names, PORT, TICDC_ARCHITECTURE_ANNOTATION } from '../tidbcluster/names';
import {
  ANNOTATIONS_MOUNT,
  ANNOTATIONS_VOLUME,
  basePodSpec,
  componentContainer,
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
import { ticdcConfig } from './config/ticdc';
import { ticdcScriptContext, ticdcStartScript } from './scripts/ticdc';
import { peerService } from './service';
import { secretMount, TLS_DIR } from './tls';

export interface TiCDCComponentProps {
  /** The resolved cluster; `cluster.ticdc` must be set. */
  readonly cluster: ResolvedCluster;
}

/** Sink client certificates are mounted below this directory, one sub-directory per secret. */
export const SINK_TLS_DIR = '/var/lib/sink-tls';

/**
 * TiCDC: headless `<cluster>-ticdc-peer`, StatefulSet `<cluster>-ticdc` (no data volume; the start
 * command is inline), and a ConfigMap only when the config holds more than the keys that become flags.
 */
export class TiCDCComponent extends ComponentConstruct {
  /** ConfigMap `<cluster>-ticdc` (its config file), where `spec.ticdc.config` is set. @default none */
  declare readonly configMap?: ApiObject;
  /** The headless Service `<cluster>-ticdc-peer`. */
  declare readonly peerService: ApiObject;
  /** StatefulSet `<cluster>-ticdc`. */
  declare readonly statefulSet: ApiObject;

  constructor(scope: Construct, id: string, props: TiCDCComponentProps) {
    super(scope, id, props.cluster, (cluster) => {
      const ticdc = cluster.ticdc!;
      return {
        component: ticdc,
        configData: ticdc.configFile ? { 'config-file': ticdcConfig(ticdc) } : undefined,
        peerService: ticdcPeerService(cluster),
        statefulSet: (configMapName) => ticdcStatefulSet(cluster, ticdc, configMapName),
      };
    });
  }
}

/** The operator's TiCDC and Pump headless Services carry no `used-by` label. */
export function ticdcPeerService(cluster: ResolvedCluster): Service {
  return peerService(cluster, 'ticdc', [{ name: 'ticdc', port: PORT.ticdc, targetPort: PORT.ticdc, protocol: 'TCP' }], { usedBy: false });
}

export function ticdcStatefulSet(cluster: ResolvedCluster, ticdc: ResolvedTiCDC, configMapName: string | undefined): StatefulSet {
  const v2 = cluster.startScriptVersion === 'v2';
  const tls = cluster.tlsCluster
    ? [
        secretMount('ticdc-tls', names.clusterSecret(cluster.name, 'ticdc'), TLS_DIR.ticdc),
        secretMount('cluster-client-tls', names.clusterClientSecret(cluster.name), TLS_DIR.clusterClient),
      ]
    : [];
  const sinks = ticdc.tlsClientSecretNames.map((name) => secretMount(name, name, `${SINK_TLS_DIR}/${name}`));
  const storage = storageVolumeClaims(ticdc);
  const config: { volume: Volume; mount: VolumeMount } | undefined = configMapName
    ? {
        volume: { name: 'config', configMap: { name: configMapName, items: [{ key: 'config-file', path: 'ticdc.toml' }] } },
        mount: { name: 'config', mountPath: '/etc/ticdc', readOnly: true },
      }
    : undefined;
  // Order as the operator has it: mounts and volumes are lists, and a reorder is a new pod template.
  const mounts: VolumeMount[] = [
    ...(v2 ? [ANNOTATIONS_MOUNT] : []),
    ...tls.map((t) => t.mount),
    ...storage.mounts,
    ...ticdc.additionalVolumeMounts,
    ...(config ? [config.mount] : []),
    ...sinks.map((s) => s.mount),
  ];
  const volumes: Volume[] = [
    ...(v2 ? [ANNOTATIONS_VOLUME] : []),
    ...tls.map((t) => t.volume),
    ...ticdc.additionalVolumes,
    ...sinks.map((s) => s.volume),
    ...(config ? [config.volume] : []),
  ];
  const env = mergeEnv(
    [
      fieldRefEnv('POD_NAME', 'metadata.name'),
      fieldRefEnv('NAMESPACE', 'metadata.namespace'),
      { name: 'HEADLESS_SERVICE_NAME', value: names.peerService(cluster.name, 'ticdc') },
      { name: 'TZ', value: ticdc.timezone },
    ],
    ticdc.env,
  );
  const container: Container = {
    ...componentContainer(ticdc),
    command: ['/bin/sh', '-c', ticdcStartScript(ticdcScriptContext(cluster, ticdc))],
    ports: [{ name: 'ticdc', containerPort: PORT.ticdc, protocol: 'TCP' }],
    env,
    volumeMounts: mounts,
    ...preStopHook(cluster, ticdc, TLS_DIR.ticdc),
  };
  const podSpec = finishPodSpec(
    basePodSpec(cluster, ticdc, { sysctlInit: false }),
    mergeContainers([container], ticdc.additionalContainers),
    volumes,
  );
  const annotations = { ...podAnnotations(ticdc, PORT.ticdc), ...(ticdc.newArchitecture && { [TICDC_ARCHITECTURE_ANNOTATION]: 'new' }) };
  return statefulSet(cluster, ticdc, podSpec, storage.claims, annotations);
}
