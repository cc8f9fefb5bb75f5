/**
 * PD start script (`pd_start_script.sh`). It waits for the pod's own peer DNS name, then decides how
 * the member starts: restart after a join (the `join` file pd-server wrote), restart with data (a
 * WAL exists: no flag needed), or fresh member (ask discovery, which answers `--initial-cluster` for
 * the one bootstrapping pod and `--join` for the others).
 *
 * With the script: its context (`pdScriptContext` builds it from the resolved spec) and the checks on it.
 */
import { PORT, names } from '../../tidbcluster/names';
import {
  argsLines,
  dataDir,
  digCheck,
  discoveryHelpers,
  domainSuffix,
  execServer,
  header,
  indent,
  ipMatchCheck,
  lines,
  podNameLine,
  preferredPdHosts,
  randomHelper,
  renderScript,
  waitLoop,
} from './common';
import { TLS_DIR } from '../tls';
import type { ResolvedCluster, ResolvedPD } from '../../tidbcluster/resolve';
import { assertValid, baseContext, checkInteger, commonErrors, dataSubDirErrors, type ScriptContext } from './base-context';

/** PD start script context. */
export interface PdScriptContext extends ScriptContext {
  /** `spec.pd.dataSubDir`: data dir is `/var/lib/pd/<dataSubDir>`. @default '' */
  readonly dataSubDir: string;
  /**
   * `spec.pd.startTimeout`, seconds to wait for the pod's DNS name (an integer >= 1; the operator
   * treats 0 as unset, so the resolver passes 30 for 0).
   * @default 30
   */
  readonly startTimeout: number;
  /**
   * `spec.pd.initWaitTime`, seconds the v2 DNS/IP-match wait sleeps before its first lookup.
   * @default 0
   */
  readonly initWaitTime: number;
  /** `spec.pd.startUpScriptVersion`: `v1` makes the v1 script wait with `dig` instead of `nslookup`. @default '' */
  readonly startUpScriptVersion: '' | 'v1';
  /**
   * `spec.pd.mode === 'ms'` with `spec.pdms` set: PD runs as the micro-service API server
   * (`services api`). The operator then always uses the v2 script, and waits for the DNS/IP match
   * unless `noWaitDns`.
   * @default false
   */
  readonly microserviceMode?: boolean;
}

/** Every problem with a PD context; empty when it can be rendered. */
export function pdContextErrors(ctx: PdScriptContext): string[] {
  const errors = [...commonErrors(ctx), ...dataSubDirErrors('dataSubDir', ctx.dataSubDir)];
  checkInteger(errors, 'startTimeout', ctx.startTimeout, 1);
  checkInteger(errors, 'initWaitTime', ctx.initWaitTime, 0);
  return errors;
}

/** PD's context from the resolved spec. */
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

const DATA_ROOT = '/var/lib/pd';
const TIMEOUT_MESSAGE = 'waiting for pd cluster ready timeout';

/** Renders the PD start script. Micro-service mode always renders v2, as the operator does. */
export function pdStartScript(ctx: PdScriptContext): string {
  const effective: PdScriptContext = ctx.microserviceMode ? { ...ctx, version: 'v2' } : ctx;
  assertValid('pd', pdContextErrors(effective));
  return effective.version === 'v2' ? pdV2(effective) : pdV1(effective);
}

/** v1 builds names from the pod's environment (PEER_SERVICE_NAME, NAMESPACE) at run time. */
function pdV1(ctx: PdScriptContext): string {
  const podNames = lines(
    '# Names come from the pod environment: PEER_SERVICE_NAME=<cluster>-pd-peer, NAMESPACE.',
    podNameLine('POD_NAME'),
    'cluster_name=${PEER_SERVICE_NAME%-pd-peer}',
    `domain="\${POD_NAME}.\${PEER_SERVICE_NAME}.\${NAMESPACE}.svc${domainSuffix(ctx)}"`,
    `discovery_url="\${cluster_name}-discovery.\${NAMESPACE}.svc:${PORT.discovery}"`,
    `PD_DATA_DIR=${dataDir(DATA_ROOT, ctx.dataSubDir)}`,
  );
  const check = ctx.startUpScriptVersion === 'v1' ? digCheck('domain') : nslookupCheck('domain');
  const dnsWait = lines(
    '# Peers reach this member by its DNS name: wait until it resolves.',
    waitLoop(ctx.startTimeout, TIMEOUT_MESSAGE, check),
  );
  return renderScript([
    header('pd-server', 'v1'),
    lines(randomHelper(), discoveryHelpers(ctx, TLS_DIR.pd)),
    podNames,
    dnsWait,
    argsLines(pdFlags(ctx, '${domain}', '${POD_NAME}')),
    joinOrDiscover('${domain}', '${discovery_url}'),
    startPdServer(),
  ]);
}

