/**
 * `tidb-gitops argocd ...`: the commands behind the Argo CD config-management plugin (CMP v2, a sidecar
 * of argocd-repo-server, configured by argocd/plugin.yaml) and the patch that installs it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, normalize } from 'node:path';
import { parse, stringify } from 'yaml';
import { version } from '../../package.json';
import { CONTROLLER_REPOSITORY } from '../tidbcluster/defaults';
import { editDistance } from '../tidbcluster/crd-schema';
import { DEFAULT_KUBE_VERSION, KUBE_RANGE } from '../tidbcluster/kube-version';
import { readInputFile, yamlFilesUnder } from '../base/inputs';
import { renderCommand, type Io } from './render';
import { settingProblem } from '../tidbcluster/settings';

/** The plugin sidecar's image: this release's image with the CLI and plugin.yaml, built by the Dockerfile's `argocd-cmp` stage. */
export const PLUGIN_IMAGE = `${CONTROLLER_REPOSITORY}:${version}-argocd-cmp`;
/** Where the plugin's files live in the package, relative to its root. */
export const PLUGIN_CONFIG_FILE = 'argocd/plugin.yaml';
/** The health checks the patch sets: argocd-cm key (a core kind has no group), and the package's file of its Lua. */
export const HEALTH_LUA_FILES = {
  'resource.customizations.health.apps_StatefulSet': 'argocd/health/statefulset.lua',
  'resource.customizations.health.ConfigMap': 'argocd/health/configmap.lua',
  'resource.customizations.health.batch_CronJob': 'argocd/health/cronjob.lua',
} as const;
const [HEALTH_KEY, CONFIGMAP_HEALTH_KEY, CRONJOB_HEALTH_KEY] = Object.keys(HEALTH_LUA_FILES);

/** The health checks the patch sets, by argocd-cm key. */
export type HealthChecks = Readonly<Record<string, string>>;

export const ARGOCD_USAGE = `Usage: tidb-gitops argocd <command> [options]

The commands behind the Argo CD config-management plugin (argocd/plugin.yaml).

Commands:
  generate         Render every TidbCluster under the current directory (the
                   Application's source path) to stdout, as 'render .' does.
                   Argo CD runs it; settings come from the environment.
  discover         Print the path of the first file holding a TidbCluster
                   document, or nothing. Always exits 0. Argo CD runs it.
  install-patch    Print the Kustomize patches that install the plugin into an
                   Argo CD installation.

Settings of generate (the Application's spec.source.plugin):
  parameter         env entry         meaning
  controller-image  CONTROLLER_IMAGE  image of each <cluster>-discovery Deployment,
                                      for clusters whose spec.discovery names none
                                      (default: ${CONTROLLER_REPOSITORY}:${version})
  kube-version      KUBE_VERSION      Kubernetes version to render for (default:
                                      KUBE_VERSION, the destination cluster's
                                      version that Argo CD passes; without it
                                      ${DEFAULT_KUBE_VERSION}). Supported: ${KUBE_RANGE}.
  namespace         NAMESPACE         namespace for clusters whose metadata has
                                      none (default: ARGOCD_APP_NAMESPACE, the
                                      Application's destination namespace)
  paths             PATHS             space-separated files or directories inside
                                      the source directory (default: .)
  Argo CD passes a parameter as PARAM_<NAME> and an env entry as
  ARGOCD_ENV_<NAME>. A parameter wins over an env entry; an empty value counts
  as unset. Unknown PARAM_* and ARGOCD_ENV_* names are noted on stderr.

Options for install-patch:
      --image IMAGE    Image of the plugin sidecar
                       (default: ${PLUGIN_IMAGE})
  -n, --namespace NS   Name this namespace in the patches (default: none).
                       Without one, Kustomize finds argocd-repo-server and
                       argocd-cm by name, which fits Argo CD's install.yaml
                       (its objects name no namespace) with or without a
                       'namespace:' line. Only a kustomization holding two
                       Argo CD installations needs it.
      --only PART      Print one patch only: repo-server or argocd-cm
  -h, --help           Show this help.

Manifests and patches go to stdout only; notes and errors go to stderr.
Exit status: 0 done, 1 nothing rendered (invalid input, no TidbCluster), 2 usage error.
`;

const COMMANDS: Record<string, (args: readonly string[], io: Io) => number> = {
  generate,
  discover,
  'install-patch': installPatch,
};

export function argocdMain(args: readonly string[], io: Io): number {
  const [command, ...rest] = args;
  if (command === '-h' || command === '--help' || command === 'help') {
    io.stdout(ARGOCD_USAGE);
    return 0;
  }
  if (command === undefined) return usageError(io, 'argocd needs a command: generate, discover or install-patch');
  const run = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (!run) return usageError(io, `unknown argocd command ${JSON.stringify(command)}; expected generate, discover or install-patch`);
  if (rest.length === 1 && (rest[0] === '-h' || rest[0] === '--help')) {
    io.stdout(ARGOCD_USAGE);
    return 0;
  }
  return run(rest, io);
}

