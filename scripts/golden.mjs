// Regenerates the golden files: test/golden/inputs/<name>.yaml -> test/golden/<name>.k8s.yaml, with
// the built CLI, exactly as a user would render them. Review the diff before committing.
import { spawnSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const inputs = join(root, 'test/golden/inputs');
for (const file of readdirSync(inputs).filter((f) => f.endsWith('.yaml')).sort()) {
  const r = spawnSync(process.execPath, [join(root, 'bin/tidb-gitops.js'), 'render', join(inputs, file)], { encoding: 'utf8' });
  if (r.status !== 0) {
    process.stderr.write(r.stderr);
    process.exit(1);
  }
  const out = join(root, 'test/golden', file.replace(/\.yaml$/, '.k8s.yaml'));
  writeFileSync(out, r.stdout);
  console.log(`wrote ${out.slice(root.length + 1)}`);
}
