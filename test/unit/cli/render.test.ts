/** What `render` says beside the manifests (src/cli/render.ts): the note on the default controller image. */
import { defaultImageNote } from '../../../src/cli/render';
import type { LoadedCluster } from '../../../src/tidbcluster/load';
import { DEFAULTS } from '../../../src/tidbcluster/defaults';

const cluster = (name: string, image: string = DEFAULTS.controllerImage) =>
  ({ resolved: { name, discovery: { image } } }) as unknown as LoadedCluster;

describe('the default controller image note', () => {
  test('names one cluster, or a few, and says nothing when each names its image', () => {
    expect(defaultImageNote([cluster('a')])).toMatch(/^note: cluster a will run the default controller image /);
    expect(defaultImageNote([cluster('a'), cluster('b', 'my/image:1'), cluster('c')])).toMatch(/^note: clusters a, c will run /);
    expect(defaultImageNote([cluster('a', 'my/image:1')])).toBeUndefined();
  });

  test('names five clusters of many and counts the rest, so a thousand clusters make one short line', () => {
    const note = defaultImageNote(Array.from({ length: 1000 }, (_, i) => cluster(`c${i}`)))!;
    expect(note).toMatch(/^note: clusters c0, c1, c2, c3, c4 and 995 more will run the default controller image /);
    expect(note.length).toBeLessThan(200);
  });
});
