/**
 * The preStop hook of the PD, TiKV and TiCDC containers. Kubelet runs it when the Pod is deleted (a
 * node drain's eviction, `kubectl delete pod`) before it sends the server SIGTERM. The controller has
 * seen the deletion and moves what the server holds (PD's leadership, the store's region leaders, the
 * capture's tables); the hook asks the controller (`GET /prestop/<pod>?wait=25` on discovery) until it
 * answers that the Pod may stop, which it does at the latest after `seconds`, so that no client waits
 * out an election.
 *
 * The images differ in what they carry: the hook asks with `wget` (pd-base, old Alpine images'
 * busybox applet), else `curl` (the Rocky Linux based images' curl-minimal), else `busybox wget`
 * (busybox is copied to /bin/busybox in pingcap-base), else bash's `/dev/tcp`. With discovery mTLS only
 * curl can ask. Besides that, only `sh`, `cat`, `date` and `sleep`, as the start scripts use.
 *
 * It fails visibly (a message in the container's log and in kubelet's `FailedPreStopHook` event, and
 * a non-zero exit) when the image has no way to ask, or when the controller has not answered for
 * {@link UNREACHABLE_SECONDS}: then the Pod stops without waiting, as it would without the hook.
 */
import { names, PORT } from '../../tidbcluster/names';
import { PRESTOP_AGAIN, PRESTOP_ASK_SECONDS } from '../../tidbcluster/guard-rails';
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

/**
 * How long the hook keeps asking a controller that does not answer (refused, not serving, no answer
 * at all) before it lets the Pod stop: long enough for a controller Pod to be rescheduled or a
 * leader to be elected, short enough not to hold a drain for the whole grace period.
 */
export const UNREACHABLE_SECONDS = 30;

/** The longest one ask may take: the controller's answer comes within PRESTOP_ASK_SECONDS. */
const ASK_LIMIT_SECONDS = PRESTOP_ASK_SECONDS + 10;

/** Where the hook writes what it says: kubelet keeps a hook's output only in a failure's event. */
const CONTAINER_LOG = '/proc/1/fd/2';

/** bash's `/dev/tcp`: `GET $3` on `$1:$2` (HTTP/1.0), the body on stdout; fails unless the status is 2xx. */
const DEV_TCP = [
  'exec 3<>"/dev/tcp/$1/$2" || exit 1',
  'printf "GET %s HTTP/1.0\\r\\nHost: %s:%s\\r\\n\\r\\n" "$3" "$1" "$2" >&3',
  'IFS= read -r status <&3 || exit 1',
  'case "$status" in "HTTP/1."?" 2"*) ;; *) echo "discovery answered: $status" >&2; exit 1 ;; esac',
  'while IFS= read -r line <&3 && [ ${#line} -gt 1 ]; do :; done',
  'while IFS= read -r line <&3 || [ -n "$line" ]; do printf "%s\\n" "$line"; done',
].join('\n');

export function preStopScript(ctx: PreStopContext): string {
  const host = `${names.discovery(ctx.clusterName)}.${ctx.namespace ?? '${NAMESPACE}'}`;
  const t = ASK_LIMIT_SECONDS;
  const clients = ctx.discoveryMtls
    ? [
        'if command -v curl >/dev/null 2>&1; then',
        `    set -- curl -sS --fail --max-time ${t} --cacert ${ctx.certDir}/ca.crt --cert ${ctx.certDir}/tls.crt --key ${ctx.certDir}/tls.key "https://\${host}:\${port}\${path}"`,
        'else',
        '    fail "discovery requires a client certificate and this image has no curl to present it"',
        'fi',
      ]
    : [
        'if command -v wget >/dev/null 2>&1; then',
        `    set -- wget -qO- -T ${t} "http://\${host}:\${port}\${path}"`,
        'elif command -v curl >/dev/null 2>&1; then',
        `    set -- curl -sS --fail --max-time ${t} "http://\${host}:\${port}\${path}"`,
        'elif bb="$(command -v busybox || { [ -x /bin/busybox ] && echo /bin/busybox; })" && "${bb}" --list 2>/dev/null | { while read -r applet; do [ "${applet}" = wget ] && exit 0; done; exit 1; }; then',
        `    set -- "\${bb}" wget -qO- -T ${t} "http://\${host}:\${port}\${path}"`,
        'elif [ -n "${BASH_VERSION:-}" ] || command -v bash >/dev/null 2>&1; then',
        '    # shellcheck disable=SC2016 # bash expands it',
        `    set -- "\${BASH:-bash}" -c '${DEV_TCP}' dev-tcp "\${host}" "\${port}" "\${path}"`,
        'else',
        '    fail "this image has none of wget, curl, busybox or bash to ask discovery with"',
        'fi',
      ];
  return (
    lines(
      "# With hostNetwork the host name is the Node's: POD_NAME is set then.",
      'pod="${POD_NAME:-$(cat /etc/hostname)}"',
      `host="${host}"`,
      `port=${PORT.discovery}`,
      `path="/prestop/\${pod}?wait=${PRESTOP_ASK_SECONDS}"`,
      `patience=${UNREACHABLE_SECONDS}`,
      `# Kubelet keeps the output only in the FailedPreStopHook event: the container's log gets it too.`,
      'say() {',
      '    echo "preStop hook of ${pod}: $*" >&2',
      `    { echo "preStop hook of \${pod}: $*" >>${CONTAINER_LOG}; } 2>/dev/null`,
      '}',
      'fail() {',
      '    say "$* (it could not ask the controller to wait until ${pod} has handed over what it holds)"',
      '    exit 1',
      '}',
      ...clients,
      '# One ask, ended by a watchdog after ${limit} seconds (GNU wget retries a read that timed out).',
      'ask() {',
      '    "$@" </dev/null &',
      '    asking=$!',
      '    (sleep "${limit}"; kill "${asking}") >/dev/null 2>&1 </dev/null &',
      '    watchdog=$!',
      '    wait "${asking}"',
      '    code=$?',
      '    kill "${watchdog}" 2>/dev/null',
      '    return "${code}"',
      '}',
      `end=$(($(date +%s) + ${ctx.seconds}))`,
      'answered=$(date +%s)',
      'last="no answer yet"',
      'while :; do',
      '    now=$(date +%s)',
      '    if [ "${now}" -ge "${end}" ]; then',
      `        say "stopped waiting after ${ctx.seconds}s: \${last}"`,
      '        exit 0',
      '    fi',
      `    limit=$((end - now < ${t} ? end - now : ${t}))`,
      '    if out="$(ask "$@")"; then',
      '        answered=$(date +%s)',
      '        case "${out}" in',
      `            "${PRESTOP_AGAIN}"*) last="\${out#"${PRESTOP_AGAIN}"}"; continue ;;`,
      '        esac',
      '        printf "%s\\n" "${out}"',
      `        { echo "preStop hook of \${pod}: \${out}" >>${CONTAINER_LOG}; } 2>/dev/null`,
      '        exit 0',
      '    fi',
      '    last="no answer from discovery at ${host}:${port}"',
      '    if [ $(($(date +%s) - answered)) -ge "${patience}" ]; then',
      '        say "gave up: ${last} for ${patience}s; stopping without waiting for the controller"',
      '        exit 1',
      '    fi',
      '    sleep 2',
      'done',
    ).join('\n') + '\n'
  );
}
