/**
 * TiKV start script (`tikv_start_script.sh`): works out the PD endpoints and the advertised address,
 * then execs tikv-server. v1 addresses PD with a scheme, v2 without one (both work with tikv-server).
 *
 * With the script: its context (`tikvScriptContext` builds it from the resolved spec) and the checks on it.
 */
import { PORT, names } from '../../tidbcluster/names';
import {
  argsLines,
  dataDir,
  discoveryHelpers,
  domainSuffix,
  execServer,
  header,
  ipMatchCheck,
  lines,
  podNameLine,
  pdClientEndpoints,
  preferredPdHosts,
  randomHelper,
  renderScript,
  verifyPdEndpoints,
  waitLoop,
} from './common';
import { TLS_DIR } from '../tls';
import type { ResolvedCluster, ResolvedTiKV } from '../../tidbcluster/resolve';
import { assertValid, baseContext, checkInteger, commonErrors, dataSubDirErrors, type ScriptContext } from './base-context';

/** TiKV start script context. */
export interface TikvScriptContext extends ScriptContext {
  /** `spec.tikv.dataSubDir`: data dir is `/var/lib/tikv/<dataSubDir>`. @default '' */
  readonly dataSubDir: string;
  /** `spec.enableDynamicConfiguration`: adds `--advertise-status-addr`. @default false */
  readonly enableDynamicConfiguration: boolean;
  /**
   * `spec.pd.startTimeout` (yes, PD's), the limit of the v2 DNS/IP-match wait, an integer >= 1.
   * @default 30
   */
  readonly startTimeout: number;
}

/** Every problem with a TiKV context; empty when it can be rendered. */
export function tikvContextErrors(ctx: TikvScriptContext): string[] {
  const errors = [...commonErrors(ctx), ...dataSubDirErrors('dataSubDir', ctx.dataSubDir)];
  checkInteger(errors, 'startTimeout', ctx.startTimeout, 1);
  return errors;
}

/** TiKV's context from the resolved spec. */
export function tikvScriptContext(cluster: ResolvedCluster, tikv: ResolvedTiKV): TikvScriptContext {
  return {
    ...baseContext(cluster),
    dataSubDir: tikv.dataSubDir,
    enableDynamicConfiguration: cluster.enableDynamicConfiguration,
    startTimeout: tikv.startTimeout,
  };
}

const DATA_ROOT = '/var/lib/tikv';

/** Renders the TiKV start script. */
export function tikvStartScript(ctx: TikvScriptContext): string {
  assertValid('tikv', tikvContextErrors(ctx));
  return ctx.version === 'v2' ? tikvV2(ctx) : tikvV1(ctx);
}

/** v1 reads CLUSTER_NAME, HEADLESS_SERVICE_NAME, NAMESPACE and CAPACITY from the pod environment. */
function tikvV1(ctx: TikvScriptContext): string {
  const pdScheme = `${ctx.scheme}://`;
  const pd = ctx.acrossK8s
    ? '${result}'
    : `${pdScheme}${ctx.remotePd ? names.service(ctx.remotePd.name, 'pd') : '${CLUSTER_NAME}-pd'}:${PORT.pdClient}`;
  const advertiseHost = `\${POD_NAME}.\${HEADLESS_SERVICE_NAME}.\${NAMESPACE}.svc${domainSuffix(ctx)}`;
  const listen = listenHost(ctx);
  return renderScript([
    header('tikv-server', 'v1'),
    ctx.acrossK8s && lines(randomHelper(), discoveryHelpers(ctx, TLS_DIR.tikv)),
    podNameLine('POD_NAME'),
    ctx.acrossK8s &&
      verifyPdEndpoints(
        `${pdScheme}\${CLUSTER_NAME}-pd:${PORT.pdClient}`,
        `\${CLUSTER_NAME}-discovery.\${NAMESPACE}:${PORT.discovery}`,
        false,
      ),
    argsLines(
      lines(
        `--pd=${pd}`,
        `--advertise-addr=${advertiseHost}:${PORT.tikvServer}`,
        `--addr=${listen}:${PORT.tikvServer}`,
        `--status-addr=${listen}:${PORT.tikvStatus}`,
        ctx.enableDynamicConfiguration && `--advertise-status-addr=${advertiseHost}:${PORT.tikvStatus}`,
        `--data-dir=${dataDir(DATA_ROOT, ctx.dataSubDir)}`,
        '--capacity=${CAPACITY}',
        '--config=/etc/tikv/tikv.toml',
      ),
    ),
    storeLabels(),
    startServer(),
  ]);
}

/** v2 bakes the cluster name and namespace in. */
function tikvV2(ctx: TikvScriptContext): string {
  const namespace = ctx.namespace as string;
  const hosts = preferredPdHosts(ctx);
  const across = !hosts && ctx.acrossK8s;
  const pd = hosts
    ? pdClientEndpoints(hosts)
    : across
      ? '${result}'
      : `${names.service(ctx.remotePd?.name ?? ctx.clusterName, 'pd')}:${PORT.pdClient}`;
  const listen = listenHost(ctx);
  const peer = names.peerService(ctx.clusterName, 'tikv');
  return renderScript([
    header('tikv-server', 'v2'),
    across && lines(randomHelper(), discoveryHelpers(ctx, TLS_DIR.tikv)),
    [...podNameLine('TIKV_POD_NAME'), `TIKV_DOMAIN=\${TIKV_POD_NAME}.${peer}.${namespace}.svc${domainSuffix(ctx)}`],
    ctx.featureFlags.waitForDnsNameIpMatch &&
      lines(
        '# WaitForDnsNameIpMatch: wait until the DNS name resolves to this pod, not to a previous one.',
        waitLoop(ctx.startTimeout, 'waiting for cluster ready timeout', ipMatchCheck('TIKV_DOMAIN', 'getent')),
      ),
    across &&
      verifyPdEndpoints(
        `${names.service(ctx.clusterName, 'pd')}:${PORT.pdClient}`,
        `${names.discovery(ctx.clusterName)}.${namespace}:${PORT.discovery}`,
        true,
      ),
    argsLines(
      lines(
        `--pd=${pd}`,
        `--advertise-addr=\${TIKV_DOMAIN}:${PORT.tikvServer}`,
        `--addr=${listen}:${PORT.tikvServer}`,
        `--status-addr=${listen}:${PORT.tikvStatus}`,
        `--data-dir=${dataDir(DATA_ROOT, ctx.dataSubDir)}`,
        '--capacity=${CAPACITY}',
        '--config=/etc/tikv/tikv.toml',
        ctx.enableDynamicConfiguration && `--advertise-status-addr=\${TIKV_DOMAIN}:${PORT.tikvStatus}`,
      ),
    ),
    storeLabels(),
    startServer(),
  ]);
}

function listenHost(ctx: TikvScriptContext): string {
  return ctx.preferIPv6 ? '[::]' : '0.0.0.0';
}

/** STORE_LABELS is never set by the renderer; a user's `env` may set it. Words are split on purpose. */
function storeLabels(): string[] {
  return ['if [ -n "${STORE_LABELS:-}" ]; then', '    ARGS="${ARGS} --labels ${STORE_LABELS}"', 'fi'];
}

function startServer(): string[] {
  return lines('echo "starting tikv-server ..."', execServer('/tikv-server'));
}
