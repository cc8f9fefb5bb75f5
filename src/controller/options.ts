/**
 * Options of `tidb-gitops controller`: everything comes from the Deployment the renderer writes
 * (environment) and can be overridden with flags.
 */
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { names, PORT } from '../tidbcluster/names';
import { CONTROLLER_ENV } from '../tidbcluster/contract';
import { tlsFromDir } from './clients/http';
import type { ControllerOptions } from './manager';
import { parseClusterInfo, type ClusterInfo } from './model/cluster';
import { parseDuration } from './model/values';
import { DEFAULT_TIMING } from './runtime/leader';
import { isLevel, type Level } from './runtime/log';

export const CONTROLLER_USAGE = `Usage: tidb-gitops controller [options]

Runs the companion controller of one cluster: PD discovery on --discovery-port,
replicas and rolling-upgrade stepping of the cluster's StatefulSets, health and
Prometheus metrics on --metrics-port. The rendered <cluster>-discovery
Deployment runs it with everything set through its environment.

Every option may also come from the environment as TIDB_GITOPS_<OPTION>, e.g.
TIDB_GITOPS_PD_FAILOVER_PERIOD=10m (set it in spec.discovery.env); a flag wins.

Options (other environment variables in brackets):
  --cluster-json JSON      What the renderer says about the cluster [TIDB_GITOPS_CLUSTER]
  --namespace NS           The cluster's namespace [MY_POD_NAMESPACE]
  --identity NAME          This replica's name in the leader Lease [MY_POD_NAME, else the host name]
  --kubeconfig FILE        Kubeconfig to use [KUBECONFIG, else the in-cluster service account]
  --pd-url URL             PD client URL (default: <scheme>://<cluster>-pd.<namespace>:2379)
  --pd-tls-dir DIR         ca.crt, tls.crt, tls.key for PD over TLS (default /var/lib/cluster-client-tls)
  --discovery-tls-dir DIR  Serve discovery over mTLS with these files (default /var/lib/discovery-tls when enabled)
  --listen-address ADDR    Address to bind (default 0.0.0.0)
  --discovery-port N       Discovery port (default ${PORT.discovery})
  --metrics-port N         /metrics, /healthz and /readyz port (default ${PORT.discoveryMetrics})
  --resync DURATION        How often an idle cluster is looked at again (default 30s)
  --requeue DURATION       Longest wait between passes while an operation is under
                           way; right after an action the next pass comes within
                           100ms (default 2s)
  --lease-duration D       Leader Lease duration (default 15s)
  --lease-renew D          Lease renewal period (default 5s)
  --renew-deadline D       A leader that cannot renew for this long steps down (default 10s)
  --no-source-check        Do not require discovery callers to come from their Pod's address
  --auto-failover BOOL     Add failover replicas for failed PD members, TiKV and
                           TiFlash stores and TiDB Pods (default true)
  --pd-failover-period D   How long a PD member is unhealthy before failover (default 5m)
  --tikv-failover-period D    ... a TiKV store is Down (default 5m)
  --tiflash-failover-period D ... a TiFlash store is Down (default 5m)
  --tidb-failover-period D    ... a TiDB Pod is not Ready (default 5m)
  --config-grace D         Keep an unused config revision (hash-named ConfigMap) newer
                           than the one in use this long, as Git may be applying it
                           (default 1h)
  --stuck-after D          An operation waiting this long on one reason is reported
                           stuck: status, log and an OperationStuck event (default 30s)
  --log-level LEVEL        debug, info, warn or error (default info)
`;

export interface ParsedControllerArgs {
  readonly options?: Omit<ControllerOptions, 'log'> & { logLevel: Level };
  readonly help?: boolean;
  /** A usage error: the flags or environment are wrong. */
  readonly error?: string;
  /** The options are fine but the controller cannot run here (files it needs are missing). */
  readonly startError?: string;
}

/** Which of a TLS directory's files are missing, in words, or undefined when all three are there. */
function tlsFilesMissing(dir: string): string | undefined {
  if (!existsSync(dir)) return 'the directory does not exist';
  const missing = ['ca.crt', 'tls.crt', 'tls.key'].filter((f) => !existsSync(join(dir, f)));
  return missing.length === 0 ? undefined : `${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} missing`;
}

