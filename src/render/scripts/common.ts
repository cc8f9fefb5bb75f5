/**
 * Building blocks shared by the PD, TiKV and TiDB start scripts.
 *
 * Templating is one way throughout: a script is a list of sections, a section is a list of lines
 * (`Lines`), and `lines()` assembles them, dropping `false`/`undefined` so optional parts read inline.
 *
 * Dialect: POSIX sh. The container runs `/bin/sh <file>`, which is busybox ash on older (Alpine) TiDB
 * images and dash or bash on newer ones, so no arrays, `[[ ]]`, `source` or `$RANDOM`.
 */
import { posix } from 'path';
import { PORT } from '../../tidbcluster/names';
import type { ScriptContext } from './base-context';

/** One string per line. */
export type Lines = readonly string[];
type Piece = string | Lines | false | null | undefined;

/** Flattens pieces into lines; `false`, `null` and `undefined` are skipped. */
export function lines(...pieces: Piece[]): string[] {
  const out: string[] = [];
  for (const p of pieces) {
    if (typeof p === 'string') out.push(p);
    else if (p) out.push(...p);
  }
  return out;
}

/** Indents by four spaces per level; blank lines stay empty so no line ends in whitespace. */
export function indent(body: Lines, depth = 1): string[] {
  const pad = '    '.repeat(depth);
  return body.map((l) => (l === '' ? '' : pad + l));
}

/**
 * Joins sections with one blank line, skipping empty and `false` ones; the text ends with a newline
 * and no line ends in whitespace.
 */
export function renderScript(sections: readonly (Lines | false | undefined)[]): string {
  const text = sections
    .filter((s): s is Lines => !!s && s.length > 0)
    .map((s) => s.join('\n'))
    .join('\n\n');
  return `${text.replace(/[ \t]+$/gm, '')}\n`;
}

/** `.<clusterDomain>` or nothing: the suffix after `.svc` in every FQDN. */
export function domainSuffix(ctx: ScriptContext): string {
  return ctx.clusterDomain ? `.${ctx.clusterDomain}` : '';
}

/** `<base>/<sub>` cleaned like Go's filepath.Join, which the operator uses (`pd-data/` -> `pd-data`). */
export function dataDir(base: string, sub: string): string {
  const joined = posix.join(base, sub);
  return joined.length > 1 ? joined.replace(/\/+$/, '') : joined;
}

/**
 * Host part of each `spec.pdAddresses` entry, as the operator takes it: the URL's host when the entry
 * is a URL, else the entry itself (which may be a shell variable such as `${PD_DOMAIN}`).
 */
export function pdAddressHosts(addresses: readonly string[]): string[] {
  return addresses.map((a) => {
    if (!/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(a)) return a;
    try {
      // An IPv6 host keeps its brackets here, so `host:port` stays parseable.
      return new URL(a).hostname || a;
    } catch {
      return a;
    }
  });
}

/** The PD addresses to use instead of discovery, or `undefined` when the v2 flag or the list is absent. */
export function preferredPdHosts(ctx: ScriptContext): string[] | undefined {
  const use = ctx.version === 'v2' && ctx.featureFlags.preferPdAddressesOverDiscovery && ctx.pdAddresses.length > 0;
  return use ? pdAddressHosts(ctx.pdAddresses) : undefined;
}

/** Where each component's cluster certificate is mounted; it is also its discovery client cert. */

/**
 * `<variable>=<pod name>`. Kubernetes sets HOSTNAME to the pod name; with hostNetwork it is the
 * node's name instead, and the StatefulSet then sets POD_NAME.
 */
export function podNameLine(variable: string): string[] {
  return [
    '# POD_NAME is set with hostNetwork (HOSTNAME is then the node name); else HOSTNAME is the pod name.',
    '# shellcheck disable=SC3028',
    `${variable}=\${POD_NAME:-$HOSTNAME}`,
  ];
}

