/**
 * The shapes of names and words that the renderer and its start scripts rely on, in one place: the
 * input is checked with them where it is read, and the script builders assert them again.
 */

/** A Kubernetes object name or namespace (RFC 1123 label; callers also bound the length to 63). */
export const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** A namespace: an RFC 1123 label of at most 63 characters. */
export const NAMESPACE = /^(?=.{1,63}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** A name that must start with a letter (RFC 1035 label), such as a Service name. */
export const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
/** A DNS subdomain (RFC 1123): most object names; callers also bound the length to 253. */
export const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/**
 * A UTF-16 surrogate without its partner, as regular-expression source: such a string has no UTF-8
 * form (input refuses it; the YAML emitter escapes it).
 */
export const LONE_SURROGATE_SOURCE = '[\\ud800-\\udbff](?![\\udc00-\\udfff])|(?<![\\ud800-\\udbff])[\\udc00-\\udfff]';
/** A DNS domain such as `cluster.local`. */
export const DNS_DOMAIN = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
/** A relative path without shell metacharacters (`dataSubDir`). */
export const SUB_DIR = /^[A-Za-z0-9._/-]*$/;
/** A TiDB plugin name, a word of the start command. */
export const PLUGIN_NAME = /^[A-Za-z0-9._-]+$/;

/** A Go duration as time.ParseDuration takes it: `0`, or numbers with units, signed (`1h30m`, `-5m`, `.5s`). */
export const GO_DURATION = /^[-+]?(0|((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+)$/;
