/**
 * The preStop hook of the PD, TiKV and TiCDC containers. Kubelet runs it when the Pod is deleted (a
 * node drain's eviction, `kubectl delete pod`) before it sends the server SIGTERM. The controller has
 * seen the deletion and moved what the server holds (PD's leadership, the store's region leaders, the
 * capture's tables); the hook asks the controller to answer once that is done (`GET /prestop/<pod>`
 * on discovery), which it does after at most `seconds`, so that no client waits out an election.
 *
 * Only `sh`, `cat`, `date`, `sleep` and `wget` (or `curl` where discovery requires a client
 * certificate) from the image, as the start scripts use; a controller that does not answer costs the
 * Pod at most `seconds`, then it stops as it would without the hook.
 */
import { names, PORT } from '../../tidbcluster/names';
import { lines } from './common';

export interface PreStopContext {
  /** `metadata.name` of the TidbCluster. */
  readonly clusterName: string;
  /** `metadata.namespace`; without it the hook reads `$NAMESPACE` from the container. @default none */
  readonly namespace?: string;
  /** Discovery requires a client certificate: ask with curl and the certificates under `certDir`. */
  readonly discoveryMtls: boolean;
  /** The component's certificate directory (used with `discoveryMtls`). */
  readonly certDir: string;
  /** The most the hook waits, in seconds; more than 0. */
  readonly seconds: number;
}

export function preStopScript(ctx: PreStopContext): string {
  const host = `${names.discovery(ctx.clusterName)}.${ctx.namespace ?? '${NAMESPACE}'}:${PORT.discovery}`;
  const ask = ctx.discoveryMtls
    ? `curl -sS --fail --max-time ${ctx.seconds} --cacert ${ctx.certDir}/ca.crt --cert ${ctx.certDir}/tls.crt --key ${ctx.certDir}/tls.key "https://${host}/prestop/\${pod}"`
    : `wget -qO- -T ${ctx.seconds} "http://${host}/prestop/\${pod}"`;
  return (
    lines(
      "# With hostNetwork the host name is the Node's: POD_NAME is set then.",
      'pod="${POD_NAME:-$(cat /etc/hostname)}"',
      `end=$(($(date +%s) + ${ctx.seconds}))`,
      'while [ "$(date +%s)" -lt "${end}" ]; do',
      `    ${ask} </dev/null &`,
      '    ask=$!',
      '    # GNU wget retries a read that timed out: the watchdog ends the request at the deadline.',
      '    (sleep "$((end - $(date +%s)))"; kill "${ask}") >/dev/null 2>&1 </dev/null &',
      '    watchdog=$!',
      '    if wait "${ask}"; then',
      '        kill "${watchdog}" 2>/dev/null',
      '        exit 0',
      '    fi',
      '    kill "${watchdog}" 2>/dev/null',
      '    sleep 2',
      'done',
    ).join('\n') + '\n'
  );
}
