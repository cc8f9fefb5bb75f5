import type { ApiObject } from 'cdk8s';
import type { Construct } from 'constructs';
import type { Container, Probe, Service, ServicePort, Volume, VolumeMount } from '../../imports/k8s';
import type { ResolvedCluster, ResolvedTiDB, ResolvedTiDBService } from '../tidbcluster/resolve';
import { DEFAULTS } from '../tidbcluster/defaults';
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
} from './component';
import { ComponentConstruct } from './component-construct';
import { TIDB_AUTH_TOKEN_DIR, TIDB_BOOTSTRAP_DIR, tidbConfig } from './config/tidb';
import { logTailerContainer, logVolume, placeTailers } from './log-tailer';
import { tidbScriptContext, tidbStartScript } from './scripts/tidb';
import { clientServiceMetadata, dualStack, peerService } from './service';
import { secretMount, TLS_DIR, tlsFile, type SecretMount } from './tls';

export interface TidbComponentProps {
  /** The resolved cluster; `cluster.tidb` must be set. */
  readonly cluster: ResolvedCluster;
}

/**
 * TiDB: ConfigMap, headless `<cluster>-tidb-peer`, the client Service `<cluster>-tidb` when
 * `spec.tidb.service` is set, and StatefulSet `<cluster>-tidb` (no data volume).
 */
export class TidbComponent extends ComponentConstruct {
  /** ConfigMap `<cluster>-tidb`: TiDB's config file and start script. */
  declare readonly configMap: ApiObject;
  /** The client Service `<cluster>-tidb`, where `spec.tidb.service` is set. @default none */
  declare readonly service?: ApiObject;
  /** The headless Service `<cluster>-tidb-peer`. */
  declare readonly peerService: ApiObject;
  /** StatefulSet `<cluster>-tidb`. */
  declare readonly statefulSet: ApiObject;

  constructor(scope: Construct, id: string, props: TidbComponentProps) {
    super(scope, id, props.cluster, (cluster) => {
      const tidb = cluster.tidb!;
      const storage = storageVolumeClaims(tidb);
      const slowLog = slowLogPlacement(tidb, storage.mounts);
      return {
        component: tidb,
        configData: { 'config-file': tidbConfig(cluster, tidb), 'startup-script': tidbStartScript(tidbScriptContext(cluster, tidb)) },
        service: tidb.service && tidbService(cluster, tidb.service),
        peerService: tidbPeerService(cluster),
        peerFirst: true,
        statefulSet: (configMapName) => tidbStatefulSet(cluster, tidb, configMapName!, slowLog, storage),
      };
    });
  }
}

export function tidbPeerService(cluster: ResolvedCluster): Service {
  return peerService(cluster, 'tidb', [{ name: 'status', port: PORT.tidbStatus, targetPort: PORT.tidbStatus, protocol: 'TCP' }]);
}

export function tidbService(cluster: ResolvedCluster, svc: ResolvedTiDBService): Service {
  const selector = selectorLabels(cluster.instance, 'tidb');
  const ports: ServicePort[] = [
    {
      name: svc.portName,
      port: svc.port,
      targetPort: PORT.tidbServer,
      protocol: 'TCP',
      ...(svc.mysqlNodePort && { nodePort: svc.mysqlNodePort }),
    },
    ...svc.additionalPorts,
    ...(svc.exposeStatus
      ? [
          {
            name: 'status',
            port: PORT.tidbStatus,
            targetPort: PORT.tidbStatus,
            protocol: 'TCP',
            ...(svc.statusNodePort && { nodePort: svc.statusNodePort }),
          },
        ]
      : []),
  ];
  const lb = svc.type === 'LoadBalancer';
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: clientServiceMetadata(cluster, 'tidb', svc),
    spec: {
      type: svc.type,
      ...(svc.clusterIP && { clusterIP: svc.clusterIP }),
      ...(lb && svc.loadBalancerIP && { loadBalancerIP: svc.loadBalancerIP }),
      ...(lb && svc.loadBalancerSourceRanges && { loadBalancerSourceRanges: svc.loadBalancerSourceRanges }),
      ...(lb && svc.loadBalancerClass && { loadBalancerClass: svc.loadBalancerClass }),
      ...(svc.externalTrafficPolicy && { externalTrafficPolicy: svc.externalTrafficPolicy }),
      ports,
      selector,
      ...dualStack(cluster),
    },
  };
}