function usageError(io: Io, message: string): number {
  io.stderr(`tidb-gitops: ${message}\nRun 'tidb-gitops argocd --help' for usage.\n`);
  return 2;
}

// ---------------------------------------------------------------------------
// generate

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
  /** What Argo CD itself passes (destination namespace, its Kubernetes version): the last resort. @default none */
  readonly fallback?: { readonly namespace?: string; readonly kubeVersion?: string };
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
  const destination = present(env.ARGOCD_APP_NAMESPACE) ? { value: env.ARGOCD_APP_NAMESPACE.trim(), from: 'ARGOCD_APP_NAMESPACE' } : undefined;
  const paths = pickPaths(env, pick('PATHS'));
  // Argo CD sets KUBE_VERSION to the destination cluster's version: used when nothing else names one.
  const kubeVersion = pick('KUBE_VERSION');
  const destinationVersion = present(env.KUBE_VERSION) ? { value: env.KUBE_VERSION.trim(), from: 'KUBE_VERSION' } : undefined;
  const given = [['kubeVersion', kubeVersion], ['kubeVersion', destinationVersion], ['namespace', namespace], ['namespace', destination]] as const;
  for (const [name, v] of given) {
    const problem = v && settingProblem(name, v.value);
    if (v && problem) errors.push(`${v.from}: ${problem}`);
  }
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
      ...((destination || destinationVersion) && { fallback: { namespace: destination?.value, kubeVersion: destinationVersion?.value } }),
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
    const hint = closest(name, SETTING_NAMES);
    const what = prefix === 'PARAM_' ? 'plugin parameter' : 'plugin env entry';
    notes.push(
      `note: ${key}: ${what} ${JSON.stringify(name)} is not a setting of tidb-gitops and was ignored` +
        (hint ? `; did you mean ${prefix}${hint}?` : ` (settings: ${SETTING_NAMES.join(', ')})`),
    );
  }
  return notes;
}

/** The candidate within a small edit distance of `word`, if any. */
function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: { c: string; d: number } | undefined;
  for (const c of candidates) {
    const d = editDistance(word, c);
    if (d <= Math.max(2, Math.floor(c.length / 4)) && (!best || d < best.d)) best = { c, d };
  }
  return best?.c;
}

/**
 * Renders in the current directory, as Argo CD's CMP server runs it. Output is held until rendering
 * succeeded, so a failure never leaves part of a stream on stdout, and success never leaves it empty
 * (Argo CD would prune everything the Application had).
 */
function generate(args: readonly string[], io: Io): number {
  if (args.length > 0) return usageError(io, `argocd generate takes no arguments (got ${JSON.stringify(args[0])}); its settings come from the environment`);
  const { settings, notes, errors } = readSettings(io.env ?? {});
  for (const n of notes) io.stderr(`${n}\n`);
  if (errors.length > 0) {
    io.stderr(`${errors.join('\n')}\nnothing was rendered\n`);
    return 1;
  }
  let out = '';
  const code = renderCommand(
    {
      paths: settings.paths,
      namespace: settings.namespace,
      controllerImage: settings.controllerImage,
      kubeVersion: settings.kubeVersion,
      fallback: settings.fallback,
      controllerImageSetting: 'the controller-image parameter (or CONTROLLER_IMAGE, or controllerImage in a RenderSettings document)',
    },
    { stdout: (s) => (out += s), stderr: io.stderr, readStdin: () => '', env: io.env },
  );
  if (code !== 0) return code;
  if (out.trim() === '') {
    io.stderr('no manifests were rendered; nothing was printed\n');
    return 1;
  }
  io.stdout(out);
  return 0;
}

// ---------------------------------------------------------------------------
// discover

