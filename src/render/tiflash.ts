import type { ApiObject } from 'cdk8s';
import type { Construct } from 'constructs';
import type { Container, PersistentVolumeClaim, Service, Volume, VolumeMount } from '../../imports/k8s';
import { names, PORT } from '../tidbcluster/names';
import type { ResolvedCluster, ResolvedLogTailer } from '../tidbcluster/resolve';
import type { ResolvedTiFlash } from '../tidbcluster/tiflash';
import {
  ANNOTATIONS_MOUNT,
  ANNOTATIONS_VOLUME,
  basePodSpec,
  componentContainer,
  fieldRefEnv,
  finishPodSpec,
  hasResources,
  mergeContainers,
  mergeEnv,
  podAnnotations,
  statefulSet,
  volumeClaimTemplate,
} from './component';
import { ComponentConstruct } from './component-construct';
import { TIFLASH_CONFIG_DIR, tiflashConfigData } from './config/tiflash';
import { logTailerContainer, placeTailers } from './log-tailer';
import { tiflashInitScript, tiflashScriptContext, tiflashStartScript, type TiFlashScriptContext } from './scripts/tiflash';
import { peerService } from './service';
import { secretMount, TLS_DIR, type SecretMount } from './tls';

export interface TiFlashComponentProps {
  /** The resolved cluster; `cluster.tiflash` must be set. */
  readonly cluster: ResolvedCluster;
}

/**
 * TiFlash: ConfigMap (`config_templ.toml`, `proxy_templ.toml`), headless `<cluster>-tiflash-peer`, and
 * StatefulSet `<cluster>-tiflash` with one volume `data<i>` per storage claim.
 */
export class TiFlashComponent extends ComponentConstruct {
  /** ConfigMap `<cluster>-tiflash`: TiFlash's config file and start script. */
  declare readonly configMap: ApiObject;
  /** The headless Service `<cluster>-tiflash-peer`. */
  declare readonly peerService: ApiObject;
  /** StatefulSet `<cluster>-tiflash`. */
  declare readonly statefulSet: ApiObject;

  constructor(scope: Construct, id: string, props: TiFlashComponentProps) {
    super(scope, id, props.cluster, (cluster) => {
      const tiflash = cluster.tiflash!;
      return {
        component: tiflash,
        configData: tiflashConfigData(cluster, tiflash),
        peerService: tiflashPeerService(cluster),
        statefulSet: (configMapName) => tiflashStatefulSet(cluster, tiflash, configMapName!),
      };
    });
  }
}

/** Unlike the other peer Services, TiFlash's carries no `used-by` label. */
export function tiflashPeerService(cluster: ResolvedCluster): Service {
  const port = (name: string, n: number) => ({ name, port: n, targetPort: n, protocol: 'TCP' });
  return peerService(
    cluster,
    'tiflash',
    [
      port('tiflash', PORT.tiflashFlash),
      port('proxy', PORT.tiflashProxy),
      port('metrics', PORT.tiflashMetrics),
      port('proxy-metrics', PORT.tiflashProxyStatus),
    ],
    { usedBy: false },
  );
}

/** Volume claim template and mount name of storage claim `i`. */
export const tiflashDataVolume = (i: number) => `data${i}`;

const CONFIG_MOUNT: VolumeMount = { name: 'config', mountPath: TIFLASH_CONFIG_DIR, readOnly: true };

