/**
 * `tidb-gitops/inputs`: the inputs loaded and validated without cdk8s (which the constructs of
 * `tidb-gitops` need). Everything here is in the main entry too.
 */
export { loadClusterInputs, readClusterInputs, InputError, type ClusterInput, type ClusterInputs, type InputTexts, type ReadClusterOptions } from './load/clusters';
export { checkTidbCluster } from './tidbcluster/check';
export { loadTidbClusters, type LoadedCluster, type LoadResult, type InputResult, type LoadedDocument, type DocumentKind } from './tidbcluster/load';
export { resolveCluster, type ResolvedCluster, type ResolveOptions } from './tidbcluster/resolve';
export { SpecError, formatIssue, type SpecIssue, type SourceRef } from './tidbcluster/errors';
export { DEFAULTS, DEFAULTS_TABLE } from './tidbcluster/defaults';
export { ANNOTATION, CONTROLLER_ENV, CONTROLLER_HTTP, LABEL, names, PORT, selectorLabels, type ControllerClusterInfo } from './tidbcluster/names';
export type * from './tidbcluster/types';
export { DEFAULT_KUBE_VERSION, NEWEST_KUBE_MINOR, OLDEST_KUBE_MINOR, parseKubeVersion, type KubeTarget } from './tidbcluster/kube-version';
export { SETTINGS_API_VERSION, SETTINGS_ENV, SETTINGS_KIND, type RenderSettings } from './tidbcluster/settings';
export { loadInputs, type CompanionDocument } from './backup/load';
export { linkOperations, type ClusterOperations, type Linked } from './backup/link';
export type { ResolvedOperation, ResolvedSchedule, ResolvedBackup, ResolvedRestore, BrJob, ClusterRef } from './backup/resolve';
export type { ResolvedStorage } from './backup/storage';
export type * from './backup/types';
export type * from './initializer/types';
