// Bundles the CLI into lib/tidb-gitops.js: one file to load instead of hundreds of modules. The
// controller, with the Kubernetes client it needs, is a second bundle loaded only by
// `tidb-gitops controller`, so rendering never pays for it. The library (the package's main) is a third,
// with cdk8s and constructs left to the app that uses it: they are peer dependencies, so the app's own
// copies are the ones its constructs and ours share; `tidb-gitops/inputs` (lib/inputs.js) loads and
// validates without them.
//
// The bundles carry other packages' code, so lib/THIRD-PARTY-NOTICES.txt lists each package they
// contain with its license text, read from the package itself.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const require = createRequire(import.meta.url);
const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  logLevel: 'warning',
  metafile: true,
};
/**
 * cdk8s ships its own copy of `yaml` (a bundled dependency, which npm never dedupes). Where it is the
 * same release as ours, the CLI bundle carries one copy: one less module graph to load at every start.
 */
const oneYaml = {
  name: 'one-yaml',
  setup(b) {
    const version = (dir) => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version;
    const ours = join(root, 'node_modules/yaml');
    const theirs = join(root, 'node_modules/cdk8s/node_modules/yaml');
    let same = false;
    try {
      same = version(ours) === version(theirs);
    } catch {
      return; // cdk8s without a copy of its own: nothing to merge.
    }
    if (!same) return;
    b.onResolve({ filter: /^yaml$/ }, (args) =>
      args.importer.includes(`${join('node_modules', 'cdk8s')}/`) ? { path: require.resolve('yaml', { paths: [root] }) } : undefined,
    );
  },
};
const results = await Promise.all([
  build({ ...common, entryPoints: [join(root, 'src/cli/main.ts')], outfile: join(root, 'lib/tidb-gitops.js'), plugins: [oneYaml] }),
  build({ ...common, entryPoints: [join(root, 'src/controller/main.ts')], outfile: join(root, 'lib/tidb-gitops-controller.js') }),
  // `tidb-gitops status`: reads a running cluster with the user's kubeconfig, so it carries the client too.
  build({ ...common, entryPoints: [join(root, 'src/cli/status-main.ts')], outfile: join(root, 'lib/tidb-gitops-status.js') }),
  build({ ...common, entryPoints: [join(root, 'src/index.ts')], outfile: join(root, 'lib/index.js'), external: ['cdk8s', 'constructs'] }),
  // `tidb-gitops/inputs`: loading and validating, for an app without cdk8s. Bundled with neither, so
  // a need for them crept in fails the build rather than the app.
  build({ ...common, entryPoints: [join(root, 'src/inputs.ts')], outfile: join(root, 'lib/inputs.js'), external: [] }),
]);
const inputs = results.at(-1).metafile.inputs;
const peer = Object.keys(inputs).find((f) => /node_modules\/(cdk8s|constructs)\//.test(f));
if (peer) throw new Error(`lib/inputs.js must load without cdk8s, but bundles ${peer}`);

// The Kubernetes definitions the CLI validates passed-through objects against, read only when there are
// some: beside the bundles, and beside tsc's output of src/base (what `cdk8s synth` runs).
for (const to of ['lib/kube-schema-data.json', 'lib/src/base/kube-schema-data.json'])
  copyFileSync(join(root, 'src/base/kube-schema-data.json'), join(root, to));

// The config keys of PD, TiKV and TiDB per release, read on first use: beside the bundles, and beside
// tsc's output of src/tidbcluster/config-schema.
const schemaDir = join(root, 'src/tidbcluster/config-schema/generated');
for (const dir of ['lib/config-schemas', 'lib/src/tidbcluster/config-schema/generated']) {
  mkdirSync(join(root, dir), { recursive: true });
  for (const f of readdirSync(schemaDir).filter((f) => f.endsWith('.json'))) copyFileSync(join(schemaDir, f), join(root, dir, f));
}

/** The package directory (under node_modules) an input file of a bundle belongs to, if any. */
function packageDir(input) {
  const parts = input.split(/[\\/]/);
  const at = parts.lastIndexOf('node_modules');
  if (at < 0) return undefined;
  const depth = parts[at + 1]?.startsWith('@') ? 2 : 1;
  return join(root, ...parts.slice(0, at + 1 + depth));
}

const LICENSE_FILE = /^(licen[cs]e|copying|notice)(\.(md|txt|markdown))?$/i;
const packages = new Map();
const seen = new Set();
for (const { metafile } of results) {
  for (const input of Object.keys(metafile.inputs)) {
    const dir = packageDir(input);
    if (!dir || packages.has(dir)) continue;
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    // The same release nested under two packages is listed once.
    if (seen.has(`${pkg.name}@${pkg.version}`)) continue;
    const files = readdirSync(dir)
      .filter((f) => LICENSE_FILE.test(f))
      .sort();
    const author = typeof pkg.author === 'string' ? pkg.author : pkg.author?.name;
    const texts =
      files.length > 0
        ? files.map((f) => readFileSync(join(dir, f), 'utf8').trim())
        : [
            `The package ships no license text; its package.json gives the license ${pkg.license}${author ? ` and the author ${author}` : ''}.`,
          ];
    if (!pkg.license) throw new Error(`${relative(root, dir)}: package.json names no license`);
    packages.set(dir, { name: pkg.name, version: pkg.version, license: pkg.license, texts });
    seen.add(`${pkg.name}@${pkg.version}`);
  }
}
const list = [...packages.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
const rule = '-'.repeat(78);
writeFileSync(
  join(root, 'lib/THIRD-PARTY-NOTICES.txt'),
  `tidb-gitops bundles the following packages (lib/tidb-gitops.js, lib/tidb-gitops-controller.js, lib/tidb-gitops-status.js and
lib/index.js). Each is listed with its version, its license and the license text it ships.
${list.map((p) => `\n${rule}\n${p.name} ${p.version} (${p.license})\n${rule}\n\n${p.texts.join('\n\n')}\n`).join('')}`,
);
