// First: a clear error where the peer dependencies the constructs need are missing.
import './base/peers';

export * from './inputs';
export { TidbCluster, type TidbClusterProps } from './render/cluster';
export { TidbClusterChart, type TidbClusterChartProps } from './render/chart';
export { DiscoveryComponent, type DiscoveryComponentProps } from './render/discovery';
export { PdComponent, type PdComponentProps } from './render/pd';
export { PdmsComponent, type PdmsComponentProps } from './render/pdms';
export { TikvComponent, type TikvComponentProps } from './render/tikv';
export { TidbComponent, type TidbComponentProps } from './render/tidb';
export { TiFlashComponent, type TiFlashComponentProps } from './render/tiflash';
export { TiCDCComponent, type TiCDCComponentProps } from './render/ticdc';
export { PumpComponent, type PumpComponentProps } from './render/pump';
export { TiProxyComponent, type TiProxyComponentProps } from './render/tiproxy';
export { VolumeSizesConfigMap, type VolumeSizesProps } from './render/volume-sizes';
export { renderClusters, type RenderedCluster } from './render/render';
export { toYamlStream } from './render/output';
export { ApiRefusalError, type Refusal } from './render/api-check';
export { BackupScheduleCronJob, type BackupScheduleProps } from './render/backup-schedule';
export { InitializerConfigMap, type InitializerProps } from './render/initializer';
