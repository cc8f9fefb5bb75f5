/**
 * TiFlash scripts. They are not in the ConfigMap: each is the `-c` argument of its container.
 *
 * - Init mode (default): the `init` container copies the ConfigMap templates to `/data0`, putting the
 *   pod ordinal in place of `POD_NUM` (and, acrossK8s, the PD endpoints discovery verified in place of
 *   `PD_ADDR`); `tiflash` then starts from `/data0/config.toml`.
 * - Mount-cm mode: no init container; `tiflash` reads the templates from the ConfigMap and gets its
 *   per-pod addresses and the PD endpoints as command-line flags.
 *
 * With the script: its context (`tiflashScriptContext` builds it from the resolved spec) and the checks on it.
 */
import { names, PORT } from '../../tidbcluster/names';
import {
  argsLines,
  discoveryHelpers,
  domainSuffix,
  execServer,
  header,
  lines,
  pdClientEndpoints,
  podNameLine,
  preferredPdHosts,
  randomHelper,
  renderScript,
  verifyPdEndpoints,
} from './common';
import { TLS_DIR } from '../tls';
import type { ResolvedCluster } from '../../tidbcluster/resolve';
import type { ResolvedTiFlash } from '../../tidbcluster/tiflash';
import { assertValid, baseContext, commonErrors, type ScriptContext } from './base-context';

/** TiFlash script context. */
export interface TiFlashScriptContext extends ScriptContext {
  /**
   * Mount-cm mode (pod annotation `tiflash.tidb.pingcap.com/mount-cm-in-tiflash-container: "true"`):
   * no init script; the start script passes the per-pod settings as flags.
   * @default false
   */
  readonly mountConfigMap: boolean;
  /** `spec.enableDynamicConfiguration`: mount-cm mode adds `--flash.proxy.advertise-status-addr`. @default false */
  readonly enableDynamicConfiguration: boolean;
}

const BINARY = '/tiflash/tiflash';
const CONFIG_DIR = '/etc/tiflash';

/** Every problem with a TiFlash context; empty when it can be rendered. */
export function tiflashContextErrors(ctx: TiFlashScriptContext): string[] {
  const errors = commonErrors(ctx);
  // The v1 init script names the discovery Service with its namespace too.
  if (ctx.version === 'v1' && ctx.acrossK8s && !ctx.mountConfigMap && ctx.namespace === undefined) {
    errors.push('namespace: required across Kubernetes clusters, where the init script names the discovery Service');
  }
  return errors;
}

/** TiFlash's context from the resolved spec. */
export function tiflashScriptContext(cluster: ResolvedCluster, tiflash: ResolvedTiFlash): TiFlashScriptContext {
  return {
    ...baseContext(cluster),
    mountConfigMap: tiflash.mountConfigMap,
    enableDynamicConfiguration: cluster.enableDynamicConfiguration,
  };
}

/**
 * The `init` container's script (init mode). Both versions do the same; v2 only differs in its
 * first comment, as with the operator (whose v2 init script has no debug-mode header either).
 */
export function tiflashInitScript(ctx: TiFlashScriptContext): string {
  assertValid('tiflash', tiflashContextErrors(ctx));
  const namespace = ctx.namespace as string;
  return renderScript([
    [
      '#!/bin/sh',
      `# Writes this pod's TiFlash config files from the ConfigMap templates (init script ${ctx.version}).`,
      '# POSIX sh on purpose: it runs in the helper image (busybox by default).',
      '',
      'set -eu',
    ],
    ctx.acrossK8s && lines(randomHelper(), discoveryHelpers(ctx, TLS_DIR.tiflash)),
    [
      '# The pod ordinal is the last -separated field of the pod name.',
      'ordinal=${POD_NAME##*-}',
      'case "${ordinal}" in',
      '    "" | *[!0-9]*)',
      '        echo "cannot read the pod ordinal from POD_NAME=${POD_NAME}" >&2',
      '        exit 1',
      '        ;;',
      'esac',
      ...(ctx.namespace === undefined
        ? [
            '# The cluster names no namespace: the templates leave it to the pod (NAMESPACE from the downward API).',
            `sed -e "s/POD_NUM/\${ordinal}/g" -e "s/POD_NAMESPACE/\${NAMESPACE}/g" ${CONFIG_DIR}/config_templ.toml >/data0/config.toml`,
            `sed -e "s/POD_NUM/\${ordinal}/g" -e "s/POD_NAMESPACE/\${NAMESPACE}/g" ${CONFIG_DIR}/proxy_templ.toml >/data0/proxy.toml`,
          ]
        : [
            `sed "s/POD_NUM/\${ordinal}/g" ${CONFIG_DIR}/config_templ.toml >/data0/config.toml`,
            `sed "s/POD_NUM/\${ordinal}/g" ${CONFIG_DIR}/proxy_templ.toml >/data0/proxy.toml`,
          ]),
    ],
    // (With the v2 PreferPDAddressesOverDiscovery flag the template may hold no PD_ADDR; sed is a no-op then.)
    ctx.acrossK8s &&
      lines(
        verifyPdEndpoints(
          `${ctx.scheme}://${names.service(ctx.clusterName, 'pd')}:${PORT.pdClient}`,
          `${names.discovery(ctx.clusterName)}.${namespace}:${PORT.discovery}`,
          false,
        ),
        stripSchemes(),
        '# The address goes into a TOML string: host:port pairs, no quotes or slashes.',
        'sed -i "s|PD_ADDR|${result}|g" /data0/config.toml',
        'sed -i "s|PD_ADDR|${result}|g" /data0/proxy.toml',
      ),
  ]);
}

