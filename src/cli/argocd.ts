/**
 * `tidb-gitops argocd ...`: the commands behind the Argo CD config-management plugin (CMP v2, a sidecar
 * of argocd-repo-server, configured by argocd/plugin.yaml) and the patch that installs it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parse, stringify } from 'yaml';
import { version } from '../../package.json';
import { CONTROLLER_REPOSITORY } from '../tidbcluster/defaults';
import { DEFAULT_KUBE_VERSION, KUBE_RANGE } from '../tidbcluster/kube-version';
import { readInputFile, yamlFilesUnder } from '../base/inputs';
import { renderCommand, type Io } from './render';
import { readSettings } from './argocd-settings';

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
  The API versions the destination serves come from KUBE_API_VERSIONS, which
  Argo CD passes (under TIDB_GITOPS_API_VERSIONS and a RenderSettings
  document's apiVersions): monitoring objects whose Prometheus Operator CRDs
  it lacks are left out, with a warning, so the cluster still syncs.

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

// The settings of `generate`, read from Argo CD's environment: argocd-settings.ts.
export { paramVariable, readSettings, SETTING_NAMES, type GenerateSettings, type SettingsResult } from './argocd-settings';

/**
 * Renders in the current directory, as Argo CD's CMP server runs it. Output is held until rendering
 * succeeded, so a failure never leaves part of a stream on stdout, and success never leaves it empty
 * (Argo CD would prune everything the Application had).
 */
function generate(args: readonly string[], io: Io): number {
  if (args.length > 0)
    return usageError(io, `argocd generate takes no arguments (got ${JSON.stringify(args[0])}); its settings come from the environment`);
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
        return arg.startsWith('-')
          ? `unknown option ${JSON.stringify(arg)} for argocd install-patch`
          : `argocd install-patch takes no arguments (got ${JSON.stringify(arg)})`;
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
#   in tidb-gitops.io/phase. A Changefeed's ConfigMap (same label) is Healthy while the changefeed is
#   in the state Git asks, Degraded when TiCDC failed it. Every other ConfigMap stays Healthy.
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
