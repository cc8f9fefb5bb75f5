/**
 * Object names, labels and annotation keys shared by the renderer and the controller, so the two can
 * never disagree on `<cluster>-pd-peer` or a selector. Names and label values follow tidb-operator v1,
 * which is what lets an operator-made cluster be adopted without recreating a Pod or PVC.
 */
import { createHash } from 'node:crypto';

/**
 * Components rendered as StatefulSets, in the order the operator reconciles them. `tso` and
 * `scheduling` are PD's micro-services (`spec.pdms`).
 */
export const COMPONENTS = ['tso', 'scheduling', 'pd', 'tiproxy', 'tiflash', 'tikv', 'pump', 'tidb', 'ticdc'] as const;
export type ComponentKind = (typeof COMPONENTS)[number];

/** Label keys (`app.kubernetes.io/*`) and the fixed values the operator uses. */
export const LABEL = {
  name: 'app.kubernetes.io/name',
  managedBy: 'app.kubernetes.io/managed-by',
  instance: 'app.kubernetes.io/instance',
  component: 'app.kubernetes.io/component',
  usedBy: 'app.kubernetes.io/used-by',
} as const;

/**
 * The label values stay `tidb-cluster` / `tidb-operator` although no operator runs: they are part of
 * every selector, and selectors are immutable on a StatefulSet.
 */
export const LABEL_VALUE = {
  name: 'tidb-cluster',
  managedBy: 'tidb-operator',
} as const;

/**
 * Labels of the objects a BackupSchedule renders (its CronJob, Jobs and Pods): the schedule's name under
 * tidb-operator's key (`label.BackupScheduleLabelKey`), and this project as their manager. The
 * controller finds a schedule's runs by them.
 */
export const BACKUP_LABEL = {
  schedule: 'tidb.pingcap.com/backup-schedule',
  managedBy: 'tidb-gitops',
  /**
   * A one-shot Backup's or Restore's Job name (`backup-<name>`, `restore-<name>`), on its ConfigMap,
   * its Job and its Pod: the controller runs each exactly once.
   */
  operation: 'tidb-gitops.io/operation',
} as const;

/**
 * The TidbCluster annotation that keeps internal clients (PD dashboard, TiProxy, the initializer) off
 * TLS towards TiDB.
 */
export const SKIP_TLS_TO_TIDB = 'tidb.tidb.pingcap.com/skip-tls-when-connect-tidb';

/** Keys of a one-shot operation's ConfigMap, rendered from its Backup or Restore document. */
export const OPERATION_KEY = {
  /** A Changefeed's ConfigMap: the changefeed as Git declares it, without credentials. */
  changefeed: 'changefeed.json',
  /** The Job the controller creates, once: `batch/v1` JSON. */
  job: 'job.json',
  /**
   * A log backup's task, the state it is kept in, and the TSO its log is truncated to by hand:
   * `{"task": "<name>", "state": "running|paused|stopped", "truncateUntil": "<TSO>"}`.
   */
  logTask: 'log-backup.json',
} as const;

/**
 * The BR commands that keep a log backup task in its state, and `truncate`, which removes the log
 * a schedule's retention no longer needs: each a Job in the log backup's ConfigMap.
 */
export const LOG_COMMANDS = ['start', 'pause', 'resume', 'stop', 'truncate'] as const;
export type LogCommand = (typeof LOG_COMMANDS)[number];

/** The key of a log backup command's Job in its ConfigMap: `log-start.json`... */
export const logCommandKey = (command: LogCommand): string => `log-${command}.json`;

/**
 * The longest name of a Job the controller or the monitoring render creates: the Job controller puts
 * the name in the `batch.kubernetes.io/job-name` label of its Pods, and a label value has at most 63
 * characters (Kubernetes refuses the Job otherwise).
 */
export const MAX_JOB_NAME = 63;

/** The hex digits of the hash a generated name is shortened with. */
const SHORT_HASH = 8;

/**
 * The name of the controller's `run`-th log command Job (`run` from 1) made from the template named
 * `templateName` (`backup-<name>-log-<command>`): `<template>-<run>` while that fits
 * {@link MAX_JOB_NAME}, else `<template cut short>-<hash of the whole template>-<run>`, which fits for
 * every run up to `Number.MAX_SAFE_INTEGER`: the run grows with every retry, so a name that fits
 * today would not later. Two templates cut alike keep names of their own (the hash).
 */
export function logCommandJobName(templateName: string, run: number): string {
  const plain = `${templateName}-${run}`;
  if (plain.length <= MAX_JOB_NAME) return plain;
  const hash = createHash('sha256').update(templateName).digest('hex').slice(0, SHORT_HASH);
  const room = MAX_JOB_NAME - `-${hash}-${run}`.length;
  return `${templateName.slice(0, room).replace(/-+$/, '')}-${hash}-${run}`;
}

