/**
 * Every golden input and bundled example, rendered and applied twice to a real API server (v1.32, see
 * test/kube/), client-side as kubectl and Argo CD apply and server-side as Flux does: the second apply
 * changes nothing. The inputs run side by side, each in its own namespaces.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { pathOf, type Obj } from '../kube/client';
import { realApiSuite } from '../kube/suite';
import { RealWorld } from '../kube/world';
import { operatorExample } from '../../scripts/lib/upstream';
import { TEST_DIR } from '../support/paths';

const suite = realApiSuite();
const { describeReal } = suite;

jest.setTimeout(240_000);

let seq = 0;

describeReal('re-applying unchanged manifests on a real API server', () => {
  const inputs = [
    ...readdirSync(join(TEST_DIR, 'golden/inputs')).map((f) => join(TEST_DIR, 'golden/inputs', f)),
    ...['basic', 'basic-tls', 'tiflash'].map(operatorExample),
  ];
  /** Every cluster of the file, in the given namespace (clusters another one references keep their namespace). */
  const renderIn = (file: string, namespace: string): Obj[] => {
    const docs = parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS() as Obj);
    const moved = docs.map((d) => ({
      ...d,
      metadata: { ...d.metadata, namespace },
      spec: d.spec?.cluster ? { ...d.spec, cluster: { ...d.spec.cluster, namespace } } : d.spec,
    }));
    return suite.render(moved.map((d) => stringify(d)).join('---\n'));
  };

  it.concurrent.each(inputs.map((f) => [f.split('/').slice(-2).join('/'), f]))(
    '%s: a second apply changes nothing, client-side and server-side',
    async (_name, file) => {
      const admin = suite.cp().admin();
      for (const mode of ['client-side', 'server-side'] as const) {
        const namespace = `noop-${++seq}`;
        await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
        const objects = renderIn(file, namespace);
        const w = { apply: (o: Obj[]) => RealWorld.applyObjects(suite.cp(), o, mode) };
        await w.apply(objects);
        // Let the StatefulSet controller write its status first: the second apply is Git's, not the first's echo.
        await new Promise((r) => setTimeout(r, 500));
        // Generations move with every spec change (status writes of the controllers do not move them).
        const versions = async () =>
          Promise.all(objects.map(async (o) => `${o.kind}/${o.metadata.name} ${(await admin.get(pathOf(o)))?.metadata.generation}`));
        const before = await versions();
        const out = await w.apply(objects);
        // kubectl's three-way patch always carries a PodDisruptionBudget's selector (its patch strategy is
        // "replace"), so kubectl says "configured" though nothing changes: the generations below tell.
        if (mode === 'client-side')
          expect(out.filter((l) => !l.endsWith(' unchanged') && !/^poddisruptionbudget\.policy\/\S+ configured$/.test(l))).toEqual([]);
        else expect(out).toEqual([]);
        expect(await versions()).toEqual(before);
      }
    },
  );
});