/** v2 bakes the cluster name and namespace in. */
function pdV2(ctx: PdScriptContext): string {
  const namespace = ctx.namespace as string;
  const peer = names.peerService(ctx.clusterName, 'pd');
  const hosts = preferredPdHosts(ctx);
  const join = hosts
    ? lines(
        '# PreferPDAddressesOverDiscovery: join the configured PD members directly.',
        `ARGS="\${ARGS} --join=${hosts.map((h) => `${ctx.scheme}://${h}:${PORT.pdPeer}`).join(',')}"`,
      )
    : joinOrDiscover('${PD_DOMAIN}', `${names.discovery(ctx.clusterName)}.${namespace}:${PORT.discovery}`);
  return renderScript([
    header('pd-server', 'v2'),
    lines(randomHelper(), !hosts && discoveryHelpers(ctx, TLS_DIR.pd)),
    [
      ...podNameLine('PD_POD_NAME'),
      `PD_DOMAIN=\${PD_POD_NAME}.${peer}.${namespace}.svc${domainSuffix(ctx)}`,
      `PD_DATA_DIR=${dataDir(DATA_ROOT, ctx.dataSubDir)}`,
    ],
    dnsWaitV2(ctx),
    argsLines(lines(ctx.microserviceMode && 'services api', pdFlags(ctx, '${PD_DOMAIN}', '${PD_POD_NAME}'))),
    join,
    startPdServer(),
  ]);
}

/** The member is named by its FQDN when names must be unique beyond one Kubernetes cluster. */
function pdFlags(ctx: PdScriptContext, domain: string, podName: string): string[] {
  const s = ctx.scheme;
  const name = ctx.acrossK8s || ctx.clusterDomain ? domain : podName;
  return [
    '--data-dir=${PD_DATA_DIR}',
    `--name=${name}`,
    `--peer-urls=${s}://0.0.0.0:${PORT.pdPeer}`,
    `--advertise-peer-urls=${s}://${domain}:${PORT.pdPeer}`,
    `--client-urls=${s}://0.0.0.0:${PORT.pdClient}`,
    `--advertise-client-urls=${s}://${domain}:${PORT.pdClient}`,
    '--config=/etc/pd/pd.toml',
  ];
}

/** The v1 default check: nslookup exits 0 once the name resolves. */
function nslookupCheck(domainVar: string): string[] {
  const d = `\${${domainVar}}`;
  return [
    `if nslookup "${d}" 2>/dev/null; then`,
    `    echo "nslookup ${d} succeeded"`,
    '    break',
    'fi',
    `echo "nslookup ${d} failed" >&2`,
  ];
}

/** v2: dig until resolvable, or until it resolves to this pod (IP match), or no wait at all. */
function dnsWaitV2(ctx: PdScriptContext): string[] {
  const flags = ctx.featureFlags;
  if (flags.noWaitDns) return [];
  const ipMatch = flags.waitForDnsNameIpMatch || ctx.microserviceMode === true;
  return pdDomainWait(ctx, ipMatch, 'Peers reach this member');
}

/**
 * The wait on `$PD_DOMAIN` of PD's v2 script and of its micro-services' script: dig until it
 * resolves, or (`ipMatch`) until it resolves to this pod, after `initWaitTime`. `who` says why.
 */
export function pdDomainWait(ctx: Pick<PdScriptContext, 'startTimeout' | 'initWaitTime'>, ipMatch: boolean, who: string): string[] {
  if (!ipMatch) {
    return lines(`# ${who} by its DNS name: wait until it resolves.`, waitLoop(ctx.startTimeout, TIMEOUT_MESSAGE, digCheck('PD_DOMAIN')));
  }
  return lines(
    '# WaitForDnsNameIpMatch: wait until the DNS name resolves to this pod, not to a previous one.',
    ctx.initWaitTime > 0 && ['# spec.pd.initWaitTime: let a stale record expire first.', `sleep ${ctx.initWaitTime}`],
    waitLoop(ctx.startTimeout, 'waiting for cluster ready timeout', ipMatchCheck('PD_DOMAIN', 'dig')),
  );
}

/** Restart after join, restart with data, or ask discovery how a fresh member starts. */
function joinOrDiscover(domain: string, discoveryAddr: string): string[] {
  return [
    'if [ -f "${PD_DATA_DIR}/join" ]; then',
    '    # pd-server saved the members it joined as name=url,name=url; --join takes the URLs.',
    "    join=$(tr ',' '\\n' <\"${PD_DATA_DIR}/join\" | awk -F= '{ print $2 }' | tr '\\n' ',')",
    '    join=${join%,}',
    '    ARGS="${ARGS} --join=${join}"',
    'elif [ ! -d "${PD_DATA_DIR}/member/wal" ]; then',
    ...indent([
      '# A fresh member: discovery answers --initial-cluster (bootstrap) or --join.',
      `encoded_domain_url=$(discovery_encode "${domain}:${PORT.pdPeer}")`,
      `until result=$(discovery_get "${discoveryAddr}/new/\${encoded_domain_url}"); do`,
      '    echo "waiting for discovery service to return start args ..."',
      '    sleep "$(random_below 5)"',
      'done',
      'ARGS="${ARGS} ${result}"',
    ]),
    'fi',
  ];
}

/** A random delay spreads the members' starts, as the operator's script does (its micro-services' too). */
export function startPdServer(): string[] {
  return lines('echo "starting pd-server ..."', 'sleep "$(random_below 10)"', execServer('/pd-server'));
}
