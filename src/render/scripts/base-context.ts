/**
 * What every start script needs to know, already resolved from the TidbCluster spec (defaults applied
 * by `tidbcluster/`, never here): the context type the component contexts extend, how it is built
 * from the resolved cluster, and the checks every context shares. Each component's own context, its
 * checks and its script are in `scripts/<component>.ts`.
 *
 * Values that end up inside the script text are checked (`*ContextErrors`), so that a name can never
 * break out of the shell word it is placed in.
 */
import type { ResolvedCluster } from '../../tidbcluster/resolve';
import { DNS1123_LABEL, DNS_DOMAIN, SUB_DIR } from '../../base/patterns';

/** `spec.startScriptVersion`; any value other than `v2` means `v1`, as in the operator. */
export type StartScriptVersion = 'v1' | 'v2';

/** `https` when `spec.tlsCluster.enabled`, else `http`. */
export type Scheme = 'http' | 'https';

/**
 * `spec.startScriptV2FeatureFlags` as booleans. Only v2 scripts read them. `BashShebang` has no field:
 * these scripts are POSIX sh and always start with `#!/bin/sh` (the container runs `/bin/sh <file>`
 * anyway, so the operator's flag only changed the first line's text).
 */
export interface StartScriptV2FeatureFlags {
  /**
   * `WaitForDnsNameIpMatch`: PD and TiKV wait until their own DNS name resolves to one of the pod's
   * IPs, so that they never advertise a name still pointing at a previous pod.
   * @default false
   */
  readonly waitForDnsNameIpMatch: boolean;
  /**
   * `PreferPDAddressesOverDiscovery`: when {@link ScriptContext.pdAddresses} is non-empty, PD joins
   * those addresses and TiKV/TiDB use them as PD endpoints, instead of asking discovery.
   * @default false
   */
  readonly preferPdAddressesOverDiscovery: boolean;
  /** `NoWaitDNS`: PD starts without waiting for its own DNS name to resolve. @default false */
  readonly noWaitDns: boolean;
}

/** No v2 feature flag set (`spec.startScriptV2FeatureFlags` empty). */
export const NO_FEATURE_FLAGS: StartScriptV2FeatureFlags = Object.freeze({
  waitForDnsNameIpMatch: false,
  preferPdAddressesOverDiscovery: false,
  noWaitDns: false,
});

/** The PD of another TidbCluster (`spec.cluster`), used when this cluster has no PD of its own. */
export interface RemotePdRef {
  /**
   * `spec.cluster.name`. Scripts address its PD as `<name>-pd:2379`, a short name, exactly as the
   * operator does: it resolves from the same namespace (or through DNS search domains) only.
   * `spec.cluster.namespace` / `clusterDomain` play no part in the start scripts.
   */
  readonly name: string;
}

/** Fields every start script reads. */
export interface ScriptContext {
  /** `metadata.name` of the TidbCluster. Required. */
  readonly clusterName: string;
  /**
   * `metadata.namespace`. Required for v2 scripts, which bake it in; v1 scripts read `$NAMESPACE`
   * from the pod's environment at run time and ignore this field.
   * @default undefined
   */
  readonly namespace?: string;
  /** `spec.clusterDomain`; `''` or undefined means none (names end in `.svc`). @default '' */
  readonly clusterDomain?: string;
  /** URL scheme of PD's own URLs: `https` when `spec.tlsCluster.enabled`. @default 'http' */
  readonly scheme: Scheme;
  /** `spec.acrossK8s`: PD is named by its FQDN; TiKV/TiDB ask discovery `/verify` for PD endpoints. @default false */
  readonly acrossK8s: boolean;
  /** `spec.startScriptVersion`. @default 'v1' */
  readonly version: StartScriptVersion;
  /** `spec.startScriptV2FeatureFlags`; ignored by v1 scripts. @default NO_FEATURE_FLAGS */
  readonly featureFlags: StartScriptV2FeatureFlags;
  /**
   * `spec.pdAddresses` (http/https URLs). Scripts read them only with the v2 flag
   * `preferPdAddressesOverDiscovery`; otherwise discovery hands them out.
   * @default []
   */
  readonly pdAddresses: readonly string[];
  /**
   * `spec.tlsCluster.enabled && spec.tlsCluster.enableDiscoveryMTLS`: discovery is called over HTTPS
   * with `curl` and the component's cluster certificate (wget does not present client certs).
   * @default false
   */
  readonly discoveryMtls: boolean;
  /**
   * `spec.cluster`, set only when this cluster has no PD of its own (`spec.pd` unset): TiKV and TiDB
   * then use the other cluster's PD. `acrossK8s` and the `preferPdAddressesOverDiscovery` flag win.
   * @default undefined
   */
  readonly remotePd?: RemotePdRef;
  /** `spec.preferIPv6`: TiKV listens on `[::]` instead of `0.0.0.0`. @default false */
  readonly preferIPv6: boolean;
}