/** Whether `name` is one of the log command Jobs {@link logCommandJobName} makes from `templateName`. */
export function isLogCommandJobName(templateName: string, name: string): boolean {
  const run = /-([1-9][0-9]{0,15})$/.exec(name)?.[1];
  return run !== undefined && Number.isSafeInteger(Number(run)) && logCommandJobName(templateName, Number(run)) === name;
}

/**
 * A schedule's log backup (its `logBackupTemplate`): the log backup task and Backup `log-<schedule>`,
 * whose Jobs the ConfigMap `backup-log-<schedule>` describes to the controller.
 */
export const logBackupOfSchedule = (schedule: string): { readonly task: string; readonly configMap: string } => ({
  task: `log-${schedule}`,
  configMap: names.operationJob('Backup', `log-${schedule}`),
});

/** Annotation keys this project writes for its companion controller. */
export const ANNOTATION = {
  /** Desired replica count of a component StatefulSet; the controller owns `spec.replicas`. */
  replicas: 'tidb-gitops.io/replicas',
  /** JSON of the component's operation settings (failover, eviction timeouts...) for the controller. */
  settings: 'tidb-gitops.io/settings',
  /**
   * Written by the controller, read by the Argo CD and Flux health checks: the failover replicas it
   * added on top of `tidb-gitops.io/replicas` (absent when none).
   */
  failoverReplicas: 'tidb-gitops.io/failover-replicas',
  /** Written by the controller: why it refuses to move the StatefulSet to its replicas (absent when it does not). */
  refused: 'tidb-gitops.io/refused',
  /**
   * Written by the controller on a one-shot operation's ConfigMap, read by the Argo CD and Flux health
   * checks: `Waiting`, `Running`, `Complete`, `Failed` or `Lost`.
   */
  operationPhase: 'tidb-gitops.io/phase',
  /** Written with the phase: what the operation waits for, wrote, or why it failed. */
  operationMessage: 'tidb-gitops.io/message',
  /**
   * Written by the controller on a BackupSchedule's CronJob, read by the Argo CD and Flux health
   * checks: `Degraded` while the schedule's last run failed, was lost or cannot start, or its
   * retention fails (absent otherwise), with why in `tidb-gitops.io/message`.
   */
  scheduleHealth: 'tidb-gitops.io/backup-health',
  /**
   * Written by the controller on a one-shot operation's Job when it creates it: PD's cluster ID of
   * the cluster it runs against, the cluster instance a restore is bound to.
   */
  operationCluster: 'tidb-gitops.io/cluster-id',
  /**
   * On a TidbInitializer, read by the renderer: `skip` or `run`, what its initializer does in a
   * cluster set up before without a record of it (see `InitializerInfo.existingCluster`).
   */
  existingCluster: 'tidb-gitops.io/existing-cluster',
} as const;

/**
 * Label of the volume sizes ConfigMap, by which a Flux Kustomization of its own applies it apart from
 * the StatefulSets (see docs/reference.md).
 */
export const VOLUME_SIZES_LABEL = 'tidb-gitops.io/volume-sizes';
/** Key of the volume sizes ConfigMap: `{"<component>": {"<volumeClaimTemplate>": "<quantity>"}}`. */
export const VOLUME_SIZES_KEY = 'sizes.json';

export type Labels = Record<string, string>;

/** The four selector labels of a component: on StatefulSets, their selectors, Services and ConfigMaps. */
export function selectorLabels(instance: string, component: ComponentKind | 'discovery' | 'monitoring'): Labels {
  return {
    [LABEL.name]: LABEL_VALUE.name,
    [LABEL.managedBy]: LABEL_VALUE.managedBy,
    [LABEL.instance]: instance,
    [LABEL.component]: component,
  };
}

/**
 * The labels tidb-operator's `tidb-drainer` Helm chart puts on the Pods of a Drainer it deploys for
 * `cluster` (its `clusterName` value, the TidbCluster's name): Helm as their manager, `drainer` as
 * their component. The chart's `app.kubernetes.io/name` is the release's, so it is left out.
 */
export function drainerChartLabels(cluster: string): Labels {
  return { [LABEL.component]: 'drainer', [LABEL.instance]: cluster, [LABEL.managedBy]: 'Helm' };
}

/** The hash suffix of a config revision's name: hex, as this project (7 digits) and the operator write it. */
const CONFIG_REVISION_SUFFIX = /^-[0-9a-f]{5,16}$/;

