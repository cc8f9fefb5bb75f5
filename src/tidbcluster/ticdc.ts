/**
 * `spec.ticdc`: what TiCDC resolves beyond the common component fields (the four config keys that
 * become the `TZ` env and start flags, sink certificates, the new architecture), its defaults, the
 * fields it takes, and the word checks Pump shares (a value placed in the start command).
 */
import { isTomlFloat, type TomlTable, type TomlValue } from '../base/toml';
import type { DefaultEntry } from './defaults';
import type { SpecIssue } from './errors';
import { resolveComponent, type Ctx, type ResolvedComponent } from './component';
import type { ComponentFields } from './fields';
import type { TiCDCSpec } from './types';
import { DNS1123_LABEL, GO_DURATION } from '../base/patterns';

export interface ResolvedTiCDC extends ResolvedComponent {
  readonly kind: 'ticdc';
  /** Secrets mounted for sinks (`tlsClientSecretNames`), in order. */
  readonly tlsClientSecretNames: readonly string[];
  /** `--gc-ttl`, seconds: config `gc-ttl`. */
  readonly gcTTL: number;
  /** `--log-level`: config `log-level`. */
  readonly logLevel: string;
  /** `--log-file`: config `log-file` (empty: stderr). */
  readonly logFile: string;
  /** `TZ`: config `tz`, else `spec.timezone`, else `UTC`. */
  readonly timezone: string;
  /** The config has keys beyond the four above: TiCDC gets a ConfigMap and `--config`. */
  readonly configFile: boolean;
  /**
   * TiCDC runs its new architecture: config `newarch = true`, or the env `TICDC_NEWARCH=true`
   * (pingcap/ticdc cmd/cdc/server/server.go `isNewArchEnabled`, v8.5.4+). The controller reads it
   * from the Pod to know what a drain answer means. @default false
   */
  readonly newArchitecture: boolean;
}

/** Component defaults (tidb-operator v1's values). */
export const TICDC_DEFAULTS = {
  gcTTL: 86400,
  logLevel: 'info',
  logFile: '',
  timezone: 'UTC',
  gracefulShutdownTimeout: '10m',
} as const;

export const TICDC_DEFAULTS_TABLE: readonly DefaultEntry[] = [
  { field: 'spec.ticdc.config gc-ttl', value: TICDC_DEFAULTS.gcTTL, note: 'seconds; `--gc-ttl`' },
  { field: 'spec.ticdc.config log-level', value: TICDC_DEFAULTS.logLevel, note: '`--log-level`' },
  { field: 'spec.ticdc.config log-file', value: '""', note: '`--log-file` (stderr)' },
  { field: 'spec.ticdc.config tz', value: 'spec.timezone', note: '`TZ` of TiCDC; `UTC` when both are unset' },
  { field: 'spec.ticdc.gracefulShutdownTimeout', value: TICDC_DEFAULTS.gracefulShutdownTimeout, note: 'read by the controller' },
  { field: 'spec.ticdc.tlsClientSecretNames', value: '[]', note: 'mounted at /var/lib/sink-tls/<name>' },
];

/** Config keys that become the `TZ` env and flags; only these in a config mean "no ConfigMap". */
export const TICDC_FLAG_KEYS = ['tz', 'gc-ttl', 'log-level', 'log-file'] as const;

/** Mapping-form config: tidb-operator's typed struct reads these JSON names (and drops the rest). */
const MAPPING_KEYS: Record<string, (typeof TICDC_FLAG_KEYS)[number]> = {
  timezone: 'tz',
  gcTTL: 'gc-ttl',
  logLevel: 'log-level',
  logFile: 'log-file',
};

/** Fields of `spec.ticdc` beyond the common ones, and common ones it does not take (see `support.ts`). */
export const TICDC_FIELDS: ComponentFields = {
  extra: ['tlsClientSecretNames', 'gracefulShutdownTimeout'],
  // maxFailoverCount is not in the CRD for TiCDC: the schema check reports it as unknown.
  except: ['readinessProbe', 'maxFailoverCount'],
  reasons: { readinessProbe: 'tidb-operator gives TiCDC no readiness probe, so the field would have no effect; remove it' },
};

