/**
 * Changefeed documents read beside a cluster and checked against its TiCDC release: what the
 * controller is told, the ConfigMap each renders as (the health checks read it) and the Secrets the
 * Role may read; and every bad input refused with its file, document, path, line and what was
 * expected: an unknown field, a credential written in Git, a field the release does not read, a TSO
 * that lost its digits, a cluster without TiCDC, an id declared twice.
 */
import { encodeControllerClusterInfo, parseControllerClusterInfo, type ControllerClusterInfo } from '../../../src/tidbcluster/contract';
import { find, type Obj } from '../../support/render';
import { clusterJson, errorsOf, loginCluster, read, renderAccounts, yamlOf } from '../../support/sql-accounts';

const lineOf = (text: string, needle: string) => text.slice(0, text.indexOf(needle)).split('\n').length;
const changefeed = (name: string, spec: Obj = {}, metadata: Obj = {}): Obj => ({
  apiVersion: 'tidb-gitops.io/v1alpha1',
  kind: 'Changefeed',
  metadata: { name, namespace: 'ns', ...metadata },
  spec: { cluster: { name: 'demo' }, sinkURI: 'kafka://kafka-0.kafka:9092/tidb-changes?protocol=canal-json', ...spec },
});
const cdcCluster = (ticdc: Obj = {}) => loginCluster({ ticdc: { replicas: 2, ...ticdc } });
const feedsOf = (docs: Obj[]) => {
  const r = read(docs);
  expect(r.errors).toEqual([]);
  return r.clusters[0].operations.changefeeds;
};
const lines = (docs: Obj[] | string) => errorsOf(docs).flatMap((e) => e.split('\n'));

describe('reading Changefeed', () => {
  test('defaults: the id from metadata.name, tiflow, Retain, running', () => {
    expect(feedsOf([cdcCluster(), changefeed('to-kafka')])).toEqual({
      architecture: 'tiflow',
      feeds: [{ document: 'to-kafka', id: 'to-kafka', sinkUri: 'kafka://kafka-0.kafka:9092/tidb-changes?protocol=canal-json' }],
    });
  });

  test('every field: credentials by Secret and key, TSOs as text, the new architecture, feeds sorted by id', () => {
    const feeds = feedsOf([
      cdcCluster({ config: 'newarch = true\n' }),
      changefeed('to-tidb', {
        id: 'replica-b',
        sinkURI: 'mysql://repl@downstream.db:4000/?time-zone=UTC',
        sinkCredentials: { secretName: 'downstream', password: 'password' },
        startTs: '464200000000000001',
        targetTs: '464300000000000000',
        paused: true,
        replicaConfig: { filter: { rules: ['app.*'] }, force_replicate: true },
        deletionPolicy: 'Delete',
      }),
      changefeed('to-kafka', { id: 'replica-a', sinkCredentials: { secretName: 'kafka', params: { 'sasl-password': 'pw' } } }),
    ]);
    expect(feeds?.architecture).toBe('new');
    expect(feeds?.feeds.map((f) => f.id)).toEqual(['replica-a', 'replica-b']);
    expect(feeds?.feeds[1]).toEqual({
      document: 'to-tidb',
      id: 'replica-b',
      sinkUri: 'mysql://repl@downstream.db:4000/?time-zone=UTC',
      credentials: { secret: 'downstream', password: 'password' },
      startTs: '464200000000000001',
      targetTs: '464300000000000000',
      paused: true,
      replicaConfig: { filter: { rules: ['app.*'] }, force_replicate: true },
      deletionPolicy: 'Delete',
    });
  });

  test('rendered: a ConfigMap per changefeed for the health checks, its Secret readable, its ConfigMap annotatable; the cluster JSON parses back equal', () => {
    const objects = renderAccounts([
      cdcCluster(),
      changefeed('to-kafka', { sinkCredentials: { secretName: 'kafka-auth', params: { 'sasl-password': 'password' } } }),
    ]);
    const cm = find(objects, 'ConfigMap', 'changefeed-to-kafka');
    expect(cm.metadata.labels['tidb-gitops.io/operation']).toBe('changefeed-to-kafka');
    expect(JSON.parse(cm.data['changefeed.json'])).toEqual({
      document: 'to-kafka',
      id: 'to-kafka',
      sinkUri: 'kafka://kafka-0.kafka:9092/tidb-changes?protocol=canal-json',
      credentials: { secret: 'kafka-auth', params: { 'sasl-password': 'password' } },
    });
    const rules = find(objects, 'Role', 'demo-discovery').rules as Obj[];
    expect(rules.find((r) => r.resources.includes('secrets'))?.resourceNames).toContain('kafka-auth');
    expect(rules.find((r) => r.resources.includes('configmaps') && r.resourceNames?.includes('changefeed-to-kafka'))?.verbs).toEqual([
      'get',
      'patch',
    ]);
    const info = clusterJson(objects) as unknown as ControllerClusterInfo;
    expect(info.changefeeds?.feeds.map((f) => f.id)).toEqual(['to-kafka']);
    expect(parseControllerClusterInfo(encodeControllerClusterInfo(info))).toEqual(info);
  });
});

