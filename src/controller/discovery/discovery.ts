/**
 * PD bootstrap discovery, answering the calls the rendered start scripts make, where tidb-operator's
 * discovery service answered them:
 *
 * - `GET /new/<base64("<pod>.<cluster>-pd-peer.<ns>.svc[.<domain>]:2380\n")>[/pd]`: PD start arguments
 *   for a PD Pod that has no data. Once every desired PD Pod has asked and no PD cluster answers, the
 *   last caller bootstraps a one-member cluster (`--initial-cluster`); every other caller joins the
 *   running members (`--join`). A member that lost its data is removed from PD before it rejoins under
 *   the same name. Until it can answer, it returns 500 and the script asks again.
 * - `GET /verify/<base64(pd url)>` (acrossK8s): the PD endpoints to use, the given one first.
 * - `GET /prestop/<pod>`: a deleted PD, TiKV or TiCDC Pod's preStop hook waits here until it has
 *   handed its leadership, region leaders or tables over (`prestop.ts`).
 *
 * Callers must be Pods of this cluster: the name in the request must be a Pod that the PD StatefulSet
 * itself made (its controller owner reference names the StatefulSet and its uid), with an ordinal the
 * StatefulSet has, and the request must come from that Pod's address (or, for `/verify`, any of the
 * cluster's Pods). Labels alone prove nothing: anyone who can create a Pod can copy them, and a Pod
 * that bootstraps PD on its own starts a second cluster. Only a desired ordinal (below the
 * annotation's count, not a failover replica) may bootstrap.
 */
import { LABEL, names } from '../../tidbcluster/names';
import { PdClient, type PdListedMember } from '../clients/pd';
import type { ClusterInfo } from '../model/cluster';
import { isTerminating, ordinalOf, type Pod } from '../model/objects';
import { preStopWait, type PreStopDeps, type PreStopWaitState } from './prestop';
import type { StoppedWithLeaders } from '../records/stopped-with-leaders';
import type { ClientTls } from '../clients/http';

export interface DiscoveryAnswer {
  readonly status: number;
  readonly body: string;
}

export interface DiscoveryDeps {
  readonly cluster: ClusterInfo;
  /** The cluster's Pods (informer cache). */
  pods(): readonly Pod[];
  /** Desired PD replicas (the PD StatefulSet's annotation), undefined while it is not known. */
  pdReplicas(): number | undefined;
  /** The PD StatefulSet's uid and `spec.replicas` (desired plus failover replicas), undefined while it is not known. */
  pdStatefulSet(): { readonly uid?: string; readonly replicas?: number } | undefined;
  /** PD clients to ask for members, in order: the local PD, a referenced cluster's PD, `pdAddresses`. */
  readonly pdClients: readonly PdClient[];
  /** Reject callers whose address is not their Pod's. @default true */
  readonly checkSource: boolean;
  /** The cluster's client certificate (`/prestop` asks TiCDC with it under cluster TLS). @default none */
  readonly tls?: ClientTls;
  /** How `/prestop` polls PD, and its clock (tests). @default every second, Date.now */
  readonly preStop?: Pick<PreStopDeps, 'pollMs' | 'now' | 'ticdcUrl' | 'stallMs'>;
  /** Told when `/prestop` lets a TiKV Pod stop with region leaders on its store. @default none */
  stoppedWithLeaders?(entry: StoppedWithLeaders): void;
  /** Notes what discovery did (stale member removed...), for logs and events. */
  note(kind: 'bootstrap' | 'join' | 'stale-member', message: string, pod: string): void;
}

const answer = (status: number, body: string): DiscoveryAnswer => ({
  status,
  body: body.endsWith('\n') || status === 200 ? body : `${body}\n`,
});

export class Discovery {
  /** PD Pods that asked since the desired replica count last changed (reset on change, like the operator). */
  private readonly callers = new Set<string>();
  private seenReplicas: number | undefined;
  /** What the preStop waits under way have seen, across the hooks' asks. */
  private readonly preStopWaits = new Map<string, PreStopWaitState>();

  constructor(private readonly deps: DiscoveryDeps) {}

  async handle(method: string, url: string, remoteAddress: string | undefined): Promise<DiscoveryAnswer> {
    if (method !== 'GET') return answer(405, 'only GET is served');
    const parts = url.split('?')[0].split('/').filter(Boolean);
    if (parts[0] === 'new' && (parts.length === 2 || parts.length === 3)) return this.newMember(parts[1], parts[2] ?? 'pd', remoteAddress);
    if (parts[0] === 'verify' && parts.length === 2) return this.verify(parts[1], remoteAddress);
    if (parts[0] === 'prestop' && parts.length === 2) {
      const { cluster, pods, pdClients, checkSource, tls } = this.deps;
      const wait = /^\d{1,3}$/.exec(new URLSearchParams(url.split('?')[1] ?? '').get('wait') ?? '');
      const stoppedWithLeaders = this.deps.stoppedWithLeaders?.bind(this.deps);
      const deps = {
        cluster,
        pods,
        pdClients,
        checkSource,
        tls,
        fromPod,
        waits: this.preStopWaits,
        stoppedWithLeaders,
        ...this.deps.preStop,
      };
      return preStopWait(deps, parts[1], remoteAddress, wait ? Math.max(1, Number(wait[0])) : undefined);
    }
    return answer(
      404,
      `unknown path ${url}; discovery serves /new/<base64 peer address>, /verify/<base64 PD URL> and /prestop/<PD, TiKV or TiCDC Pod>`,
    );
  }

