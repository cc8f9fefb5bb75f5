/**
 * Jest setup (jest.config.js `setupFiles`): the control plane's directory first on PATH, so `kubectl`
 * in every test, and in every command a test runs, is the client of the API server's own release
 * (scripts/test-assets/kube-assets.sh builds it), whatever other kubectl the machine has.
 */
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { kubeAssetsDir } from './assets';

const dir = kubeAssetsDir();
if (dir && existsSync(join(dir, 'kubectl'))) {
  const path = process.env.PATH ?? '';
  if (path.split(delimiter)[0] !== dir) process.env.PATH = `${dir}${delimiter}${path}`;
}
