/**
 * The structured result of comparing two sets of rendered manifests: what changes per cluster and per
 * component, and the risks a reviewer should weigh. The Markdown report is one view of it.
 */
/** Every kind of risk the report knows, each with a stable id (risks.ts detects them). */
export const RISK = {
  /** A StatefulSet's `spec.volumeClaimTemplates` changes: Kubernetes refuses the update. */
  pvcTemplate: 'pvc-template',
  /** A StatefulSet's or Deployment's `spec.selector` changes: Kubernetes refuses the update. */
  selector: 'selector',
  /** A StatefulSet's `spec.serviceName` changes: Kubernetes refuses the update. */
  serviceName: 'service-name',
  /** Another StatefulSet field Kubernetes does not let change (`spec.podManagementPolicy`). */
  immutableField: 'immutable-field',
  /** PD's replica count becomes even. */
  pdEven: 'pd-even',
  /** PD's replica count becomes lower than 3 (and is not even). */
  pdFew: 'pd-few',
  /** TiKV's replica count is below PD's `replication.max-replicas`. */
  tikvMaxReplicas: 'tikv-max-replicas',
  /** PD, TiKV or TiFlash scale in: members are removed, data moves. */
  scaleIn: 'scale-in',
  /** A component's workload is removed from a cluster that stays. */
  componentRemoved: 'component-removed',
  /** A whole cluster is removed. */
  clusterRemoved: 'cluster-removed',
  /** A container image moves to a lower version. */
  downgrade: 'downgrade',
  /** PD, TiKV and TiDB run different versions after the change. */
  versionSkew: 'version-skew',
  /** Live objects still have an owner (a TidbCluster): deleting it, or its operator, acts on them. */
  ownerReference: 'owner-reference',
  /** The controller gains (or loses) read access to Nodes: a cluster-scoped ClusterRole and binding. */
  nodeAccess: 'node-access',
  /** A running PD changes mode: its micro-services (TSO, scheduling) appear or go. */
  pdMode: 'pd-mode',
  /** A BackupSchedule's retention starts removing, or removes more of, its backups from the storage. */
  backupRetention: 'backup-retention',
  /** A BackupSchedule is removed: no new backups. */
  backupScheduleRemoved: 'backup-schedule-removed',
  /** A Restore is added (or changed before it ran): the controller writes a backup into the cluster, once. */
  restore: 'restore',
  /** A log backup is paused, stopped or removed (which stops it): no point after that can be restored to. */
  logBackup: 'log-backup',
  /** A component's PodDisruptionBudget is removed or lets more of its Pods be evicted at once. */
  disruptionBudget: 'disruption-budget',
  /** The cluster's NetworkPolicies appear on a running cluster, go, or admit other namespaces. */
  networkPolicy: 'network-policy',
  /** An initializer is added to a running cluster, renamed (it runs again), or changed (it does not). */
  initializer: 'initializer',
  /** The monitoring is turned off, or its alert rules and dashboards are replaced by another release's. */
  monitoring: 'monitoring',
  /** Git asks to replace a Pod (`tidb-gitops.io/replace`): its store or member is removed and its volumes deleted. */
  replace: 'replace',
  /** A component with one replica restarts: what it serves is down until its Pod is back. */
  singleReplicaRestart: 'single-replica-restart',
  /** Every TiKV restarts while there are no more stores than copies of each region: no spare store. */
  tikvNoSpareStore: 'tikv-no-spare-store',
  /** One change both scales and restarts components: the controller takes them in turn, one holding the other. */
  scaleAndRestart: 'scale-and-restart',
  /** An SqlUser or SqlRole leaves Git with `deletionPolicy: Delete`: the controller drops the account. */
  sqlAccountDropped: 'sql-account-dropped',
  /** A privilege of a kept SQL account is revoked: a grant removed or narrowed, or its grant option taken. */
  sqlPrivilegeRevoked: 'sql-privilege-revoked',
  /** A role is taken away from a kept SQL account. */
  sqlRoleRevoked: 'sql-role-revoked',
  /** An SQL user is locked (`ACCOUNT LOCK`): it can no longer log in. */
  sqlUserLocked: 'sql-user-locked',
  /** A resource group gets less (fewer RUs, a lower priority, no burst), or leaves Git with `deletionPolicy: Delete`. */
  resourceGroupLowered: 'resource-group-lowered',
  /** A Changefeed leaves Git with `deletionPolicy: Delete`: the controller removes it from TiCDC. */
  changefeedRemoved: 'changefeed-removed',
  /** A changefeed's sink URI points elsewhere: the new sink gets changes from the checkpoint on. */
  changefeedRepointed: 'changefeed-repointed',
  /** A changefeed is paused: its sink falls behind. */
  changefeedPaused: 'changefeed-paused',
} as const;

