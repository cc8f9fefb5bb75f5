/**
 * Render settings kept beside the clusters, so that `render`, `render --check`, `diff`, the Argo CD
 * plugin and a CI job render the same objects without repeating flags:
 *
 * ```yaml
 * apiVersion: tidb-gitops.io/v1alpha1
 * kind: RenderSettings
 * kubeVersion: "1.32"
 * controllerImage: registry.example.com/tidb-gitops:0.1.0
 * namespace: tidb
 * apiVersions: [v1, apps/v1, monitoring.coreos.com/v1]   # what `kubectl api-versions` prints
 * ```
 *
 * A setting comes from, first to last: the command line (or the Argo CD plugin's parameters), the
 * environment (`TIDB_GITOPS_KUBE_VERSION`, `TIDB_GITOPS_CONTROLLER_IMAGE`, `TIDB_GITOPS_NAMESPACE`,
 * `TIDB_GITOPS_API_VERSIONS`), a RenderSettings document among the inputs, what Argo CD passes, and
 * the defaults. Pure functions, no I/O.
 */
import { NAMESPACE } from '../base/patterns';
import { readYaml } from '../base/yaml/read';
import { imageProblem } from './api-rules';
import { parseApiVersions } from './api-versions';
import { formatIssue, type SpecIssue } from './errors';
import { parseKubeVersion } from './kube-version';
import type { ResolveOptions } from './resolve';

export const SETTINGS_API_VERSION = 'tidb-gitops.io/v1alpha1';
export const SETTINGS_KIND = 'RenderSettings';

/** The settings a render takes; each unset one falls through to the next source. */
export interface RenderSettings {
  /** @default unset */
  readonly kubeVersion?: string;
  /** @default unset */
  readonly controllerImage?: string;
  /** @default unset */
  readonly namespace?: string;
  /**
   * The API versions the target cluster serves, comma-separated and sorted (`v1,apps/v1,...`): what
   * `kubectl api-versions` prints, or Argo CD's `KUBE_API_VERSIONS`. A RenderSettings document may
   * give it as a YAML list. Objects of an optional integration whose API is not listed (the Prometheus
   * Operator's PodMonitors) are left out with a warning.
   * @default unset: not known, so they are rendered for a later Argo CD sync wave
   */
  readonly apiVersions?: string;
}

/** The environment variable of each setting. */
export const SETTINGS_ENV: Readonly<Record<keyof RenderSettings, string>> = {
  kubeVersion: 'TIDB_GITOPS_KUBE_VERSION',
  controllerImage: 'TIDB_GITOPS_CONTROLLER_IMAGE',
  namespace: 'TIDB_GITOPS_NAMESPACE',
  apiVersions: 'TIDB_GITOPS_API_VERSIONS',
};

const FIELDS = new Set(['apiVersion', 'kind', 'metadata', 'kubeVersion', 'controllerImage', 'namespace', 'apiVersions']);

/** Whether a document is a RenderSettings document (of any version of the group, to report it). */
export function isSettingsDocument(doc: unknown): boolean {
  const d = doc as Record<string, unknown> | null;
  return (
    !!d &&
    typeof d === 'object' &&
    d.kind === SETTINGS_KIND &&
    typeof d.apiVersion === 'string' &&
    d.apiVersion.startsWith('tidb-gitops.io/')
  );
}

/** Why `ns` cannot be a namespace (a DNS label of at most 63 characters), or undefined. */
export function namespaceProblem(ns: string): string | undefined {
  return NAMESPACE.test(ns)
    ? undefined
    : `${JSON.stringify(ns)} is not a namespace (a DNS label: lowercase letters, digits and '-', at most 63)`;
}

/** Every problem with one value of a setting, wherever it came from. */
export function settingProblem(name: keyof RenderSettings, value: unknown): string | undefined {
  return settingIssue(name, value)?.message;
}

/** The problem with one value of a setting, at its path in a RenderSettings document (an item of a list). */
function settingIssue(name: keyof RenderSettings, value: unknown): SpecIssue | undefined {
  if (name === 'apiVersions') {
    const v = parseApiVersions(value);
    return 'error' in v ? { path: v.index === undefined ? name : `${name}[${v.index}]`, message: v.error } : undefined;
  }
  const message = scalarProblem(name, value);
  return message === undefined ? undefined : { path: name, message };
}

