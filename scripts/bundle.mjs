// Bundles the CLI into lib/tidb-gitops.js: one file to load instead of hundreds of modules. The
// controller, with the Kubernetes client it needs, is a second bundle loaded only by
// `tidb-gitops controller`, so rendering never pays for it.
import { build } from 'esbuild';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  logLevel: 'warning',
};
await Promise.all([
  build({ ...common, entryPoints: [join(root, 'src/cli/main.ts')], outfile: join(root, 'lib/tidb-gitops.js') }),
  build({ ...common, entryPoints: [join(root, 'src/controller/main.ts')], outfile: join(root, 'lib/tidb-gitops-controller.js') }),
]);