export type RiskId = (typeof RISK)[keyof typeof RISK];

/** How something changed between the old and the new manifests. */
export type ChangeKind = 'added' | 'removed' | 'changed';

/** One changed field, with old and new values where they are short enough to show. */
export interface FieldChange {
  /** Readable path, e.g. `containers[pd].image` (relative to the Pod template for restarts). */
  readonly path: string;
  readonly change: ChangeKind;
  /** The old value as one line; absent when the field is new or the value is too long to show. */
  readonly from?: string;
  /** The new value as one line; absent when the field is gone or the value is too long to show. */
  readonly to?: string;
}

/** A Pod restart that the change causes. */
export interface Restart {
  /**
   * Who restarts the Pods: `controller` (a rendered StatefulSet: the companion controller steps it one
   * Pod at a time), `statefulset` (a StatefulSet without the controller's annotations: Kubernetes rolls
   * it per its updateStrategy), `on-delete` (a rendered StatefulSet with updateStrategy OnDelete: a
   * Pod takes the new template only when it is deleted) or `deployment` (the Deployment replaces its Pods).
   */
  readonly by: 'controller' | 'statefulset' | 'on-delete' | 'deployment';
  /** The Pod template fields that changed. */
  readonly causes: readonly FieldChange[];
}

/** A container's image before and after; one side is absent for an added or removed container. */
export interface ImageChange {
  readonly container: string;
  readonly from?: string;
  readonly to?: string;
}

/** One dotted key of a TOML file in a component ConfigMap. */
export interface ConfigKeyChange {
  /** The ConfigMap data key holding the TOML, e.g. `config-file` or `proxy_templ.toml`. */
  readonly file: string;
  /** Dotted TOML key, e.g. `storage.block-cache.capacity-ratio`. */
  readonly key: string;
  readonly change: ChangeKind;
  /** The old value in TOML notation; absent for an added key or a value too long to show. */
  readonly from?: string;
  /** The new value in TOML notation; absent for a removed key or a value too long to show. */
  readonly to?: string;
  /** InPlace: the controller applies it to the running servers, which change it online (PD, TiKV). @default false */
  readonly online?: true;
}

/**
 * How a ConfigMap is updated: `RollingUpdate` names it `<cluster>-<component>-<hash>` (a change is a new
 * name, so a new Pod template), `InPlace` keeps `<cluster>-<component>`, `other` is any other name.
 */
export type ConfigStrategy = 'RollingUpdate' | 'InPlace' | 'other';

/** The change of one ConfigMap a component mounts. */
export interface ConfigChange {
  /** The old ConfigMap's name; absent when there was none. */
  readonly from?: string;
  /** The new ConfigMap's name; absent when there is none any more. */
  readonly to?: string;
  /** Strategy of the new ConfigMap (of the old one when it is removed). */
  readonly strategy: ConfigStrategy;
  /**
   * When the running processes get the new config: `rolling-restart` (the component restarts in this
   * change), `next-restart` (in place: Pods see the new file but the processes read it only when they
   * next start), `new-pods` (the component is new) or `controller` (the companion controller acts on it
   * within its next pass: the volume sizes).
   */
  readonly appliedBy: 'rolling-restart' | 'next-restart' | 'new-pods' | 'controller';
  readonly keys: readonly ConfigKeyChange[];
  /** Data keys holding scripts (e.g. `startup-script`) whose text changed. */
  readonly scripts: readonly string[];
  /** Other data keys that changed and are not TOML. */
  readonly otherData: readonly string[];
}