/** Shebang, shell options, and the annotations / debug-mode gate every script starts with. */
export function header(server: string, version: string): string[] {
  return [
    '#!/bin/sh',
    `# Starts ${server} in a tidb-gitops pod (start script ${version}).`,
    '# POSIX sh on purpose: /bin/sh is busybox ash, dash or bash depending on the image.',
    '',
    'set -u',
    '# Not every sh knows pipefail (older dash); turn it on where it exists.',
    '# shellcheck disable=SC3040',
    'if (set -o pipefail) 2>/dev/null; then set -o pipefail; fi',
    '',
    '# Pod annotations, key="value" per line (Downward API). Annotation runmode=debug keeps the',
    '# container running without the server, so a crashing pod can be inspected with kubectl exec.',
    'ANNOTATIONS=/etc/podinfo/annotations',
    'if [ ! -f "${ANNOTATIONS}" ]; then',
    '    echo "${ANNOTATIONS} does not exist, exiting."',
    '    exit 1',
    'fi',
    '# A syntax error in a sourced file ends dash, so check first; an annotation may also mention',
    '# a variable that is not set, hence set +u while reading it.',
    'if sh -n "${ANNOTATIONS}" 2>/dev/null; then',
    '    set +u',
    '    # shellcheck disable=SC1090',
    '    . "${ANNOTATIONS}" 2>/dev/null',
    '    set -u',
    'else',
    '    echo "${ANNOTATIONS} is not valid sh, not reading it." >&2',
    'fi',
    'runmode=${runmode:-normal}',
    'if [ "${runmode}" = debug ]; then',
    '    echo "entering debug mode."',
    '    tail -f /dev/null',
    '    # Debug mode never starts the server, even if the hold above is interrupted.',
    '    exit 0',
    'fi',
  ];
}

/** `random_below N`: a number in [0, N) to spread retries ($RANDOM is empty in dash). */
export function randomHelper(): string[] {
  return [
    '# Prints a random number below $1, for spreading retries: $RANDOM is not POSIX (empty in',
    '# dash). Falls back to the PID when /dev/urandom or od is unavailable.',
    'random_below() {',
    "    r=$(od -An -N2 -tu2 /dev/urandom 2>/dev/null | awk 'NR == 1 { print $1 + 0 }')",
    '    case "${r}" in',
    '        "" | *[!0-9]*) r=$$ ;;',
    '    esac',
    '    echo $((r % $1))',
    '}',
  ];
}

/**
 * `discovery_get <host:port/path>` prints the body of a discovery call and fails on any error (the
 * callers retry); `discovery_encode <text>` is the path form discovery expects.
 */
export function discoveryHelpers(ctx: ScriptContext, certDir: string): string[] {
  const certs = `--cacert ${certDir}/ca.crt --cert ${certDir}/tls.crt --key ${certDir}/tls.key`;
  const fetch = ctx.discoveryMtls
    ? `curl -sS --fail --max-time 3 ${certs} "https://$1" 2>/dev/null`
    : 'wget -qO- -T 3 "http://$1" 2>/dev/null';
  return lines(
    '# GETs <host:port/path> from discovery: prints the answer, fails on any error (callers retry).',
    ctx.discoveryMtls && '# Discovery requires a client certificate: curl presents ours (wget may not).',
    'discovery_get() {',
    `    ${fetch}`,
    '}',
    '# Discovery takes base64 of the text plus a newline (as echo prints it), without line wrapping.',
    'discovery_encode() {',
    "    printf '%s\\n' \"$1\" | base64 | tr -d '\\n '",
    '}',
  );
}

/**
 * A once-per-second retry loop: gives up with exit 1 when `threshold` seconds have passed, so the
 * body runs `threshold - 1` times (the operator's count). The body `break`s when done.
 */
export function waitLoop(threshold: number, timeoutMessage: string, body: Lines): string[] {
  return lines(
    'elapsed=0',
    'while true; do',
    indent(
      lines(
        'sleep 1',
        'elapsed=$((elapsed + 1))',
        `if [ "\${elapsed}" -ge ${threshold} ]; then`,
        indent([`echo "${timeoutMessage}" >&2`, 'exit 1']),
        'fi',
        body,
      ),
    ),
    'done',
  );
}

