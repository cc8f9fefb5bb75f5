/**
 * TiDB start script (`tidb_start_script.sh`): works out the PD endpoints (`--path`) and the advertised
 * address, adds binlog / slow-log / plugin flags, then execs tidb-server.
 *
 * With the script: its context (`tidbScriptContext` builds it from the resolved spec) and the checks on it.
 */
import { PORT, names } from '../../tidbcluster/names';
import {
  argsLines,
  discoveryHelpers,
  domainSuffix,
  execServer,
  header,
  lines,
  podNameLine,
  pdClientEndpoints,
  preferredPdHosts,
  randomHelper,
  renderScript,
  verifyPdEndpoints,
} from './common';
import { TLS_DIR } from '../tls';
import type { ResolvedCluster, ResolvedTiDB } from '../../tidbcluster/resolve';
import { PLUGIN_NAME } from '../../base/patterns';
import { assertValid, baseContext, checkPattern, commonErrors, type ScriptContext } from './base-context';

/**
 * TiDB start script context. The slow-log file is not here: both versions read `$SLOW_LOG_FILE` from
 * the pod's environment at run time.
 */
export interface TidbScriptContext extends ScriptContext {
  /**
   * `spec.tidb.binlogEnabled`, or `spec.pump` set when that is unset. v2 decides `--enable-binlog` at
   * render time from this; v1 reads `$BINLOG_ENABLED` at run time and ignores it.
   * @default false
   */
  readonly binlogEnabled: boolean;
  /** `spec.tidb.plugins`: loaded from `/plugins`. @default [] */
  readonly plugins: readonly string[];
  /**
   * `spec.tidb.arguments`: shell words appended verbatim to the v1 exec line (so the shell expands
   * them). v2 ignores them, as the operator does.
   * @default []
   */
  readonly arguments: readonly string[];
}

/** Every problem with a TiDB context; empty when it can be rendered. */
export function tidbContextErrors(ctx: TidbScriptContext): string[] {
  const errors = commonErrors(ctx);
  ctx.plugins.forEach((p, i) => checkPattern(errors, `plugins[${i}]`, p, PLUGIN_NAME, 'a plugin name (letters, digits, ., _, -)'));
  ctx.arguments.forEach((a, i) => {
    if (/[\r\n]/.test(a)) errors.push(`arguments[${i}]: ${JSON.stringify(a)} contains a line break`);
  });
  return errors;
}

/** TiDB's context from the resolved spec; the slow-log file is read from `$SLOW_LOG_FILE` at run time. */
export function tidbScriptContext(cluster: ResolvedCluster, tidb: ResolvedTiDB): TidbScriptContext {
  return {
    ...baseContext(cluster),
    binlogEnabled: tidb.binlogEnabled,
    plugins: tidb.plugins,
    arguments: tidb.arguments,
  };
}

const PLUGIN_DIR = '/plugins';

/** Renders the TiDB start script. */
export function tidbStartScript(ctx: TidbScriptContext): string {
  assertValid('tidb', tidbContextErrors(ctx));
  return ctx.version === 'v2' ? tidbV2(ctx) : tidbV1(ctx);
}

/**
 * v1 reads CLUSTER_NAME, HEADLESS_SERVICE_NAME, NAMESPACE and BINLOG_ENABLED from the pod environment,
 * and appends `spec.tidb.arguments` to the exec line.
 */
function tidbV1(ctx: TidbScriptContext): string {
  const path = ctx.acrossK8s
    ? '${result}'
    : `${ctx.remotePd ? names.service(ctx.remotePd.name, 'pd') : '${CLUSTER_NAME}-pd'}:${PORT.pdClient}`;
  const plugins = ctx.plugins.length > 0 && [`ARGS="\${ARGS} --plugin-dir ${PLUGIN_DIR} --plugin-load ${ctx.plugins.join(',')}"`];
  return renderScript([
    header('tidb-server', 'v1'),
    ctx.acrossK8s && lines(randomHelper(), discoveryHelpers(ctx, TLS_DIR.tidb)),
    podNameLine('POD_NAME'),
    ctx.acrossK8s &&
      verifyPdEndpoints(`\${CLUSTER_NAME}-pd:${PORT.pdClient}`, `\${CLUSTER_NAME}-discovery.\${NAMESPACE}:${PORT.discovery}`, true),
    argsLines([
      '--store=tikv',
      `--advertise-address=\${POD_NAME}.\${HEADLESS_SERVICE_NAME}.\${NAMESPACE}.svc${domainSuffix(ctx)}`,
      '--host=0.0.0.0',
      `--path=${path}`,
      '--config=/etc/tidb/tidb.toml',
    ]),
    ['if [ "${BINLOG_ENABLED:-}" = true ]; then', '    ARGS="${ARGS} --enable-binlog=true"', 'fi'],
    slowLog(),
    plugins,
    startServer(ctx.arguments.join(' ')),
  ]);
}

/** v2 bakes names in and decides binlog and plugins at render time; `arguments` are not used. */
function tidbV2(ctx: TidbScriptContext): string {
  const namespace = ctx.namespace as string;
  const hosts = preferredPdHosts(ctx);
  const across = !hosts && ctx.acrossK8s;
  const path = hosts
    ? pdClientEndpoints(hosts)
    : across
      ? '${result}'
      : `${names.service(ctx.remotePd?.name ?? ctx.clusterName, 'pd')}:${PORT.pdClient}`;
  const peer = names.peerService(ctx.clusterName, 'tidb');
  return renderScript([
    header('tidb-server', 'v2'),
    across && lines(randomHelper(), discoveryHelpers(ctx, TLS_DIR.tidb)),
    podNameLine('TIDB_POD_NAME'),
    across &&
      verifyPdEndpoints(
        `${names.service(ctx.clusterName, 'pd')}:${PORT.pdClient}`,
        `${names.discovery(ctx.clusterName)}.${namespace}:${PORT.discovery}`,
        true,
      ),
    argsLines(
      lines(
        '--store=tikv',
        `--advertise-address=\${TIDB_POD_NAME}.${peer}.${namespace}.svc${domainSuffix(ctx)}`,
        '--host=0.0.0.0',
        `--path=${path}`,
        '--config=/etc/tidb/tidb.toml',
        ctx.binlogEnabled && '--enable-binlog=true',
        ctx.plugins.length > 0 && [`--plugin-dir=${PLUGIN_DIR}`, `--plugin-load=${ctx.plugins.join(',')}`],
      ),
    ),
    slowLog(),
    startServer(),
  ]);
}

/** SLOW_LOG_FILE is set in the pod environment when the slow log goes to its own file. */
function slowLog(): string[] {
  return [
    'SLOW_LOG_FILE=${SLOW_LOG_FILE:-}',
    'if [ -n "${SLOW_LOG_FILE}" ]; then',
    '    ARGS="${ARGS} --log-slow-query=${SLOW_LOG_FILE}"',
    'fi',
  ];
}

function startServer(trailing = ''): string[] {
  return lines('echo "start tidb-server ..."', execServer('/tidb-server', trailing));
}
