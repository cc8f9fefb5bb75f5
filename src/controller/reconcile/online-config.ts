/**
 * Each pass, the keys of PD's and TiKV's InPlace config (the ConfigMap `<cluster>-<component>`, key
 * `config-file`) that the servers change online are applied to the running members without a
 * restart: PD's cluster-wide through its leader, TiKV's to each ready store's status server
 * (clients/online-config.ts). What to send is planned (plan/online-config.ts) from the file, what
 * each member reports and the records; after a send the member's report is read again and must show
 * the value. Keys that need a restart are never sent: they wait for the next one, as before. Events
 * on the component's StatefulSet: `ConfigAppliedOnline`, `ConfigOnlineFailed` (once per standing
 * failure). `status.json` says under `onlineConfig` per component which keys were applied to which
 * members, and why not. A component with `configUpdateStrategy: RollingUpdate` is left out: its
 * config changes roll the Pods. A side task.
 */
import { parseToml, type TomlTable } from '../../base/toml';
import { changedOnline, configSchema, nodeOf } from '../../tidbcluster/config-schema';
import { names } from '../../tidbcluster/names';
import { rfc3339 } from '../actions/context';
import type { EventRecorder } from '../clients/events';
import type { ClientTls } from '../clients/http';
import type { KubeAccess } from '../clients/kube';
import { ConfigRefused, pdConfig, setPdConfig, setTikvConfig, tikvConfig, tikvStatusBase } from '../clients/online-config';
import type { PdClient } from '../clients/pd';
import type { ClusterInfo } from '../model/cluster';
import { isReady, type Pod, type StatefulSet } from '../model/objects';
import { imageTag, podImageTag, toMillis } from '../model/values';
import { planOnlineConfig, reportsValues, type AppliedKey, type OnlineMember, type Refusal, type SentValue } from '../plan/online-config';
import type { OnlineConfigComponent } from '../records/online-config';
import type { StatusRecords } from '../records/store';
import type { Logger } from '../runtime/log';
import { SaidOnce } from './said-once';
import type { SidePass, SideTask } from './side-task';

/** How one component's online config stands, in `status.json`. */
export interface ComponentOnlineStatus {
  /**
   * `current`: every member read reports the file's online keys; `applied`: keys were applied this
   * pass; `failed`: a member refused a key or did not report it after; `waiting`: nothing was sent
   * (`reason` says why).
   */
  readonly state: 'current' | 'applied' | 'failed' | 'waiting';
  /** Why it waits or failed. @default none */
  readonly reason?: string;
  /** The file's keys the release changes online. */
  readonly onlineKeys: readonly string[];
  /** The keys applied this pass, with their values. @default none */
  readonly applied?: Readonly<Record<string, SentValue>>;
  /** The members that report the applied keys. @default none */
  readonly members?: readonly string[];
  /** Keys that need a restart, at another value on some member: they wait for its next restart. @default none */
  readonly waitingForRestart?: readonly string[];
  /** Online keys not sent, and why. @default none */
  readonly notSent?: readonly { readonly key: string; readonly reason: string }[];
  /** What members refused, in their words. @default none */
  readonly refused?: readonly { readonly member: string; readonly key: string; readonly error: string }[];
  /** Members not asked (not Ready) or whose config could not be read. @default none */
  readonly unread?: readonly { readonly member: string; readonly error: string }[];
  /** Keys applied online before and since removed from the config, still held by members that have not restarted. @default none */
  readonly lingering?: readonly string[];
  /** When keys were last applied, RFC 3339. @default never */
  readonly lastApplied?: string;
}

/** The `onlineConfig` part of `status.json`. */
export type OnlineConfigStatus = Partial<Record<OnlineConfigComponent, ComponentOnlineStatus>>;

export interface OnlineConfigDeps {
  readonly cluster: ClusterInfo;
  /** The ConfigMaps are listed (the Role grants `list` on them, not `get` by these names). */
  readonly kube: Pick<KubeAccess, 'listConfigMaps'>;
  readonly pd: PdClient;
  readonly tls?: ClientTls;
  readonly event: EventRecorder;
  readonly log: Logger;
}

/** The key of the config file in a component's ConfigMap. */
export const CONFIG_FILE_KEY = 'config-file';

const SERVER_NAME: Record<OnlineConfigComponent, string> = { pd: 'PD', tikv: 'TiKV' };

/** One member to ask: its name, where its config is read and changed, and its release. */
interface Target {
  readonly name: string;
  readonly base: string;
  readonly image: string;
  readonly startedMs?: number;
}

