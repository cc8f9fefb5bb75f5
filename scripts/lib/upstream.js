// Where the generators and the tests read other projects' files from. No file of theirs is kept in the
// repository (docs: DESIGN.md, "Upstream material"); each is read where it lives:
//
// - ../shared/ beside the repository root: Kubernetes' definitions of 1.31 to 1.36 and tidb-operator's
//   CRDs (schemas/), the operator's example clusters (examples/), Argo CD's install manifest (argocd/);
// - Go modules, in the Go module cache (`go mod download` fills it from the Go module proxy when one is
//   missing): the OpenAPI document of the Kubernetes release test/kube/harness/go.mod requires (the
//   release the real-API suites run, 1.37) and Prometheus Operator's CRDs.
//
// CommonJS, so that the scripts (ES modules) and the tests (TypeScript, types in upstream.d.ts) share it.
'use strict';

const { execFileSync } = require('node:child_process');
const { existsSync, readdirSync, readFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const path = require('node:path');

const REPO_ROOT = path.resolve(__dirname, '..', '..');
const SHARED_DIR = path.resolve(REPO_ROOT, '..', 'shared');

/** A path under ../shared/, which must exist. */
function sharedPath(...parts) {
  const file = path.join(SHARED_DIR, ...parts);
  if (!existsSync(file)) {
    throw new Error(`${file} does not exist: other projects' files are read from ../shared/ beside the repository (${SHARED_DIR})`);
  }
  return file;
}

// ---------------------------------------------------------------------------------------------------
// Go modules

let modCache;

/** `go env GOMODCACHE`, asked once. */
function goModCache() {
  if (modCache === undefined) {
    try {
      modCache = execFileSync('go', ['env', 'GOMODCACHE'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
    } catch (e) {
      throw new Error(`Go (1.26 or newer) is needed to read modules from its module cache, and \`go env GOMODCACHE\` failed: ${e.message}`);
    }
  }
  return modCache;
}

/** A module path as the module cache spells it: each capital letter is `!` and the letter in lower case. */
const escapeModulePath = (module) => module.replace(/[A-Z]/g, (c) => `!${c.toLowerCase()}`);

/**
 * The directory of `module@version` in the Go module cache, downloaded from the Go module proxy first
 * when the cache lacks it (`go mod download`, as a build would).
 */
function goModuleDir(module, version) {
  const dir = path.join(goModCache(), `${escapeModulePath(module)}@${version}`);
  if (existsSync(dir)) return dir;
  let out;
  try {
    out = execFileSync('go', ['mod', 'download', '-json', `${module}@${version}`], {
      cwd: tmpdir(),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (e) {
    // On failure, go prints the reason as the JSON's Error field.
    let reason = e.message;
    try {
      reason = JSON.parse(e.stdout).Error ?? reason;
    } catch {
      // not JSON: go itself did not run
    }
    throw new Error(
      `${module}@${version} is not in the Go module cache (${dir}), and \`go mod download ${module}@${version}\` failed: ${reason}`,
    );
  }
  return JSON.parse(out).Dir;
}

// ---------------------------------------------------------------------------------------------------
// Kubernetes' OpenAPI definitions

/** The minors whose definitions ../shared/schemas holds (`kubernetes-v1.NN-definitions.json`). */
const SHARED_KUBE_MINORS = [31, 32, 33, 34, 35, 36];
const KUBE_MODULE = 'k8s.io/kubernetes';
const HARNESS_GO_MOD = path.join(REPO_ROOT, 'test', 'kube', 'harness', 'go.mod');

/** The Kubernetes release the real-API harness builds (test/kube/harness/go.mod), and its minor. */
function kubeRelease() {
  const goMod = readFileSync(HARNESS_GO_MOD, 'utf8');
  const m = /^\s*(?:require\s+)?k8s\.io\/kubernetes\s+(v1\.(\d+)\.\d+)\s*(?:\/\/.*)?$/m.exec(goMod);
  if (!m) throw new Error(`${HARNESS_GO_MOD} does not require ${KUBE_MODULE} at a v1.x.y release`);
  return { module: KUBE_MODULE, version: m[1], minor: Number(m[2]) };
}

/** Every minor with definitions, oldest first: ../shared/schemas's, then the harness's release. */
function kubeMinors() {
  const { minor } = kubeRelease();
  return SHARED_KUBE_MINORS.includes(minor) ? [...SHARED_KUBE_MINORS] : [...SHARED_KUBE_MINORS, minor];
}

/**
 * The file holding Kubernetes 1.`minor`'s OpenAPI (swagger 2.0) `definitions`: the OpenAPI document of
 * the harness's release (its module's api/openapi-spec/swagger.json), else ../shared/schemas's file.
 */
function kubeDefinitionsFile(minor) {
  const release = kubeRelease();
  if (minor === release.minor) return path.join(goModuleDir(release.module, release.version), 'api', 'openapi-spec', 'swagger.json');
  if (SHARED_KUBE_MINORS.includes(minor)) return sharedPath('schemas', `kubernetes-v1.${minor}-definitions.json`);
  throw new Error(
    `no Kubernetes definitions for 1.${minor}: ../shared/schemas has 1.${SHARED_KUBE_MINORS.join(', 1.')}, ` +
      `and test/kube/harness/go.mod requires ${release.module} ${release.version}`,
  );
}

/** Kubernetes 1.`minor`'s OpenAPI definitions, by name. */
function readKubeDefinitions(minor) {
  const file = kubeDefinitionsFile(minor);
  const { definitions } = JSON.parse(readFileSync(file, 'utf8'));
  if (!definitions || typeof definitions !== 'object') throw new Error(`${file}: no "definitions" object`);
  return definitions;
}

// ---------------------------------------------------------------------------------------------------
// Prometheus Operator, tidb-operator's examples, Argo CD

/** The Prometheus Operator release whose CRDs the monitoring objects are checked against. */
const PROMETHEUS_OPERATOR = { module: 'github.com/prometheus-operator/prometheus-operator', version: 'v0.93.0' };

/** Prometheus Operator's CRD of `plural` (`podmonitors`, `prometheusrules`), as its module ships it. */
function prometheusOperatorCrdFile(plural) {
  const dir = goModuleDir(PROMETHEUS_OPERATOR.module, PROMETHEUS_OPERATOR.version);
  const file = path.join(dir, 'example', 'prometheus-operator-crd', `monitoring.coreos.com_${plural}.yaml`);
  if (!existsSync(file))
    throw new Error(`${file} does not exist: ${PROMETHEUS_OPERATOR.module}@${PROMETHEUS_OPERATOR.version} ships no ${plural} CRD`);
  return file;
}

const EXAMPLE_FILE = 'tidb-cluster.yaml';

/**
 * One of tidb-operator's example clusters: `basic` is basic/tidb-cluster.yaml, a folder's other file is
 * named after both (`heterogeneous/heterogeneous-cluster`).
 */
function operatorExample(name) {
  const [folder, file] = name.split('/');
  return sharedPath('examples', folder, file === undefined ? EXAMPLE_FILE : `${file}.yaml`);
}

/** Every example cluster of tidb-operator (../shared/examples), by name (see operatorExample), sorted. */
function operatorExamples() {
  const dir = sharedPath('examples');
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .flatMap((d) =>
      readdirSync(path.join(dir, d.name))
        .filter((f) => f.endsWith('.yaml'))
        .map((f) => (f === EXAMPLE_FILE ? d.name : `${d.name}/${f.slice(0, -'.yaml'.length)}`)),
    )
    .sort()
    .map((name) => ({ name, file: operatorExample(name) }));
}

/** Argo CD's install manifest (`manifests/install.yaml` of the release ../shared/argocd/VERSION names). */
function argocdInstall() {
  const tag = readFileSync(sharedPath('argocd', 'VERSION'), 'utf8').trim();
  return { tag, file: sharedPath('argocd', `install-${tag}.yaml`) };
}

module.exports = {
  REPO_ROOT,
  SHARED_DIR,
  sharedPath,
  goModuleDir,
  kubeRelease,
  kubeMinors,
  kubeDefinitionsFile,
  readKubeDefinitions,
  PROMETHEUS_OPERATOR,
  prometheusOperatorCrdFile,
  operatorExample,
  operatorExamples,
  argocdInstall,
};
