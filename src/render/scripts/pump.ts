/**
 * Pump start command (the inline `/bin/sh -c` script of the `pump` container).
 *
 * The advertised host is `$HOSTNAME.<cluster>-pump[.<ns>.svc[.<domain>]]`: the namespace part only with
 * a cluster domain or acrossK8s. It is baked in, as the operator does (its Pump pods have no NAMESPACE
 * env); only a v1 script rendered without a namespace reads `$NAMESPACE`, which the StatefulSet then
 * sets. With hostNetwork the StatefulSet sets HOSTNAME to the pod name.
 *
 * v1 runs pump as a child and, when it exits 0 (it was taken offline, `binlogctl` / scale-in), keeps the
 * container alive so that the StatefulSet does not start it again. v2 execs pump.
 *
 * With the script: its context (`pumpScriptContext` builds it from the resolved spec) and the checks on it.
 */
import { PORT, names } from '../../tidbcluster/names';
import { argsLines, discoveryHelpers, execServer, header, lines, randomHelper, renderScript, verifyPdEndpoints } from './common';
import { TLS_DIR } from '../tls';
import type { ResolvedCluster } from '../../tidbcluster/resolve';
import type { ResolvedPump } from '../../tidbcluster/pump';
import { assertValid, baseContext, commonErrors, type ScriptContext } from './base-context';

/** Where Pump's cluster certificate is mounted; also its discovery client certificate. */

/** Pump start script context. */
export interface PumpScriptContext extends ScriptContext {
  /** `-L` (config `log-level`). @default 'info' */
  readonly logLevel: string;
}

/** Every problem with a Pump context; empty when it can be rendered. */
export function pumpContextErrors(ctx: PumpScriptContext): string[] {
  // TiDB's check without plugins or arguments is exactly the check every script context shares.
  const errors = commonErrors(ctx);
  if (!/^[A-Za-z]+$/.test(ctx.logLevel)) errors.push(`logLevel: ${JSON.stringify(ctx.logLevel)} is not a log level such as info`);
  return errors;
}

/** Pump's context from the resolved spec. */
export function pumpScriptContext(cluster: ResolvedCluster, pump: ResolvedPump): PumpScriptContext {
  return { ...baseContext(cluster), logLevel: pump.logLevel };
}

/** Renders the Pump start command. */
export function pumpStartScript(ctx: PumpScriptContext): string {
  assertValid('pump', pumpContextErrors(ctx));
  return ctx.version === 'v2' ? pumpV2(ctx) : pumpV1(ctx);
}

/** Does the script name the namespace (advertised address, discovery)? Then v1 may read `$NAMESPACE`. */
export function pumpScriptNamesNamespace(ctx: Pick<PumpScriptContext, 'acrossK8s' | 'clusterDomain'>): boolean {
  return ctx.acrossK8s || !!ctx.clusterDomain;
}

/** The namespace as baked in, or `${NAMESPACE}` from the pod environment (v1 rendered without one). */
function ns(ctx: PumpScriptContext): string {
  return ctx.namespace ?? '${NAMESPACE}';
}

/** `.<ns>.svc.<domain>` with a cluster domain, `.<ns>.svc` across Kubernetes clusters, else nothing. */
function zone(ctx: PumpScriptContext): string {
  return names.pumpAdvertiseZone(ns(ctx), ctx.clusterDomain ?? '', ctx.acrossK8s);
}

function pdUrl(ctx: PumpScriptContext): string {
  if (ctx.acrossK8s) return '${result}';
  return `${ctx.scheme}://${names.service(ctx.remotePd?.name ?? ctx.clusterName, 'pd')}:${PORT.pdClient}`;
}

/** acrossK8s: discovery `/verify` answers the PD URLs (scheme kept) into `$result`. */
function across(ctx: PumpScriptContext): string[] | false {
  return (
    ctx.acrossK8s &&
    lines(
      randomHelper(),
      discoveryHelpers(ctx, TLS_DIR.pump),
      verifyPdEndpoints(
        `${ctx.scheme}://${names.service(ctx.clusterName, 'pd')}:${PORT.pdClient}`,
        `${names.discovery(ctx.clusterName)}.${ns(ctx)}:${PORT.discovery}`,
        false,
      ),
    )
  );
}

function podName(): string[] {
  return [
    '# Kubernetes sets HOSTNAME to the pod name; with hostNetwork the StatefulSet sets it so.',
    '# shellcheck disable=SC3028',
    'PUMP_POD_NAME=${HOSTNAME}',
  ];
}

function advertiseAddr(ctx: PumpScriptContext, podVar: string): string {
  return `\${${podVar}}.${names.peerService(ctx.clusterName, 'pump')}${zone(ctx)}:${PORT.pump}`;
}

/** v1 has no annotations volume, hence no debug-mode header. */
function pumpV1(ctx: PumpScriptContext): string {
  return renderScript([
    ['# Starts pump in a tidb-gitops pod (start script v1). POSIX sh.', 'set -u'],
    podName(),
    across(ctx),
    argsLines([
      `-pd-urls=${pdUrl(ctx)}`,
      `-L=${ctx.logLevel}`,
      `-advertise-addr=${advertiseAddr(ctx, 'PUMP_POD_NAME')}`,
      '-config=/etc/pump/pump.toml',
      '-data-dir=/data',
      '-log-file=',
    ]),
    [
      'echo "/pump ${ARGS}"',
      '# Not exec: what pump exits with decides what happens next.',
      '# shellcheck disable=SC2086',
      '/pump ${ARGS}',
      'status=$?',
      'if [ "${status}" -ne 0 ]; then',
      '    exit "${status}"',
      'fi',
      '# Exit 0 means pump went offline on request: stay up so the StatefulSet does not restart it.',
      'echo "$(date -u \'+[%Y/%m/%d %H:%M:%S +00:00]\') pump offline, please delete my pod"',
      'tail -f /dev/null',
    ],
  ]);
}

function pumpV2(ctx: PumpScriptContext): string {
  return renderScript([
    header('pump', 'v2'),
    podName(),
    across(ctx),
    argsLines([
      `-pd-urls=${pdUrl(ctx)}`,
      `-L ${ctx.logLevel}`,
      '-log-file=',
      `-advertise-addr=${advertiseAddr(ctx, 'PUMP_POD_NAME')}`,
      '-data-dir=/data',
      '--config=/etc/pump/pump.toml',
    ]),
    lines('echo "start pump-server ..."', execServer('/pump')),
  ]);
}
