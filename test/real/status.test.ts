/**
 * `tidb-gitops status` on a real API server, against a cluster the simulators run with the shipped
 * controller: read with a kubeconfig as a user has one, as text and as JSON, through the installed
 * command (its own bundle) and in process; a store that goes Down is a problem (exit 3), a cluster
 * that does not exist an error (exit 1).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { statusMain, STATUS_PROBLEMS } from '../../src/cli/status';
import type { StatusReport } from '../../src/cli/status-report';
import { realApiSuite } from '../kube/suite';
import { RealWorld } from '../kube/world';
import { simCluster } from '../sim/controller-process';
import { TEST_DIR } from '../support/paths';

const run = promisify(execFile);
const suite = realApiSuite();
jest.setTimeout(180_000);

let world: RealWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

/** `status` in process: its exit status and what it printed. */
async function status(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await statusMain(args, { stdout: (s) => (out += s), stderr: (s) => (err += s), env: {} });
  return { code, out, err };
}

suite.describeReal('tidb-gitops status', () => {
  test('says where a cluster stands, and exits 3 once a store is Down', async () => {
    const w = await RealWorld.start({ cp: suite.cp(), cluster: simCluster({}, { namespace: 'status-a' }), render: suite.render });
    world = w;
    await w.startController();
    await w.waitFor(
      async () => (await w.settled('pd', 3)) && (await w.settled('tikv', 3)) && (await w.settled('tidb', 2)),
      90_000,
      'the cluster to come up',
    );
    const kubeconfig = w.cp.adminKubeconfig();
    const args = ['c', '-n', 'status-a', '--kubeconfig', kubeconfig];
    const healthy = async () => {
      const r = await status([...args, '-o', 'json']);
      return r.code === 0 && (JSON.parse(r.out) as StatusReport).stores.filter((s) => s.state === 'Up').length === 3;
    };
    await w.waitFor(healthy, 60_000, 'status to see the cluster healthy');

    const json = await status([...args, '-o', 'json']);
    expect(json.err).toBe('');
    const report = JSON.parse(json.out) as StatusReport;
    expect(report).toMatchObject({ cluster: 'c', namespace: 'status-a', controller: 'running', pd: { reachable: true }, problems: [] });
    expect(report.pd?.leader).toMatch(/^c-pd-[012]$/);
    expect(report.components.map((c) => [c.component, c.phase, `${c.ready}/${c.replicas}`, c.versions])).toEqual([
      ['pd', 'Normal', '3/3', ['v8.5.0']],
      ['tikv', 'Normal', '3/3', ['v8.5.0']],
      ['tidb', 'Normal', '2/2', ['v8.5.0']],
    ]);
    expect(report.stores.map((s) => s.pod).sort()).toEqual(['c-tikv-0', 'c-tikv-1', 'c-tikv-2']);

    // As a user runs it: the installed command, its own bundle, text on a terminal.
    const text = await run(process.execPath, [join(TEST_DIR, '../bin/tidb-gitops.js'), 'status', ...args], {
      env: { ...process.env, KUBECONFIG: '' },
    });
    expect(text.stdout).toMatch(/^Cluster status-a\/c: healthy\nController: running\. PD: reachable, leader c-pd-[012]\n/);
    expect(text.stdout).toMatch(/\ntikv +Normal +3\/3 +v8\.5\.0 +/);
    // Without a cluster: every cluster of the namespace.
    expect(
      (
        JSON.parse((await status(['-n', 'status-a', '--kubeconfig', kubeconfig, '-o', 'json'])).out) as { clusters: StatusReport[] }
      ).clusters.map((c) => c.cluster),
    ).toEqual(['c']);

    // A store PD stops hearing from: a problem, exit 3, in the text too.
    w.pd.tikvStop('c-tikv-1');
    await w.waitFor(async () => (await status(args)).code === STATUS_PROBLEMS, 60_000, 'status to report the store');
    const down = await status(args);
    expect(down.out).toMatch(/\nProblems:\n(  - .*\n)*  - tikv store \d+ \(c-tikv-1\) is (Disconnected|Down)\n/);

    const missing = await status(['nope', '-n', 'status-a', '--kubeconfig', kubeconfig]);
    expect(missing).toEqual({
      code: 1,
      out: '',
      err: 'tidb-gitops status: no cluster nope in namespace status-a: no nope-discovery Deployment, StatefulSet or nope-status ConfigMap\n',
    });
  });
});
