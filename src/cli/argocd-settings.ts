/**
 * The settings of `tidb-gitops argocd generate`, read from the environment Argo CD gives a
 * config-management plugin's commands: the Application's plugin parameters (`PARAM_<NAME>`) and env
 * entries (`ARGOCD_ENV_<NAME>`), and what Argo CD tells every plugin of the destination in its build
 * environment: `ARGOCD_APP_NAMESPACE` (the destination namespace), `KUBE_VERSION` (the destination
 * cluster's Kubernetes version) and `KUBE_API_VERSIONS` (the API versions it serves, comma-separated,
 * as `group/version` and `group/version/Kind` entries). Environment variables are read in `cli/` alone.
 */
import { isAbsolute, normalize } from 'node:path';
import { closest } from '../base/suggest';
import { settingProblem, settingValue, type RenderSettings } from '../tidbcluster/settings';

/** The settings of `generate`, by the name shared by the env entry and the escaped parameter name. */
export const SETTING_NAMES = ['CONTROLLER_IMAGE', 'KUBE_VERSION', 'NAMESPACE', 'PATHS'] as const;
type SettingName = (typeof SETTING_NAMES)[number];

export interface GenerateSettings {
  /** @default the environment's or the inputs' RenderSettings, else this release's controller image */
  readonly controllerImage?: string;
  /** @default the environment's or the inputs' RenderSettings, else ARGOCD_APP_NAMESPACE, else none */
  readonly namespace?: string;
  /** @default ['.'] */
  readonly paths: readonly string[];
  /** @default the environment's or the inputs' RenderSettings, else KUBE_VERSION (the destination's), else 1.31 */
  readonly kubeVersion?: string;
  /** What Argo CD itself passes (destination namespace, Kubernetes version and API versions): the last resort. @default none */
  readonly fallback?: RenderSettings;
}

export interface SettingsResult {
  readonly settings: GenerateSettings;
  /** Unknown names, reported but not fatal. */
  readonly notes: string[];
  readonly errors: string[];
}

type Env = Readonly<Record<string, string | undefined>>;

/** Argo CD's escaping of a parameter name into its `PARAM_` variable: upper case, non-alphanumerics as `_`. */
export function paramVariable(name: string): string {
  return `PARAM_${name.toUpperCase().replace(/[^A-Z0-9_]/g, '_')}`;
}

const present = (v: string | undefined): v is string => v !== undefined && v.trim() !== '';

/**
 * Reads the settings from Argo CD's environment: a parameter (`PARAM_<NAME>`) wins over an env entry
 * (`ARGOCD_ENV_<NAME>`), as the parameter is the more specific, UI-visible way to set it; the namespace
 * falls back to the Application's destination namespace. Empty values count as unset, since Argo CD
 * passes env entries that are set to "".
 */
export function readSettings(env: Env): SettingsResult {
  const notes = unknownNames(env);
  const errors: string[] = [];
  const pick = (name: SettingName): { value: string; from: string } | undefined => {
    for (const from of [`PARAM_${name}`, `ARGOCD_ENV_${name}`]) {
      const value = env[from];
      if (present(value)) return { value: value.trim(), from };
    }
    return undefined;
  };
  const namespace = pick('NAMESPACE');
  const paths = pickPaths(env, pick('PATHS'));
  const kubeVersion = pick('KUBE_VERSION');
  // What Argo CD passes of the destination (its namespace, Kubernetes version, APIs): used when nothing else names one.
  const destination = destinationSettings(env);
  for (const [name, v] of [
    ['kubeVersion', kubeVersion],
    ['namespace', namespace],
  ] as const) {
    const problem = v && settingProblem(name, v.value);
    if (v && problem) errors.push(`${v.from}: ${problem}`);
  }
  errors.push(...destination.errors);
  for (const p of paths.list) {
    const problem = pathProblem(p);
    if (problem) errors.push(`${paths.from}: ${JSON.stringify(p)} ${problem}`);
  }
  return {
    settings: {
      controllerImage: pick('CONTROLLER_IMAGE')?.value,
      namespace: namespace?.value,
      paths: paths.list,
      kubeVersion: kubeVersion?.value,
      ...(destination.fallback && { fallback: destination.fallback }),
    },
    notes,
    errors,
  };
}