describe('bad Changefeeds are refused with file, document, path and line', () => {
  test('a credential written in the URI, an unknown field with a did-you-mean', () => {
    const text = yamlOf([cdcCluster(), changefeed('f', { sinkURI: 'mysql://root:hunter2@db:4000/', pasued: true })]);
    const errors = lines(text);
    expect(
      errors.some(
        (e) => e.startsWith(`in.yaml: document 2: spec.sinkURI (line ${lineOf(text, 'sinkURI:')})`) && e.includes('spec.sinkCredentials'),
      ),
    ).toBe(true);
    expect(errors).toContain(
      `in.yaml: document 2: spec.pasued (line ${lineOf(text, 'pasued: true')}): unknown field; did you mean paused?`,
    );
    expect(errors.join('\n')).not.toContain('hunter2');
  });

  test('a TSO that lost its digits as a YAML number, a target before the start, a bad id', () => {
    const text = `${yamlOf([cdcCluster()])}---\n${yamlOf([changefeed('f', { id: 'bad--id', startTs: '464200000000000001', targetTs: '464100000000000000' })])}`;
    const errors = lines(text);
    expect(errors).toContain(
      `in.yaml: document 2: spec.id (line ${lineOf(text, 'id: bad--id')}): invalid changefeed id "bad--id": TiCDC takes letters and digits in groups joined by single '-', at most 128 characters`,
    );
    expect(errors.join('\n')).toContain('spec.targetTs');
    const big = `${yamlOf([cdcCluster()])}---\n${yamlOf([changefeed('g')]).replace('spec:\n', 'spec:\n  startTs: 464200000000000001\n')}`;
    expect(lines(big).join('\n')).toContain(
      'spec.startTs (line 29): expected an integer within ±9007199254740991, the largest read exactly: beyond it digits are lost',
    );
  });

  test('credentials the sink does not read', () => {
    const errors = lines([cdcCluster(), changefeed('f', { sinkCredentials: { secretName: 's', password: 'p', params: { token: 't' } } })]);
    expect(errors.join('\n')).toContain('spec.sinkCredentials.password');
    expect(errors.join('\n')).toContain('a kafka sink has no password in its URI');
    expect(errors.join('\n')).toContain(
      'a kafka sink reads no secret from the URI parameter token (it reads sasl-password, sasl-gssapi-password)',
    );
  });

  test("against the cluster's TiCDC release: a field it does not read yet, a scheme it does not have", () => {
    const old = (spec: Obj) => lines([cdcCluster({ version: 'v7.1.6' }), changefeed('f', spec)]).join('\n');
    expect(old({ sinkURI: 'pulsar://pulsar:6650/topic' })).toContain('spec.sinkURI');
    const text = yamlOf([cdcCluster({ version: 'v7.1.6' }), changefeed('f', { replicaConfig: { sink: { pulsar_config: {} } } })]);
    expect(lines(text).join('\n')).toContain('spec.replicaConfig.sink.pulsar_config');
    expect(read([cdcCluster({ version: 'v8.5.1' }), changefeed('f', { sinkURI: 'pulsar://pulsar:6650/topic' })]).errors).toEqual([]);
  });

  test('a cluster without TiCDC, an id declared twice', () => {
    expect(lines([loginCluster(), changefeed('f')]).join('\n')).toContain(
      'TidbCluster ns/demo has no TiCDC (spec.ticdc) to run the changefeed',
    );
    const twice = lines([cdcCluster(), changefeed('a', { id: 'feed' }), changefeed('b', { id: 'feed' })]);
    expect(twice).toHaveLength(1);
    expect(twice[0]).toContain('document 3: spec.id');
    expect(twice[0]).toContain('the changefeed feed is already declared by the Changefeed "a"');
  });
});
