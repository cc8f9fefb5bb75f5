/**
 * PD micro-services with the controller as a real process against the simulated cluster: PD in API
 * mode, TSO and scheduling servers in their own Pods (test/sim/pdms.ts). These need the bundle
 * (`npm run build`), which `npm test` makes first.
 */
import { worldViolations } from '../../support/rbac';
import { render } from '../../support/render';
import { World, simCluster } from '../../sim/world';

jest.setTimeout(90_000);

const MS = (version: string, tso = 2, scheduling = 2) => ({
  version,
  pd: { replicas: 3, requests: { storage: '1Gi' }, mode: 'ms' },
  pdms: [
    { name: 'tso', replicas: tso },
    { name: 'scheduling', replicas: scheduling },
  ],
});

let world: World | undefined;
afterEach(async () => {
  const w = world;
  world = undefined;
  if (!w) return;
  try {
    expect(worldViolations(w, 'scenario')).toEqual([]);
  } finally {
    await w.close();
  }
});

async function running(spec: Record<string, unknown>): Promise<World> {
  const w = await World.start({ cluster: simCluster(spec), render });
  world = w;
  await w.startController();
  const pdms = spec.pdms as { name: string; replicas: number }[];
  await w.waitFor(
    () => w.settled('pd', 3) && w.settled('tikv', 3) && w.settled('tidb', 2) && pdms.every((m) => w.settled(m.name, m.replicas)),
    40_000,
    'the cluster with PD micro-services to come up',
  );
  await w.waitFor(
    () => ['tso', 'scheduling', 'pd'].every((c) => w.status()?.components[c]?.phase === 'Normal'),
    10_000,
    'the status to say Normal',
  );
  return w;
}

const stopsOf = (w: World, component: string) => w.stops.filter((s) => s.component === component);

/** The primary of a service at a moment: the last server elected before it. */
function primaryAt(w: World, service: 'tso' | 'scheduling', time: number): string | undefined {
  return w.pdms!.elections.filter((e) => e.service === service && e.time <= time).at(-1)?.pod;
}