  private async newMember(encoded: string, registerType: string, remote: string | undefined): Promise<DiscoveryAnswer> {
    const { cluster } = this.deps;
    if (registerType !== 'pd') return answer(400, `register type ${JSON.stringify(registerType)} is not served; only pd`);
    const peer = decode(encoded);
    if (peer === undefined) return answer(400, 'the address is not base64');
    const host = peer.trim().replace(/:\d+$/, '');
    const labels = host.split('.');
    if (labels.length < 4 || labels[3] !== 'svc' || !labels[1].endsWith('-pd-peer')) {
      return answer(400, `${JSON.stringify(host)} is not a PD peer address (<pod>.<cluster>-pd-peer.<namespace>.svc[.<domain>])`);
    }
    const [podName, service, namespace] = labels;
    const tcName = service.slice(0, -'-pd-peer'.length);
    if (tcName !== cluster.name || namespace !== cluster.namespace) {
      return answer(403, `${host} belongs to cluster ${namespace}/${tcName}; this discovery serves ${cluster.namespace}/${cluster.name}`);
    }
    const pod = this.deps
      .pods()
      .find(
        (p) =>
          p.metadata.name === podName &&
          p.metadata.labels?.[LABEL.component] === 'pd' &&
          p.metadata.labels?.[LABEL.instance] === cluster.name,
      );
    if (!pod || isTerminating(pod)) return answer(403, `${podName} is not a running PD Pod of cluster ${cluster.name}`);
    if (this.deps.checkSource && !fromPod(pod, remote)) return answer(403, `the request does not come from Pod ${podName}'s address`);

    const replicas = this.deps.pdReplicas();
    const sts = this.deps.pdStatefulSet();
    if (replicas === undefined || sts === undefined) return answer(503, 'the PD StatefulSet is not known yet');
    const stsName = names.statefulSet(cluster.name, 'pd');
    const owner = pod.metadata.ownerReferences?.find((r) => r.controller === true);
    if (owner?.kind !== 'StatefulSet' || owner.name !== stsName || (sts.uid !== undefined && owner.uid !== sts.uid)) {
      return answer(403, `${podName} is not a Pod of StatefulSet ${stsName}`);
    }
    const ordinal = ordinalOf(podName, stsName);
    const ordinals = Math.max(replicas, sts.replicas ?? 0);
    if (ordinal === undefined || ordinal >= ordinals)
      return answer(403, `${podName} is not one of the ${ordinals} Pods of StatefulSet ${stsName}`);
    if (replicas !== this.seenReplicas) {
      this.callers.clear();
      this.seenReplicas = replicas;
    }
    this.callers.add(podName);

    const found = await this.members();
    const members = found?.members;
    if (found === undefined || members === undefined || members.length === 0) {
      if (cluster.cluster !== null) return answer(500, `no PD of cluster ${cluster.cluster.name} answers yet`);
      if (ordinal >= replicas) return answer(500, `${podName} is a failover replica: it joins a running PD cluster, never bootstraps one`);
      const desiredCallers = [...this.callers].filter((name) => (ordinalOf(name, stsName) ?? replicas) < replicas).length;
      if (desiredCallers < replicas) return answer(500, `waiting for all ${replicas} PD Pods to ask (${desiredCallers} so far)`);
      this.callers.delete(podName);
      if (cluster.pdAddresses.length > 0) {
        this.deps.note('join', `${podName} joins the PD cluster at ${cluster.pdAddresses.join(',')}`, podName);
        return answer(200, `--join=${cluster.pdAddresses.join(',')}`);
      }
      const scheme = cluster.tls ? 'https' : 'http';
      const name = cluster.acrossK8s || cluster.clusterDomain ? host : podName;
      this.deps.note('bootstrap', `${podName} bootstraps a new PD cluster`, podName);
      return answer(200, `--initial-cluster=${name}=${scheme}://${host}:2380`);
    }

    // A member under the caller's name is stale: the caller asks only when it has no data.
    const stale = members.filter((m) => m.name === podName || m.name === host);
    for (const m of stale) {
      try {
        await found.client.deleteMemberByName(m.name);
        this.deps.note('stale-member', `removed PD member ${m.name}, whose data is gone, so that ${podName} can join again`, podName);
      } catch (err) {
        return answer(500, `cannot remove the stale PD member ${m.name}: ${(err as Error).message}`);
      }
    }
    const unstarted = await this.removeUnstarted(found.client, members, host, podName);
    if (typeof unstarted === 'string') return answer(500, unstarted);
    const urls = members
      .filter((m) => !stale.includes(m) && m.name !== '')
      .flatMap((m) => m.peerUrls.map((u) => u.replace(/:2380$/, ':2379')));
    if (urls.length === 0) return answer(500, 'no other PD member to join yet');
    this.callers.delete(podName);
    this.deps.note('join', `${podName} joins PD through ${urls.join(',')}`, podName);
    return answer(200, `--join=${urls.join(',')}`);
  }