/** A Kubernetes volume name (RFC 1123 label): the sink secrets name their volumes. */
/** Volume names the TiCDC pod uses itself. */
const OWN_VOLUMES = ['annotations', 'ticdc-tls', 'cluster-client-tls', 'config'];
/** Go `time.ParseDuration` syntax, as `metav1.Duration` reads it. */
/** Log levels and file paths are words of the start command. */
export const LOG_LEVEL = /^[A-Za-z]+$/;
export const LOG_FILE = /^[A-Za-z0-9._/-]*$/;
const INT32_MAX = 2 ** 31 - 1;

export function resolveTiCDC(ctx: Ctx): ResolvedTiCDC {
  const spec = ctx.spec.ticdc!;
  const base = resolveComponent(ctx, 'ticdc', spec);
  const path = 'spec.ticdc';
  const mapped = isMapping(spec.config);
  const config = mapped ? mappingConfig(spec.config as Record<string, unknown>, `${path}.config`, ctx.issues) : base.config;
  // Problems are reported under the key the user wrote: TiCDC's in TOML, the struct's in a mapping.
  const at = (tomlKey: string, mappingKey: string) => `${path}.config.${mapped ? mappingKey : tomlKey}`;
  const tz = at('tz', 'timezone');
  const gcTTL = at('gc-ttl', 'gcTTL');
  const logLevel = at('log-level', 'logLevel');
  const logFile = at('log-file', 'logFile');
  const { maxFailoverCount: _none, ...settings } = base.settings;
  noStorage(spec, path, ctx.issues);
  return {
    ...base,
    kind: 'ticdc',
    config,
    tlsClientSecretNames: sinkSecrets(spec, path, ctx.issues),
    gcTTL: int32Value(config['gc-ttl'], gcTTL, ctx.issues) ?? TICDC_DEFAULTS.gcTTL,
    logLevel:
      wordValue(config['log-level'], logLevel, LOG_LEVEL, 'a log level such as info or debug', ctx.issues) ?? TICDC_DEFAULTS.logLevel,
    logFile:
      wordValue(config['log-file'], logFile, LOG_FILE, 'a file path of letters, digits, ., _, / and -', ctx.issues) ??
      TICDC_DEFAULTS.logFile,
    timezone: stringValue(config.tz, tz, ctx.issues) ?? (ctx.spec.timezone || TICDC_DEFAULTS.timezone),
    configFile: Object.keys(config).some((k) => !(TICDC_FLAG_KEYS as readonly string[]).includes(k)),
    newArchitecture: newArchitecture(config.newarch, spec, path, ctx.issues),
    settings: {
      ...settings,
      gracefulShutdownTimeout: duration(spec.gracefulShutdownTimeout, `${path}.gracefulShutdownTimeout`, ctx.issues),
    },
  };
}

/**
 * Whether TiCDC starts its new architecture. TiCDC decodes its config strictly, so a `newarch` that
 * is not a boolean stops it; the env counts when its value is exactly `true`, as TiCDC reads it.
 */
function newArchitecture(value: TomlValue | undefined, spec: TiCDCSpec, path: string, issues: SpecIssue[]): boolean {
  if (value !== undefined && typeof value !== 'boolean') {
    issues.push({
      path: `${path}.config.newarch`,
      message: `expected true or false (TiCDC refuses to start with any other value), got ${describe(value)}`,
    });
  }
  const env = (spec.env ?? []).find((e) => e.name === 'TICDC_NEWARCH');
  return value === true || env?.value === 'true';
}

function isMapping(config: unknown): config is Record<string, unknown> {
  return typeof config === 'object' && config !== null && !Array.isArray(config);
}

/**
 * A config mapping goes through tidb-operator's typed struct, which knows four fields and silently
 * drops everything else. Here the four are renamed to TiCDC's keys and anything else is an error.
 */
