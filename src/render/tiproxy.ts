import type { ApiObject } from 'cdk8s';
import type { Construct } from 'constructs';
import type { Container, Probe, Service, ServicePort, StatefulSet, Volume, VolumeMount } from '../../imports/k8s';
import type { ResolvedCluster } from '../tidbcluster/resolve';
import type { ResolvedTiProxy } from '../tidbcluster/tiproxy';
import { names, PORT, selectorLabels } from '../tidbcluster/names';
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
} from './component';
import { ComponentConstruct } from './component-construct';
import { TIPROXY_TLS_DIR, tiproxyConfig, tiproxyTls } from './config/tiproxy';
import { tiproxyScriptContext, tiproxyStartScript } from './scripts/tiproxy';
import { clientServiceMetadata, dualStack, peerService } from './service';
import { secretMount, tlsFile, type SecretMount } from './tls';

export interface TiProxyComponentProps {
  /** The resolved cluster; `cluster.tiproxy` must be set. */
  readonly cluster: ResolvedCluster;
}

/** Where the ConfigMap is mounted; the container runs `start.sh` from there. */
const CONFIG_DIR = '/etc/proxy';

/**
 * TiProxy: ConfigMap `<cluster>-tiproxy` (always updated in place), the NodePort Service
 * `<cluster>-tiproxy`, headless `<cluster>-tiproxy-peer`, and StatefulSet `<cluster>-tiproxy` (no data
 * volume of its own).
 */
export class TiProxyComponent extends ComponentConstruct {
  /** ConfigMap `<cluster>-tiproxy`: TiProxy's config file and start script. */
  declare readonly configMap: ApiObject;
  /** The client Service `<cluster>-tiproxy`. */
  declare readonly service: ApiObject;
  /** The headless Service `<cluster>-tiproxy-peer`. */
  declare readonly peerService: ApiObject;
  /** StatefulSet `<cluster>-tiproxy`. */
  declare readonly statefulSet: ApiObject;

  constructor(scope: Construct, id: string, props: TiProxyComponentProps) {
    super(scope, id, props.cluster, (cluster) => {
      const tiproxy = cluster.tiproxy!;
      return {
        component: tiproxy,
        configData: { 'config-file': tiproxyConfig(cluster, tiproxy), 'startup-script': tiproxyStartScript(tiproxyScriptContext(cluster)) },
        service: tiproxyService(cluster),
        peerService: tiproxyPeerService(cluster),
        statefulSet: (configMapName) => tiproxyStatefulSet(cluster, tiproxy, configMapName!),
      };
    });
  }
}

const API_PORT: ServicePort = { name: 'tiproxy-api', port: PORT.tiproxyApi, targetPort: PORT.tiproxyApi, protocol: 'TCP' };

/**
 * `<cluster>-tiproxy`: the operator makes it a NodePort Service with no way to change that (TiProxy's
 * spec has no `service` field), and publishes Pods before they are ready.
 */
export function tiproxyService(cluster: ResolvedCluster): Service {
  const selector = selectorLabels(cluster.instance, 'tiproxy');
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: clientServiceMetadata(cluster, 'tiproxy'),
    spec: {
      type: 'NodePort',
      ports: [API_PORT, { name: 'tiproxy-sql', port: PORT.tiproxySql, targetPort: PORT.tiproxySql, protocol: 'TCP' }],
      selector,
      publishNotReadyAddresses: true,
      ...dualStack(cluster),
    },
  };
}

export function tiproxyPeerService(cluster: ResolvedCluster): Service {
  const svc = peerService(cluster, 'tiproxy', [
    API_PORT,
    { name: 'tiproxy-peer', port: PORT.tiproxyPeer, targetPort: PORT.tiproxyPeer, protocol: 'TCP' },
  ]);
  // The operator spells the headless Service's type out.
  return { ...svc, spec: { type: 'ClusterIP', ...svc.spec } };
}

