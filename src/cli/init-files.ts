/**
 * What `tidb-gitops init` writes: a starting repository, each file a pure function of the cluster's
 * name. The comments in them are what a new user reads first, so they say what to change and why.
 */
import { version } from '../../package.json';
import { DEFAULT_KUBE_VERSION, KUBE_RANGE } from '../tidbcluster/kube-version';
import { DEFAULTS } from '../tidbcluster/defaults';
import { SETTINGS_API_VERSION, SETTINGS_KIND } from '../tidbcluster/settings';

/** The folder of inputs: what people edit, what `render`, `diff` and Argo CD's plugin read. */
export const INPUTS_DIR = 'tidb-clusters';
/** Where `render -o` writes the reviewed output. */
export const OUTPUT_DIR = 'dist';
/** The namespace the starting repository renders into. */
export const INIT_NAMESPACE = 'tidb';

/** One file of the starting repository. */
export interface InitFile {
  /** Path relative to the repository's root, with `/`. */
  readonly path: string;
  readonly content: string;
  /** What the file is for, in a few words (printed beside its path). */
  readonly about: string;
  /** Written only when no file is there; an existing one is kept, not a conflict. @default false */
  readonly optional?: boolean;
}

/** Every file `init` writes for a cluster named `name` (already checked). */
export function initFiles(name: string): InitFile[] {
  return [
    { path: `${INPUTS_DIR}/${name}.yaml`, content: clusterFile(name), about: 'the TidbCluster: what people edit' },
    {
      path: `${INPUTS_DIR}/settings.yaml`,
      content: SETTINGS_FILE,
      about: 'render settings: Kubernetes version, namespace, controller image',
    },
    { path: '.github/workflows/tidb-gitops.yaml', content: WORKFLOW_FILE, about: 'pull-request check: impact report, dist/ up to date' },
    { path: 'argocd/application.yaml', content: APPLICATION_FILE, about: `Argo CD Application rendering ${INPUTS_DIR}/ with the plugin` },
    { path: 'README.md', content: readmeFile(name), about: 'next steps', optional: true },
  ];
}

function clusterFile(name: string): string {
  return `# A small TiDB cluster to start from: one PD, one TiKV and one TiDB on 1Gi volumes, enough for a
# laptop's Kubernetes. For production, raise pd.replicas and tikv.replicas to 3 (TiKV keeps 3 copies
# of the data), give each component the storage and requests it needs, and set storageClassName.
# Every field is tidb-operator v1's TidbCluster field; 'tidb-gitops render' says which it does not
# carry out yet. After a change: tidb-gitops render ${INPUTS_DIR} -o ${OUTPUT_DIR}, and commit both.
apiVersion: pingcap.com/v1alpha1
kind: TidbCluster
metadata:
  # The namespace comes from settings.yaml beside this file.
  name: ${name}
spec:
  # The TiDB release of every component. Changing it is a rolling upgrade, one Pod at a time.
  version: v8.5.7
  timezone: UTC
  # Keep the volumes when the cluster is deleted.
  pvReclaimPolicy: Retain
  enableDynamicConfiguration: true
  configUpdateStrategy: RollingUpdate
  discovery: {}
  helper:
    image: alpine:3.16.0
  pd:
    baseImage: pingcap/pd
    maxFailoverCount: 0
    replicas: 1
    # No storageClassName: the claims get the cluster's default StorageClass.
    requests:
      storage: "1Gi"
    config: {}
  tikv:
    baseImage: pingcap/tikv
    maxFailoverCount: 0
    # A lone TiKV has no other store to hand its Region leaders to: do not wait long for it on upgrades.
    evictLeaderTimeout: 1m
    replicas: 1
    requests:
      storage: "1Gi"
    config:
      storage:
        # Keep no space in reserve on a 1Gi volume; remove this on larger volumes.
        reserve-space: "0MB"
      rocksdb:
        # Fit the default open-files limit of many nodes (1024).
        max-open-files: 256
      raftdb:
        max-open-files: 256
  tidb:
    baseImage: pingcap/tidb
    maxFailoverCount: 0
    replicas: 1
    # ClusterIP: reached from inside Kubernetes at ${name}-tidb.${INIT_NAMESPACE}:4000.
    service:
      type: ClusterIP
    config: {}
`;
}

const SETTINGS_FILE = `# Settings every render of this folder uses: 'tidb-gitops render', the CI check, 'tidb-gitops diff'
# and Argo CD's plugin read them from here, so they all render the same objects.
apiVersion: ${SETTINGS_API_VERSION}
kind: ${SETTINGS_KIND}
# The Kubernetes version your cluster runs (${KUBE_RANGE}): 'kubectl version' says it.
kubeVersion: "${DEFAULT_KUBE_VERSION}"
# The namespace of clusters whose metadata names none. Create it before the first sync, or let Argo CD
# create it (CreateNamespace=true in argocd/application.yaml).
namespace: ${INIT_NAMESPACE}
# The image of each cluster's companion controller (the <cluster>-discovery Deployment). Without this
# line, the default is the release of the CLI that renders, ${DEFAULTS.controllerImage}.
# To run your own build, build the Dockerfile of tidb-gitops, push it, and name it here:
# controllerImage: registry.example.com/tidb-gitops:${version}
# With monitoring on, list every API version the cluster serves (all that 'kubectl api-versions' prints),
# so that monitoring objects whose Prometheus Operator CRD is missing are left out instead of failing the sync:
# apiVersions: [v1, apps/v1, batch/v1, policy/v1, monitoring.coreos.com/v1]
`;

