import type { ApiObject } from 'cdk8s';
import type { Construct } from 'constructs';
import type { Container, Service, VolumeMount } from '../../imports/k8s';
import type { ResolvedCluster, ResolvedPD, ResolvedService } from '../tidbcluster/resolve';
import { names, PORT, selectorLabels } from '../tidbcluster/names';
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
  volumeClaimTemplate,
  preStopHook,
} from './component';
import { ComponentConstruct } from './component-construct';
import { pdConfig, pdDashboardUsesTidbTls } from './config/pd';
import { pdScriptContext, pdStartScript } from './scripts/pd';
import { clientServiceMetadata, dualStack, peerService } from './service';
import { secretMount, TLS_DIR, type SecretMount } from './tls';

export interface PdComponentProps {
  /** The resolved cluster; `cluster.pd` must be set. */
  readonly cluster: ResolvedCluster;
}

/**
 * PD: ConfigMap (TOML + start script), client Service `<cluster>-pd`, headless `<cluster>-pd-peer`,
 * and StatefulSet `<cluster>-pd` with data volume `pd`.
 */
export class PdComponent extends ComponentConstruct {
  /** ConfigMap `<cluster>-pd`: PD's config file and start script. */
  declare readonly configMap: ApiObject;
  /** The client Service `<cluster>-pd`. */
  declare readonly service: ApiObject;
  /** The headless Service `<cluster>-pd-peer`. */
  declare readonly peerService: ApiObject;
  /** StatefulSet `<cluster>-pd`. */
  declare readonly statefulSet: ApiObject;

  constructor(scope: Construct, id: string, props: PdComponentProps) {
    super(scope, id, props.cluster, (cluster) => {
      const pd = cluster.pd!;
      return {
        component: pd,
        configData: { 'config-file': pdConfig(cluster, pd), 'startup-script': pdStartScript(pdScriptContext(cluster, pd)) },
        service: pdService(cluster, pd),
        peerService: pdPeerService(cluster),
        statefulSet: (configMapName) => pdStatefulSet(cluster, pd, configMapName!),
      };
    });
  }
}

export function pdService(cluster: ResolvedCluster, pd: ResolvedPD): Service {
  return pdClientService(cluster, 'pd', pd.service);
}

/** The client Service (2379) of PD or one of its micro-services, which the operator builds alike. */
export function pdClientService(cluster: ResolvedCluster, kind: 'pd' | 'tso' | 'scheduling', svc: ResolvedService): Service {
  const selector = selectorLabels(cluster.instance, kind);
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: clientServiceMetadata(cluster, kind, svc),
    spec: {
      type: svc.type,
      ...(svc.clusterIP && { clusterIP: svc.clusterIP }),
      ...(svc.loadBalancerIP && { loadBalancerIP: svc.loadBalancerIP }),
      ports: [{ name: svc.portName, port: PORT.pdClient, targetPort: PORT.pdClient, protocol: 'TCP' }],
      selector,
      ...dualStack(cluster),
    },
  };
}

/** The headless Service of PD, or of a micro-service (whose servers listen on 2379 only: the operator names both ports all the same). */
export function pdPeerService(cluster: ResolvedCluster, kind: 'pd' | 'tso' | 'scheduling' = 'pd'): Service {
  return peerService(cluster, kind, [
    { name: `tcp-peer-${PORT.pdPeer}`, port: PORT.pdPeer, targetPort: PORT.pdPeer, protocol: 'TCP' },
    { name: `tcp-peer-${PORT.pdClient}`, port: PORT.pdClient, targetPort: PORT.pdClient, protocol: 'TCP' },
  ]);
}

/** PD's certificates: its cluster certificate, the cluster client one if asked, the dashboard's towards TiDB. */
export function pdSecrets(cluster: ResolvedCluster, pd: ResolvedPD): SecretMount[] {
  const secrets: SecretMount[] = [];
  if (cluster.tlsCluster) {
    secrets.push(secretMount('pd-tls', names.clusterSecret(cluster.name, 'pd'), TLS_DIR.pd));
    if (pd.mountClusterClientSecret) {
      secrets.push(secretMount('cluster-client-tls', names.clusterClientSecret(cluster.name), TLS_DIR.clusterClient));
    }
  }
  if (pdDashboardUsesTidbTls(cluster, pd)) secrets.push(secretMount('tidb-client-tls', pd.tlsClientSecretName, TLS_DIR.tidbClient));
  return secrets;
}

export function pdStatefulSet(cluster: ResolvedCluster, pd: ResolvedPD, configMapName: string) {
  const storage = storageVolumeClaims(pd);
  const secrets = pdSecrets(cluster, pd);
  const mounts: VolumeMount[] = [
    ANNOTATIONS_MOUNT,
    { name: 'config', mountPath: '/etc/pd', readOnly: true },
    { name: 'startup-script', mountPath: '/usr/local/bin', readOnly: true },
    { name: names.dataVolume('pd'), mountPath: '/var/lib/pd' },
    ...secrets.map((s) => s.mount),
    ...storage.mounts,
    ...pd.additionalVolumeMounts,
  ];
  const env = mergeEnv(
    [
      fieldRefEnv('NAMESPACE', 'metadata.namespace'),
      { name: 'PEER_SERVICE_NAME', value: names.peerService(cluster.name, 'pd') },
      { name: 'SERVICE_NAME', value: names.service(cluster.name, 'pd') },
      { name: 'SET_NAME', value: names.statefulSet(cluster.name, 'pd') },
      { name: 'TZ', value: cluster.timezone },
      ...(pd.pod.hostNetwork ? [fieldRefEnv('POD_NAME', 'metadata.name')] : []),
    ],
    pd.env,
  );
  const container: Container = {
    ...componentContainer(pd),
    command: ['/bin/sh', '/usr/local/bin/pd_start_script.sh'],
    ports: [
      { name: 'server', containerPort: PORT.pdPeer, protocol: 'TCP' },
      { name: 'client', containerPort: PORT.pdClient, protocol: 'TCP' },
    ],
    env,
    volumeMounts: mounts,
    ...preStopHook(cluster, pd, TLS_DIR.pd),
    ...(pd.readinessProbe && {
      readinessProbe: {
        tcpSocket: { port: PORT.pdClient },
        initialDelaySeconds: pd.readinessProbe.initialDelaySeconds,
        ...(pd.readinessProbe.periodSeconds !== undefined && { periodSeconds: pd.readinessProbe.periodSeconds }),
      },
    }),
  };
  const podSpec = finishPodSpec(basePodSpec(cluster, pd, { kind: 'pd' }), mergeContainers([container], pd.additionalContainers), [
    ANNOTATIONS_VOLUME,
    ...configVolumes(configMapName, 'pd.toml', 'pd_start_script.sh'),
    ...secrets.map((s) => s.volume),
    ...pd.additionalVolumes,
  ]);
  const claims = [
    volumeClaimTemplate(names.dataVolume('pd'), pd.storageRequest, pd.storageClassName, pd.volumeAttributesClassName),
    ...storage.claims,
  ];
  return statefulSet(cluster, pd, podSpec, claims, podAnnotations(pd, PORT.pdClient));
}