const isOnlineComponent = (k: string): k is OnlineConfigComponent => k === 'pd' || k === 'tikv';

/** When a Pod's server last started: its container's start, else the Pod's. */
function startedMs(pod: Pod, container: string): number | undefined {
  const running = pod.status?.containerStatuses?.find((c) => c.name === container)?.state?.running;
  return toMillis(running?.startedAt) ?? toMillis(pod.metadata.creationTimestamp);
}

export class OnlineConfigApplier implements SideTask {
  readonly name = 'online config';
  readonly readsOnly = false;
  private status: OnlineConfigStatus = {};
  private readonly refused = new Map<OnlineConfigComponent, Refusal[]>();
  private readonly announced = new SaidOnce();
  /**
   * Per component, the file and images every member was last found current with: while they stay the
   * same nothing is asked (a member that starts reads the file itself), so a steady cluster costs no
   * request to its servers, and a PD without a leader is not waited on.
   */
  private readonly settled = new Map<OnlineConfigComponent, string>();

  constructor(
    private readonly d: OnlineConfigDeps,
    private readonly records: StatusRecords,
  ) {}

  /** The status of the last pass, for `status.json`; undefined when no component is kept. */
  current(): OnlineConfigStatus | undefined {
    return Object.keys(this.status).length > 0 ? this.status : undefined;
  }

  async run({ view }: SidePass): Promise<void> {
    const next: OnlineConfigStatus = {};
    const kept = view.components.filter((c) => isOnlineComponent(c.kind) && this.inPlace(c.sts, c.kind));
    if (kept.length === 0) {
      this.status = next;
      return;
    }
    let files: Map<string, string | undefined>;
    try {
      // One list a pass for both components: the items carry their data.
      const items = (await this.d.kube.listConfigMaps()) as { metadata: { name?: string }; data?: Record<string, string> }[];
      files = new Map(items.map((cm) => [cm.metadata.name ?? '', cm.data?.[CONFIG_FILE_KEY]]));
    } catch (err) {
      this.d.log.warn('could not read the config files to apply online; tried again next pass', { error: (err as Error).message });
      return;
    }
    for (const c of kept) {
      if (!isOnlineComponent(c.kind)) continue;
      try {
        const text = files.get(names.configMap(this.d.cluster.name, c.kind));
        const pd = view.pd && !('error' in view.pd) ? view.pd : undefined;
        const images = [...new Set(c.pods.map((p) => podImageTag(p, c.kind) ?? ''))].sort();
        const digest = JSON.stringify([text, imageTag(c.sts, c.kind), images]);
        const before = this.status[c.kind];
        if (text !== undefined && this.settled.get(c.kind) === digest && before) {
          // What was applied is now what every member has.
          const { applied: _applied, members: _members, ...rest } = before;
          next[c.kind] = { ...rest, state: 'current' };
          continue;
        }
        const s = text === undefined ? undefined : await this.keep(c.kind, text, c.sts, c.pods, view.now, pd);
        // Settled only when every running member was read and holds the file's values.
        if ((s?.state === 'current' || s?.state === 'applied') && !s.unread?.length) this.settled.set(c.kind, digest);
        else this.settled.delete(c.kind);
        if (s) next[c.kind] = s;
      } catch (err) {
        this.d.log.warn(`could not apply ${SERVER_NAME[c.kind]}'s config online; tried again next pass`, { error: (err as Error).message });
        next[c.kind] = { state: 'waiting', reason: (err as Error).message, onlineKeys: this.status[c.kind]?.onlineKeys ?? [] };
      }
    }
    this.status = next;
  }

  /** Whether the StatefulSet mounts the component's InPlace ConfigMap (a RollingUpdate one carries a hash). */
  private inPlace(sts: StatefulSet, kind: OnlineConfigComponent): boolean {
    const wanted = names.configMap(this.d.cluster.name, kind);
    return (sts.spec?.template?.spec?.volumes ?? []).some((v) => v.configMap?.name === wanted);
  }

