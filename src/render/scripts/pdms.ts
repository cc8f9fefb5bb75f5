/**
 * Start script of a PD micro-service (`pdms_start_script.sh`): a TSO or scheduling server. It keeps
 * no data and never asks discovery for start flags: it waits for its own peer DNS name, then starts
 * `pd-server services <service>` against PD's client Service (PD runs as the API server,
 * `services api`). The operator renders this script as v2 whatever `spec.startScriptVersion` says.
 *
 * With the script: its context (`pdmsScriptContext` builds it from the resolved spec) and the checks on it.
 */
import { PORT, names } from '../../tidbcluster/names';
import {
  argsLines,
  discoveryHelpers,
  domainSuffix,
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
import { pdDomainWait, startPdServer } from './pd';
import type { ResolvedCluster, ResolvedPdms } from '../../tidbcluster/resolve';
import { imageVersionAtLeast } from '../../base/version';
import { assertValid, baseContext, checkInteger, commonErrors, type ScriptContext } from './base-context';

/** The first pd-server release that takes `--name` for its micro-services (tikv/pd#8157). */
export const PDMS_NAME_SINCE = 'v8.3.0';

/** Start script context of a PD micro-service (TSO or scheduling); always rendered as v2. */
export interface PdmsScriptContext extends ScriptContext {
  /** Which micro-service: `pd-server services <service>`. */
  readonly service: 'tso' | 'scheduling';
  /**
   * Pass `--name=<pod>` (the FQDN with a cluster domain): pd-server takes it from v8.3.0, and the
   * primary transfer names the new primary by it. Older servers take no such flag (they exit on it).
   * @default false
   */
  readonly withName: boolean;
  /** `spec.pd.startTimeout` (PD's, as the operator takes it): limit of the DNS wait, an integer >= 1. @default 30 */
  readonly startTimeout: number;
  /** `spec.pd.initWaitTime` (PD's): the IP-match wait sleeps this long first. @default 0 */
  readonly initWaitTime: number;
}

/** Every problem with a PD micro-service context; empty when it can be rendered. */
export function pdmsContextErrors(ctx: PdmsScriptContext): string[] {
  const errors = commonErrors(ctx);
  if (ctx.service !== 'tso' && ctx.service !== 'scheduling')
    errors.push(`service: expected tso or scheduling, got ${JSON.stringify(ctx.service)}`);
  checkInteger(errors, 'startTimeout', ctx.startTimeout, 1);
  checkInteger(errors, 'initWaitTime', ctx.initWaitTime, 0);
  return errors;
}

/** A micro-service's context: its script waits as PD's does (spec.pd's timeouts); `withName` from its image version. */
export function pdmsScriptContext(cluster: ResolvedCluster, pdms: ResolvedPdms): PdmsScriptContext {
  return {
    ...baseContext(cluster),
    service: pdms.kind,
    withName: imageVersionAtLeast(pdms.image, PDMS_NAME_SINCE) === true,
    startTimeout: cluster.pd!.startTimeout,
    initWaitTime: cluster.pd!.initWaitTime,
  };
}

/** Renders the start script of one PD micro-service. */
export function pdmsStartScript(context: PdmsScriptContext): string {
  const ctx: PdmsScriptContext = { ...context, version: 'v2' };
  assertValid(`pd ${ctx.service}`, pdmsContextErrors(ctx));
  const namespace = ctx.namespace as string;
  const s = ctx.scheme;
  const peer = names.peerService(ctx.clusterName, ctx.service);
  const domain = `\${PDMS_POD_NAME}.${peer}.${namespace}.svc${domainSuffix(ctx)}`;
  const hosts = preferredPdHosts(ctx);
  const across = !hosts && ctx.acrossK8s;
  const pdService = `${names.service(ctx.clusterName, 'pd')}:${PORT.pdClient}`;
  // The operator's endpoints: bare host:port for pdAddresses, what discovery verified (http:// cut)
  // acrossK8s, else PD's client Service.
  const backends = hosts ? pdClientEndpoints(hosts) : across ? '${result}' : `${s}://${pdService}`;
  // With a cluster domain the member is named by its FQDN, as PD members are.
  const name = ctx.clusterDomain ? '${PD_DOMAIN}' : '${PDMS_POD_NAME}';
  return renderScript([
    header(`pd-server services ${ctx.service}`, 'v2'),
    lines(randomHelper(), across && discoveryHelpers(ctx, TLS_DIR.pd)),
    [...podNameLine('PDMS_POD_NAME'), `PD_DOMAIN=${domain}`],
    // Unlike PD's, this wait is never skipped: the operator's script has no NoWaitDNS for the micro-services.
    pdDomainWait(ctx, ctx.featureFlags.waitForDnsNameIpMatch, 'Clients reach this server'),
    across && verifyPdEndpoints(`${s}://${pdService}`, `${names.discovery(ctx.clusterName)}.${namespace}:${PORT.discovery}`, true),
    argsLines(
      lines(
        `services ${ctx.service}`,
        ctx.withName && `--name=${name}`,
        `--listen-addr=${s}://0.0.0.0:${PORT.pdClient}`,
        `--advertise-listen-addr=${s}://\${PD_DOMAIN}:${PORT.pdClient}`,
        `--backend-endpoints=${backends}`,
        '--config=/etc/pd/pd.toml',
      ),
    ),
    startPdServer(),
  ]);
}