function mappingConfig(config: Record<string, unknown>, path: string, issues: SpecIssue[]): TomlTable {
  const out: TomlTable = {};
  for (const [key, value] of Object.entries(config)) {
    const target = MAPPING_KEYS[key];
    if (target) {
      if (value !== null && value !== undefined) out[target] = value as TomlValue;
      continue;
    }
    const mappingName = Object.keys(MAPPING_KEYS).find((k) => MAPPING_KEYS[k] === key);
    const hint = mappingName ? `write ${mappingName} instead, or give` : 'give';
    issues.push({
      path: `${path}.${key}`,
      message:
        `a config mapping only takes ${Object.keys(MAPPING_KEYS).join(', ')} (tidb-operator reads a mapping into its four-field TiCDCConfig, so every other key would be lost); ` +
        `${hint} TiCDC's config as a TOML string (config: |)`,
    });
  }
  return out;
}

/** TiCDC has no data volume: a storage size would be ignored, as tidb-operator ignores it. */
function noStorage(spec: TiCDCSpec, path: string, issues: SpecIssue[]): void {
  for (const list of ['requests', 'limits'] as const) {
    if (spec[list]?.storage !== undefined) {
      issues.push({
        path: `${path}.${list}.storage`,
        message: 'TiCDC has no data volume (tidb-operator ignores this size); use storageVolumes for extra storage, or remove it',
      });
    }
  }
}

function sinkSecrets(spec: TiCDCSpec, path: string, issues: SpecIssue[]): string[] {
  const names = spec.tlsClientSecretNames ?? [];
  const taken = new Set([
    ...OWN_VOLUMES,
    ...(spec.additionalVolumes ?? []).map((v) => v.name),
    ...(spec.storageVolumes ?? []).map((v) => `ticdc-${v.name}`),
  ]);
  names.forEach((name, i) => {
    const at = `${path}.tlsClientSecretNames[${i}]`;
    if (!DNS1123_LABEL.test(name) || name.length > 63) {
      issues.push({
        path: at,
        message: `${JSON.stringify(name)} also names a pod volume, so it must be a DNS label (lowercase letters, digits, -; at most 63)`,
      });
    } else if (taken.has(name)) {
      issues.push({
        path: at,
        message: `${JSON.stringify(name)} is already a volume of the TiCDC pod (listed twice, or an own, storage or additional volume); rename the secret`,
      });
    }
    taken.add(name);
  });
  return names;
}

function duration(value: string | undefined, path: string, issues: SpecIssue[]): string {
  if (value === undefined) return TICDC_DEFAULTS.gracefulShutdownTimeout;
  if (!GO_DURATION.test(value)) issues.push({ path, message: `expected a Go duration such as 10m or 1h30m, got ${JSON.stringify(value)}` });
  return value;
}

function int32Value(value: TomlValue | undefined, path: string, issues: SpecIssue[]): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'number' && !isTomlFloat(value) && Number.isInteger(value) && value >= 0 && value <= INT32_MAX) return value;
  issues.push({ path, message: `expected a whole number of seconds (0 to ${INT32_MAX}), got ${describe(value)}` });
  return undefined;
}

function stringValue(value: TomlValue | undefined, path: string, issues: SpecIssue[]): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string') return value;
  issues.push({ path, message: `expected a string, got ${describe(value)}` });
  return undefined;
}

/** A string placed as a word of the start command: checked so it cannot break out of it. */
export function wordValue(
  value: TomlValue | undefined,
  path: string,
  pattern: RegExp,
  hint: string,
  issues: SpecIssue[],
): string | undefined {
  const s = stringValue(value, path, issues);
  if (s === undefined) return undefined;
  if (pattern.test(s)) return s;
  issues.push({ path, message: `expected ${hint} (it becomes a word of the start command), got ${JSON.stringify(s)}` });
  return undefined;
}

function describe(value: TomlValue): string {
  if (isTomlFloat(value)) return `the float ${String(value)}`;
  if (typeof value === 'bigint') return value.toString();
  return JSON.stringify(value) ?? String(value);
}