/** Whether `name` is a config revision of the component (`names.configRevision`), for any hash. */
export function isConfigRevision(cluster: string, c: string, name: string): boolean {
  const base = `${cluster}-${c}`;
  return name.startsWith(base) && CONFIG_REVISION_SUFFIX.test(name.slice(base.length));
}

export const names = {
  statefulSet: (cluster: string, c: ComponentKind) => `${cluster}-${c}`,
  /**
   * Headless Service that gives Pods stable DNS names (`serviceName` of the StatefulSet). Pump's has no
   * `-peer` suffix, as with the operator.
   */
  peerService: (cluster: string, c: ComponentKind) => (c === 'pump' ? `${cluster}-pump` : `${cluster}-${c}-peer`),
  /** A Pod's host name under its headless Service, up to the namespace: `<pod>.<peer service>`. */
  peerHost: (cluster: string, c: ComponentKind, pod: string): string => `${pod}.${names.peerService(cluster, c)}`,
  /**
   * What follows `<pod>.<peer service>` in the address a Pump advertises: the namespace only when
   * another Kubernetes cluster must resolve it (acrossK8s) or a cluster domain is set.
   */
  pumpAdvertiseZone: (namespace: string, clusterDomain: string, acrossK8s: boolean) =>
    clusterDomain ? `.${namespace}.svc.${clusterDomain}` : acrossK8s ? `.${namespace}.svc` : '',
  /** Client Service (PD always, TiDB when `spec.tidb.service` is set). */
  service: (cluster: string, c: ComponentKind) => `${cluster}-${c}`,
  /** ConfigMap base name; `configUpdateStrategy: RollingUpdate` appends `-<hash>` (see `configRevision`). */
  configMap: (cluster: string, c: ComponentKind) => `${cluster}-${c}`,
  /** A config revision's ConfigMap (`configUpdateStrategy: RollingUpdate`): the base name and a hex hash of the data. */
  configRevision: (cluster: string, c: ComponentKind, hash: string) => `${cluster}-${c}-${hash}`,
  /** The companion controller's Deployment, Service, ServiceAccount, Role and RoleBinding. */
  discovery: (cluster: string) => `${cluster}-discovery`,
  /** The ServiceAccount, Role and RoleBinding of the Job publishing the rules and dashboards. */
  monitoring: (cluster: string) => `${cluster}-monitoring`,
  /**
   * The Job publishing the rules and dashboards, `<cluster>-monitoring-<hash>`, or `<cluster>-mon-<hash>`
   * for the longest cluster names, where the other would pass {@link MAX_JOB_NAME}.
   */
  monitoringJob: (cluster: string, hash: string) => {
    const name = `${cluster}-monitoring-${hash}`;
    return name.length <= MAX_JOB_NAME ? name : `${cluster.slice(0, MAX_JOB_NAME - `-mon-${hash}`.length)}-mon-${hash}`;
  },
  /** The PrometheusRule of PingCAP's alert rules. */
  alertRules: (cluster: string) => `${cluster}-alert-rules`,
  /** The ConfigMap of one dashboard (of one part of it, when it is too large for one). */
  dashboard: (cluster: string, dashboard: string) => `${cluster}-dashboard-${dashboard}`,
  /** A component's PodDisruptionBudget: the StatefulSet's name (another kind, so no clash). */
  disruptionBudget: (cluster: string, c: ComponentKind) => `${cluster}-${c}`,
  /**
   * The ClusterRole and ClusterRoleBinding that let the controller read Nodes (topology labels) and
   * patch the reclaim policy of the cluster's PVs: cluster-scoped, so the namespace is part of the name.
   */
  nodeReader: (namespace: string, cluster: string) => `tidb-gitops:${namespace}:${cluster}-discovery`,
  /** The cluster's namespace in a `nodeReader` name, or undefined for another name. */
  nodeReaderNamespace: (name: string): string | undefined => /^tidb-gitops:([a-z0-9-]+):[a-z0-9.-]+-discovery$/.exec(name)?.[1],
  /** The Lease the controller holds while it acts on the cluster (one writer at a time). */
  lease: (cluster: string) => `${cluster}-discovery`,
  /**
   * ConfigMap with the volume sizes Git asks for (`sizes.json`): it reaches the controller even while
   * the API server refuses the StatefulSet whose volumeClaimTemplates grew.
   */
  volumeSizes: (cluster: string) => `${cluster}-volume-sizes`,
  /** ConfigMap where the controller keeps its state across restarts. */
  status: (cluster: string) => `${cluster}-status`,
  /** The certificate discovery serves with `enableDiscoveryMTLS` (`ca.crt`, `tls.crt`, `tls.key`). */
  discoverySecret: (cluster: string) => `${cluster}-discovery-cluster-secret`,
  pod: (cluster: string, c: ComponentKind, ordinal: number) => `${cluster}-${c}-${ordinal}`,
  /** volumeClaimTemplate name of the main data volume (PD `pd`, TiKV `tikv`; TiDB has none). */
  dataVolume: (c: 'pd' | 'tikv') => c,
  /** Secret holding a component's cluster certificate (`ca.crt`, `tls.crt`, `tls.key`) with `tlsCluster`. */
  clusterSecret: (cluster: string, c: ComponentKind) => `${cluster}-${c}-cluster-secret`,
  /** Client certificate for talking to the cluster's components (`mountClusterClientSecret`, TiCDC). */
  clusterClientSecret: (cluster: string) => `${cluster}-cluster-client-secret`,
  /** TiDB's SQL server certificate (`spec.tidb.tlsClient.enabled`). */
  tidbServerSecret: (cluster: string) => `${cluster}-tidb-server-secret`,
  /**
   * The ConfigMap of the cluster's initializer (`<cluster>-tidb-initializer`, the operator's name for its
   * Job and ConfigMap): the inline SQL, and where the controller notes how it went.
   */
  initializer: (cluster: string) => `${cluster}-tidb-initializer`,
  /** The Secret `spec.tidb.initializer.createPassword` reads root's password from (key `root`). */
  initSecret: (cluster: string) => `${cluster}-init`,
  /** The Secret of TiDB's JSON Web Key Set, `tidb_auth_token_jwks.json` (`spec.tidb.tokenBasedAuthEnabled`). */
  tidbAuthTokenSecret: (cluster: string) => `${cluster}-tidb-auth-token-jwks-secret`,
  /** Client certificate for internal SQL clients (PD dashboard, TiProxy) with `tlsClient`. */
  tidbClientSecret: (cluster: string) => `${cluster}-tidb-client-secret`,
  /** volumeClaimTemplate name of an extra storage volume, e.g. `tikv-raft`. */
  storageVolume: (c: ComponentKind, volume: string) => `${c}-${volume}`,
  pvc: (claimTemplate: string, statefulSet: string, ordinal: number) => `${claimTemplate}-${statefulSet}-${ordinal}`,
  /** A BackupSchedule's CronJob `backup-<schedule>`, which names the Jobs it starts after itself. */
  backupSchedule: (schedule: string) => `backup-${schedule}`,
  /** A one-shot Backup's or Restore's Job, and the ConfigMap holding it: `backup-<name>`, `restore-<name>`. */
  operationJob: (kind: 'Backup' | 'Restore', name: string) => `${kind === 'Backup' ? 'backup' : 'restore'}-${name}`,
  /** A Changefeed document's ConfigMap, on which the controller notes where the changefeed stands. */
  changefeed: (document: string) => `changefeed-${document}`,
  /** The template of a log backup command's Jobs (see {@link logCommandJobName}): `backup-<name>-log-<command>`. */
  logCommandTemplate: (operationJob: string, command: LogCommand) => `${operationJob}-log-${command}`,
} as const;

