/**
 * Why a second budget over rendered Pods is refused at render: on a real API server, the Eviction API
 * answers a Pod that two PodDisruptionBudgets select with HTTP 500 (`kubectl drain` retries it for
 * ever), where with the rendered budget alone it answers as that budget says.
 */
import { stringify } from 'yaml';
import type { Obj } from '../kube/client';
import { realApiSuite } from '../kube/suite';
import { cluster } from '../support/render';
import { renderCommand } from '../../src/cli/render';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const suite = realApiSuite();
const { describeReal } = suite;
jest.setTimeout(120_000);

const NS = 'pdb-overlap';

describeReal('two budgets over one Pod', () => {
  it('the Eviction API answers 500 for a Pod with two budgets, and the render refuses the second one', async () => {
    const kube = suite.cp().admin();
    const objects = suite.render(cluster({}, { namespace: NS }));
    const rendered = objects.find((o) => o.kind === 'PodDisruptionBudget' && o.metadata.name === 'demo-tikv')!;
    const labels = objects.find((o) => o.kind === 'StatefulSet' && o.metadata.name === 'demo-tikv')!.spec.template.metadata.labels;
    await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    await kube.create(rendered);
    await kube.create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'demo-tikv-0', namespace: NS, labels },
      spec: { nodeName: 'nowhere', containers: [{ name: 'tikv', image: 'pingcap/tikv:v8.5.7' }] },
    });
    // A Pending Pod is evicted without asking any budget: it has to be Running.
    await kube.patch(`/api/v1/namespaces/${NS}/pods/demo-tikv-0/status`, 'merge', { status: { phase: 'Running' } });
    const evict = () =>
      kube.request('POST', `/api/v1/namespaces/${NS}/pods/demo-tikv-0/eviction?dryRun=All`, {
        body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'demo-tikv-0', namespace: NS } },
      });
    // One budget: the API answers as the budget says (201 evicted, or 429 while it allows none), never 500.
    expect([201, 429]).toContain((await evict()).status);

    const mine: Obj = {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'tikv-mine', namespace: NS },
      spec: { maxUnavailable: 1, selector: { matchLabels: { 'app.kubernetes.io/component': 'tikv' } } },
    };
    await kube.create(mine);
    const answer = await evict();
    expect(answer.status).toBe(500);
    expect(answer.body.message).toBe('This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.');

    // The same budget kept in Git beside the cluster is refused at render, naming both.
    const dir = mkdtempSync(join(tmpdir(), 'tidb-gitops-overlap-real-'));
    try {
      writeFileSync(join(dir, 'tc.yaml'), stringify(cluster({}, { namespace: NS })));
      writeFileSync(join(dir, 'pdb.yaml'), stringify(mine));
      let stderr = '';
      const status = renderCommand(
        { paths: [dir], controllerImage: 'example.com/c:1' },
        { stdout: () => undefined, stderr: (s) => (stderr += s), readStdin: () => '' },
      );
      expect(status).toBe(1);
      expect(stderr).toContain(
        `PodDisruptionBudget tikv-mine in namespace ${NS} selects the Pods of StatefulSet demo-tikv, which PodDisruptionBudget demo-tikv`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
