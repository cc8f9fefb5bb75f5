/**
 * The impact report lists each ResourceGroup and Changefeed added, changed and removed, and flags what
 * a reviewer must weigh: a resource group lowered or dropped, a changefeed removed, re-pointed to
 * another sink or paused; one whose document leaves Git with Retain stays, which it notes.
 */
import { buildModel, compareModels, toMarkdown, type DiffReport, type KubeObject } from '../../../src/diff';
import type { Obj } from '../../support/render';
import { loginCluster, renderAccounts, resourceGroup } from '../../support/sql-accounts';

function diff(before: Obj[], after: Obj[]): DiffReport {
  return compareModels(buildModel(renderAccounts(before) as KubeObject[]), buildModel(renderAccounts(after) as KubeObject[]));
}
const risks = (r: DiffReport) =>
  r.clusters[0].risks.filter((x) => x.id.startsWith('resource-group') || x.id.startsWith('changefeed')).map((x) => `${x.id}: ${x.message}`);
const changefeed = (name: string, spec: Obj = {}): Obj => ({
  apiVersion: 'tidb-gitops.io/v1alpha1',
  kind: 'Changefeed',
  metadata: { name, namespace: 'ns' },
  spec: { cluster: { name: 'demo' }, sinkURI: 'kafka://kafka-0.kafka:9092/changes?protocol=canal-json', ...spec },
});
const cluster = () => loginCluster({ ticdc: { replicas: 1 } });

describe('resource groups in the impact report', () => {
  test('added: listed, no risk', () => {
    const r = diff([cluster()], [cluster(), resourceGroup('rg')]);
    expect(r.clusters[0].database).toEqual([{ kind: 'ResourceGroup', document: 'rg', name: 'rg', change: 'added' }]);
    expect(risks(r)).toEqual([]);
    expect(toMarkdown(r)).toContain('#### Resource groups and changefeeds\n\n- ResourceGroup rg (`rg`): added');
  });

  test('lowered: fewer RUs, a lower priority, no burst; raised is no risk', () => {
    const before = [cluster(), resourceGroup('rg', { ruPerSecond: 2000, priority: 'HIGH', burstable: true })];
    const r = diff(before, [cluster(), resourceGroup('rg', { ruPerSecond: 500, priority: 'LOW' })]);
    expect(r.clusters[0].database?.[0]).toEqual({
      kind: 'ResourceGroup',
      document: 'rg',
      name: 'rg',
      change: 'changed',
      fields: ['ruPerSecond', 'priority', 'burstable'],
    });
    expect(risks(r)).toEqual([
      'resource-group-lowered: ResourceGroup rg (rg) is lowered (RU_PER_SEC 2000 → 500, PRIORITY HIGH → LOW, no longer BURSTABLE): its sessions get less of the cluster once the controller alters it.',
    ]);
    expect(risks(diff(before, [cluster(), resourceGroup('rg', { ruPerSecond: 4000, priority: 'HIGH', burstable: true })]))).toEqual([]);
  });

  test('removed: dropped with Delete (a risk), kept with Retain (a note)', () => {
    const gone = diff([cluster(), resourceGroup('rg', { deletionPolicy: 'Delete' })], [cluster()]);
    expect(risks(gone)).toEqual([
      'resource-group-lowered: ResourceGroup rg (rg) leaves Git with deletionPolicy Delete: the controller drops the group, and its sessions fall back to the default group.',
    ]);
    const kept = diff([cluster(), resourceGroup('rg')], [cluster()]);
    expect(risks(kept)).toEqual([]);
    expect(kept.clusters[0].database?.[0].note).toBe('kept in the database (deletionPolicy Retain): the controller no longer manages it');
  });
});

describe('changefeeds in the impact report', () => {
  test('re-pointed and paused: each a risk; a credential Secret changed is a change, not a risk', () => {
    const before = [cluster(), changefeed('f', { sinkCredentials: { secretName: 'a', params: { 'sasl-password': 'pw' } } })];
    const after = [
      cluster(),
      changefeed('f', {
        sinkURI: 'kafka://kafka-9.other:9092/changes?protocol=canal-json',
        sinkCredentials: { secretName: 'b', params: { 'sasl-password': 'pw' } },
        paused: true,
      }),
    ];
    const r = diff(before, after);
    expect(r.clusters[0].database).toEqual([
      { kind: 'Changefeed', document: 'f', name: 'f', change: 'changed', fields: ['sinkURI', 'sinkCredentials', 'paused'] },
    ]);
    expect(risks(r)).toEqual([
      'changefeed-repointed: Changefeed f (f) is re-pointed from kafka://kafka-0.kafka:9092/changes to kafka://kafka-9.other:9092/changes: the controller pauses, updates and resumes it, and the new sink gets changes from its checkpoint on, not the data already there.',
      "changefeed-paused: Changefeed f (f) is paused: kafka://kafka-9.other:9092/changes falls behind, and if the pause outlasts TiDB's GC life time the changefeed cannot resume.",
    ]);
    const secretOnly = diff(before, [
      cluster(),
      changefeed('f', { sinkCredentials: { secretName: 'b', params: { 'sasl-password': 'pw' } } }),
    ]);
    expect(risks(secretOnly)).toEqual([]);
  });

  test('removed with Delete: a risk; with Retain: a note that it keeps replicating', () => {
    const r = diff([cluster(), changefeed('f', { deletionPolicy: 'Delete' })], [cluster()]);
    expect(risks(r)).toEqual([
      'changefeed-removed: Changefeed f (f) leaves Git with deletionPolicy Delete: the controller removes it from TiCDC, and kafka://kafka-0.kafka:9092/changes gets no more changes.',
    ]);
    const kept = diff([cluster(), changefeed('f')], [cluster()]);
    expect(risks(kept)).toEqual([]);
    expect(toMarkdown(kept)).toContain(
      '- Changefeed f (`f`): removed; kept in TiCDC (deletionPolicy Retain): it keeps replicating, and the controller no longer manages it',
    );
  });
});
