// Regenerates the golden files with the built CLI, exactly as a user would render them:
// test/golden/inputs/<name>.yaml -> test/golden/<name>.k8s.yaml for the default (oldest supported)
// Kubernetes and test/golden/kube-<newest>/<name>.k8s.yaml for the newest, each of the operator's example
// clusters (../shared/examples, named as scripts/lib/upstream.js names them) -> test/golden/examples/<name>.k8s.yaml,
// as given (they name no namespace), and examples/gitops/tidb-clusters -> examples/gitops/dist.
// `npm run golden` then runs `cdk8s synth` for dist/.
// Review the diff before committing.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { operatorExamples, REPO_ROOT as root } from '../lib/upstream.js';

const { kubeVersionText, NEWEST_KUBE_MINOR } = createRequire(import.meta.url)(join(root, 'lib/src/tidbcluster/kube-version.js'));
const inputs = join(root, 'test/golden/inputs');
const NEWEST = kubeVersionText(NEWEST_KUBE_MINOR);
const inputFiles = readdirSync(inputs)
  .filter((f) => f.endsWith('.yaml'))
  .sort();
const jobs = [
  ...inputFiles.map((f) => [[join(inputs, f)], join(root, 'test/golden', f.replace(/\.yaml$/, '.k8s.yaml'))]),
  ...inputFiles.map((f) => [
    [join(inputs, f), '--kube-version', NEWEST],
    join(root, `test/golden/kube-${NEWEST}`, f.replace(/\.yaml$/, '.k8s.yaml')),
  ]),
  ...operatorExamples().map(({ name, file }) => [[file], join(root, 'test/golden/examples', `${name}.k8s.yaml`)]),
];
// What the jobs write is all these folders hold: nothing stays behind from an older newest version or example.
for (const dir of readdirSync(join(root, 'test/golden'))
  .filter((d) => /^kube-/.test(d))
  .concat('examples'))
  rmSync(join(root, 'test/golden', dir), { recursive: true, force: true });
for (const [, out] of jobs) mkdirSync(dirname(out), { recursive: true });
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
const gitops = spawnSync(process.execPath, [join(root, 'bin/tidb-gitops.js'), 'render', 'tidb-clusters', '--output', 'dist', '--prune'], {
  cwd: join(root, 'examples/gitops'),
  encoding: 'utf8',
  stdio: ['ignore', 'inherit', 'inherit'],
});
if (gitops.status !== 0) process.exit(1);
