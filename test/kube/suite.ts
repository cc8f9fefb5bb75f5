/**
 * What every real-API test file shares: a `describe` that runs when the control plane is built (see
 * test/support/requires.ts for what happens when it is not), and one control plane started before the
 * file's tests and stopped after them.
 */
import type { ResolveOptions } from '../../src/tidbcluster/resolve';
import { render, type Obj } from '../support/render';
import { KUBE_CONTROL_PLANE, requires } from '../support/requires';
import { findKubeAssets } from './assets';
import { ControlPlane } from './control-plane';

export interface RealApiSuite {
  /** `describe` when the control plane is built, else one that skips. */
  readonly describeReal: jest.Describe;
  /** The file's control plane (started in its beforeAll). */
  readonly cp: () => ControlPlane;
  /** Renders for the API server's release, as Argo CD does with the KUBE_VERSION it passes. */
  readonly render: (input: Obj | string, options?: ResolveOptions) => Obj[];
}

export function realApiSuite(): RealApiSuite {
  const gate = requires(KUBE_CONTROL_PLANE);
  let cp: ControlPlane | undefined;
  beforeAll(async () => {
    const lookup = findKubeAssets();
    if (gate.ok && 'assets' in lookup) cp = await ControlPlane.start(lookup.assets);
  }, 150_000);
  afterAll(async () => {
    await cp?.stop();
  });
  const running = () => {
    if (!cp) throw new Error('the control plane is not running');
    return cp;
  };
  return {
    describeReal: gate.describe,
    cp: running,
    render: (input, options = {}) => render(input, { kubeVersion: running().kubeVersion, ...options }),
  };
}