  /**
   * A member added but never started (its Pod died between etcd's `MemberAdd` and starting etcd) has
   * no name, only its peer URL, and PD refuses every join while it is there (tikv/pd
   * server/join/join.go `PrepareJoinCluster`, v8.5.7: "there is a member <id> that has not joined
   * successfully"; from v26.3 only the joiner whose peer URLs it has may resume it). It is removed by
   * id (`DELETE /pd/api/v1/members/id/<id>`, server/api/member.go `DeleteMemberByID`) when its peer
   * URL is the caller's (the caller asks only without data) or a PD Pod's of this cluster that no
   * longer exists (nobody would resume it). One of a Pod still there is its own to resume.
   */
  private async removeUnstarted(
    client: PdClient,
    members: readonly PdListedMember[],
    host: string,
    podName: string,
  ): Promise<string | undefined> {
    const { cluster } = this.deps;
    const pods = new Set(this.deps.pods().map((p) => p.metadata.name));
    for (const m of members.filter((x) => x.name === '')) {
      const peer = m.peerUrls
        .map(peerPod)
        .find((p) => p !== undefined && p.service === names.peerService(cluster.name, 'pd') && p.namespace === cluster.namespace);
      if (peer === undefined || (peer.host !== host && pods.has(peer.pod))) continue;
      try {
        await client.deleteMemberById(m.memberId);
      } catch (err) {
        return `cannot remove PD member ${m.memberId}, added for ${peer.pod} but never started: ${(err as Error).message}`;
      }
      this.deps.note(
        'stale-member',
        `removed PD member ${m.memberId}, added for ${peer.pod} but never started, so that ${podName} can join`,
        podName,
      );
    }
    return undefined;
  }

  private async verify(encoded: string, remote: string | undefined): Promise<DiscoveryAnswer> {
    const pdUrl = decode(encoded)?.trim();
    if (pdUrl === undefined) return answer(400, 'the URL is not base64');
    if (this.deps.checkSource && !this.deps.pods().some((p) => fromPod(p, remote))) {
      return answer(403, 'the request does not come from a Pod of this cluster');
    }
    const hasScheme = /^https?:\/\//.test(pdUrl);
    for (const client of this.deps.pdClients) {
      try {
        const members = await client.health();
        const urls = members
          .filter((m) => m.healthy)
          .flatMap((m) => m.clientUrls.slice(0, 1))
          .map((u) => (hasScheme ? u : u.replace(/^https?:\/\//, '')))
          .filter((u) => u !== pdUrl);
        return answer(200, [pdUrl, ...urls].join(','));
      } catch {
        // Try the next PD.
      }
    }
    return answer(200, pdUrl);
  }

  private async members(): Promise<{ client: PdClient; members: PdListedMember[] } | undefined> {
    for (const client of this.deps.pdClients) {
      try {
        return { client, members: await client.members() };
      } catch {
        // Try the next PD.
      }
    }
    return undefined;
  }
}

/** `http(s)://<pod>.<cluster>-pd-peer.<ns>.svc[.<domain>]:2380`, split; undefined for any other URL. */
function peerPod(url: string): { host: string; pod: string; service: string; namespace: string } | undefined {
  const m = /^https?:\/\/([^/:]+)(?::\d+)?\/?$/.exec(url.trim());
  const labels = m?.[1].split('.');
  if (!m || !labels || labels.length < 4 || labels[3] !== 'svc') return undefined;
  return { host: m[1], pod: labels[0], service: labels[1], namespace: labels[2] };
}

function decode(text: string): string | undefined {
  let b64: string;
  try {
    b64 = decodeURIComponent(text).replace(/-/g, '+').replace(/_/g, '/');
  } catch {
    return undefined;
  }
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64)) return undefined;
  return Buffer.from(b64, 'base64').toString('utf8');
}

const bare = (ip: string): string => ip.replace(/^::ffff:/, '');

function fromPod(pod: Pod, remote: string | undefined): boolean {
  if (!remote) return false;
  const ips = [pod.status?.podIP, ...(pod.status?.podIPs ?? []).map((p) => p.ip)].filter((x): x is string => Boolean(x));
  return ips.some((ip) => bare(ip) === bare(remote));
}
