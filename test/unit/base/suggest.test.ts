import { closest, editDistance, suggest } from '../../../src/base/suggest';

describe('editDistance', () => {
  it('counts changes, insertions and deletions', () => {
    expect(editDistance('replica', 'replicas')).toBe(1);
    expect(editDistance('replicas', 'replica')).toBe(1);
    expect(editDistance('image', 'imagr')).toBe(1);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('same', 'same')).toBe(0);
  });

  it('counts swapped neighbours as one edit, or two without transpositions', () => {
    expect(editDistance('imgae', 'image')).toBe(1);
    expect(editDistance('imgae', 'image', { transpositions: false })).toBe(2);
  });
});

describe('closest', () => {
  const names = ['replicas', 'image', 'version'];

  it('finds the nearest candidate within the distance, else none', () => {
    expect(closest('replica', names)).toBe('replicas');
    expect(closest('verson', names)).toBe('version');
    expect(closest('storage', names)).toBeUndefined();
  });

  it('prefers the first of equally near candidates', () => {
    expect(closest('ab', ['ax', 'xb'])).toBe('ax');
  });

  it('compares case only when asked', () => {
    expect(closest('TIDBCLUSTER', ['TidbCluster'], { maxDistance: 1 })).toBeUndefined();
    expect(closest('TiDBClusters', ['TidbCluster', 'Backup'], { maxDistance: 1, ignoreCase: true })).toBe('TidbCluster');
  });

  it('takes the limit from the word and candidate', () => {
    const byCandidate = { maxDistance: (_: string, c: string) => Math.max(2, Math.floor(c.length / 4)) };
    expect(closest('PATHX', ['PATHS'], byCandidate)).toBe('PATHS');
    expect(closest('KUBEVRSIN', ['KUBE_VERSION'], byCandidate)).toBe('KUBE_VERSION');
    expect(closest('KUBVRSIN', ['KUBE_VERSION'], byCandidate)).toBeUndefined();
  });

  it('keeps a whole short word rewritten out when partialOnly', () => {
    expect(closest('ab', ['cd'])).toBe('cd');
    expect(closest('ab', ['cd'], { partialOnly: true })).toBeUndefined();
  });

  it('follows plain Levenshtein without transpositions', () => {
    expect(closest('abcdfe', ['abdcef'], { maxDistance: 2 })).toBe('abdcef');
    expect(closest('abcdfe', ['abdcef'], { maxDistance: 2, transpositions: false })).toBeUndefined();
  });
});

describe('suggest', () => {
  it('matches case, dashes and underscores first', () => {
    expect(suggest('Replicas', ['replicas', 'replica'])).toBe('replicas');
    expect(suggest('base_image', ['baseImage'])).toBe('baseImage');
  });

  it('allows a third of the word, at least 2', () => {
    expect(suggest('confg', ['config'])).toBe('config');
    expect(suggest('storageClasName', ['storageClassName'])).toBe('storageClassName');
    expect(suggest('stoClName', ['storageClassName'])).toBeUndefined();
  });

  it('does not suggest for a whole short word rewritten', () => {
    expect(suggest('ab', ['cd', 'yaml'])).toBeUndefined();
    expect(suggest('jsn', ['json', 'yaml'])).toBe('json');
  });

  it('gives up on very long words', () => {
    expect(suggest('a'.repeat(65), ['a'.repeat(64)])).toBeUndefined();
    expect(suggest('a'.repeat(64), ['a'.repeat(63)])).toBe('a'.repeat(63));
  });
});
