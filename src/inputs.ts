/**
 * `tidb-gitops/inputs`: the inputs loaded and validated without cdk8s (which the constructs of
 * `tidb-gitops` need). Everything here is in the main entry too.
 */
import type { ParsedDocuments } from './tidbcluster/load';

export {
  loadClusterInputs,
  readClusterInputs,
  loadInputDocuments,
  InputError,
  type InputDocument,
  type ClusterInput,
  type ClusterInputs,
  type InputTexts,
  type ReadClusterOptions,
} from './load/clusters';
export { checkTidbCluster } from './tidbcluster/check';
export {
  loadTidbClusters,
  type LoadedCluster,
  type LoadResult,
  type ParsedDocuments,
  type LoadedDocument,
  type DocumentKind,
} from './tidbcluster/load';
/** @deprecated The same type under its former name: use {@link ParsedDocuments}. */
export type InputResult<T> = ParsedDocuments<T>;
export { resolveCluster, type ResolvedCluster, type ResolveOptions } from './tidbcluster/resolve';
export { SpecError, formatIssue, type SpecIssue, type SourceRef } from './tidbcluster/errors';
export { DEFAULTS, DEFAULTS_TABLE } from './tidbcluster/defaults';
export { ANNOTATION, LABEL, names, PORT, selectorLabels } from './tidbcluster/names';
export {
  CONTROLLER_ENV,
  CONTROLLER_HTTP,
  type ControllerClusterInfo,
  type SqlAccountInfo,
  type SqlAccountsInfo,
} from './tidbcluster/contract';
export type * from './tidbcluster/types';
export { DEFAULT_KUBE_VERSION, NEWEST_KUBE_MINOR, OLDEST_KUBE_MINOR, parseKubeVersion, type KubeTarget } from './tidbcluster/kube-version';
export { SETTINGS_API_VERSION, SETTINGS_ENV, SETTINGS_KIND, type RenderSettings } from './tidbcluster/settings';
/** The operator's documents of one text, without SqlUser and SqlRole: {@link loadInputDocuments} reads those too. */
export { loadInputs, type CompanionDocument } from './backup/companions';
export { linkOperations, type ClusterOperations, type Linked } from './backup/link';
export type { ResolvedOperation, ResolvedSchedule, ResolvedBackup, ResolvedRestore, BrJob, ClusterRef } from './backup/resolve';
export type { ResolvedStorage } from './backup/storage';
export type * from './backup/types';
export type * from './initializer/types';
export type * from './database/types';
export { DATABASE_API_VERSION, SQL_ROLE_KIND, SQL_USER_KIND } from './database/types';