function scalarProblem(name: Exclude<keyof RenderSettings, 'apiVersions'>, value: unknown): string | undefined {
  if (typeof value !== 'string' || value === '') return `expected a non-empty string, got ${JSON.stringify(value)}`;
  if (name === 'kubeVersion') {
    const v = parseKubeVersion(value);
    return 'error' in v ? v.error : undefined;
  }
  if (name === 'namespace') return namespaceProblem(value);
  return imageProblem(value);
}

/** A setting's value as the render takes it: the API versions as one sorted, comma-separated string. */
export function settingValue(name: keyof RenderSettings, value: unknown): string {
  if (name !== 'apiVersions') return value as string;
  const v = parseApiVersions(value);
  return 'list' in v ? v.list.join(',') : String(value);
}

/** The settings of a RenderSettings document, and its problems (paths without lines). */
export function readSettingsDocument(doc: Record<string, unknown>): { settings: RenderSettings; issues: SpecIssue[] } {
  const issues: SpecIssue[] = [];
  if (doc.apiVersion !== SETTINGS_API_VERSION)
    issues.push({ path: 'apiVersion', message: `expected ${SETTINGS_API_VERSION}, got ${JSON.stringify(doc.apiVersion)}` });
  for (const key of Object.keys(doc))
    if (!FIELDS.has(key))
      issues.push({
        path: key,
        message: 'unknown field; a RenderSettings document takes kubeVersion, controllerImage, namespace and apiVersions',
      });
  const settings: { -readonly [K in keyof RenderSettings]?: string } = {};
  for (const name of Object.keys(SETTINGS_ENV) as (keyof RenderSettings)[]) {
    if (doc[name] === undefined) continue;
    const problem = settingIssue(name, doc[name]);
    if (problem) issues.push(problem);
    else settings[name] = settingValue(name, doc[name]);
  }
  return { settings, issues };
}

/** The settings the environment gives, and a message per bad one. */
export function settingsFromEnv(env: Readonly<Record<string, string | undefined>>): { settings: RenderSettings; errors: string[] } {
  const settings: { -readonly [K in keyof RenderSettings]?: string } = {};
  const errors: string[] = [];
  for (const [name, variable] of Object.entries(SETTINGS_ENV) as [keyof RenderSettings, string][]) {
    const value = env[variable]?.trim();
    if (!value) continue;
    const problem = settingProblem(name, value);
    if (problem) errors.push(`${variable}: ${problem}`);
    else settings[name] = settingValue(name, value);
  }
  return { settings, errors };
}

/** Each setting from the first source that has it. */
export function layerSettings(...sources: readonly RenderSettings[]): ResolveOptions {
  const pick = (name: keyof RenderSettings) => sources.find((s) => s[name] !== undefined)?.[name];
  const out: { -readonly [K in keyof ResolveOptions]?: string } = {};
  for (const name of Object.keys(SETTINGS_ENV) as (keyof RenderSettings)[]) {
    const v = pick(name);
    if (v !== undefined) out[name] = v;
  }
  return out;
}

/** Where a RenderSettings document was read. */
interface SettingsSource {
  readonly where: string;
  readonly settings: RenderSettings;
}

/**
 * The settings of the RenderSettings documents among the inputs (they must agree), and a message per
 * problem, each with its file, document, path and line. Texts without the word are not parsed again.
 */
export function settingsFromInputs(inputs: readonly { file: string; text: string }[]): { settings: RenderSettings; errors: string[] } {
  const found: SettingsSource[] = [];
  const errors: string[] = [];
  for (const input of inputs) {
    if (!input.text.includes(SETTINGS_KIND)) continue;
    readYaml(input.text).forEach((doc, i) => {
      if (doc.syntax.length > 0 || !isSettingsDocument(doc.value)) return;
      const source = { file: input.file, document: i + 1 };
      const { settings, issues } = readSettingsDocument(doc.value as Record<string, unknown>);
      for (const issue of issues) errors.push(formatIssue({ ...issue, line: doc.line(issue.path) }, source));
      found.push({ where: `${input.file}: document ${i + 1}`, settings });
    });
  }
  const settings: { -readonly [K in keyof RenderSettings]?: string } = {};
  for (const name of Object.keys(SETTINGS_ENV) as (keyof RenderSettings)[]) {
    const first = found.find((f) => f.settings[name] !== undefined);
    if (!first) continue;
    settings[name] = first.settings[name];
    const other = found.find((f) => f.settings[name] !== undefined && f.settings[name] !== first.settings[name]);
    if (other)
      errors.push(
        `${other.where}: ${name}: ${JSON.stringify(other.settings[name])} differs from ${JSON.stringify(first.settings[name])} in ${first.where}; the RenderSettings of one render must agree`,
      );
  }
  return { settings, errors };
}