export function tiflashStatefulSet(cluster: ResolvedCluster, tiflash: ResolvedTiFlash, configMapName: string) {
  const ctx = tiflashScriptContext(cluster, tiflash);
  const tls = cluster.tlsCluster ? secretMount('tiflash-tls', names.clusterSecret(cluster.name, 'tiflash'), TLS_DIR.tiflash) : undefined;
  const dataMounts: VolumeMount[] = tiflash.storageClaims.map((_, i) => ({ name: tiflashDataVolume(i), mountPath: `/data${i}` }));
  const env = mergeEnv(
    [
      fieldRefEnv('NAMESPACE', 'metadata.namespace'),
      { name: 'CLUSTER_NAME', value: cluster.name },
      { name: 'HEADLESS_SERVICE_NAME', value: names.peerService(cluster.name, 'tiflash') },
      { name: 'CAPACITY', value: tiflash.capacity },
      { name: 'TZ', value: tiflash.timezone },
      ...(tiflash.pod.hostNetwork ? [fieldRefEnv('POD_NAME', 'metadata.name')] : []),
    ],
    tiflash.env,
  );
  const port = (name: string, containerPort: number) => ({ name, containerPort, protocol: 'TCP' });
  const container: Container = {
    ...componentContainer(tiflash),
    command: ['/bin/sh', '-c', tiflashStartScript(ctx)],
    securityContext: tiflash.securityContext ?? { privileged: tiflash.privileged },
    ports: [
      port('tiflash', PORT.tiflashFlash),
      port('proxy', PORT.tiflashProxy),
      port('tcp', PORT.tiflashTcp),
      port('http', PORT.tiflashHttp),
      port('internal', PORT.tiflashInternal),
      port('metrics', PORT.tiflashMetrics),
    ],
    env,
    volumeMounts: [
      ANNOTATIONS_MOUNT,
      ...dataMounts,
      ...tiflash.additionalVolumeMounts,
      ...(tls ? [tls.mount] : []),
      ...(tiflash.mountConfigMap ? [CONFIG_MOUNT] : []),
    ],
  };
  const volumes: Volume[] = [
    ANNOTATIONS_VOLUME,
    // The whole ConfigMap: the init container (or tiflash in mount-cm mode) reads both templates.
    { name: 'config', configMap: { name: configMapName } },
    ...(tls ? [tls.volume] : []),
    ...tiflash.additionalVolumes,
  ];
  const base = tiflashInitContainers(cluster, tiflash, ctx, tls);
  // Native sidecars go after every init container, the user's included, as the operator puts them.
  const tailers = placeTailers(tiflashLogTailers(tiflash), tiflash.logTailer, base.initContainers, base.initContainers.length);
  const podSpec = finishPodSpec(base, mergeContainers([container, ...tailers], tiflash.additionalContainers), volumes);
  const annotations = {
    ...podAnnotations(tiflash, PORT.tiflashMetrics),
    // The proxy's metrics port, for Prometheus scrape configs that look for it; the user cannot override it.
    'tiflash.proxy.prometheus.io/port': String(PORT.tiflashProxyStatus),
  };
  return statefulSet(cluster, tiflash, podSpec, tiflashClaims(tiflash), annotations);
}

/**
 * Init containers in the operator's order: `sysctl` (with the sysctl-init annotation), `init` (init
 * mode), then the user's.
 */
function tiflashInitContainers(
  cluster: ResolvedCluster,
  tiflash: ResolvedTiFlash,
  ctx: TiFlashScriptContext,
  tls: SecretMount | undefined,
): ReturnType<typeof basePodSpec> {
  const base = basePodSpec(cluster, tiflash, { sysctlInit: 'sysctl', kind: 'tiflash' });
  // basePodSpec lists its sysctl container (if any) first, then the user's.
  const ownCount = base.initContainers.length - tiflash.initContainers.length;
  const init: Container[] = [];
  if (!tiflash.mountConfigMap) {
    init.push({
      name: 'init',
      image: cluster.helper.image,
      imagePullPolicy: cluster.helper.imagePullPolicy as Container['imagePullPolicy'],
      command: ['sh', '-c', tiflashInitScript(ctx)],
      env: [
        fieldRefEnv('POD_NAME', 'metadata.name'),
        ...(cluster.namespace === undefined ? [fieldRefEnv('NAMESPACE', 'metadata.namespace')] : []),
      ],
      volumeMounts: [
        { name: tiflashDataVolume(0), mountPath: '/data0' },
        CONFIG_MOUNT,
        // Asking discovery over mTLS needs the certificate here too (the operator does not mount it).
        ...(tls && ctx.acrossK8s && ctx.discoveryMtls ? [tls.mount] : []),
      ],
      ...(hasResources(tiflash.initializer) && { resources: tiflash.initializer.resources }),
      ...(tiflash.initializer.securityContext && { securityContext: tiflash.initializer.securityContext }),
    });
  }
  const { initContainers } = base;
  return { ...base, initContainers: [...initContainers.slice(0, ownCount), ...init, ...initContainers.slice(ownCount)] };
}

/** serverlog, errorlog and clusterlog follow TiFlash's three log files; placed after `tiflash`. */
function tiflashLogTailers(tiflash: ResolvedTiFlash): Container[] {
  const { server, error, cluster } = tiflash.logFiles;
  return [
    tailer('serverlog', server, tiflash.logTailer),
    tailer('errorlog', error, tiflash.logTailer),
    tailer('clusterlog', cluster, tiflash.logTailer),
  ];
}

/** The sidecar mounts the volume named by the file's first directory there (`/data0/logs/x` -> data0 at /data0). */
function tailer(name: string, file: string, spec: ResolvedLogTailer): Container {
  const volume = file.split('/')[1];
  return logTailerContainer(name, file, { name: volume, mountPath: `/${volume}` }, spec);
}

/** `data0`, `data1`..., one per `storageClaims` entry. */
function tiflashClaims(tiflash: ResolvedTiFlash): PersistentVolumeClaim[] {
  return tiflash.storageClaims.map((claim, i) =>
    volumeClaimTemplate(tiflashDataVolume(i), claim.storage, claim.storageClassName, claim.volumeAttributesClassName),
  );
}
