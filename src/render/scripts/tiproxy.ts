/**
 * TiProxy start script (`/etc/proxy/start.sh`): the same for start script v1 and v2, as with the
 * operator. It passes `--advertise-addr` only to a tiproxy binary that knows the flag (older releases
 * refuse unknown flags, and the read-only config file cannot carry a per-Pod address).
 *
 * With the script: its context (`tiproxyScriptContext` builds it from the resolved spec) and the checks on it.
 */
import { names } from '../../tidbcluster/names';
import { argsLines, execServer, header, lines, podNameLine, renderScript } from './common';
import type { ResolvedCluster } from '../../tidbcluster/resolve';
import { assertValid, baseContext } from './base-context';
import { DNS1123_LABEL, DNS_DOMAIN } from '../../base/patterns';

export const TIPROXY_BINARY = '/bin/tiproxy';
export const TIPROXY_CONFIG_FILE = '/etc/proxy/proxy.toml';

/** What the TiProxy start script needs. */
export interface TiProxyScriptContext {
  /** `metadata.name` of the TidbCluster. Required. */
  readonly clusterName: string;
  /**
   * `metadata.namespace`, baked into the advertised address. Without one the script reads the Pod's
   * `NAMESPACE` (set from the Downward API), so a cluster rendered without a namespace still works.
   * @default undefined
   */
  readonly namespace?: string;
  /** `spec.clusterDomain`; `''` or undefined means none (names end in `.svc`). @default '' */
  readonly clusterDomain?: string;
}

/** Every problem with a TiProxy context; empty when it can be rendered. */
export function tiproxyContextErrors(ctx: TiProxyScriptContext): string[] {
  const errors: string[] = [];
  const check = (field: string, value: string, pattern: RegExp, hint: string) => {
    if (!pattern.test(value)) errors.push(`${field}: ${JSON.stringify(value)} is not ${hint}`);
  };
  check('clusterName', ctx.clusterName, DNS1123_LABEL, 'a DNS label (lowercase letters, digits, -)');
  if (ctx.namespace !== undefined) check('namespace', ctx.namespace, DNS1123_LABEL, 'a DNS label (lowercase letters, digits, -)');
  if (ctx.clusterDomain) check('clusterDomain', ctx.clusterDomain, DNS_DOMAIN, 'a DNS domain such as cluster.local');
  return errors;
}

/** TiProxy's context from the resolved cluster: the names it advertises, nothing more. */
export function tiproxyScriptContext(cluster: ResolvedCluster): TiProxyScriptContext {
  const { clusterName, namespace, clusterDomain } = baseContext(cluster);
  return { clusterName, namespace, clusterDomain };
}

/** Renders the TiProxy start script. */
export function tiproxyStartScript(ctx: TiProxyScriptContext): string {
  assertValid('tiproxy', tiproxyContextErrors(ctx));
  const namespace = ctx.namespace ?? '${NAMESPACE}';
  const peer = names.peerService(ctx.clusterName, 'tiproxy');
  const domain = ctx.clusterDomain ? `.${ctx.clusterDomain}` : '';
  return renderScript([
    header('tiproxy', 'v2'),
    [...podNameLine('TIPROXY_POD_NAME'), `TIPROXY_DOMAIN=\${TIPROXY_POD_NAME}.${peer}.${namespace}.svc${domain}`],
    lines(
      argsLines([`--config=${TIPROXY_CONFIG_FILE}`]),
      '# Older tiproxy releases have no --advertise-addr and refuse unknown flags: ask the binary first.',
      `case "$(${TIPROXY_BINARY} --help 2>&1)" in`,
      '    *advertise-addr*) ARGS="${ARGS} --advertise-addr=${TIPROXY_DOMAIN}" ;;',
      'esac',
    ),
    lines('echo "starting tiproxy ..."', execServer(TIPROXY_BINARY)),
  ]);
}