/** The certificate Secrets the Pod mounts, per certificate layout. */
export function tiproxyTlsMounts(cluster: ResolvedCluster, tiproxy: ResolvedTiProxy): SecretMount[] {
  const tls = tiproxyTls(cluster, tiproxy);
  const dir = TIPROXY_TLS_DIR;
  const clusterClient = secretMount('cluster-client-tls', names.clusterClientSecret(cluster.name), dir.clusterClient);
  const tidbServer = secretMount('tidb-server-tls', names.tidbServerSecret(cluster.name), dir.server);
  const own = (mountDir: string) => secretMount('tiproxy-tls', names.clusterSecret(cluster.name, 'tiproxy'), mountDir);
  const out: SecretMount[] = [];
  if (tiproxy.certLayout === 'v1') {
    // The cluster-client certificate is not in the config; it serves the readiness probe and debugging.
    if (tls.cluster) out.push(clusterClient, own(dir.cluster));
    if (tls.tidb) out.push(tidbServer);
    return out;
  }
  if (tls.cluster) out.push(clusterClient);
  if (tls.tidb) {
    out.push(tidbServer);
    if (tls.toTiDB) out.push(secretMount('tidb-client-tls', tiproxy.tlsClientSecretName, dir.sql));
  }
  if (tls.cluster && !tls.tidb) out.push(own(dir.httpServer));
  return out;
}

export function tiproxyStatefulSet(cluster: ResolvedCluster, tiproxy: ResolvedTiProxy, configMapName: string): StatefulSet {
  const storage = storageVolumeClaims(tiproxy);
  const tls = tiproxyTlsMounts(cluster, tiproxy);
  const mounts: VolumeMount[] = [
    { name: 'config', mountPath: CONFIG_DIR, readOnly: true },
    ANNOTATIONS_MOUNT,
    ...tls.map((t) => t.mount),
    ...storage.mounts,
    ...tiproxy.additionalVolumeMounts,
  ];
  const volumes: Volume[] = [
    {
      name: 'config',
      configMap: {
        name: configMapName,
        items: [
          { key: 'config-file', path: 'proxy.toml' },
          { key: 'startup-script', path: 'start.sh' },
        ],
      },
    },
    ANNOTATIONS_VOLUME,
    ...tls.map((t) => t.volume),
    ...tiproxy.additionalVolumes,
  ];
  const env = mergeEnv(
    [
      fieldRefEnv('POD_NAME', 'metadata.name'),
      fieldRefEnv('NAMESPACE', 'metadata.namespace'),
      { name: 'HEADLESS_SERVICE_NAME', value: names.peerService(cluster.name, 'tiproxy') },
    ],
    tiproxy.env,
  );
  const probe = tiproxyReadinessProbe(cluster, tiproxy);
  const container: Container = {
    ...componentContainer(tiproxy),
    command: ['/bin/sh', `${CONFIG_DIR}/start.sh`],
    ports: [
      { name: 'tiproxy', containerPort: PORT.tiproxySql, protocol: 'TCP' },
      { name: 'tiproxy-api', containerPort: PORT.tiproxyApi, protocol: 'TCP' },
      { name: 'tiproxy-peer', containerPort: PORT.tiproxyPeer, protocol: 'TCP' },
    ],
    volumeMounts: mounts,
    env,
    ...(probe && { readinessProbe: probe }),
  };
  const base = basePodSpec(cluster, tiproxy, { sysctlInit: false });
  const podSpec = finishPodSpec(base, mergeContainers([container], tiproxy.additionalContainers), volumes);
  return statefulSet(cluster, tiproxy, podSpec, storage.claims, podAnnotations(tiproxy, PORT.tiproxyApi, '/api/metrics'));
}

/** Only when `readinessProbe.type` is set; `command` asks the API for health, with client certs under TLS. */
export function tiproxyReadinessProbe(cluster: ResolvedCluster, tiproxy: ResolvedTiProxy): Probe | undefined {
  const p = tiproxy.readinessProbe;
  if (!p) return undefined;
  const certs = cluster.tlsCluster
    ? (['ca', 'cert', 'key'] as const).flatMap((w) => [w === 'ca' ? '--cacert' : `--${w}`, tlsFile(TIPROXY_TLS_DIR.clusterClient, w)])
    : [];
  const handler: Probe =
    p.type === 'command'
      ? {
          exec: {
            command: ['curl', `${cluster.scheme}://127.0.0.1:${PORT.tiproxyApi}/api/debug/health`, '--fail', '--location', ...certs],
          },
        }
      : { tcpSocket: { port: PORT.tiproxySql } };
  return {
    ...handler,
    initialDelaySeconds: p.initialDelaySeconds,
    ...(p.periodSeconds !== undefined && { periodSeconds: p.periodSeconds }),
  };
}