  private async keep(
    kind: OnlineConfigComponent,
    text: string,
    sts: StatefulSet,
    pods: readonly Pod[],
    now: number,
    pd: { members: readonly { name: string; clientUrls: readonly string[] }[]; leader: string | undefined } | undefined,
  ): Promise<ComponentOnlineStatus | undefined> {
    let config: TomlTable;
    try {
      config = parseToml(text);
    } catch (err) {
      return { state: 'waiting', reason: `the config file does not parse: ${(err as Error).message}`, onlineKeys: [] };
    }
    try {
      configSchema(kind);
    } catch (err) {
      return { state: 'waiting', reason: (err as Error).message, onlineKeys: [] };
    }
    const typeOf = (path: readonly string[]) => nodeOf(configSchema(kind), path)?.t;
    const running = pods.filter((p) => !p.metadata.deletionTimestamp && p.status?.phase === 'Running');
    const stsImage = imageTag(sts, kind) ?? '';
    const targets = kind === 'tikv' ? this.tikvTargets(running, stsImage) : await this.pdTarget(running, stsImage, pd);
    if ('waiting' in targets) return { state: 'waiting', reason: targets.waiting, onlineKeys: [] };
    // PD's config is the leader's: its other members are not asked.
    const notAsked = (kind === 'tikv' ? running : [])
      .filter((p) => !isReady(p))
      .map((p) => ({ member: p.metadata.name ?? '', error: 'not Ready: not asked' }));
    const members = await Promise.all(targets.list.map((t) => this.read(kind, t, targets.online)));
    const record = this.records.onlineConfig[kind];
    const plan = planOnlineConfig({ config, typeOf, members, applied: record?.keys, refused: this.refused.get(kind) });
    const refusals: Refusal[] = [...plan.refused];
    const appliedNow: Record<string, AppliedKey> = {};
    const reporting = new Set<string>();
    const failures: string[] = [];
    for (const send of plan.sends) {
      const target = targets.list.find((t) => t.name === send.member)!;
      let out: { refused: Refusal[] };
      try {
        out = await this.send(kind, target, send.values);
      } catch (err) {
        // Not an answer (the server went away, a timeout): asked again next pass.
        failures.push(`${send.member}: ${(err as Error).message}`);
        continue;
      }
      refusals.push(...out.refused);
      const sent = Object.fromEntries(Object.entries(send.values).filter(([k]) => !out.refused.some((r) => r.key === k)));
      if (Object.keys(sent).length === 0) continue;
      const reported = await this.fetch(kind, target.base).catch((e: Error) => e);
      const off = reported instanceof Error ? Object.keys(sent) : reportsValues(reported, sent, typeOf);
      if (off.length > 0) {
        const why = reported instanceof Error ? reported.message : `it reports other values for ${off.join(', ')}`;
        failures.push(`${send.member}: applied ${Object.keys(sent).join(', ')}, but ${why}`);
      } else reporting.add(send.member);
      for (const [key, value] of Object.entries(sent)) if (!off.includes(key)) appliedNow[key] = { value, at: now };
    }
    this.refused.set(kind, refusals);
    const keys = { ...plan.keepApplied, ...appliedNow };
    const applied = Object.fromEntries(Object.entries(appliedNow).map(([k, a]) => [k, a.value]));
    const time = Object.keys(appliedNow).length > 0 ? rfc3339(now) : record?.time;
    const sameKeys = JSON.stringify(keys) === JSON.stringify(record?.keys ?? {});
    if (!sameKeys) {
      const members = [...new Set([...(record?.members ?? []), ...reporting])].sort();
      const recorded = Object.keys(keys).length === 0 ? undefined : { keys, members, time: time ?? rfc3339(now) };
      await this.records.setOnlineConfig(kind, recorded);
    }
    const sts_ = names.statefulSet(this.d.cluster.name, kind);
    if (Object.keys(applied).length > 0) {
      const list = Object.entries(applied).map(([k, v]) => `${k} = ${JSON.stringify(v)}`);
      const message = `applied ${list.join(', ')} online to ${[...reporting].sort().join(', ')}, without a restart`;
      this.d.log.info(`${SERVER_NAME[kind]}: ${message}`, { component: kind });
      await this.d.event(sts_, 'Normal', 'ConfigAppliedOnline', message, true);
    }
    const problems = [...refusals.map((r) => `${r.member} refused ${r.key} = ${JSON.stringify(r.value)}: ${r.error}`), ...failures];
    if (problems.length > 0) {
      const message = `${SERVER_NAME[kind]} config not applied online: ${problems.join('; ')}`;
      if (this.announced.news(kind, message)) {
        this.d.log.warn(message, { component: kind });
        await this.d.event(sts_, 'Warning', 'ConfigOnlineFailed', message, true);
      }
    } else this.announced.forget(kind);
    const unread = [...notAsked, ...plan.unread];
    return {
      state: problems.length > 0 ? 'failed' : Object.keys(applied).length > 0 ? 'applied' : 'current',
      ...(problems.length > 0 && { reason: problems.join('; ') }),
      onlineKeys: plan.onlineKeys,
      ...(Object.keys(applied).length > 0 && { applied, members: [...reporting].sort() }),
      ...(plan.waitRestart.length > 0 && { waitingForRestart: plan.waitRestart }),
      ...(plan.notSent.length > 0 && { notSent: plan.notSent }),
      ...(refusals.length > 0 && { refused: refusals.map((r) => ({ member: r.member, key: r.key, error: r.error })) }),
      ...(unread.length > 0 && { unread }),
      ...(plan.lingering.length > 0 && { lingering: plan.lingering }),
      ...(time !== undefined && { lastApplied: time }),
    };
  }