/** The fields every component's script context shares, from the resolved cluster. */
export function baseContext(cluster: ResolvedCluster): ScriptContext {
  return {
    clusterName: cluster.name,
    namespace: cluster.namespace,
    clusterDomain: cluster.clusterDomain,
    scheme: cluster.scheme,
    acrossK8s: cluster.acrossK8s,
    version: cluster.startScriptVersion,
    featureFlags: cluster.featureFlags,
    pdAddresses: cluster.pdAddresses,
    discoveryMtls: cluster.discoveryMtls,
    // Another cluster's PD only stands in when this one has none.
    ...(!cluster.pd && cluster.joinCluster && { remotePd: { name: cluster.joinCluster.name } }),
    preferIPv6: cluster.preferIPv6,
  };
}

/**
 * What may not appear in a value placed inside a double-quoted shell string: it would end the string
 * or run a command. `${VAR}` stays allowed (the operator's own tests use `${PD_DOMAIN}` in pdAddresses).
 */
const BREAKS_DOUBLE_QUOTES = /["`\\\s]|\$\(/;

/** Adds a problem when `value` does not match `pattern`. */
export function checkPattern(errors: string[], field: string, value: string, pattern: RegExp, hint: string): void {
  if (!pattern.test(value)) errors.push(`${field}: ${JSON.stringify(value)} is not ${hint}`);
}

/** Adds a problem when `value` is not an integer >= `min`. */
export function checkInteger(errors: string[], field: string, value: number, min: number): void {
  if (!Number.isInteger(value) || value < min) {
    errors.push(`${field}: expected an integer >= ${min}, got ${JSON.stringify(value)}`);
  }
}

/** Problems with the fields every script context shares; component checks add their own. */
export function commonErrors(ctx: ScriptContext): string[] {
  const errors: string[] = [];
  checkPattern(errors, 'clusterName', ctx.clusterName, DNS1123_LABEL, 'a DNS label (lowercase letters, digits, -)');
  if (ctx.namespace !== undefined) {
    checkPattern(errors, 'namespace', ctx.namespace, DNS1123_LABEL, 'a DNS label (lowercase letters, digits, -)');
  } else if (ctx.version === 'v2') {
    errors.push('namespace: required for start script v2, which bakes it into the script');
  }
  if (ctx.clusterDomain) {
    checkPattern(errors, 'clusterDomain', ctx.clusterDomain, DNS_DOMAIN, 'a DNS domain such as cluster.local');
  }
  if (ctx.remotePd) {
    checkPattern(errors, 'remotePd.name', ctx.remotePd.name, DNS1123_LABEL, 'a DNS label (lowercase letters, digits, -)');
  }
  ctx.pdAddresses.forEach((a, i) => {
    if (a === '' || BREAKS_DOUBLE_QUOTES.test(a)) {
      const hint = 'is not a URL usable in a script (no quotes, backslashes, spaces or $( )';
      errors.push(`pdAddresses[${i}]: ${JSON.stringify(a)} ${hint}`);
    }
  });
  return errors;
}

/** Problems with a `dataSubDir` (PD, TiKV): a relative path, no shell metacharacters. */
export function dataSubDirErrors(field: string, value: string): string[] {
  const errors: string[] = [];
  checkPattern(errors, field, value, SUB_DIR, 'a relative path of letters, digits, ., _, / and -');
  return errors;
}

/** Throws one error listing every problem, so a caller fixes them all at once. */
export function assertValid(component: string, errors: readonly string[]): void {
  if (errors.length > 0) {
    throw new Error(`${component} start script: invalid context:\n  ${errors.join('\n  ')}`);
  }
}
