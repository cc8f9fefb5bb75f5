import type { ApiObject } from 'cdk8s';
import type { Construct } from 'constructs';
import type { Container, EnvVar, Service, StatefulSet, Volume, VolumeMount } from '../../imports/k8s';
import type { ResolvedPump } from '../tidbcluster/pump';
import type { ResolvedCluster } from '../tidbcluster/resolve';
import { names, PORT } from '../tidbcluster/names';
import {
  basePodSpec,
  componentContainer,
  ANNOTATIONS_MOUNT,
  ANNOTATIONS_VOLUME,
  fieldRefEnv,
  finishPodSpec,
  mergeContainers,
  mergeEnv,
  podAnnotations,
  statefulSet,
  volumeClaimTemplate,
} from './component';
import { ComponentConstruct } from './component-construct';
import { pumpConfig } from './config/pump';
import { pumpScriptContext, pumpScriptNamesNamespace, pumpStartScript } from './scripts/pump';
import { peerService } from './service';
import { secretMount, TLS_DIR } from './tls';

export interface PumpComponentProps {
  /** The resolved cluster; `cluster.pump` must be set. */
  readonly cluster: ResolvedCluster;
}

/** volumeClaimTemplate of Pump's data: PVCs `data-<cluster>-pump-<N>`. */
export const PUMP_DATA_VOLUME = 'data';

/**
 * Pump (TiDB binlog): ConfigMap `pump-config`, headless `<cluster>-pump` (no `-peer` suffix) and
 * StatefulSet `<cluster>-pump` with volume `data`; the start command is inline.
 */
export class PumpComponent extends ComponentConstruct {
  /** ConfigMap `<cluster>-pump`: Pump's config file and start script. */
  declare readonly configMap: ApiObject;
  /** The headless Service `<cluster>-pump` (Pump's has no `-peer` suffix, as with the operator). */
  declare readonly peerService: ApiObject;
  /** StatefulSet `<cluster>-pump`. */
  declare readonly statefulSet: ApiObject;

  constructor(scope: Construct, id: string, props: PumpComponentProps) {
    super(scope, id, props.cluster, (cluster) => {
      const pump = cluster.pump!;
      return {
        component: pump,
        configData: { 'pump-config': pumpConfig(cluster, pump) },
        peerService: pumpPeerService(cluster),
        statefulSet: (configMapName) => pumpStatefulSet(cluster, pump, configMapName!),
      };
    });
  }
}

export function pumpPeerService(cluster: ResolvedCluster): Service {
  return peerService(cluster, 'pump', [{ name: 'pump', port: PORT.pump, targetPort: PORT.pump, protocol: 'TCP' }], { usedBy: false });
}

/**
 * No additional volumes or mounts (refused in `tidbcluster/pump.ts`: the operator never applied them), a fixed
 * TCP readiness probe, and the update strategy without partition tidb-operator gives Pump.
 */
export function pumpStatefulSet(cluster: ResolvedCluster, pump: ResolvedPump, configMapName: string): StatefulSet {
  const v2 = cluster.startScriptVersion === 'v2';
  const tls = cluster.tlsCluster ? secretMount('pump-tls', names.clusterSecret(cluster.name, 'pump'), TLS_DIR.pump) : undefined;
  const mounts: VolumeMount[] = [
    { name: PUMP_DATA_VOLUME, mountPath: '/data' },
    { name: 'config', mountPath: '/etc/pump' },
    ...(tls ? [tls.mount] : []),
    ...(v2 ? [ANNOTATIONS_MOUNT] : []),
  ];
  const volumes: Volume[] = [
    { name: 'config', configMap: { name: configMapName, items: [{ key: 'pump-config', path: 'pump.toml' }] } },
    ...(tls ? [tls.volume] : []),
    ...(v2 ? [ANNOTATIONS_VOLUME] : []),
  ];
  const own: EnvVar[] = [
    ...(pump.timezone !== undefined ? [{ name: 'TZ', value: pump.timezone }] : []),
    // With hostNetwork HOSTNAME would be the node's name; the script advertises $HOSTNAME.
    ...(pump.pod.hostNetwork ? [fieldRefEnv('HOSTNAME', 'metadata.name')] : []),
    // Rendered without a namespace, a v1 script that names it reads it at run time.
    ...(cluster.namespace === undefined && pumpScriptNamesNamespace(cluster) ? [fieldRefEnv('NAMESPACE', 'metadata.namespace')] : []),
  ];
  const env = mergeEnv(own, pump.env);
  const container: Container = {
    ...componentContainer(pump),
    command: ['/bin/sh', '-c', pumpStartScript(pumpScriptContext(cluster, pump))],
    ports: [{ name: 'pump', containerPort: PORT.pump }],
    ...(env.length > 0 && { env }),
    volumeMounts: mounts,
    readinessProbe: { tcpSocket: { port: PORT.pump } },
  };
  const podSpec = finishPodSpec(
    basePodSpec(cluster, pump, { sysctlInit: false }),
    mergeContainers([container], pump.additionalContainers),
    volumes,
  );
  const claims = [volumeClaimTemplate(PUMP_DATA_VOLUME, pump.storageRequest, pump.storageClassName, pump.volumeAttributesClassName)];
  return statefulSet(cluster, pump, podSpec, claims, podAnnotations(pump, PORT.pump));
}