/** Where the slow log goes: the `slowlog` emptyDir, or a named storage volume / additional mount. */
export interface SlowLogPlacement {
  /** `SLOW_LOG_FILE`; "" when the slow log is not separated. */
  readonly file: string;
  /** @default none (the slow log is not separated) */
  readonly mount?: VolumeMount;
  /** The emptyDir to add when the default place is used. @default none */
  readonly volume?: Volume;
}

export function slowLogPlacement(tidb: ResolvedTiDB, storageMounts: VolumeMount[]): SlowLogPlacement {
  if (!tidb.separateSlowLog) return { file: '' };
  if (!tidb.slowLogVolumeName) {
    const dir = DEFAULTS.tidbSlowLogFile.slice(0, DEFAULTS.tidbSlowLogFile.lastIndexOf('/'));
    return { file: DEFAULTS.tidbSlowLogFile, mount: { name: 'slowlog', mountPath: dir }, volume: { name: 'slowlog', emptyDir: {} } };
  }
  const fallback = { name: 'slowlog', mountPath: '' };
  const mount = logVolume(
    tidb.slowLogVolumeName,
    (n) => names.storageVolume('tidb', n),
    storageMounts,
    tidb.additionalVolumeMounts,
    fallback,
  )!;
  return { file: `${mount.mountPath.replace(/\/$/, '')}/${tidb.slowLogVolumeName}`, mount };
}

const STARTUP_PROBE_DIR = '/var/lib/customized-startup-probe';

export function tidbStatefulSet(
  cluster: ResolvedCluster,
  tidb: ResolvedTiDB,
  configMapName: string,
  slowLog: SlowLogPlacement,
  storage: ReturnType<typeof storageVolumeClaims>,
) {
  const probe = tidb.customizedStartupProbe;
  const secrets = tidbSecrets(cluster);
  const mounts: VolumeMount[] = [
    ANNOTATIONS_MOUNT,
    { name: 'config', mountPath: '/etc/tidb', readOnly: true },
    { name: 'startup-script', mountPath: '/usr/local/bin', readOnly: true },
    ...(tidb.tokenBasedAuthEnabled ? [{ name: 'tidb-auth-token', mountPath: TIDB_AUTH_TOKEN_DIR, readOnly: true }] : []),
    ...secrets.map((s) => s.mount),
    ...(tidb.bootstrapSQLConfigMapName ? [{ name: 'tidb-bootstrap-sql', mountPath: TIDB_BOOTSTRAP_DIR, readOnly: true }] : []),
    ...storage.mounts,
    ...tidb.additionalVolumeMounts,
    ...(slowLog.volume && slowLog.mount ? [slowLog.mount] : []),
    ...(probe ? [{ name: probe.binaryName, mountPath: STARTUP_PROBE_DIR }] : []),
  ];
  const volumes: Volume[] = [
    ANNOTATIONS_VOLUME,
    ...configVolumes(configMapName, 'tidb.toml', 'tidb_start_script.sh'),
    ...(tidb.tokenBasedAuthEnabled ? [{ name: 'tidb-auth-token', secret: { secretName: names.tidbAuthTokenSecret(cluster.name) } }] : []),
    ...(tidb.bootstrapSQLConfigMapName
      ? [
          {
            name: 'tidb-bootstrap-sql',
            configMap: { name: tidb.bootstrapSQLConfigMapName, items: [{ key: 'bootstrap-sql', path: 'bootstrap.sql' }] },
          },
        ]
      : []),
    ...secrets.map((s) => s.volume),
    ...(slowLog.volume ? [slowLog.volume] : []),
    ...(probe ? [{ name: probe.binaryName, emptyDir: {} }] : []),
    ...tidb.additionalVolumes,
  ];
  const env = mergeEnv(
    [
      { name: 'CLUSTER_NAME', value: cluster.name },
      { name: 'TZ', value: cluster.timezone },
      { name: 'BINLOG_ENABLED', value: String(tidb.binlogEnabled) },
      { name: 'SLOW_LOG_FILE', value: slowLog.file },
      fieldRefEnv('POD_NAME', 'metadata.name'),
      fieldRefEnv('NAMESPACE', 'metadata.namespace'),
      { name: 'HEADLESS_SERVICE_NAME', value: names.peerService(cluster.name, 'tidb') },
    ],
    tidb.env,
  );
  const container: Container = {
    ...componentContainer(tidb),
    command: ['/bin/sh', '/usr/local/bin/tidb_start_script.sh'],
    ports: [
      { name: 'server', containerPort: PORT.tidbServer, protocol: 'TCP' },
      { name: 'status', containerPort: PORT.tidbStatus, protocol: 'TCP' },
    ],
    volumeMounts: mounts,
    env,
    readinessProbe: tidbReadinessProbe(cluster, tidb),
    ...(tidb.lifecycle && { lifecycle: tidb.lifecycle }),
    ...(probe && { startupProbe: customizedStartupProbe(probe) }),
  };
  const base = basePodSpec(cluster, tidb, { kind: 'tidb' });
  // A native slowlog sidecar goes after the renderer's own init containers, before the probe copier.
  const ownInit = base.initContainers.length - tidb.initContainers.length;
  const tailers = slowLog.mount ? [logTailerContainer('slowlog', slowLog.file, slowLog.mount, tidb.slowLogTailer)] : [];
  const sidecars = placeTailers(tailers, tidb.slowLogTailer, base.initContainers, ownInit);
  if (probe) {
    // The operator's order: its own init containers, the native slowlog sidecar, this copier, the user's.
    const after = ownInit + (tidb.slowLogTailer.useSidecar ? tailers.length : 0);
    base.initContainers.splice(after, 0, {
      name: probe.binaryName,
      image: probe.image,
      imagePullPolicy: 'IfNotPresent',
      command: ['/bin/sh', '-c'],
      args: [`cp /${probe.binaryName} ${STARTUP_PROBE_DIR}/${probe.binaryName}; echo '${probe.binaryName} copy finished'`],
      volumeMounts: [{ name: probe.binaryName, mountPath: STARTUP_PROBE_DIR }],
      ...(tidb.securityContext && { securityContext: tidb.securityContext }),
    });
  }
  const podSpec = finishPodSpec(base, mergeContainers([...sidecars, container], tidb.additionalContainers), volumes);
  return statefulSet(cluster, tidb, podSpec, storage.claims, podAnnotations(tidb, PORT.tidbStatus));
}