/** Reads flags and environment; returns options or the error to print. */
export function parseControllerArgs(args: readonly string[], env: NodeJS.ProcessEnv): ParsedControllerArgs {
  const flags = new Map<string, string>();
  const booleans = new Set(['--no-source-check', '--help', '-h']);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (booleans.has(arg)) {
      flags.set(arg, 'true');
      continue;
    }
    const eq = arg.indexOf('=');
    const [flag, value] = arg.startsWith('--') && eq > 0 ? [arg.slice(0, eq), arg.slice(eq + 1)] : [arg, args[++i]];
    if (!CONTROLLER_USAGE.includes(`  ${flag} `)) return { error: `unknown option ${JSON.stringify(flag)}` };
    if (value === undefined) return { error: `${flag} needs a value` };
    flags.set(flag, value);
  }
  if (flags.has('--help') || flags.has('-h')) return { help: true };
  // TIDB_GITOPS_<FLAG> stands in for a flag not given (TIDB_GITOPS_CLUSTER is the cluster, not a flag).
  for (const [key, value] of Object.entries(env)) {
    const m = /^TIDB_GITOPS_([A-Z0-9_]+)$/.exec(key);
    if (!m || value === undefined || key === CONTROLLER_ENV.cluster) continue;
    const flag = `--${m[1].toLowerCase().replace(/_/g, '-')}`;
    if (!CONTROLLER_USAGE.includes(`  ${flag} `)) return { error: `${key}: there is no option ${flag}` };
    if (!flags.has(flag)) flags.set(flag, booleans.has(flag) ? String(value === 'true' || value === '1') : value);
  }
  if (flags.get('--no-source-check') === 'false') flags.delete('--no-source-check');

  const namespace = flags.get('--namespace') ?? env[CONTROLLER_ENV.podNamespace];
  if (!namespace) return { error: 'the namespace is not known: set --namespace or MY_POD_NAMESPACE' };
  const json = flags.get('--cluster-json') ?? env[CONTROLLER_ENV.cluster];
  if (!json) return { error: 'the cluster is not known: set --cluster-json or TIDB_GITOPS_CLUSTER (the rendered Deployment sets it)' };
  let cluster: ClusterInfo;
  try {
    cluster = parseClusterInfo(json, namespace);
  } catch (err) {
    return { error: (err as Error).message };
  }
  const durations: Record<string, number> = {};
  for (const [flag, dflt] of [
    ['--resync', '30s'],
    ['--requeue', '2s'],
    ['--lease-duration', `${DEFAULT_TIMING.leaseMs}ms`],
    ['--lease-renew', `${DEFAULT_TIMING.renewMs}ms`],
    ['--renew-deadline', `${DEFAULT_TIMING.renewDeadlineMs}ms`],
    ['--pd-failover-period', '5m'],
    ['--tikv-failover-period', '5m'],
    ['--tiflash-failover-period', '5m'],
    ['--tidb-failover-period', '5m'],
    ['--config-grace', '1h'],
    ['--stuck-after', '30s'],
  ] as const) {
    const text = flags.get(flag) ?? dflt;
    const ms = parseDuration(text);
    if (ms === undefined || ms <= 0) return { error: `${flag}: ${JSON.stringify(text)} is not a duration such as 500ms, 30s or 1m` };
    durations[flag] = ms;
  }
  const ports: Record<string, number> = {};
  for (const [flag, dflt] of [
    ['--discovery-port', PORT.discovery],
    ['--metrics-port', PORT.discoveryMetrics],
  ] as const) {
    const text = flags.get(flag) ?? String(dflt);
    if (!/^\d+$/.test(text) || Number(text) > 65535) return { error: `${flag}: ${JSON.stringify(text)} is not a port number` };
    ports[flag] = Number(text);
  }
  const autoFailover = flags.get('--auto-failover') ?? 'true';
  if (autoFailover !== 'true' && autoFailover !== 'false')
    return { error: `--auto-failover: expected true or false, got ${JSON.stringify(autoFailover)}` };
  const logLevel = flags.get('--log-level') ?? 'info';
  if (!isLevel(logLevel)) return { error: `--log-level: expected debug, info, warn or error, got ${JSON.stringify(logLevel)}` };

  const tlsDir = flags.get('--pd-tls-dir') ?? '/var/lib/cluster-client-tls';
  const discoveryTlsDir = flags.get('--discovery-tls-dir') ?? (cluster.discoveryMtls ? '/var/lib/discovery-tls' : undefined);
  let pdTls: ControllerOptions['pdTls'];
  let discoveryTls: ControllerOptions['discoveryTls'];
  // Without its certificate every PD call would fail its TLS handshake: say so once, at start-up.
  if (cluster.tls) {
    const missing = tlsFilesMissing(tlsDir);
    if (missing)
      return {
        startError: `cluster TLS is on (spec.tlsCluster.enabled), but ${missing} in ${tlsDir}: the controller needs the client certificate of the Secret ${names.clusterClientSecret(cluster.name)} there (the rendered Deployment mounts it; check that the Secret exists and has ca.crt, tls.crt and tls.key), or another directory named with --pd-tls-dir`,
      };
  }
  if (discoveryTlsDir) {
    const missing = tlsFilesMissing(discoveryTlsDir);
    if (missing)
      return {
        startError: `discovery mTLS is on (spec.tlsCluster.enableDiscoveryMTLS), but ${missing} in ${discoveryTlsDir}: the controller serves discovery with the Secret ${names.discoverySecret(cluster.name)} mounted there, or the directory named with --discovery-tls-dir`,
      };
  }
  try {
    if (cluster.tls) pdTls = tlsFromDir(tlsDir);
    if (discoveryTlsDir) discoveryTls = tlsFromDir(discoveryTlsDir);
  } catch (err) {
    return { startError: `cannot read TLS files: ${(err as Error).message}` };
  }
  return {
    options: {
      cluster,
      identity: flags.get('--identity') ?? env[CONTROLLER_ENV.podName] ?? hostname(),
      kubeconfig: flags.get('--kubeconfig'),
      pdUrls: flags.has('--pd-url') ? [flags.get('--pd-url')!] : defaultPdUrls(cluster),
      pdTls,
      discoveryTls,
      host: flags.get('--listen-address') ?? '0.0.0.0',
      discoveryPort: ports['--discovery-port'],
      metricsPort: ports['--metrics-port'],
      resyncMs: durations['--resync'],
      busyRequeueMs: durations['--requeue'],
      election: {
        leaseMs: durations['--lease-duration'],
        renewMs: durations['--lease-renew'],
        renewDeadlineMs: durations['--renew-deadline'],
      },
      checkSource: !flags.has('--no-source-check'),
      autoFailover: autoFailover === 'true',
      failoverPeriodMs: {
        pd: durations['--pd-failover-period'],
        tikv: durations['--tikv-failover-period'],
        tiflash: durations['--tiflash-failover-period'],
        tidb: durations['--tidb-failover-period'],
      },
      configGraceMs: durations['--config-grace'],
      stuckAfterMs: durations['--stuck-after'],
      logLevel,
    },
  };
}

/** Where PD answers, as the operator addresses it: the local PD Service, a referenced cluster's, then pdAddresses. */
export function defaultPdUrls(c: ClusterInfo): string[] {
  const scheme = c.tls ? 'https' : 'http';
  const suffix = (ns: string, domain: string) => (domain ? `${ns}.svc.${domain}` : ns);
  const urls: string[] = [];
  const pd = (cluster: string, ns: string, domain: string) =>
    `${scheme}://${names.service(cluster, 'pd')}.${suffix(ns, domain)}:${PORT.pdClient}`;
  if (c.components.includes('pd')) urls.push(pd(c.name, c.namespace, c.clusterDomain));
  if (c.cluster) urls.push(pd(c.cluster.name, c.cluster.namespace || c.namespace, c.cluster.clusterDomain));
  urls.push(...c.pdAddresses);
  if (urls.length === 0) urls.push(pd(c.name, c.namespace, c.clusterDomain));
  return urls;
}
