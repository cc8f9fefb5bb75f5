// Regenerates the golden files with the built CLI, exactly as a user would render them:
// test/golden/inputs/<name>.yaml -> test/golden/<name>.k8s.yaml for the default (oldest supported)
// Kubernetes and test/golden/kube-<newest>/<name>.k8s.yaml for the newest, the operator's example clusters
// test/fixtures/examples/<name>/tidb-cluster.yaml -> test/golden/examples/<name>.k8s.yaml, as given
// (they name no namespace), and examples/gitops/tidb-clusters -> examples/gitops/dist. `npm run golden` then
// runs `cdk8s synth` for dist/.
// Review the diff before committing.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const inputs = join(root, 'test/golden/inputs');
const examples = join(root, 'test/fixtures/examples');
const NEWEST = '1.36';
const inputFiles = readdirSync(inputs).filter((f) => f.endsWith('.yaml')).sort();
const jobs = [
  ...inputFiles.map((f) => [[join(inputs, f)], join(root, 'test/golden', f.replace(/\.yaml$/, '.k8s.yaml'))]),
  ...inputFiles.map((f) => [[join(inputs, f), '--kube-version', NEWEST], join(root, `test/golden/kube-${NEWEST}`, f.replace(/\.yaml$/, '.k8s.yaml'))]),
  ...readdirSync(examples).sort().map((name) => [[join(examples, name, 'tidb-cluster.yaml')], join(root, 'test/golden/examples', `${name}.k8s.yaml`)]),
];
mkdirSync(join(root, 'test/golden/examples'), { recursive: true });
mkdirSync(join(root, `test/golden/kube-${NEWEST}`), { recursive: true });
for (const [args, out] of jobs) {
  const r = spawnSync(process.execPath, [join(root, 'bin/tidb-gitops.js'), 'render', ...args], { encoding: 'utf8' });
  if (r.status !== 0) {
    process.stderr.write(r.stderr);
    process.exit(1);
  }
  writeFileSync(out, r.stdout);
  console.log(`wrote ${out.slice(root.length + 1)}`);
}
// The GitOps example's committed output, as its CI workflow renders it.
const gitops = spawnSync(
  process.execPath,
  [join(root, 'bin/tidb-gitops.js'), 'render', 'tidb-clusters', '--output', 'dist', '--prune'],
  { cwd: join(root, 'examples/gitops'), encoding: 'utf8', stdio: ['ignore', 'inherit', 'inherit'] },
);
if (gitops.status !== 0) process.exit(1);