/** The `tiflash` container's script. */
export function tiflashStartScript(ctx: TiFlashScriptContext): string {
  assertValid('tiflash', tiflashContextErrors(ctx));
  if (ctx.mountConfigMap) return ctx.version === 'v2' ? mountConfigMapV2(ctx) : mountConfigMapV1(ctx);
  if (ctx.version === 'v1') {
    // The operator's v1 command is this one line: no debug-mode header.
    return `exec ${BINARY} server --config-file /data0/config.toml\n`;
  }
  return renderScript([
    header('tiflash', 'v2'),
    argsLines(['--config-file /data0/config.toml']),
    ['echo "starting tiflash-server ..."', ...execServer(`${BINARY} server`)],
  ]);
}

/** v1 reads CLUSTER_NAME, HEADLESS_SERVICE_NAME and NAMESPACE from the pod environment. */
function mountConfigMapV1(ctx: TiFlashScriptContext): string {
  const pdService = ctx.remotePd && !ctx.acrossK8s ? names.service(ctx.remotePd.name, 'pd') : '${CLUSTER_NAME}-pd';
  const pdUrl = `${ctx.scheme}://${pdService}:${PORT.pdClient}`;
  return renderScript([
    header('tiflash', 'v1'),
    ctx.acrossK8s && lines(randomHelper(), discoveryHelpers(ctx, TLS_DIR.tiflash)),
    podNameLine('POD_NAME'),
    ctx.acrossK8s
      ? lines(verifyPdEndpoints(pdUrl, `\${CLUSTER_NAME}-discovery.\${NAMESPACE}:${PORT.discovery}`, false), 'PD_ADDRESS=${result}')
      : [`PD_ADDRESS="${pdUrl}"`],
    startArgs(ctx, `\${POD_NAME}.\${HEADLESS_SERVICE_NAME}.\${NAMESPACE}.svc${domainSuffix(ctx)}`),
  ]);
}

/** v2 bakes the cluster name and namespace in; PD is addressed without a scheme. */
function mountConfigMapV2(ctx: TiFlashScriptContext): string {
  const namespace = ctx.namespace as string;
  const hosts = preferredPdHosts(ctx);
  const across = !hosts && ctx.acrossK8s;
  const pd = hosts
    ? [`PD_ADDRESS="${pdClientEndpoints(hosts)}"`]
    : across
      ? lines(
          verifyPdEndpoints(
            `${names.service(ctx.clusterName, 'pd')}:${PORT.pdClient}`,
            `${names.discovery(ctx.clusterName)}.${namespace}:${PORT.discovery}`,
            false,
          ),
          stripSchemes(),
          'PD_ADDRESS=${result}',
        )
      : [`PD_ADDRESS="${names.service(ctx.remotePd?.name ?? ctx.clusterName, 'pd')}:${PORT.pdClient}"`];
  return renderScript([
    header('tiflash', 'v2'),
    across && lines(randomHelper(), discoveryHelpers(ctx, TLS_DIR.tiflash)),
    podNameLine('POD_NAME'),
    pd,
    startArgs(ctx, `\${POD_NAME}.${names.peerService(ctx.clusterName, 'tiflash')}.${namespace}.svc${domainSuffix(ctx)}`),
  ]);
}

/** Mount-cm flags: TiFlash's own config file, then (after `--`) the per-pod settings. */
function startArgs(ctx: TiFlashScriptContext, host: string): string[] {
  return lines(
    argsLines(
      lines(
        'server',
        `--config-file ${CONFIG_DIR}/config_templ.toml`,
        '--',
        `--flash.proxy.advertise-addr=${host}:${PORT.tiflashProxy}`,
        ctx.enableDynamicConfiguration && `--flash.proxy.advertise-status-addr=${host}:${PORT.tiflashProxyStatus}`,
        `--flash.service_addr=${host}:${PORT.tiflashFlash}`,
        '--raft.pd_addr=${PD_ADDRESS}',
      ),
    ),
    '',
    "# STORE_LABELS is never set by the renderer; a user's env may set it. Words are split on purpose.",
    'if [ -n "${STORE_LABELS:-}" ]; then',
    '    ARGS="${ARGS} --labels ${STORE_LABELS}"',
    'fi',
    '',
    'echo "starting tiflash-server ..."',
    execServer(BINARY),
  );
}

/** TiFlash takes PD endpoints as host:port. */
function stripSchemes(): string {
  return "result=$(printf '%s\\n' \"${result}\" | sed -e 's|https://||g' -e 's|http://||g')";
}
