/**
 * TiDB's smooth upgrade (DDL paused while TiDB rolls): tidb-operator's version classes
 * (`smooth_upgrade.go`), and where the planner pauses and resumes DDL.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { plan } from '../../../src/controller/plan/plan';
import type { Pod, StatefulSet } from '../../../src/controller/model/objects';
import { classifySmoothUpgrade } from '../../../src/controller/plan/upgrade-tidb';
import { ddlPauseOf, type DdlPauseRecord } from '../../../src/controller/records/ddl-pause';
import { tagOf } from '../../../src/controller/model/values';
import { tidbUpgradeOp } from '../../../src/controller/clients/tidb';
import { freePort } from '../../sim/controller-process';
import { TidbSim } from '../../sim/tidb';
import { CLUSTER, NOW, pdState, pod, PROBES_OK, sts } from '../../support/plan-fixtures';

describe("tidb-operator's version classes", () => {
  it.each([
    // Switch-controlled: the DDL pause is needed.
    ['v7.1.2', 'v7.1.5', 'switch'],
    ['v7.1.2', 'v7.5.0', 'switch'],
    ['v7.4.0', 'v7.5.1', 'switch'],
    ['v8.5.0', 'v8.5.1', 'switch'],
    ['v7.5.0', 'v8.5.0-alpha', 'switch'],
    // TiDB pauses DDL by itself.
    ['v7.1.0', 'v7.1.1', 'auto'],
    ['v7.1.1', 'v7.3.0', 'auto'],
    ['v7.2.0', 'v7.3.0', 'auto'],
    // Neither.
    ['v7.0.0', 'v8.5.0', 'unsupported'],
    ['v7.1.0', 'v7.4.0', 'unsupported'],
    ['v7.3.0', 'v7.5.0', 'unsupported'],
    ['v7.1.2', 'v7.2.0', 'unsupported'],
    ['v8.5.1', 'v8.5.0', 'unsupported'],
    ['v8.5.0', 'v8.5.0', 'unsupported'],
    ['v8.5.0-alpha', 'v8.5.0-alpha', 'unsupported'],
    ['nightly', 'v8.5.0', 'unsupported'],
    ['8.5.0', '8.5.1', 'unsupported'],
  ])('%s -> %s is %s', (source, target, expected) => {
    expect(classifySmoothUpgrade(source, target)).toBe(expected);
  });

  it('reads the tag as the operator does: none for a digest or an untagged image', () => {
    expect(tagOf('pingcap/tidb:v8.5.1')).toBe('v8.5.1');
    expect(tagOf('registry:5000/pingcap/tidb:v8.5.1')).toBe('v8.5.1');
    expect(tagOf('registry:5000/pingcap/tidb')).toBeUndefined();
    expect(tagOf('pingcap/tidb:v8.5.1@sha256:0123')).toBeUndefined();
  });

  it('reads a record back, and nothing from a status without one', () => {
    expect(ddlPauseOf({ smoothUpgrade: { source: 'v8.5.0', target: 'v8.5.1', state: 'paused', since: 'x' } })).toEqual({
      source: 'v8.5.0',
      target: 'v8.5.1',
      state: 'paused',
      since: 'x',
    });
    expect(ddlPauseOf({ smoothUpgrade: { source: 'v8.5.0', target: 'v8.5.1' } })?.state).toBe('starting');
    expect(ddlPauseOf({})).toBeUndefined();
    expect(ddlPauseOf({ smoothUpgrade: 'paused' })).toBeUndefined();
  });
});

describe('the planner pauses DDL before the first TiDB restart and resumes it after the last', () => {
  const image = (v: string) => ({ template: { spec: { containers: [{ name: 'tidb', image: `pingcap/tidb:${v}` }] } } });
  const tidbSts = (target: string, update = 'r2'): StatefulSet => {
    const s = sts('tidb', { replicas: 2, current: 'r1', update });
    return { ...s, spec: { ...s.spec, ...image(target) } } as StatefulSet;
  };
  const tidbPod = (ord: number, rev: string, version: string, o: { ready?: boolean } = {}): Pod => {
    const p = pod('tidb', ord, rev, o);
    return { ...p, spec: { containers: [{ name: 'tidb', image: `pingcap/tidb:${version}` }] } };
  };
  const planTidb = (s: StatefulSet, pods: Pod[], ddlPause?: DdlPauseRecord) =>
    plan({ cluster: CLUSTER, components: [{ kind: 'tidb', sts: s, pods }], pd: pdState(), now: NOW, probes: PROBES_OK, ddlPause })[0];
  const paused = (source = 'v8.5.0', target = 'v8.5.1', state: DdlPauseRecord['state'] = 'paused'): DdlPauseRecord => ({
    source,
    target,
    state,
    since: 'then',
  });

  it('pauses DDL on the lowest Ready TiDB before any restart, then steps', () => {
    const pods = [tidbPod(0, 'r1', 'v8.5.0', { ready: false }), tidbPod(1, 'r1', 'v8.5.0')];
    const p = planTidb(tidbSts('v8.5.1'), pods);
    expect(p.action).toEqual({ type: 'ddl-pause', pod: 'c-tidb-1', source: 'v8.5.0', target: 'v8.5.1' });
    expect(p.event).toMatchObject({ reason: 'DDLPause' });
    const ready = [tidbPod(0, 'r1', 'v8.5.0'), tidbPod(1, 'r1', 'v8.5.0')];
    expect(planTidb(tidbSts('v8.5.1'), ready).action).toMatchObject({ type: 'ddl-pause', pod: 'c-tidb-0' });
    expect(planTidb(tidbSts('v8.5.1'), ready, paused()).action).toEqual({ type: 'apply', replicas: 2, partition: 1 });
  });

  it('asks again when the record says starting (the controller stopped before TiDB answered)', () => {
    const ready = [tidbPod(0, 'r1', 'v8.5.0'), tidbPod(1, 'r1', 'v8.5.0')];
    expect(planTidb(tidbSts('v8.5.1'), ready, paused('v8.5.0', 'v8.5.1', 'starting')).action).toMatchObject({ type: 'ddl-pause' });
  });

  it('steps on, asking no more, once the TiDB asked had no /upgrade/start (the record says unsupported)', () => {
    const ready = [tidbPod(0, 'r1', 'v8.5.0'), tidbPod(1, 'r1', 'v8.5.0')];
    expect(planTidb(tidbSts('v8.5.1'), ready, paused('v8.5.0', 'v8.5.1', 'unsupported')).action).toEqual({
      type: 'apply',
      replicas: 2,
      partition: 1,
    });
    expect(ddlPauseOf({ smoothUpgrade: { source: 'v8.5.0', target: 'v8.5.1', state: 'unsupported', since: 'x' } })?.state).toBe(
      'unsupported',
    );
  });

  it('leaves DDL alone for a pair that needs no pause, and for a config-only rollout', () => {
    const old = [tidbPod(0, 'r1', 'v7.3.0'), tidbPod(1, 'r1', 'v7.3.0')];
    expect(planTidb(tidbSts('v7.5.0'), old).action).toEqual({ type: 'apply', replicas: 2, partition: 1 });
    const same = [tidbPod(0, 'r1', 'v8.5.0'), tidbPod(1, 'r1', 'v8.5.0')];
    expect(planTidb(tidbSts('v8.5.0'), same).action).toEqual({ type: 'apply', replicas: 2, partition: 1 });
  });

  it('resumes a pause recorded for another pair before judging the upgrade under way', () => {
    const pods = [tidbPod(0, 'r1', 'v8.5.0'), tidbPod(1, 'r1', 'v8.5.0')];
    const p = planTidb(tidbSts('v8.5.2'), pods, paused('v8.5.0', 'v8.5.1'));
    expect(p.action).toEqual({ type: 'ddl-resume', pod: 'c-tidb-0', stale: true });
  });

  it('resumes once every TiDB runs the new revision and is Ready, not before', () => {
    const done = {
      ...tidbSts('v8.5.1', 'r2'),
      status: { observedGeneration: 1, replicas: 2, currentRevision: 'r2', updateRevision: 'r2' },
    } as StatefulSet;
    const midway = planTidb(tidbSts('v8.5.1'), [tidbPod(0, 'r1', 'v8.5.0'), tidbPod(1, 'r2', 'v8.5.1')], paused());
    expect(midway.action).toEqual({ type: 'apply', replicas: 2, partition: 0 });
    const notReady = planTidb(done, [tidbPod(0, 'r2', 'v8.5.1', { ready: false }), tidbPod(1, 'r2', 'v8.5.1')], paused());
    expect(notReady.action).toBeUndefined();
    expect(notReady.reason).toBe('the TiDB upgrade is done; DDL stays paused until Pod c-tidb-0 is Ready');
    const over = planTidb(done, [tidbPod(0, 'r2', 'v8.5.1'), tidbPod(1, 'r2', 'v8.5.1')], paused());
    expect(over.action).toEqual({ type: 'ddl-resume', pod: 'c-tidb-0', stale: false });
    expect(over.event).toMatchObject({ reason: 'DDLResume' });
    expect(planTidb(done, [tidbPod(0, 'r2', 'v8.5.1'), tidbPod(1, 'r2', 'v8.5.1')]).action).toBeUndefined();
  });
});

describe("TiDB's /upgrade/{op}, as the simulated tidb-server answers it", () => {
  it.each(['v7.1.5', 'v8.5.1'])('takes success and the duplicate answer of %s as done, and refuses an older server', async (version) => {
    const port = await freePort();
    const sim = new TidbSim({ port, version });
    try {
      await sim.serverStart('c-tidb-0', '127.0.0.1');
      const base = `http://127.0.0.1:${port}`;
      await tidbUpgradeOp(base, 'start');
      await tidbUpgradeOp(base, 'start');
      expect(sim.ddlPaused).toBe(true);
      await tidbUpgradeOp(base, 'finish');
      await tidbUpgradeOp(base, 'finish');
      expect(sim.upgradeOps.map((o) => [o.op, o.changed])).toEqual([
        ['start', true],
        ['start', false],
        ['finish', true],
        ['finish', false],
      ]);
      // A server without the route answers 404: no pause there, never a retry for ever.
      sim.setVersion('c-tidb-0', 'v7.3.0');
      expect(await tidbUpgradeOp(base, 'start')).toEqual({ supported: false, answer: '404 page not found' });
    } finally {
      await sim.close();
    }
  });
});

describe("TiDB's /upgrade/{op} answers, byte for byte", () => {
  const answering = async (status: number, body: string, type = 'application/json') => {
    const server = http.createServer((_req, res) => res.writeHead(status, { 'content-type': type }).end(body));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  };

  it.each([
    ['success (WriteData: MarshalIndent of a string)', '"success!"', 'success!'],
    [
      'a duplicate, before v7.5.0',
      '"It\'s a duplicated op and the cluster is already in upgrading state."',
      "It's a duplicated op and the cluster is already in upgrading state.",
    ],
    [
      'a duplicate, from v7.5.0',
      '"It\'s a duplicated operation and the cluster is already in upgrading state."',
      "It's a duplicated operation and the cluster is already in upgrading state.",
    ],
    // server/handler/upgrade_handler.go of the tree before the pkg/ move: no return after the first WriteData.
    ['two values in one body (a duplicate in the pre-pkg/ trees)', '"Be upgrading.""success!"', 'Be upgrading. success!'],
    ['an answer this client does not know, still a 200', 'ok', 'ok'],
  ])('HTTP 200 with %s is done', async (_name, body, answer) => {
    const s = await answering(200, body);
    try {
      expect(await tidbUpgradeOp(s.base, 'start')).toEqual({ supported: true, answer });
    } finally {
      await s.close();
    }
  });

  it('an error (WriteError: 400 or 500, plain text) is retried', async () => {
    const s = await answering(500, 'context deadline exceeded', 'text/plain; charset=utf-8');
    try {
      await expect(tidbUpgradeOp(s.base, 'finish')).rejects.toThrow(`POST ${s.base}/upgrade/finish: HTTP 500 "context deadline exceeded"`);
    } finally {
      await s.close();
    }
  });
});