/** Everything that changes for one component of a cluster. */
export interface ComponentDiff {
  /** The `app.kubernetes.io/component` label: pd, tikv, tiflash, tidb, ticdc, pump, tiproxy, discovery. */
  readonly component: string;
  readonly change: ChangeKind;
  /** The component's StatefulSet (Deployment for discovery), as `Kind name`; absent when it has none. */
  readonly workload?: string;
  /** Set when the Pod template changes while the workload stays. */
  readonly restart?: Restart;
  /** Set when the desired replica count differs (and for added or removed components). */
  readonly replicas?: { readonly from?: number; readonly to?: number };
  readonly images: readonly ImageChange[];
  readonly config: readonly ConfigChange[];
  /** Keys of the controller settings annotation (`tidb-gitops.io/settings`) that changed. */
  readonly settings: readonly FieldChange[];
}

/** An object added, removed, replaced (a hash-named ConfigMap by its successor) or changed otherwise. */
export interface ObjectChange {
  readonly kind: string;
  readonly name: string;
  /** "" for objects without a namespace. */
  readonly namespace: string;
  /**
   * `kept`: only the old side has it, and the old side is live (`kubectl get -o yaml`): applying the new
   * manifests neither changes nor deletes it.
   */
  readonly change: ChangeKind | 'replaced' | 'kept';
  /** For `replaced`: the name of the object that takes its place. */
  readonly replacedBy?: string;
  /** For `changed`: the top-level fields that differ, e.g. `spec.ports`. */
  readonly fields?: readonly string[];
  /**
   * For `changed`: each field that differs with its old and new values, when every one of them is short
   * enough to show (`spec.maxUnavailable`: `1` -> `2`). @default none (too many or too long: `fields` only)
   */
  readonly values?: readonly FieldChange[];
}

/** A ResourceGroup or Changefeed added, changed or removed, as the controller is told of it. */
export interface DatabaseChange {
  readonly kind: 'ResourceGroup' | 'Changefeed';
  /** The document's `metadata.name`. */
  readonly document: string;
  /** The group's name, or the changefeed's id. */
  readonly name: string;
  readonly change: ChangeKind;
  /** For `changed`: what differs. @default [] */
  readonly fields?: readonly string[];
  /** What happens, when it is not what the change says (`kept in TiCDC`). @default none */
  readonly note?: string;
}

/** An SqlUser or SqlRole added, changed or removed, as the controller is told of it. */
export interface AccountChange {
  readonly kind: 'SqlUser' | 'SqlRole';
  /** The document's `metadata.name`. */
  readonly document: string;
  /** `'user'@'host'`. */
  readonly account: string;
  readonly change: ChangeKind;
  /** For `changed`: what differs (`grants`, `roles`, `locked`, `password Secret`...). @default [] */
  readonly fields?: readonly string[];
  /** What happens in the database, when it is not what the change says (`kept in the database`). @default none */
  readonly note?: string;
}

/** Something a reviewer should weigh before merging, in one sentence or two. */
export interface Risk {
  /** Stable kind of risk, for tests and tools. */
  readonly id: RiskId;
  /** The component it is about, when it is about one. */
  readonly component?: string;
  readonly message: string;
}

/** Everything that changes for one cluster. */
export interface ClusterDiff {
  /** `namespace/name`, or `name` without a namespace; "" for objects that belong to no cluster. */
  readonly id: string;
  /** "" when the objects have no namespace. */
  readonly namespace: string;
  /** The `app.kubernetes.io/instance` label; "" for objects that belong to no cluster. */
  readonly name: string;
  readonly change: ChangeKind;
  /** Components in the order pd, tikv, tiflash, tidb, ticdc, pump, tiproxy, discovery, then others by name. */
  readonly components: readonly ComponentDiff[];
  readonly objects: readonly ObjectChange[];
  /** The SQL accounts (SqlUser, SqlRole) added, changed and removed, roles first. @default [] */
  readonly accounts?: readonly AccountChange[];
  /** The resource groups and changefeeds added, changed and removed. @default [] */
  readonly database?: readonly DatabaseChange[];
  readonly risks: readonly Risk[];
  /**
   * Compared with live objects: the components whose workload stays and whose Pods are not restarted
   * by this change. Absent when the old side is not live.
   */
  readonly keepsPods?: readonly string[];
}

/** The whole comparison; `clusters` holds only clusters where something differs. */
export interface DiffReport {
  /** Ordered by namespace, then name; objects of no cluster last. */
  readonly clusters: readonly ClusterDiff[];
  /** True when any rendered object differs. */
  readonly changed: boolean;
  /** Number of risks over all clusters. */
  readonly riskCount: number;
  /** The old side came from the API server: the new side is compared as applied onto it. */
  readonly live?: boolean;
}