/** A top-level `kind: TidbCluster` line: at column 0, so neither commented out nor nested in another object. */
const TIDB_CLUSTER_KIND = /^kind:[ \t]*(["']?)TidbCluster\1[ \t]*(#.*)?\r?$/m;

/** Prints the first file (in the order `render .` reads them) with a TidbCluster document; exits 0 either way. */
function discover(args: readonly string[], io: Io): number {
  if (args.length > 0) return usageError(io, `argocd discover takes no arguments (got ${JSON.stringify(args[0])})`);
  const found = firstTidbClusterFile('.');
  if (found !== undefined) io.stdout(`${found}\n`);
  return 0;
}

/** The first file `render DIR` would read that holds a TidbCluster document; none if DIR cannot be walked. */
export function firstTidbClusterFile(dir: string): string | undefined {
  let files: string[];
  try {
    files = yamlFilesUnder(dir);
  } catch {
    return undefined;
  }
  return files.find(holdsTidbCluster);
}

function holdsTidbCluster(file: string): boolean {
  try {
    return TIDB_CLUSTER_KIND.test(readInputFile(file));
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------
// install-patch

export type PatchPart = 'repo-server' | 'argocd-cm';
const PARTS: readonly PatchPart[] = ['repo-server', 'argocd-cm'];

export interface InstallPatchOptions {
  /** @default PLUGIN_IMAGE */
  readonly image?: string;
  /** The namespace the patches name; empty or unset: none, so Kustomize matches by kind and name. @default '' */
  readonly namespace?: string;
  /** @default both parts */
  readonly only?: PatchPart;
}

function installPatch(args: readonly string[], io: Io): number {
  const parsed = parseInstallPatchArgs(args);
  if (typeof parsed === 'string') return usageError(io, parsed);
  let files: { pluginName: string; health: HealthChecks };
  try {
    files = {
      pluginName: pluginName(readPackageFile(PLUGIN_CONFIG_FILE)),
      health: Object.fromEntries(Object.entries(HEALTH_LUA_FILES).map(([key, file]) => [key, readPackageFile(file)])),
    };
  } catch (e) {
    io.stderr(`tidb-gitops: ${(e as Error).message}\n`);
    return 1;
  }
  io.stdout(installPatchYaml(parsed, files.pluginName, files.health));
  return 0;
}

/** Returns the options, or an error message. */
export function parseInstallPatchArgs(args: readonly string[]): InstallPatchOptions | string {
  const out: { image?: string; namespace?: string; only?: PatchPart } = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const [flag, inline] = eq > 0 ? [arg.slice(0, eq), arg.slice(eq + 1)] : [arg, undefined];
    const value = () => inline ?? args[++i];
    switch (flag) {
      case '--image':
        out.image = value();
        if (!out.image) return '--image needs an image';
        break;
      case '-n':
      case '--namespace':
        out.namespace = value();
        if (out.namespace === undefined) return `${flag} needs a namespace (or '' for none)`;
        break;
      case '--only': {
        const v = value();
        if (!PARTS.includes(v as PatchPart)) return `--only needs repo-server or argocd-cm${v ? `, got ${JSON.stringify(v)}` : ''}`;
        out.only = v as PatchPart;
        break;
      }
      default:
        return arg.startsWith('-') ? `unknown option ${JSON.stringify(arg)} for argocd install-patch` : `argocd install-patch takes no arguments (got ${JSON.stringify(arg)})`;
    }
  }
  return out;
}

/** The patch documents as one YAML stream, led by a comment that says what each part is for. */
export function installPatchYaml(opts: InstallPatchOptions, plugin: string, health: HealthChecks): string {
  const namespace = opts.namespace ?? '';
  const docs: object[] = [];
  if (opts.only !== 'argocd-cm') docs.push(repoServerPatch(opts.image ?? PLUGIN_IMAGE, namespace, plugin));
  if (opts.only !== 'repo-server') docs.push(argocdCmPatch(namespace, health));
  // The comment leads the first document instead of standing alone before a `---`, so that no reader
  // sees an empty document.
  return installPatchHeader(plugin, opts.only) + docs.map((d) => stringify(d, { lineWidth: 0 })).join('---\n');
}

function installPatchHeader(plugin: string, only: PatchPart | undefined): string {
  const intro = `# Installs the ${plugin} config-management plugin (tidb-gitops ${version}) into Argo CD. Each document is a
# strategic merge patch; list this file under \`patches:\` in a Kustomize overlay of the Argo CD install
# (Argo CD's install.yaml, with or without a \`namespace:\` line).
`;
  const repoServer = `#
# argocd-repo-server: a sidecar running Argo CD's argocd-cmp-server (shared by the repo-server through
# the var-files volume) next to the tidb-gitops CLI. Its image holds the plugin's configuration, so no
# ConfigMap is needed. Applications use it with spec.source.plugin.name: ${plugin}, or with
# spec.source.plugin: {} to match by discovery (a TidbCluster document in the source directory).
`;
  const argocdCm = `#
# argocd-cm:
# - ${HEALTH_KEY}: a StatefulSet that tidb-gitops rendered (annotation
#   tidb-gitops.io/replicas) counts as healthy only once every Pod runs the update revision and it has
#   the replicas it asks for. The tidb-gitops controller holds the partition at the replica count and
#   lowers it one Pod at a time; Argo CD's built-in check would call such a rollout healthy before any
#   Pod was updated. Every other StatefulSet is judged as Argo CD's built-in check does. Argo CD keeps
#   one check per kind: this key replaces a health check of your own for apps/StatefulSet, so merge
#   yours into its fallback branch if you have one.
# - ${CONFIGMAP_HEALTH_KEY}: a one-shot Backup or Restore renders as a ConfigMap (label
#   tidb-gitops.io/operation) holding the Job the tidb-gitops controller runs once; it is Progressing
#   until the run is over, Healthy once it completed, Degraded when it failed, as the controller notes
#   in tidb-gitops.io/phase. Every other ConfigMap stays Healthy.
# - ${CRONJOB_HEALTH_KEY}: a BackupSchedule renders as a CronJob (label
#   tidb.pingcap.com/backup-schedule); it is Degraded while the tidb-gitops controller notes in
#   tidb-gitops.io/backup-health that its last run failed, was lost or cannot start, or that its
#   retention fails, which the CronJob's own status cannot show. Every other CronJob is judged as Argo
#   CD's built-in check does; this key replaces a health check of your own for batch/CronJob.
# - application.resourceTrackingMethod: annotation. With the default label tracking, Argo CD treats
#   every object labelled app.kubernetes.io/instance=<app name> as part of the app. The rendered
#   objects carry app.kubernetes.io/instance=<cluster name>, so when the Application is named like the
#   cluster, objects made in the cluster (the controller's <cluster>-status ConfigMap, the
#   StatefulSets' PVCs) would be shown as extra and pruned. Argo CD 3.0 and later track by annotation
#   by default; the setting keeps 2.x installs safe too.
`;
  return intro + (only === 'argocd-cm' ? '' : repoServer) + (only === 'repo-server' ? '' : argocdCm);
}

/** The sidecar and its scratch volume, merged by name into Argo CD's argocd-repo-server Deployment. */
export function repoServerPatch(image: string, namespace: string, plugin: string): object {
  const tmp = `${plugin}-tmp`;
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: patchMetadata('argocd-repo-server', namespace),
    spec: {
      template: {
        // Kustomize merges the sidecar in first; this keeps `kubectl logs` and `kubectl exec` on the repo-server.
        metadata: { annotations: { 'kubectl.kubernetes.io/default-container': 'argocd-repo-server' } },
        spec: {
          containers: [
            {
              name: plugin,
              image,
              // Argo CD's CMP server, copied into var-files by the repo-server's init container; it
              // reads /home/argocd/cmp-server/config/plugin.yaml (baked into the image) and runs the CLI.
              command: ['/var/run/argocd/argocd-cmp-server'],
              env: [{ name: 'HOME', value: '/tmp' }],
              securityContext: {
                runAsNonRoot: true,
                runAsUser: 999,
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                capabilities: { drop: ['ALL'] },
                seccompProfile: { type: 'RuntimeDefault' },
              },
              resources: {
                requests: { cpu: '50m', memory: '128Mi' },
                limits: { cpu: '1', memory: '512Mi' },
              },
              volumeMounts: [
                { name: 'var-files', mountPath: '/var/run/argocd' },
                { name: 'plugins', mountPath: '/home/argocd/cmp-server/plugins' },
                // Its own /tmp, not the repo-server's: the CMP server unpacks each repository there.
                { name: tmp, mountPath: '/tmp' },
              ],
            },
          ],
          volumes: [{ name: tmp, emptyDir: {} }],
        },
      },
    },
  };
}

/** The health checks and the tracking method, merged into Argo CD's argocd-cm ConfigMap. */
export function argocdCmPatch(namespace: string, health: HealthChecks): object {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: patchMetadata('argocd-cm', namespace),
    data: {
      ...health,
      'application.resourceTrackingMethod': 'annotation',
    },
  };
}

/** Kustomize finds a patch's target by kind, name and namespace; an empty namespace is left out. */
function patchMetadata(name: string, namespace: string): { name: string; namespace?: string } {
  return namespace === '' ? { name } : { name, namespace };
}

/** The plugin's name from plugin.yaml: the sidecar container is named after it. */
function pluginName(configText: string): string {
  const name = (parse(configText) as { metadata?: { name?: unknown } } | null)?.metadata?.name;
  if (typeof name !== 'string' || name === '') throw new Error(`${PLUGIN_CONFIG_FILE}: metadata.name is missing; the package is damaged`);
  return name;
}

/**
 * A file shipped with the package. The CLI runs from lib/ (bundled) or src/cli/ (tests), and lib/ holds
 * a package.json of its own, so the root is found by the file itself, searching upwards.
 */
export function readPackageFile(relative: string): string {
  for (let dir = __dirname; ; dir = dirname(dir)) {
    const candidate = join(dir, relative);
    if (existsSync(candidate)) return readFileSync(candidate, 'utf8');
    if (dirname(dir) === dir) break;
  }
  throw new Error(`cannot find ${relative} in the tidb-gitops package (searched upwards from ${__dirname}); reinstall the package`);
}
