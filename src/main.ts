/**
 * The cdk8s app behind `cdk8s synth`: renders the bundled example cluster (examples/basic) into the
 * output directory (dist/), exactly as `tidb-gitops render examples/basic -o dist` does, with the same
 * settings (the environment's TIDB_GITOPS_*, then the inputs' RenderSettings).
 */
import { renderCommand } from './cli/render';

const outDir = process.env.CDK8S_OUTDIR ?? 'dist';
const inputs = process.env.TIDB_GITOPS_EXAMPLES ?? 'examples/basic';

process.exitCode = renderCommand(
  { paths: [inputs], outDir },
  {
    stdout: (s) => process.stdout.write(s),
    stderr: (s) => process.stderr.write(s),
    readStdin: () => '',
    env: process.env,
  },
);
