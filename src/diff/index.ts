/** The impact report of a change: rendered objects -> model -> structured changes and risks -> Markdown. */
export * from './report';
export { DEFAULT_MAX_REPLICAS, pdMaxReplicas } from './risks';
export {
  buildModel,
  COMPONENT_ORDER,
  componentTitle,
  type ClusterModel,
  type ComponentModel,
  type ConfigMapFacts,
  type KubeObject,
  type Model,
} from './model';
export { compareModels, configPairs, exitCodeFor } from './compare';
export { diffConfigData, flattenToml, type DataDiff } from './config';
export { loadManifests, type LoadedManifests, type ManifestText } from './load';
export { NO_CHANGES, summaryLine, toMarkdown } from './markdown';
export { readSide, repoPath, type SideResult, type SourceOptions } from './sources';
export { compareVersions, imageVersion, type SemVer } from './version';
export { diffValues, formatPath, type PathStep, type ValueChange } from './values';
