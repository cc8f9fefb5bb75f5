/** Resolved spec -> start-script contexts (the scripts themselves are pure functions in `scripts/`). */
import type { ResolvedCluster, ResolvedPD, ResolvedPdms, ResolvedTiDB, ResolvedTiKV } from '../tidbcluster/resolve';
import type { PdmsScriptContext, PdScriptContext, ScriptContext, TidbScriptContext, TikvScriptContext } from './scripts';

/** The fields every component's script context shares. */
export function baseContext(cluster: ResolvedCluster): ScriptContext {
  return {
    clusterName: cluster.name,
    namespace: cluster.namespace,
    clusterDomain: cluster.clusterDomain,
    scheme: cluster.scheme,
    acrossK8s: cluster.acrossK8s,
    version: cluster.startScriptVersion,
    featureFlags: cluster.featureFlags,
    pdAddresses: cluster.pdAddresses,
    discoveryMtls: cluster.discoveryMtls,
    // Another cluster's PD only stands in when this one has none.
    ...(!cluster.pd && cluster.joinCluster && { remotePd: { name: cluster.joinCluster.name } }),
    preferIPv6: cluster.preferIPv6,
  };
}

export function pdScriptContext(cluster: ResolvedCluster, pd: ResolvedPD): PdScriptContext {
  return {
    ...baseContext(cluster),
    dataSubDir: pd.dataSubDir,
    startTimeout: pd.startTimeout,
    initWaitTime: pd.initWaitTime,
    startUpScriptVersion: pd.startUpScriptVersion,
    // With its micro-services, PD runs as their API server (the resolver has checked mode: ms).
    microserviceMode: cluster.tso !== undefined || cluster.scheduling !== undefined,
  };
}

/** A micro-service's script waits as PD's does (spec.pd's timeouts); `withName` from its image version. */
export function pdmsScriptContext(cluster: ResolvedCluster, pdms: ResolvedPdms, withName: boolean): PdmsScriptContext {
  return {
    ...baseContext(cluster),
    service: pdms.kind,
    withName,
    startTimeout: cluster.pd!.startTimeout,
    initWaitTime: cluster.pd!.initWaitTime,
  };
}

export function tikvScriptContext(cluster: ResolvedCluster, tikv: ResolvedTiKV): TikvScriptContext {
  return {
    ...baseContext(cluster),
    dataSubDir: tikv.dataSubDir,
    enableDynamicConfiguration: cluster.enableDynamicConfiguration,
    startTimeout: tikv.startTimeout,
  };
}

/** The slow-log file is read from `$SLOW_LOG_FILE` at run time, so it is not part of the context. */
export function tidbScriptContext(cluster: ResolvedCluster, tidb: ResolvedTiDB): TidbScriptContext {
  return {
    ...baseContext(cluster),
    binlogEnabled: tidb.binlogEnabled,
    plugins: tidb.plugins,
    arguments: tidb.arguments,
  };
}
