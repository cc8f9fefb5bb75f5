/**
 * Every default the renderer applies, in one table (tidb-operator v1's values). `resolve.ts` is the
 * only reader; the defaults table of docs/reference.md is generated from it (`npm run docs`).
 */
import { version } from '../../package.json';
import { TIKV_DRAIN_GRACE_SECONDS } from './guard-rails';

/** Where the tidb-gitops image (the CLI, whose `controller` command the discovery Deployment runs) is published. */
export const CONTROLLER_REPOSITORY = 'ghcr.io/tidb-gitops/tidb-gitops';

export interface DefaultEntry {
  /** Field path in the TidbCluster, `<component>` standing for pd, tikv and tidb. */
  readonly field: string;
  readonly value: string | number | boolean;
  /** @default none */
  readonly note?: string;
}

export const DEFAULTS = {
  imagePullPolicy: 'IfNotPresent',
  helperImage: 'busybox:1.26.2',
  /** The image of the discovery Deployment: this release of tidb-gitops. */
  controllerImage: `${CONTROLLER_REPOSITORY}:${version}`,
  baseImage: {
    pd: 'pingcap/pd',
    tso: 'pingcap/pd',
    scheduling: 'pingcap/pd',
    tikv: 'pingcap/tikv',
    tidb: 'pingcap/tidb',
    tiflash: 'pingcap/tiflash',
    ticdc: 'pingcap/ticdc',
    pump: 'pingcap/tidb-binlog',
    tiproxy: 'pingcap/tiproxy',
  },
  configUpdateStrategy: 'InPlace',
  statefulSetUpdateStrategy: 'RollingUpdate',
  podManagementPolicy: 'Parallel',
  startScriptVersion: 'v1',
  timezone: '',
  clusterDomain: '',
  pvReclaimPolicy: 'Retain',
  maxFailoverCount: 3,
  topologyMaxSkew: 1,
  probeInitialDelaySeconds: 10,
  pdStartTimeout: 30,
  pdInitWaitTime: 0,
  pdSpareVolReplaceReplicas: 1,
  tikvEvictLeaderTimeout: '1500m',
  tikvWaitLeaderTransferBackTimeout: '400s',
  tikvScaleParallelism: 1,
  tidbSeparateSlowLog: true,
  tidbSlowLogFile: '/var/log/tidb/slowlog',
  tidbExposeStatus: true,
  tidbServicePortName: 'mysql-client',
  pdServicePortName: 'client',
  tidbLogMaxBackups: 3,
} as const;

/** The same defaults, keyed by the field they fill, for the documentation. */
export const DEFAULTS_TABLE: readonly DefaultEntry[] = [
  { field: 'spec.imagePullPolicy', value: DEFAULTS.imagePullPolicy },
  { field: 'spec.helper.image', value: DEFAULTS.helperImage, note: 'log tailers and init containers' },
  { field: 'spec.pd.baseImage', value: DEFAULTS.baseImage.pd },
  { field: 'spec.pdms[].baseImage', value: DEFAULTS.baseImage.tso, note: 'TSO and scheduling run the PD image' },
  { field: 'spec.tikv.baseImage', value: DEFAULTS.baseImage.tikv },
  { field: 'spec.tidb.baseImage', value: DEFAULTS.baseImage.tidb },
  { field: 'spec.tiflash.baseImage', value: DEFAULTS.baseImage.tiflash },
  { field: 'spec.ticdc.baseImage', value: DEFAULTS.baseImage.ticdc },
  { field: 'spec.pump.baseImage', value: DEFAULTS.baseImage.pump },
  { field: 'spec.tiproxy.baseImage', value: DEFAULTS.baseImage.tiproxy },
  { field: 'spec.<component>.version', value: 'spec.version', note: 'no tag when neither is set' },
  { field: 'spec.configUpdateStrategy', value: DEFAULTS.configUpdateStrategy },
  { field: 'spec.statefulSetUpdateStrategy', value: DEFAULTS.statefulSetUpdateStrategy },
  { field: 'spec.podManagementPolicy', value: DEFAULTS.podManagementPolicy, note: 'only OrderedReady is honoured' },
  { field: 'spec.startScriptVersion', value: DEFAULTS.startScriptVersion },
  { field: 'spec.timezone', value: '""', note: 'TZ of PD, TiKV and TiDB' },
  { field: 'spec.clusterDomain', value: '""' },
  {
    field: 'spec.pvReclaimPolicy',
    value: DEFAULTS.pvReclaimPolicy,
    note: 'set on the bound PVs by the controller with tidb-gitops.io/pv-reclaim-policy: "true"; without it PVs keep their StorageClass reclaim policy',
  },
  { field: 'spec.<component>.maxFailoverCount', value: DEFAULTS.maxFailoverCount, note: 'read by the controller' },
  { field: 'spec.<component>.topologySpreadConstraints[].maxSkew', value: DEFAULTS.topologyMaxSkew },
  { field: 'spec.<component>.readinessProbe.initialDelaySeconds', value: DEFAULTS.probeInitialDelaySeconds },
  { field: 'spec.pd.startTimeout', value: DEFAULTS.pdStartTimeout, note: 'seconds of DNS wait in the start script' },
  { field: 'spec.pd.initWaitTime', value: DEFAULTS.pdInitWaitTime },
  { field: 'spec.tikv.evictLeaderTimeout', value: DEFAULTS.tikvEvictLeaderTimeout, note: 'read by the controller' },
  { field: 'spec.tikv.waitLeaderTransferBackTimeout', value: DEFAULTS.tikvWaitLeaderTransferBackTimeout, note: 'read by the controller' },
  {
    field: 'spec.tikv.terminationGracePeriodSeconds',
    value: TIKV_DRAIN_GRACE_SECONDS,
    note: 'with drain hooks (the default): room for the preStop hook to wait while the region leaders move',
  },
  { field: 'spec.tidb.separateSlowLog', value: DEFAULTS.tidbSeparateSlowLog },
  { field: 'spec.tidb.service.exposeStatus', value: DEFAULTS.tidbExposeStatus },
  { field: 'spec.tidb.service.portName', value: DEFAULTS.tidbServicePortName },
  { field: 'spec.pd.service.portName', value: DEFAULTS.pdServicePortName },
  { field: 'spec.tidb.config log.file.max-backups', value: DEFAULTS.tidbLogMaxBackups, note: 'only when unset' },
  { field: 'spec.tidb.binlogEnabled', value: false, note: 'true when spec.pump is set' },
];