/** `paths` as a string parameter or env entry (space-separated), or as an array parameter (`PARAM_PATHS_<i>`). */
function pickPaths(env: Env, text: { value: string; from: string } | undefined): { list: string[]; from: string } {
  const fromParam = text?.from === 'PARAM_PATHS';
  const items = Object.keys(env)
    .map((k) => /^PARAM_PATHS_(\d+)$/.exec(k))
    .filter((m): m is RegExpExecArray => m !== null && present(env[m[0]]))
    .sort((a, b) => Number(a[1]) - Number(b[1]))
    .map((m) => env[m[0]]!.trim());
  if (!fromParam && items.length > 0) return { list: items, from: 'PARAM_PATHS_<n>' };
  if (text) return { list: text.value.split(/\s+/), from: text.from };
  return { list: ['.'], from: 'PATHS' };
}

/** Paths stay inside the source directory: Argo CD hands the plugin a copy of the repository, nothing more. */
function pathProblem(p: string): string | undefined {
  if (p === '-') return 'is standard input, which the plugin does not read; name a file or directory';
  if (isAbsolute(p)) return 'is an absolute path; give a path relative to the source directory';
  const n = normalize(p);
  if (n === '..' || n.startsWith('../')) return 'leaves the source directory; give a path inside it';
  return undefined;
}

const KNOWN_VARIABLES = new Set(SETTING_NAMES.flatMap((n) => [`PARAM_${n}`, `ARGOCD_ENV_${n}`]));

/** A note for each `PARAM_*` or `ARGOCD_ENV_*` name that is no setting, so that a typo does not go unseen. */
function unknownNames(env: Env): string[] {
  const notes: string[] = [];
  for (const key of Object.keys(env).sort()) {
    const prefix = key.startsWith('PARAM_') ? 'PARAM_' : key.startsWith('ARGOCD_ENV_') ? 'ARGOCD_ENV_' : undefined;
    if (!prefix || KNOWN_VARIABLES.has(key) || /^PARAM_PATHS_\d+$/.test(key)) continue;
    const name = key.slice(prefix.length);
    const hint = closest(name, SETTING_NAMES, { maxDistance: (_, setting) => Math.max(2, Math.floor(setting.length / 4)) });
    const what = prefix === 'PARAM_' ? 'plugin parameter' : 'plugin env entry';
    notes.push(
      `note: ${key}: ${what} ${JSON.stringify(name)} is not a setting of tidb-gitops and was ignored` +
        (hint ? `; did you mean ${prefix}${hint}?` : ` (settings: ${SETTING_NAMES.join(', ')})`),
    );
  }
  return notes;
}

/** The variable Argo CD sets for each setting it knows of the destination. */
export const DESTINATION_VARIABLES = {
  kubeVersion: 'KUBE_VERSION',
  namespace: 'ARGOCD_APP_NAMESPACE',
  apiVersions: 'KUBE_API_VERSIONS',
} as const satisfies Partial<Record<keyof RenderSettings, string>>;

/** The destination's settings Argo CD passes (an empty value counts as unset), and a message per bad one. */
export function destinationSettings(env: Env): { fallback?: RenderSettings; errors: string[] } {
  const fallback: { -readonly [K in keyof RenderSettings]?: string } = {};
  const errors: string[] = [];
  for (const [name, variable] of Object.entries(DESTINATION_VARIABLES) as [keyof typeof DESTINATION_VARIABLES, string][]) {
    const value = env[variable]?.trim();
    if (!value) continue;
    const problem = settingProblem(name, value);
    if (problem) errors.push(`${variable}: ${problem}`);
    else fallback[name] = settingValue(name, value);
  }
  return { ...(Object.keys(fallback).length > 0 && { fallback }), errors };
}
