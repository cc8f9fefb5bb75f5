/**
 * A Changefeed document end to end on the real API server (v1.32, test/kube/), with the TiCDC
 * simulator's open API v2 (test/sim/ticdc.ts) inside the TiCDC Pod. The document is read and rendered
 * as `render` reads and renders it; the controller bundle, with the rendered Role's token, reads the
 * credentials' Secret, creates the changefeed, notes where it stands on its ConfigMap for the health
 * checks and in status.json, and is never refused by the API server (the audit log says so). No
 * credential reaches a log, the status, an annotation or an Event.
 */
import { realApiSuite } from '../kube/suite';
import { RealWorld } from '../kube/world';
import { simCluster } from '../sim/controller-process';
import { renderAccounts } from '../support/sql-accounts';

type Obj = Record<string, any>;

const suite = realApiSuite();
const { describeReal } = suite;

jest.setTimeout(180_000);

const SECRET = 'Sasl-Secret-9z';
const KAFKA = 'kafka://kafka-0.kafka:9092/tidb-changes?protocol=canal-json';
const PHASE = 'tidb-gitops.io/phase';
const MESSAGE = 'tidb-gitops.io/message';

let world: RealWorld | undefined;

afterEach(async () => {
  const w = world;
  world = undefined;
  try {
    if (w) expect(w.forbidden()).toEqual([]);
  } finally {
    await w?.close();
  }
});

/** Renders the cluster with the documents beside it through the one input pipeline, as `render` does. */
function renderWith(...documents: Obj[]) {
  return (cluster: Obj): Obj[] => renderAccounts([cluster, ...documents], '1.32');
}

describeReal('a Changefeed on the real API server, against the TiCDC simulator', () => {
  test('the rendered Role lets the controller read the Secret and annotate the ConfigMap; health and status follow; no credential is said', async () => {
    const namespace = 'cf-1';
    const toKafka = {
      apiVersion: 'tidb-gitops.io/v1alpha1',
      kind: 'Changefeed',
      metadata: { name: 'to-kafka', namespace },
      spec: {
        cluster: { name: 'c' },
        sinkURI: KAFKA,
        sinkCredentials: { secretName: 'kafka-auth', params: { 'sasl-password': 'password' } },
        replicaConfig: { filter: { rules: ['app.*'] } },
        deletionPolicy: 'Delete',
      },
    };
    const w = await RealWorld.start({
      cp: suite.cp(),
      cluster: simCluster({ ticdc: { replicas: 1 } }, { namespace }),
      render: renderWith(toKafka),
    });
    world = w;
    await w.kube.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'kafka-auth', namespace },
      stringData: { password: SECRET },
    });
    await w.startController(['--resync', '1s']);

    const cdc = w.ticdc!;
    const configMap = async (): Promise<Obj | undefined> => w.kube.get(`/api/v1/namespaces/${namespace}/configmaps/changefeed-to-kafka`);
    const annotations = async (): Promise<Obj> => (await configMap())?.metadata?.annotations ?? {};
    const reported = async (): Promise<Obj | undefined> =>
      (await w.status())?.changefeeds?.feeds?.find((f: Obj) => f.document === 'to-kafka');
    await w.waitFor(
      async () => (await annotations())[PHASE] === 'Complete' && (await reported())?.phase === 'Complete',
      120_000,
      'the ConfigMap and the status to say Complete',
    );
    expect(cdc.feeds.changefeeds().map((f) => [f.id, f.state, f.sinkUri])).toEqual([
      ['to-kafka', 'normal', `${KAFKA}&sasl-password=${SECRET}`],
    ]);
    expect((await annotations())[MESSAGE]).toMatch(/^normal, checkpoint /);
    expect(await reported()).toMatchObject({ id: 'to-kafka', state: 'normal', checkpointTs: expect.stringMatching(/^\d+$/) });
    const status = (await w.status())!;
    expect(status.changefeeds.unmanaged).toEqual([]);
    expect(status.changefeedRecords['to-kafka']).toMatchObject({ document: 'to-kafka', deletionPolicy: 'Delete' });
    expect((await w.events('ChangefeedCreated')).map((e) => e.involvedObject.name)).toEqual(['changefeed-to-kafka']);

    // TiCDC fails it, quoting the sink URI it was given: the health check's phase says so, redacted.
    cdc.feeds.failChangefeed(
      'to-kafka',
      `kafka: SASL authentication failed at ${cdc.feeds.changefeeds()[0].sinkUri}`,
      'CDC:ErrKafkaNewProducer',
    );
    await w.waitFor(
      async () => (await annotations())[PHASE] === 'Failed' && (await reported())?.phase === 'Failed',
      60_000,
      'the ConfigMap and the status to say Failed',
    );
    expect((await annotations())[MESSAGE]).toContain('SASL authentication failed');
    expect((await reported())?.error).toContain('SASL authentication failed');

    const said = [
      w.controllerOutput(),
      JSON.stringify(await w.status()),
      JSON.stringify(await annotations()),
      JSON.stringify(await w.kube.list(`/api/v1/namespaces/${namespace}/events`)),
    ].join('\n');
    expect(said).not.toContain(SECRET);
    expect(cdc.feeds.sinkUris.every((u) => u.includes(SECRET))).toBe(true);
  });
});