/** TiDB's certificates: its cluster certificate, and the SQL server one with `tlsClient`. */
export function tidbSecrets(cluster: ResolvedCluster): SecretMount[] {
  return [
    ...(cluster.tlsCluster ? [secretMount('tidb-tls', names.clusterSecret(cluster.name, 'tidb'), TLS_DIR.tidb)] : []),
    ...(cluster.sqlTls ? [secretMount('tidb-server-tls', names.tidbServerSecret(cluster.name), TLS_DIR.tidbServer)] : []),
  ];
}

function tidbReadinessProbe(cluster: ResolvedCluster, tidb: ResolvedTiDB): Probe {
  const p = tidb.readinessProbe;
  const certs = cluster.tlsCluster
    ? ['--cacert', tlsFile(TLS_DIR.tidb, 'ca'), '--cert', tlsFile(TLS_DIR.tidb, 'cert'), '--key', tlsFile(TLS_DIR.tidb, 'key')]
    : [];
  const handler: Probe =
    p?.type === 'command'
      ? { exec: { command: ['curl', `${cluster.scheme}://127.0.0.1:${PORT.tidbStatus}/status`, '--fail', '--location', ...certs] } }
      : { tcpSocket: { port: PORT.tidbServer } };
  return {
    ...handler,
    initialDelaySeconds: p?.initialDelaySeconds ?? DEFAULTS.probeInitialDelaySeconds,
    ...(p?.periodSeconds !== undefined && { periodSeconds: p.periodSeconds }),
  };
}

function customizedStartupProbe(p: NonNullable<ResolvedTiDB['customizedStartupProbe']>): Probe {
  const positive = (n: number | undefined) => (n !== undefined && n >= 1 ? n : undefined);
  return {
    exec: { command: [`${STARTUP_PROBE_DIR}/${p.binaryName}`, ...(p.args ?? [])] },
    successThreshold: 1,
    ...(positive(p.timeoutSeconds) && { timeoutSeconds: p.timeoutSeconds }),
    ...(positive(p.periodSeconds) && { periodSeconds: p.periodSeconds }),
    ...(positive(p.failureThreshold) && { failureThreshold: p.failureThreshold }),
  };
}