describe('PD micro-services under the controller', () => {
  it('come up registered with PD in API mode, and the status lists each service with its primary', async () => {
    const w = await running(MS('v8.5.0'));
    const listed = (c: string) => (w.status()?.components[c]?.servers as unknown[] | undefined)?.length === 2;
    await w.waitFor(() => listed('tso') && listed('scheduling'), 40_000, 'the status to list the servers');
    const status = w.status()!;
    for (const service of ['tso', 'scheduling'] as const) {
      const servers = status.components[service].servers as { name: string; pod: string; primary: boolean; serviceAddr: string }[];
      expect(servers.map((s) => s.pod).sort()).toEqual([`c-${service}-0`, `c-${service}-1`]);
      expect(servers.map((s) => s.name).sort()).toEqual([`c-${service}-0`, `c-${service}-1`]);
      expect(servers.filter((s) => s.primary).map((s) => s.pod)).toEqual([w.pdms!.primary(service)!.pod]);
      expect(servers[0].serviceAddr).toMatch(new RegExp(`^http://c-${service}-\\d\\.c-${service}-peer\\.ns\\.svc:2379$`));
    }
  });

  it('upgrade: TSO, then scheduling, then PD, one Pod at a time, never stopping a primary that could hand over', async () => {
    const w = await running(MS('v8.5.0'));
    const before = w.stops.length;
    await w.applyCluster(simCluster(MS('v8.5.1')));
    await w.waitFor(
      () => ['tso', 'scheduling'].every((c) => w.settled(c, 2)) && w.settled('pd', 3) && w.settled('tikv', 3) && w.settled('tidb', 2),
      80_000,
      'the upgrade to finish',
    );
    const tso = stopsOf(w, 'tso');
    const scheduling = stopsOf(w, 'scheduling');
    const pd = stopsOf(w, 'pd');
    expect(tso.map((s) => s.pod)).toEqual(['c-tso-1', 'c-tso-0']);
    expect(scheduling.map((s) => s.pod)).toEqual(['c-scheduling-1', 'c-scheduling-0']);
    expect(pd.map((s) => s.pod)).toEqual(['c-pd-2', 'c-pd-1', 'c-pd-0']);
    expect(w.stops.length - before).toBe(2 + 2 + 3 + 3 + 2);
    // The operator's order, one service after the other.
    expect(Math.max(...tso.map((s) => s.time))).toBeLessThan(Math.min(...scheduling.map((s) => s.time)));
    expect(Math.max(...scheduling.map((s) => s.time))).toBeLessThan(Math.min(...pd.map((s) => s.time)));
    for (const c of ['tso', 'scheduling']) expect(w.kube.maxUnavailable(`c-${c}`)).toBeLessThanOrEqual(1);
    // No server stopped while it was its service's primary: each primary handed over first.
    for (const s of [...tso, ...scheduling]) {
      expect({ stop: s.pod, primary: primaryAt(w, s.component as 'tso' | 'scheduling', s.time) }).not.toEqual({
        stop: s.pod,
        primary: s.pod,
      });
    }
    expect(w.pd.stopsWhileLeader).toEqual([]);
    const transfers = w.pdms!.transfers;
    expect(transfers.length).toBeGreaterThanOrEqual(2);
    expect(w.events('PrimaryTransfer').length).toBe(transfers.length);
    // Each transfer went to another server of the same service, named as PD's registry names it.
    for (const t of transfers) expect(t.to).toMatch(new RegExp(`^c-${t.service}-\\d$`));
    await w.waitFor(
      () => ['tso', 'scheduling'].every((c) => w.status()?.components[c]?.phase === 'Normal'),
      10_000,
      'the status to say Normal',
    );
  });

  it('with three TSO servers, a primary that refuses the one chosen (outside the keyspace group) picks another', async () => {
    // PD gives TSO's default keyspace group two servers once TiKV has bootstrapped; only they may lead.
    const w = await running(MS('v8.5.0', 3));
    await w.applyCluster(simCluster(MS('v8.5.1', 3)));
    await w.waitFor(() => w.settled('tso', 3) && w.settled('scheduling', 2) && w.settled('pd', 3), 80_000, 'the upgrade to finish');
    const tso = stopsOf(w, 'tso');
    expect(tso.map((s) => s.pod)).toEqual(['c-tso-2', 'c-tso-1', 'c-tso-0']);
    for (const s of tso) expect({ stop: s.pod, primary: primaryAt(w, 'tso', s.time) }).not.toEqual({ stop: s.pod, primary: s.pod });
    // Each refusal of a chosen server was followed by a transfer the primary chose itself.
    const refused = w.pdms!.requests.filter((r) => r.path === '/tso/api/v1/primary/transfer' && r.status >= 400 && !r.redirectedFrom);
    const chosenByServer = w.pdms!.transfers.filter((t) => t.service === 'tso' && t.asked === '');
    expect(chosenByServer.length).toBeGreaterThanOrEqual(refused.length);
  });

  it('v8.3.0 TSO (no keyspace-group filter): the primary hands over only to a server in the default keyspace group', async () => {
    const w = await running(MS('v8.3.0', 3));
    await w.waitFor(() => w.pd.ms.defaultKeyspaceGroup?.length === 2, 10_000, 'PD to give the default keyspace group its two servers');
    await w.applyCluster(simCluster(MS('v8.4.0', 3)));
    await w.waitFor(() => w.settled('tso', 3) && w.settled('scheduling', 2) && w.settled('pd', 3), 80_000, 'the upgrade to finish');
    expect(stopsOf(w, 'tso').map((s) => s.pod)).toEqual(['c-tso-2', 'c-tso-1', 'c-tso-0']);
    const tso = w.pdms!.transfers.filter((t) => t.service === 'tso');
    expect(tso.length).toBeGreaterThan(0);
    // A pick outside the group (whose members PD may change as servers restart) answers 200 on v8.3.0
    // and is never elected: TSO has no primary until the flag expires. Each pick here is the next primary.
    for (const t of tso) {
      const next = w.pdms!.elections.find((e) => e.service === 'tso' && e.time >= t.time);
      expect({ to: t.to, elected: next?.pod }).toEqual({ to: t.to, elected: t.to });
    }
    for (const s of stopsOf(w, 'tso'))
      expect({ stop: s.pod, primary: primaryAt(w, 'tso', s.time) }).not.toEqual({ stop: s.pod, primary: s.pod });
  });

  it('from a release before v8.3.0 (no names, no transfer API): old primaries restart as they are, upgraded ones hand over', async () => {
    const w = await running(MS('v8.1.0'));
    // Servers before v8.3.0 register no name: PD lists them with an empty one.
    const listed = () => w.status()?.components.tso?.servers as { name: string }[] | undefined;
    await w.waitFor(() => listed()?.length === 2, 10_000, 'the status to list the TSO servers');
    expect(listed()!.map((m) => m.name)).toEqual(['', '']);
    await w.applyCluster(simCluster(MS('v8.5.0')));
    await w.waitFor(
      () => ['tso', 'scheduling'].every((c) => w.settled(c, 2)) && w.settled('pd', 3) && w.settled('tidb', 2),
      80_000,
      'the upgrade to finish',
    );
    expect(stopsOf(w, 'tso').map((s) => s.pod)).toEqual(['c-tso-1', 'c-tso-0']);
    // No transfer was asked of a v8.1 server (it has no such route).
    expect(w.pdms!.requests.filter((r) => r.path.endsWith('/primary/transfer') && r.status === 404)).toEqual([]);
  });

  it('a lone server restarts as the primary (nowhere to hand over), and the upgrade goes on', async () => {
    const w = await running(MS('v8.5.0', 1, 1));
    await w.applyCluster(simCluster(MS('v8.5.1', 1, 1)));
    await w.waitFor(() => w.settled('tso', 1) && w.settled('scheduling', 1) && w.settled('pd', 3), 60_000, 'the upgrade to finish');
    expect(stopsOf(w, 'tso').map((s) => s.pod)).toEqual(['c-tso-0']);
    expect(stopsOf(w, 'scheduling').map((s) => s.pod)).toEqual(['c-scheduling-0']);
    expect(w.pdms!.transfers).toEqual([]);
    expect(w.pdms!.primary('tso')?.pod).toBe('c-tso-0');
  });

  it('scales TSO out and in one Pod at a time, a primary handing over before its Pod goes; PD keeps only the running servers registered', async () => {
    const w = await running(MS('v8.5.0'));
    await w.applyCluster(simCluster(MS('v8.5.0', 3)));
    await w.waitFor(
      () => w.settled('tso', 3) && w.pdms!.members('tso').filter((m) => m.state === 'running').length === 3,
      30_000,
      'TSO to scale out',
    );
    await w.applyCluster(simCluster(MS('v8.5.0', 1)));
    await w.waitFor(() => w.settled('tso', 1), 30_000, 'TSO to scale in');
    expect(stopsOf(w, 'tso').map((s) => s.pod)).toEqual(['c-tso-2', 'c-tso-1']);
    // A primary among the removed handed over first.
    for (const s of stopsOf(w, 'tso'))
      expect({ stop: s.pod, primary: primaryAt(w, 'tso', s.time) }).not.toEqual({ stop: s.pod, primary: s.pod });
    await w.waitFor(
      () => (w.status()?.components.tso?.servers as unknown[] | undefined)?.length === 1,
      10_000,
      'the status to list one TSO server',
    );
  });
});