const WORKFLOW_FILE = `# Pull-request check for ${INPUTS_DIR}/ (the inputs) and ${OUTPUT_DIR}/ (what they render, committed for review).
# It posts what merging the change will do to the clusters, and fails when ${OUTPUT_DIR}/ is not what
# ${INPUTS_DIR}/ renders: run 'tidb-gitops render ${INPUTS_DIR} -o ${OUTPUT_DIR} --prune' and commit the result.
name: tidb-gitops

on:
  pull_request:
    paths:
      - ${INPUTS_DIR}/**
      - ${OUTPUT_DIR}/**
      - .github/workflows/tidb-gitops.yaml

permissions:
  contents: read
  pull-requests: write

env:
  # The tidb-gitops release that renders; raise it with the controller image and Argo CD's plugin.
  TIDB_GITOPS_VERSION: ${version}

jobs:
  render:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2
        with:
          fetch-depth: 0
      - uses: actions/setup-node@49933ea5288caeca8642d1e84afbd3f7d6820020 # v4.4.0
        with:
          node-version: 24
      - name: Install tidb-gitops
        run: npm install --global "tidb-gitops@\${TIDB_GITOPS_VERSION}"
      - name: Impact report
        id: report
        env:
          BASE_SHA: \${{ github.event.pull_request.base.sha }}
        run: |
          set +e
          tidb-gitops diff --exit-code "\${BASE_SHA}:${INPUTS_DIR}" ${INPUTS_DIR} > impact.md
          code=$?
          set -e
          # 0: no change, 3: changes, 4: changes with risks; anything else is an error.
          case "$code" in 0|3|4) ;; *) exit "$code" ;; esac
          if [ "$code" = 4 ]; then echo "risky=true" >> "$GITHUB_OUTPUT"; else echo "risky=false" >> "$GITHUB_OUTPUT"; fi
          cat impact.md >> "$GITHUB_STEP_SUMMARY"
      - name: Post the report on the pull request
        # Pull requests from forks get a read-only token; their report is in the job summary.
        if: github.event.pull_request.head.repo.full_name == github.repository
        env:
          GH_TOKEN: \${{ github.token }}
          PR: \${{ github.event.pull_request.number }}
        run: gh pr comment "$PR" --body-file impact.md --edit-last --create-if-none
      - name: Flag risky changes
        if: steps.report.outputs.risky == 'true'
        run: echo "::warning title=tidb-gitops::this change carries risks; read the impact report before merging"
      - name: Committed output is up to date
        run: tidb-gitops render ${INPUTS_DIR} --output ${OUTPUT_DIR} --prune --check
`;

const APPLICATION_FILE = `# An Argo CD Application that renders ${INPUTS_DIR}/ itself, on every refresh, with the tidb-gitops
# config-management plugin (install it first: 'tidb-gitops argocd install-patch'). Change repoURL to
# this repository's URL (and targetRevision to its branch), then: kubectl apply -f argocd/application.yaml
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: tidb-clusters
  namespace: argocd
spec:
  project: default
  source:
    repoURL: https://git.example.com/databases.git
    targetRevision: main
    path: ${INPUTS_DIR}
    plugin:
      name: tidb-gitops
  destination:
    server: https://kubernetes.default.svc
    # The same namespace as settings.yaml's, which wins for the rendered objects.
    namespace: ${INIT_NAMESPACE}
  syncPolicy:
    automated:
      prune: true
      selfHeal: true
    syncOptions:
      - CreateNamespace=true
`;

function readmeFile(name: string): string {
  return `# TiDB clusters

The TiDB clusters of this repository, run by [tidb-gitops](https://github.com/tidb-gitops/tidb-gitops):
each \`TidbCluster\` in \`${INPUTS_DIR}/\` becomes plain Kubernetes objects, reviewed in pull requests and
applied by Argo CD or Flux.

| path | what it is |
| --- | --- |
| \`${INPUTS_DIR}/${name}.yaml\` | the cluster ${name}: what you edit |
| \`${INPUTS_DIR}/settings.yaml\` | the Kubernetes version, namespace and controller image every render uses |
| \`${OUTPUT_DIR}/\` | what \`${INPUTS_DIR}/\` renders, committed so that pull requests show it |
| \`.github/workflows/tidb-gitops.yaml\` | on each pull request: the impact report, and a check that \`${OUTPUT_DIR}/\` is up to date |
| \`argocd/application.yaml\` | the Argo CD Application that renders \`${INPUTS_DIR}/\` and applies it |

## Next steps

1. Set \`kubeVersion\` in \`${INPUTS_DIR}/settings.yaml\` to the version your Kubernetes runs, and size
   the cluster in \`${INPUTS_DIR}/${name}.yaml\`.
2. Render, and commit the inputs with the output:

   \`\`\`sh
   tidb-gitops render ${INPUTS_DIR} -o ${OUTPUT_DIR}
   \`\`\`

3. With Argo CD: add the plugin to Argo CD (\`tidb-gitops argocd install-patch\`), set \`repoURL\` in
   \`argocd/application.yaml\`, and \`kubectl apply -f argocd/application.yaml\`. With Flux: point a
   Kustomization at \`./${OUTPUT_DIR}\`.

From then on a change is a pull request: edit \`${INPUTS_DIR}/\`, run the render again, commit both, and
read the impact report the workflow posts before merging.
`;
}
