/**
 * What every real-API test file shares: a `describe` that runs when the binaries are present (and,
 * in CI, a failing test when they are not, since .ci/run always prepares them), and one control
 * plane started before the file's tests and stopped after them.
 */
import { findKubeAssets } from './assets';
import { ControlPlane } from './control-plane';

export interface RealApiSuite {
  /** `describe` when the binaries are present, else `describe.skip`. */
  readonly describeReal: jest.Describe;
  /** The file's control plane (started in its beforeAll). */
  readonly cp: () => ControlPlane;
}

export function realApiSuite(): RealApiSuite {
  const lookup = findKubeAssets();
  if (!('assets' in lookup)) {
    // CI prepares the binaries (.ci/run): there, their absence is a failure, not a skip.
    if (process.env.CI === 'true') test('the real-API suite has its binaries', () => expect(lookup.missing).toBe(''));
    // eslint-disable-next-line no-console
    else console.warn(`real-API suite skipped: ${lookup.missing}`);
  }
  let cp: ControlPlane | undefined;
  beforeAll(async () => {
    if ('assets' in lookup) cp = await ControlPlane.start(lookup.assets);
  }, 150_000);
  afterAll(async () => {
    await cp?.stop();
  });
  return {
    describeReal: 'assets' in lookup ? describe : describe.skip,
    cp: () => {
      if (!cp) throw new Error('the control plane is not running');
      return cp;
    },
  };
}
