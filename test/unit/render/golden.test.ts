import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { renderClusters } from '../../../src/render/render';
import { kubeVersionText, NEWEST_KUBE_MINOR, OLDEST_KUBE_MINOR } from '../../../src/tidbcluster/kube-version';
import { loadInputs } from '../../../src/backup/companions';
import { linkOperations } from '../../../src/backup/link';
import { assertValidK8sObjects } from '../../support/k8s-schema';
import { operatorExamples } from '../../../scripts/lib/upstream';
import { TEST_DIR } from '../../support/paths';

const root = join(TEST_DIR, '..');
const STALE = 'is stale: run `npm run golden` and review the diff';

function renderFile(path: string, kubeVersion?: string): { fileName: string; yaml: string }[] {
  // As the CLI reads them: the clusters and the documents beside them (a TidbMonitor).
  const loaded = loadInputs(readFileSync(path, 'utf8'), path, { kubeVersion });
  const linked = linkOperations(loaded.clusters, loaded.documents);
  expect([...loaded.errors.map((e) => e.message), ...linked.errors]).toEqual([]);
  return renderClusters(
    loaded.clusters.map((c) => c.resolved),
    linked.operations,
  );
}

function expectSame(actual: string, goldenPath: string): void {
  const golden = readFileSync(goldenPath, 'utf8');
  if (actual !== golden) throw new Error(`${goldenPath.slice(root.length + 1)} ${STALE}`);
}

describe.each([
  ['the oldest supported Kubernetes (the default)', undefined, 'test/golden', OLDEST_KUBE_MINOR],
  [
    'the newest supported Kubernetes',
    kubeVersionText(NEWEST_KUBE_MINOR),
    `test/golden/kube-${kubeVersionText(NEWEST_KUBE_MINOR)}`,
    NEWEST_KUBE_MINOR,
  ],
])('golden files for %s', (_title, kubeVersion, dir, minor) => {
  const inputs = readdirSync(join(root, 'test/golden/inputs'))
    .filter((f) => f.endsWith('.yaml'))
    .sort();

  test.each(inputs)('%s renders exactly its golden file, every object valid for that version', (file) => {
    const [rendered] = renderFile(join(root, 'test/golden/inputs', file), kubeVersion);
    expectSame(rendered.yaml, join(root, dir, file.replace(/\.yaml$/, '.k8s.yaml')));
    assertValidK8sObjects(
      parseAllDocuments(rendered.yaml).map((d) => d.toJS()),
      minor,
    );
  });
});

describe("the operator's example clusters (../shared/examples), as given", () => {
  test.each(operatorExamples().map(({ name, file }) => [name, file]))(
    '%s renders exactly its golden file, every object valid',
    (name, file) => {
      const [rendered] = renderFile(file);
      expectSame(rendered.yaml, join(root, 'test/golden/examples', `${name}.k8s.yaml`));
      assertValidK8sObjects(parseAllDocuments(rendered.yaml).map((d) => d.toJS()));
    },
  );
});

describe.each([
  ['dist/ (cdk8s synth of examples/basic)', 'examples/basic', 'dist'],
  ["the GitOps example's dist/", 'examples/gitops/tidb-clusters', 'examples/gitops/dist'],
])('%s', (_title, inputs, out) => {
  test('holds one file per cluster and nothing else, each current and valid', () => {
    const files = readdirSync(join(root, inputs), { recursive: true, encoding: 'utf8' })
      .filter((f) => /\.ya?ml$/.test(f))
      .sort();
    const rendered = files.flatMap((f) => renderFile(join(root, inputs, f)));
    expect(rendered.length).toBeGreaterThan(0);
    expect(readdirSync(join(root, out)).sort()).toEqual(rendered.map((r) => r.fileName).sort());
    for (const r of rendered) {
      expectSame(r.yaml, join(root, out, r.fileName));
      assertValidK8sObjects(parseAllDocuments(r.yaml).map((d) => d.toJS()));
    }
  });
});
