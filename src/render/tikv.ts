import type { ApiObject } from 'cdk8s';
import type { Construct } from 'constructs';
import type { Container, Service, VolumeMount } from '../../imports/k8s';
import type { ResolvedCluster, ResolvedTiKV } from '../tidbcluster/resolve';
import { names, PORT } from '../tidbcluster/names';
import { imageVersionBelow } from '../base/version';
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
  preStopHook,
  statefulSet,
  storageVolumeClaims,
  volumeClaimTemplate,
} from './component';
import { ComponentConstruct } from './component-construct';
import { tikvConfig } from './config/tikv';
import { logTailerContainer, logVolume, placeTailers } from './log-tailer';
import { tikvScriptContext, tikvStartScript } from './scripts/tikv';
import { peerService } from './service';
import { secretMount, TLS_DIR, type SecretMount } from './tls';

export interface TikvComponentProps {
  /** The resolved cluster; `cluster.tikv` must be set. */
  readonly cluster: ResolvedCluster;
}

/** TiKV: ConfigMap, headless `<cluster>-tikv-peer` and StatefulSet `<cluster>-tikv` with volume `tikv`. */
export class TikvComponent extends ComponentConstruct {
  /** ConfigMap `<cluster>-tikv`: TiKV's config file and start script. */
  declare readonly configMap: ApiObject;
  /** The headless Service `<cluster>-tikv-peer`. */
  declare readonly peerService: ApiObject;
  /** StatefulSet `<cluster>-tikv`. */
  declare readonly statefulSet: ApiObject;

  constructor(scope: Construct, id: string, props: TikvComponentProps) {
    super(scope, id, props.cluster, (cluster) => {
      const tikv = cluster.tikv!;
      return {
        component: tikv,
        configData: { 'config-file': tikvConfig(cluster, tikv), 'startup-script': tikvStartScript(tikvScriptContext(cluster, tikv)) },
        peerService: tikvPeerService(cluster),
        statefulSet: (configMapName) => tikvStatefulSet(cluster, tikv, configMapName!),
      };
    });
  }
}

export function tikvPeerService(cluster: ResolvedCluster): Service {
  return peerService(cluster, 'tikv', [{ name: 'peer', port: PORT.tikvServer, targetPort: PORT.tikvServer, protocol: 'TCP' }]);
}

/** TiKV's certificates: its cluster certificate and, if asked, the cluster client one. */
export function tikvSecrets(cluster: ResolvedCluster, tikv: ResolvedTiKV): SecretMount[] {
  if (!cluster.tlsCluster) return [];
  return [
    secretMount('tikv-tls', names.clusterSecret(cluster.name, 'tikv'), TLS_DIR.tikv),
    ...(tikv.mountClusterClientSecret
      ? [secretMount('cluster-client-tls', names.clusterClientSecret(cluster.name), TLS_DIR.clusterClient)]
      : []),
  ];
}

export function tikvStatefulSet(cluster: ResolvedCluster, tikv: ResolvedTiKV, configMapName: string) {
  const storage = storageVolumeClaims(tikv);
  const secrets = tikvSecrets(cluster, tikv);
  const dataMount: VolumeMount = { name: names.dataVolume('tikv'), mountPath: '/var/lib/tikv' };
  const mounts: VolumeMount[] = [
    ANNOTATIONS_MOUNT,
    dataMount,
    { name: 'config', mountPath: '/etc/tikv', readOnly: true },
    { name: 'startup-script', mountPath: '/usr/local/bin', readOnly: true },
    ...tikv.additionalVolumeMounts,
    ...secrets.map((s) => s.mount),
    ...storage.mounts,
  ];
  const env = mergeEnv(
    [
      fieldRefEnv('NAMESPACE', 'metadata.namespace'),
      { name: 'CLUSTER_NAME', value: cluster.name },
      { name: 'HEADLESS_SERVICE_NAME', value: names.peerService(cluster.name, 'tikv') },
      { name: 'CAPACITY', value: tikv.capacity },
      { name: 'TZ', value: cluster.timezone },
      ...(tikv.pod.hostNetwork ? [fieldRefEnv('POD_NAME', 'metadata.name')] : []),
    ],
    tikv.env,
  );
  const container: Container = {
    ...componentContainer(tikv),
    command: ['/bin/sh', '/usr/local/bin/tikv_start_script.sh'],
    securityContext: tikv.securityContext ?? { privileged: tikv.privileged },
    ports: [
      { name: 'server', containerPort: PORT.tikvServer, protocol: 'TCP' },
      ...(tikv.enableNamedStatusPort ? [{ name: 'status', containerPort: PORT.tikvStatus, protocol: 'TCP' }] : []),
    ],
    env,
    volumeMounts: mounts,
    ...preStopHook(cluster, tikv, TLS_DIR.tikv),
    ...(tikv.readinessProbe && {
      readinessProbe: {
        tcpSocket: { port: PORT.tikvServer },
        initialDelaySeconds: tikv.readinessProbe.initialDelaySeconds,
        ...(tikv.readinessProbe.periodSeconds !== undefined && { periodSeconds: tikv.readinessProbe.periodSeconds }),
      },
    }),
  };
  const base = basePodSpec(cluster, tikv, { kind: 'tikv' });
  // Native sidecars go after the renderer's own init containers, before the user's.
  const ownInit = base.initContainers.length - tikv.initContainers.length;
  const tailers = placeTailers(tikvLogTailers(tikv, dataMount, storage.mounts), tikv.logTailer, base.initContainers, ownInit);
  const podSpec = finishPodSpec(base, mergeContainers([...tailers, container], tikv.additionalContainers), [
    ANNOTATIONS_VOLUME,
    ...configVolumes(configMapName, 'tikv.toml', 'tikv_start_script.sh'),
    ...secrets.map((s) => s.volume),
    ...tikv.additionalVolumes,
  ]);
  const claims = [
    volumeClaimTemplate(names.dataVolume('tikv'), tikv.storageRequest, tikv.storageClassName, tikv.volumeAttributesClassName),
    ...storage.claims,
  ];
  return statefulSet(cluster, tikv, podSpec, claims, podAnnotations(tikv, PORT.tikvStatus));
}

/** `rocksdblog` / `raftlog` sidecars, placed before `tikv`. TiKV before v5.0 wrote these logs elsewhere. */
function tikvLogTailers(tikv: ResolvedTiKV, dataMount: VolumeMount, storageMounts: VolumeMount[]): Container[] {
  const old = imageVersionBelow(tikv.image, '5.0.0');
  const tailers: Container[] = [];
  const add = (name: string, log: { volumeName?: string } | undefined, file: string) => {
    if (!log) return;
    const mount = logVolume(log.volumeName, (n) => names.storageVolume('tikv', n), storageMounts, tikv.additionalVolumeMounts, dataMount)!;
    tailers.push(logTailerContainer(name, `${mount.mountPath.replace(/\/$/, '')}/${file}`, mount, tikv.logTailer));
  };
  add('rocksdblog', tikv.rocksDBLog, old ? 'db/LOG' : 'rocksdb.info');
  add('raftlog', tikv.raftLog, old ? 'raft/LOG' : 'raftdb.info');
  return tailers;
}
