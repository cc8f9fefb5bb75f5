/** `tidb-gitops render`'s usage and argument parsing. */
import { DEFAULT_KUBE_VERSION, KUBE_RANGE, kubeVersionText, NEWEST_KUBE_MINOR, parseKubeVersion } from '../tidbcluster/kube-version';
import { namespaceProblem, settingProblem, settingValue } from '../tidbcluster/settings';
import { unknownOption } from './usage';
import { parseFormat, type OutputFormat } from './format';

export const RENDER_USAGE = `Usage: tidb-gitops render PATH... [options]

Render TidbCluster documents into Kubernetes manifests. PATH is a file, a
directory (searched recursively for *.yaml and *.yml; hidden directories,
node_modules and rendered output such as a committed dist/ skipped) or - for
standard input. Other Kubernetes objects pass through after the clusters'
(validated for the target version, namespaced like them); a Kustomization is
skipped.

Options:
  -o, --output DIR     Write one file per cluster into DIR
                       (<name>.k8s.yaml, or <namespace>.<name>.k8s.yaml), and
                       _passthrough.k8s.yaml for other objects, instead of
                       printing one YAML stream. All files or none are written.
  -n, --namespace NS   Namespace for clusters whose metadata has none.
      --controller-image IMAGE
                       Image of the <cluster>-discovery Deployment (the
                       tidb-gitops controller) for clusters whose
                       spec.discovery names none.
      --kube-version VERSION
                       Kubernetes version to render for, ${KUBE_RANGE}
                       (default ${DEFAULT_KUBE_VERSION}). Newer versions render for
                       ${kubeVersionText(NEWEST_KUBE_MINOR)} with a note.
      --api-versions LIST
                       The API versions the target cluster serves,
                       comma-separated, as 'kubectl api-versions' prints them
                       (default: not known). Monitoring objects whose
                       Prometheus Operator CRDs are not listed are left out,
                       with a warning.
      --prune          With -o: also delete DIR/*.k8s.yaml files that no
                       input renders any more (a removed cluster).
      --check          With -o: write nothing; exit 3 when DIR differs from
                       what the inputs render (for CI: committed output
                       is stale).
  -v, --verbose        With --check: also print, for each stale file, the
                       objects that differ and the unified diff.
      --format FORMAT  How problems, warnings and --check's findings are
                       reported on stderr: text (default), json (one
                       document) or github (GitHub Actions annotations).
  -h, --help           Show this help.
      --debug          On an internal error (a bug), also print where it happened.

Manifests go to stdout only; notes and errors go to stderr.
Exit status: 0 rendered, 1 invalid input or output failure, 2 usage error,
3 (--check) output out of date.
`;

interface ParsedRenderArgs {
  paths: string[];
  outDir?: string;
  namespace?: string;
  controllerImage?: string;
  kubeVersion?: string;
  apiVersions?: string;
  prune?: boolean;
  check?: boolean;
  verbose?: boolean;
  format?: OutputFormat;
  help?: boolean;
}

/** Every option render takes, for the did-you-mean of an unknown one. */
const RENDER_FLAGS = [
  '--output',
  '--namespace',
  '--controller-image',
  '--kube-version',
  '--api-versions',
  '--prune',
  '--check',
  '--verbose',
  '--format',
  '--help',
  '--debug',
];

/** Returns the parsed options, or an error message. */
export function parseRenderArgs(args: readonly string[]): ParsedRenderArgs | string {
  const out: ParsedRenderArgs = { paths: [] };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const [flag, inline] =
      arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    // A value that looks like an option is a missing value (`-n -o DIR`), not a strange namespace.
    const value = () => {
      const v = inline ?? args[++i];
      return v !== undefined && v.startsWith('-') && v !== '-' && inline === undefined ? undefined : v;
    };
    switch (flag) {
      case '-o':
      case '--output': {
        const v = value();
        if (!v) return `${flag} needs a directory`;
        out.outDir = v;
        break;
      }
      case '-n':
      case '--namespace': {
        const v = value();
        if (!v) return `${flag} needs a namespace`;
        const problem = namespaceProblem(v);
        if (problem) return `${flag}: ${problem}`;
        out.namespace = v;
        break;
      }
      case '--controller-image': {
        const v = value();
        if (!v) return `${flag} needs an image`;
        out.controllerImage = v;
        break;
      }
      case '--kube-version': {
        const v = value();
        if (!v) return `${flag} needs a version, such as ${DEFAULT_KUBE_VERSION}`;
        const target = parseKubeVersion(v);
        if ('error' in target) return `${flag}: ${target.error}`;
        out.kubeVersion = v;
        break;
      }
      case '--api-versions': {
        const v = value();
        if (!v) return `${flag} needs a comma-separated list, such as "$(kubectl api-versions | paste -sd, -)"`;
        const problem = settingProblem('apiVersions', v);
        if (problem) return `${flag}: ${problem}`;
        out.apiVersions = settingValue('apiVersions', v);
        break;
      }
      case '--format': {
        const format = parseFormat(flag, value());
        if (typeof format !== 'string') return format.error;
        out.format = format;
        break;
      }
      case '--prune':
        out.prune = true;
        break;
      case '--check':
        out.check = true;
        break;
      case '-v':
      case '--verbose':
        out.verbose = true;
        break;
      case '-h':
      case '--help':
        out.help = true;
        break;
      default:
        if (arg.startsWith('-') && arg !== '-') return unknownOption(arg, RENDER_FLAGS);
        out.paths.push(arg);
    }
  }
  if (out.help) return out;
  if (out.paths.length === 0) return 'render needs at least one PATH (a file, a directory, or - for stdin)';
  if ((out.prune || out.check) && out.outDir === undefined) return `${out.check ? '--check' : '--prune'} needs -o DIR`;
  if (out.verbose && !out.check) return `${args.includes('-v') ? '-v' : '--verbose'} needs --check`;
  return out;
}
