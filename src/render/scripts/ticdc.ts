/**
 * TiCDC start command (the inline `/bin/sh -c` script of the `ticdc` container): works out the PD
 * endpoints and the advertised address, then execs `cdc server`.
 *
 * v1 is not given the annotations volume, so it has no debug-mode header; it reads POD_NAME,
 * HEADLESS_SERVICE_NAME and NAMESPACE from the pod environment. v2 bakes names in and has the header.
 *
 * With the script: its context (`ticdcScriptContext` builds it from the resolved spec) and the checks on it.
 */
import { PORT, names } from '../../tidbcluster/names';
import {
  argsLines,
  discoveryHelpers,
  domainSuffix,
  execServer,
  header,
  lines,
  randomHelper,
  renderScript,
  verifyPdEndpoints,
} from './common';
import { TLS_DIR } from '../tls';
import type { ResolvedCluster } from '../../tidbcluster/resolve';
import type { ResolvedTiCDC } from '../../tidbcluster/ticdc';
import { assertValid, baseContext, commonErrors, type ScriptContext } from './base-context';

/** Where TiCDC's cluster certificate is mounted; also its discovery client certificate. */
export const TICDC_CONFIG_FILE = '/etc/ticdc/ticdc.toml';

/** TiCDC start script context. TLS flags follow {@link ScriptContext.scheme} (`https` = cluster TLS). */
export interface TiCDCScriptContext extends ScriptContext {
  /** `--gc-ttl`, seconds (config `gc-ttl`). @default 86400 */
  readonly gcTTL: number;
  /** `--log-level` (config `log-level`). @default 'info' */
  readonly logLevel: string;
  /** `--log-file` (config `log-file`); empty means stderr. @default '' */
  readonly logFile: string;
  /** The ConfigMap exists (the config has more than the flag keys): adds `--config`. @default false */
  readonly configFile: boolean;
}

const LOG_LEVEL = /^[A-Za-z]+$/;
const LOG_FILE = /^[A-Za-z0-9._/-]*$/;

/** Every problem with a TiCDC context; empty when it can be rendered. */
export function ticdcContextErrors(ctx: TiCDCScriptContext): string[] {
  // TiDB's check without plugins or arguments is exactly the check every script context shares.
  const errors = commonErrors(ctx);
  if (!Number.isInteger(ctx.gcTTL) || ctx.gcTTL < 0) errors.push(`gcTTL: expected an integer >= 0, got ${JSON.stringify(ctx.gcTTL)}`);
  if (!LOG_LEVEL.test(ctx.logLevel)) errors.push(`logLevel: ${JSON.stringify(ctx.logLevel)} is not a log level such as info`);
  if (!LOG_FILE.test(ctx.logFile)) errors.push(`logFile: ${JSON.stringify(ctx.logFile)} is not a path of letters, digits, ., _, / and -`);
  return errors;
}

/** TiCDC's context from the resolved spec. */
export function ticdcScriptContext(cluster: ResolvedCluster, ticdc: ResolvedTiCDC): TiCDCScriptContext {
  return {
    ...baseContext(cluster),
    gcTTL: ticdc.gcTTL,
    logLevel: ticdc.logLevel,
    logFile: ticdc.logFile,
    configFile: ticdc.configFile,
  };
}

/** Renders the TiCDC start command. */
export function ticdcStartScript(ctx: TiCDCScriptContext): string {
  assertValid('ticdc', ticdcContextErrors(ctx));
  return ctx.version === 'v2' ? ticdcV2(ctx) : ticdcV1(ctx);
}

const tlsFlags = (ctx: TiCDCScriptContext) =>
  ctx.scheme === 'https' && [`--ca=${TLS_DIR.ticdc}/ca.crt`, `--cert=${TLS_DIR.ticdc}/tls.crt`, `--key=${TLS_DIR.ticdc}/tls.key`];

const logFlags = (ctx: TiCDCScriptContext) => [`--gc-ttl=${ctx.gcTTL}`, `--log-file=${ctx.logFile}`, `--log-level=${ctx.logLevel}`];

/** PD of this cluster, or of the cluster named by `spec.cluster` when this one has none; with scheme. */
function localPd(ctx: TiCDCScriptContext): string {
  return `${ctx.scheme}://${names.service(ctx.remotePd?.name ?? ctx.clusterName, 'pd')}:${PORT.pdClient}`;
}

/** acrossK8s: discovery `/verify` answers the PD URLs (scheme kept) into `$result`. */
function verify(ctx: TiCDCScriptContext, discoveryAddr: string): string[] {
  return verifyPdEndpoints(`${ctx.scheme}://${names.service(ctx.clusterName, 'pd')}:${PORT.pdClient}`, discoveryAddr, false);
}

function v1Prelude(): string[] {
  return [
    '# Starts TiCDC (cdc server) in a tidb-gitops pod (start script v1). POSIX sh.',
    '# POD_NAME, HEADLESS_SERVICE_NAME and NAMESPACE come from the pod environment.',
    'set -u',
  ];
}

/** v1: flags in the operator's order (TLS flags before `--pd`). */
function ticdcV1(ctx: TiCDCScriptContext): string {
  const pd = ctx.acrossK8s ? '${result}' : localPd(ctx);
  return renderScript([
    v1Prelude(),
    ctx.acrossK8s &&
      lines(
        randomHelper(),
        discoveryHelpers(ctx, TLS_DIR.ticdc),
        verify(ctx, `${names.discovery(ctx.clusterName)}.\${NAMESPACE}:${PORT.discovery}`),
      ),
    argsLines(
      lines(
        `--addr=0.0.0.0:${PORT.ticdc}`,
        `--advertise-addr=\${POD_NAME}.\${HEADLESS_SERVICE_NAME}.\${NAMESPACE}.svc${domainSuffix(ctx)}:${PORT.ticdc}`,
        logFlags(ctx),
        tlsFlags(ctx),
        `--pd=${pd}`,
        ctx.configFile && `--config=${TICDC_CONFIG_FILE}`,
      ),
    ),
    execServer('/cdc server'),
  ]);
}

/**
 * v2: names baked in; with `PreferPDAddressesOverDiscovery`, `spec.pdAddresses` are the PD endpoints
 * exactly as given (acrossK8s and `spec.cluster` then play no part).
 */
function ticdcV2(ctx: TiCDCScriptContext): string {
  const namespace = ctx.namespace as string;
  const preferred = ctx.featureFlags.preferPdAddressesOverDiscovery && ctx.pdAddresses.length > 0;
  const across = !preferred && ctx.acrossK8s;
  const pd = preferred ? ctx.pdAddresses.join(',') : across ? '${result}' : localPd(ctx);
  const peer = names.peerService(ctx.clusterName, 'ticdc');
  return renderScript([
    header('TiCDC (cdc server)', 'v2'),
    across && lines(randomHelper(), discoveryHelpers(ctx, TLS_DIR.ticdc)),
    ['TICDC_POD_NAME=${POD_NAME}'],
    across && verify(ctx, `${names.discovery(ctx.clusterName)}.${namespace}:${PORT.discovery}`),
    argsLines(
      lines(
        `--addr=0.0.0.0:${PORT.ticdc}`,
        `--advertise-addr=\${TICDC_POD_NAME}.${peer}.${namespace}.svc${domainSuffix(ctx)}:${PORT.ticdc}`,
        logFlags(ctx),
        `--pd=${pd}`,
        tlsFlags(ctx),
        ctx.configFile && `--config=${TICDC_CONFIG_FILE}`,
      ),
    ),
    lines('echo "start ticdc-server ..."', execServer('/cdc server')),
  ]);
}