/** TidbCluster (or StatefulSet) annotation with which the controller restarts Pods without health checks. */
export const FORCE_UPGRADE_ANNOTATION = 'tidb.pingcap.com/force-upgrade';

/**
 * TiCDC Pod annotation, `new` when the capture runs TiCDC's new architecture (`newarch`): the
 * controller reads from it what the capture's drain answer means.
 */
export const TICDC_ARCHITECTURE_ANNOTATION = 'tidb-gitops.io/ticdc-architecture';

/** Fixed ports (tidb-operator v1 defaults). */
export const PORT = {
  pdClient: 2379,
  pdPeer: 2380,
  tikvServer: 20160,
  tikvStatus: 20180,
  tidbServer: 4000,
  tidbStatus: 10080,
  tiflashFlash: 3930,
  tiflashProxy: 20170,
  tiflashMetrics: 8234,
  tiflashProxyStatus: 20292,
  tiflashTcp: 9000,
  tiflashHttp: 8123,
  tiflashInternal: 9009,
  ticdc: 8301,
  pump: 8250,
  tiproxySql: 6000,
  tiproxyApi: 3080,
  tiproxyPeer: 3081,
  discovery: 10261,
  /** The controller's health checks (`/readyz`, `/healthz`) and metrics. */
  discoveryMetrics: 10263,
} as const;

/** The label Kubernetes (1.27 and later) puts on a Job's Pods, naming the Job. */
export const JOB_NAME_LABEL = 'batch.kubernetes.io/job-name';
/** The label Grafana's dashboard sidecar looks for (the Grafana Helm chart's and kube-prometheus-stack's default). */
export const GRAFANA_DASHBOARD_LABEL = 'grafana_dashboard';