/** Loop body: break once `dig` answers A or AAAA records for the name in `domainVar`. */
export function digCheck(domainVar: string): string[] {
  const d = `\${${domainVar}}`;
  return [
    `if ! answer=$(dig "${d}" A "${d}" AAAA +search +short); then`,
    `    echo "resolving ${d} failed"`,
    '    echo "${answer}"',
    '    continue',
    'fi',
    'if [ -n "${answer}" ]; then',
    `    echo "resolving ${d} succeeded"`,
    '    echo "${answer}"',
    '    break',
    'fi',
    `echo "resolving ${d} returned no record"`,
  ];
}

/**
 * Loop body: break once the name in `domainVar` resolves to an address of this pod. PD looks up with
 * dig, TiKV with getent. Every address `hostname -I` prints counts as the pod's.
 */
export function ipMatchCheck(domainVar: string, lookup: 'dig' | 'getent'): string[] {
  const d = `\${${domainVar}}`;
  const failed = [`    echo "resolving ${d} failed"`, '    echo "${lookup}"', '    continue'];
  const resolve =
    lookup === 'dig'
      ? lines(`if ! lookup=$(dig "${d}" A "${d}" AAAA +search +short); then`, failed, 'fi', 'resolved=${lookup}')
      : lines(
          `if ! lookup=$(getent ahosts "${d}"); then`,
          failed,
          'fi',
          "resolved=$(printf '%s\\n' \"${lookup}\" | sed -n 's/ *STREAM.*//p')",
        );
  return lines(
    resolve,
    'if [ -z "${resolved}" ]; then',
    `    echo "resolving ${d} returned no record"`,
    '    continue',
    'fi',
    `echo "resolving ${d} succeeded"`,
    'echo "${resolved}"',
    '# The name may still point at a previous pod: go on only once it is one of ours.',
    'host_ips=$(hostname -I)',
    'echo "pod IPs: ${host_ips}"',
    'found=false',
    '# shellcheck disable=SC2086 # one address per word',
    'for ip in ${resolved}; do',
    '    case " ${host_ips} " in',
    '        *" ${ip} "*) found=true; break ;;',
    '    esac',
    'done',
    'if [ "${found}" = true ]; then',
    '    echo "a resolved IP is one of the pod IPs"',
    '    break',
    'fi',
    'echo "no resolved IP is one of the pod IPs"',
  );
}

/**
 * acrossK8s: ask discovery `/verify` which PD endpoints this Kubernetes cluster can reach; the answer
 * is left in `$result`. Failures are retried on every shell, with or without pipefail.
 */
export function verifyPdEndpoints(pdUrl: string, discoveryAddr: string, stripHttp: boolean): string[] {
  return lines(
    '# acrossK8s: discovery answers the PD endpoints reachable from this Kubernetes cluster.',
    `pd_url="${pdUrl}"`,
    'encoded_pd_url=$(discovery_encode "${pd_url}")',
    `until result=$(discovery_get "${discoveryAddr}/verify/\${encoded_pd_url}"); do`,
    '    echo "waiting for the verification of PD endpoints ..."',
    '    sleep "$(random_below 5)"',
    'done',
    stripHttp && "result=$(printf '%s\\n' \"${result}\" | sed 's|http://||g')",
  );
}

/** `ARGS`, one flag per line (values may hold `${VAR}`, expanded when the line runs). */
export function argsLines(flags: readonly string[]): string[] {
  return flags.map((f, i) => (i === 0 ? `ARGS="${f}"` : `ARGS="\${ARGS} ${f}"`));
}

/**
 * Prints and execs the server. `ARGS` is expanded unquoted on purpose: it holds many flags, and the
 * discovery answer or STORE_LABELS may add several words. `trailing` is appended as shell words.
 */
export function execServer(binary: string, trailing = ''): string[] {
  const tail = trailing ? ` ${trailing}` : '';
  return [`echo "${binary} \${ARGS}"${tail}`, '# shellcheck disable=SC2086', `exec ${binary} \${ARGS}${tail}`];
}

/** `<host>:<PD client port>` for each PD address (TiKV and TiDB `--pd` / `--path`). */
export function pdClientEndpoints(hosts: readonly string[]): string {
  return hosts.map((h) => `${h}:${PORT.pdClient}`).join(',');
}
