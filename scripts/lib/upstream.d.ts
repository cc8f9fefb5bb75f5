/** The types of scripts/lib/upstream.js: where other projects' files are read from. */

/** The repository's root. */
export const REPO_ROOT: string;
/** ../shared/ beside the repository root. */
export const SHARED_DIR: string;
/** A path under ../shared/, which must exist. */
export function sharedPath(...parts: string[]): string;

/** The directory of `module@version` in the Go module cache, downloaded first when the cache lacks it. */
export function goModuleDir(module: string, version: string): string;

/** The Kubernetes release the real-API harness builds (test/kube/harness/go.mod), and its minor. */
export function kubeRelease(): { module: string; version: string; minor: number };
/** Every minor with definitions, oldest first. */
export function kubeMinors(): number[];
/** The file holding Kubernetes 1.`minor`'s OpenAPI (swagger 2.0) `definitions`. */
export function kubeDefinitionsFile(minor: number): string;
/** Kubernetes 1.`minor`'s OpenAPI definitions, by name. */
export function readKubeDefinitions(minor: number): Record<string, any>;

/** The Prometheus Operator release whose CRDs the monitoring objects are checked against. */
export const PROMETHEUS_OPERATOR: { readonly module: string; readonly version: string };
/** Prometheus Operator's CRD of `plural` (`podmonitors`, `prometheusrules`), as its module ships it. */
export function prometheusOperatorCrdFile(plural: string): string;

/** One of tidb-operator's example clusters: `basic`, or `heterogeneous/heterogeneous-cluster` for a folder's other file. */
export function operatorExample(name: string): string;
/** Every example cluster of tidb-operator (../shared/examples), by name, sorted. */
export function operatorExamples(): { name: string; file: string }[];

/** Argo CD's install manifest: the release ../shared/argocd/VERSION names, and its file. */
export function argocdInstall(): { tag: string; file: string };