  /** TiKV: each Ready Pod's status server, at the release its Pod runs. */
  private tikvTargets(pods: readonly Pod[], stsImage: string): { list: Target[]; online: (t: Target, path: readonly string[]) => boolean } {
    const list = pods.filter(isReady).map((p) => ({
      name: p.metadata.name ?? '',
      base: tikvStatusBase(this.d.cluster, p.metadata.name ?? ''),
      image: podImageTag(p, 'tikv') ?? stsImage,
      startedMs: startedMs(p, 'tikv'),
    }));
    return { list, online: (t, path) => changedOnline('tikv', t.image, path) };
  }

  /**
   * PD: the leader, which holds the cluster-wide config (and persists it: a PD that restarts does not
   * read these keys from its file again, so no start time is given). A key is sent only when every
   * running PD Pod's release changes it online.
   */
  private async pdTarget(
    pods: readonly Pod[],
    stsImage: string,
    seen: { members: readonly { name: string; clientUrls: readonly string[] }[]; leader: string | undefined } | undefined,
  ): Promise<{ list: Target[]; online: (t: Target, path: readonly string[]) => boolean } | { waiting: string }> {
    const pd = seen ?? { members: await this.d.pd.health(), leader: await this.d.pd.leader() };
    const leader = pd.members.find((m) => m.name === pd.leader);
    if (!leader || leader.clientUrls.length === 0) return { waiting: 'PD has no leader' };
    const images = [...new Set(pods.map((p) => podImageTag(p, 'pd') ?? stsImage))];
    if (images.length === 0) images.push(stsImage);
    return {
      list: [{ name: leader.name, base: leader.clientUrls[0], image: images[0] }],
      online: (_t, path) => images.every((image) => changedOnline('pd', image, path)),
    };
  }

  private fetch(kind: OnlineConfigComponent, base: string): Promise<Record<string, unknown>> {
    const o = { tls: this.d.tls };
    return kind === 'pd' ? pdConfig(base, o) : tikvConfig(base, o);
  }

  private async read(
    kind: OnlineConfigComponent,
    t: Target,
    online: (t: Target, path: readonly string[]) => boolean,
  ): Promise<OnlineMember> {
    const base = {
      name: t.name,
      online: (path: readonly string[]) => online(t, path),
      ...(t.startedMs !== undefined && { startedMs: t.startedMs }),
    };
    try {
      return { ...base, reported: await this.fetch(kind, t.base) };
    } catch (err) {
      return { ...base, reported: undefined, error: (err as Error).message };
    }
  }

  /**
   * Sends the values: PD one key at a time (it applies them in Go's map order and stops at the first
   * refusal), TiKV all at once, and key by key after a refusal to tell which it refuses.
   */
  private async send(kind: OnlineConfigComponent, t: Target, values: Readonly<Record<string, SentValue>>): Promise<{ refused: Refusal[] }> {
    const o = { tls: this.d.tls };
    const refused: Refusal[] = [];
    const one = async (key: string, value: SentValue) => {
      try {
        if (kind === 'pd') await setPdConfig(t.base, key, value, o);
        else await setTikvConfig(t.base, { [key]: value }, o);
      } catch (err) {
        if (!(err instanceof ConfigRefused)) throw err;
        refused.push({ member: t.name, key, value, error: err.words });
      }
    };
    if (kind === 'tikv' && Object.keys(values).length > 1) {
      try {
        await setTikvConfig(t.base, values, o);
        return { refused };
      } catch (err) {
        if (!(err instanceof ConfigRefused)) throw err;
      }
    }
    for (const [key, value] of Object.entries(values)) await one(key, value);
    return { refused };
  }
}
