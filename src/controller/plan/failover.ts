/**
 * Failover, as tidb-operator v1 decides it: a PD member, TiKV or TiFlash store, or TiDB Pod unhealthy
 * for longer than the failover period gets a failure record (`records/failover.ts`), and each record
 * is one extra replica (for PD, once the failed member, its Pod and its volumes are deleted). Pure:
 * the caller writes what these functions decide.
 */
import { names } from '../../tidbcluster/names';
import { isReady, isTerminating, ordinalOf, type Pod } from '../model/objects';
import type { ComponentSettings } from '../../tidbcluster/contract';
import { isFailoverKind, type ComponentFailover, type FailoverKind, type FailureRecord } from '../records/failover';
import { memberOfPod, pdOf, pdStoresOf, podList, podsByOrdinal, storeOfPod, storesOf, unreadyPods, volumesOfPod } from '../view/lookups';
import { DEFAULT_FAILOVER_PERIOD_MS, DEFAULT_PLAN_OPTIONS, type ComponentState, type PdState, type PlanInput } from '../view/view';
import type { Action, PlanEvent, WaitCode } from './action';

/**
 * Notes when each PD member, store and TiDB Pod turned unhealthy, keeping earlier times; entries of
 * what is healthy again are dropped. PD-derived entries are kept as they were while PD cannot be read.
 */
export function trackHealth(prev: Readonly<Record<string, string>>, input: PlanInput): Record<string, string> {
  const now = new Date(input.now).toISOString();
  const out: Record<string, string> = {};
  const note = (key: string) => (out[key] = prev[key] ?? now);
  const pd = pdOf(input);
  for (const c of input.components) {
    if (!isFailoverKind(c.kind)) continue;
    if (c.kind === 'tidb') {
      for (const p of c.pods) if (!isReady(p) && !isTerminating(p)) note(`tidb/${p.metadata.name}`);
      continue;
    }
    if (typeof pd === 'string' || (c.kind !== 'pd' && pd.storesError !== undefined)) {
      for (const [k, v] of Object.entries(prev)) if (k.startsWith(`${c.kind}/`)) out[k] = v;
      continue;
    }
    if (c.kind === 'pd') {
      for (const p of c.pods) {
        const m = memberOfPod(pd.members, p.metadata.name!);
        if (m && !m.healthy) note(`pd/${m.name}`);
      }
    } else {
      for (const s of storesOf(pd.stores, input.cluster.name, c.kind)) if (s.state === 'Down') note(`${c.kind}/${s.id}`);
    }
  }
  return out;
}

/** What failover asks for: an action (the planner stops there), or a note for the status, or nothing. */
export type FailoverStep =
  | {
      readonly reason: string;
      readonly action?: Action;
      readonly event?: PlanEvent;
      /** Something turns due with time (a failover period): look again soon. */
      readonly waiting?: boolean;
      /** `failover-period` while a failover waits for its period to pass. @default none */
      readonly wait?: WaitCode;
    }
  | undefined;

interface Ctx {
  readonly input: PlanInput;
  readonly c: ComponentState;
  readonly kind: FailoverKind;
  readonly settings: ComponentSettings;
  readonly desired: number;
  readonly failover: ComponentFailover;
  readonly enabled: boolean;
  readonly periodMs: number;
  readonly pods: Map<number, Pod>;
}

/**
 * The next failover step of a component, or undefined when there is none. Recovery runs whenever
 * records exist; new records only when failover is on and `maxFailoverCount` allows.
 */
export function failoverStep(input: PlanInput, c: ComponentState, settings: ComponentSettings, desired: number): FailoverStep {
  if (!isFailoverKind(c.kind)) return undefined;
  const options = input.options ?? DEFAULT_PLAN_OPTIONS;
  const ctx: Ctx = {
    input,
    c,
    kind: c.kind,
    settings,
    desired,
    failover: input.failover?.components[c.kind] ?? { records: {} },
    enabled: options.autoFailover && (settings.maxFailoverCount ?? 0) > 0,
    periodMs: options.failoverPeriodMs[c.kind] ?? DEFAULT_FAILOVER_PERIOD_MS,
    pods: podsByOrdinal(input.cluster.name, c.kind, c.pods),
  };
  if (c.kind === 'pd') return pdFailover(ctx);
  if (c.kind === 'tidb') return tidbFailover(ctx);
  return storeFailover(ctx);
}

const sts = (ctx: Ctx): string => names.statefulSet(ctx.input.cluster.name, ctx.kind);
const setRecords = (ctx: Ctx, records: Record<string, FailureRecord>, failoverUID = ctx.failover.failoverUID): Action => ({
  type: 'failover-set',
  failover: Object.keys(records).length === 0 ? undefined : { records, ...(failoverUID ? { failoverUID } : {}) },
});
const without = (records: Readonly<Record<string, FailureRecord>>, keys: readonly string[]): Record<string, FailureRecord> =>
  Object.fromEntries(Object.entries(records).filter(([k]) => !keys.includes(k)));
const step = (reason: string, action?: Action, event?: PlanEvent): FailoverStep => ({ reason, action, event });

/** How long ago something turned unhealthy, or undefined when it was never seen unhealthy. */
function unhealthyFor(ctx: Ctx, key: string): number | undefined {
  const since = ctx.input.failover?.unhealthySince[key];
  const t = since === undefined ? NaN : Date.parse(since);
  return Number.isNaN(t) ? undefined : ctx.input.now - t;
}

/** `5m`, or `90s` when not whole minutes. */
const durationText = (ms: number): string => (ms % 60_000 === 0 ? `${ms / 60_000}m` : `${ms / 1000}s`);

function limitNote(ctx: Ctx, what: string): FailoverStep {
  const max = ctx.settings.maxFailoverCount ?? 0;
  const reason = `${what}, but maxFailoverCount ${max} is reached: no further failover replica`;
  return step(reason, undefined, { type: 'Warning', reason: 'FailoverLimit', message: `${sts(ctx)}: ${reason}` });
}

function pdFailover(ctx: Ctx): FailoverStep {
  const pd = pdOf(ctx.input);
  if (typeof pd === 'string') return undefined;
  const records = ctx.failover.records;
  const keys = Object.keys(records);
  const healthyPod = (ord: number): boolean => {
    const pod = ctx.pods.get(ord);
    return pod !== undefined && isReady(pod) && memberOfPod(pd.members, pod.metadata.name!)?.healthy === true;
  };
  const allHealthy = range(ctx.desired).every(healthyPod);
  if (keys.length > 0 && allHealthy) {
    return step(
      `every PD member is healthy again: clearing ${keys.length} failure record(s), the failover replicas are scaled in`,
      setRecords(ctx, {}),
      {
        type: 'Normal',
        reason: 'FailoverRecovered',
        message: `${sts(ctx)}: every desired member is healthy; removing the failover replicas`,
      },
    );
  }
  const pending = Object.entries(records).find(([, r]) => !r.memberDeleted);
  if (pending) {
    const [key, record] = pending;
    const m = pd.members.find((x) => x.memberId === record.memberId);
    if (m?.healthy) {
      return step(`PD member ${key} is healthy again: dropping its failure record`, setRecords(ctx, without(records, [key])), {
        type: 'Normal',
        reason: 'FailoverCanceled',
        message: `PD member ${key} recovered before it was replaced`,
        pod: record.pod,
      });
    }
    if (m !== undefined && !hasQuorum(pd))
      return { reason: `PD member ${key} waits for replacement until a majority of PD is healthy`, waiting: true };
    const unready = othersDown(ctx, record.pod);
    if (m !== undefined && unready)
      return { reason: `PD member ${key} waits for replacement: ${podList(unready)} not Ready`, waiting: true };
    // The claims go first and their Pod after: a claim in use stays (kubernetes.io/pvc-protection)
    // until its Pod is gone, and the StatefulSet controller does not re-create a Pod while its claim
    // is being deleted, so the replacement can only start on a fresh volume. The record turns into a
    // replica only once member, Pod and claims are all gone.
    const podLeft = ctx.c.pods.some((p) => p.metadata.uid !== undefined && p.metadata.uid === record.podUid);
    const claimsLeft = (ctx.input.volumes ?? []).filter((v) => (record.volumes ?? []).some((r) => r.uid === v.metadata.uid));
    if (m === undefined && !podLeft && claimsLeft.length === 0) {
      return step(
        `failed PD member ${key}, its Pod and its volumes are gone: adding a replica in its place`,
        setRecords(ctx, { ...records, [key]: { ...record, memberDeleted: true } }),
      );
    }
    if (m === undefined && !podLeft && claimsLeft.every((v) => v.metadata.deletionTimestamp)) {
      return {
        reason: `waiting for volumes ${claimsLeft.map((v) => v.metadata.name).join(', ')} of failed PD member ${key} to be deleted`,
        waiting: true,
      };
    }
    return step(
      `replacing failed PD member ${key}: deleting the member, Pod ${record.pod} and its volumes`,
      { type: 'failover-delete', key, record },
      {
        type: 'Warning',
        reason: 'PDFailover',
        message: `deleting failed PD member ${key} with its Pod and volumes; a new member takes its place and one replica is added`,
        pod: record.pod,
      },
    );
  }
  if (!ctx.enabled || allHealthy) return undefined;
  // The operator fails over only once every desired Pod exists.
  if (!range(ctx.desired).every((o) => ctx.pods.has(o))) return undefined;
  let candidate: { key: string; pod: Pod; memberId: string } | undefined;
  let waiting: string | undefined;
  for (const ord of range(ctx.desired)) {
    const pod = ctx.pods.get(ord)!;
    const m = memberOfPod(pd.members, pod.metadata.name!);
    if (!m || m.healthy || records[m.name]) continue;
    const age = unhealthyFor(ctx, `pd/${m.name}`);
    if (age !== undefined && age >= ctx.periodMs) {
      candidate ??= { key: m.name, pod, memberId: m.memberId };
    } else waiting ??= `PD member ${m.name} is unhealthy; failover after ${durationText(ctx.periodMs)}`;
  }
  if (!candidate) return waiting ? { reason: waiting, waiting: true, wait: 'failover-period' } : undefined;
  const deleted = keys.filter((k) => records[k].memberDeleted).length;
  if (deleted >= (ctx.settings.maxFailoverCount ?? 0)) return limitNote(ctx, `PD member ${candidate.key} failed`);
  if (!hasQuorum(pd)) {
    const healthy = pd.members.filter((m) => m.healthy).length;
    const reason = `PD member ${candidate.key} failed, but only ${healthy} of ${pd.members.length} members are healthy: no failover without a majority`;
    return step(reason, undefined, { type: 'Warning', reason: 'FailoverNoQuorum', message: reason });
  }
  const name = candidate.pod.metadata.name!;
  const others = othersDown(ctx, name);
  if (others)
    return { reason: `PD member ${candidate.key} failed, but ${podList(others)} not Ready too: ${NOT_A_MEMBER_FAILURE}`, waiting: true };
  const record: FailureRecord = {
    pod: name,
    createdAt: new Date(ctx.input.now).toISOString(),
    memberId: candidate.memberId,
    podUid: candidate.pod.metadata.uid,
    volumes: volumesOfPod(ctx.input.volumes ?? [], ctx.c.sts, name).map((v) => ({ name: v.metadata.name!, uid: v.metadata.uid ?? '' })),
    memberDeleted: false,
  };
  return step(
    `PD member ${candidate.key} unhealthy for ${durationText(ctx.periodMs)} or more: recording the failure`,
    setRecords(ctx, { ...records, [candidate.key]: record }),
    {
      type: 'Warning',
      reason: 'FailoverRecorded',
      message: `PD member ${candidate.key} has been unhealthy for over ${durationText(ctx.periodMs)}; it will be replaced`,
      pod: name,
    },
  );
}

const hasQuorum = (pd: PdState): boolean => pd.members.filter((m) => m.healthy).length > pd.members.length / 2;

function storeFailover(ctx: Ctx): FailoverStep {
  const pd = pdStoresOf(ctx.input);
  if (typeof pd === 'string') return undefined;
  const cluster = ctx.input.cluster.name;
  const records = ctx.failover.records;
  const keys = Object.keys(records);
  const stale = keys.filter((k) => (ordinalOf(records[k].pod, sts(ctx)) ?? Infinity) >= ctx.desired);
  if (stale.length > 0) {
    return step(
      `dropping failure records of Pods no longer desired: ${stale.map((k) => records[k].pod).join(', ')}`,
      setRecords(ctx, without(records, stale)),
    );
  }
  const storeUp = (ord: number): boolean => {
    const pod = ctx.pods.get(ord);
    return pod !== undefined && isReady(pod) && storeOfPod(pd.stores, cluster, ctx.kind, pod.metadata.name!)?.state === 'Up';
  };
  const allUp = range(ctx.desired).every(storeUp);
  const byUid =
    ctx.settings.recoverByUID !== undefined && ctx.settings.recoverByUID !== '' && ctx.settings.recoverByUID === ctx.failover.failoverUID;
  if (keys.length > 0 && allUp) {
    if (ctx.settings.recoverFailover === true || byUid) {
      return step(
        `every store is Up again: clearing ${keys.length} failure record(s), the failover replicas are scaled in`,
        setRecords(ctx, {}, undefined),
        {
          type: 'Normal',
          reason: 'FailoverRecovered',
          message: `${sts(ctx)}: every desired store is Up; removing the failover replicas (${byUid ? 'recoverByUID' : 'recoverFailover'})`,
        },
      );
    }
  }
  const note =
    keys.length > 0
      ? `${keys.length} failover replica(s) for store(s) ${keys.join(', ')}; they stay until recoverFailover is set or failover.recoverByUID is ${ctx.failover.failoverUID ?? ''}`
      : undefined;
  if (!ctx.enabled || allUp || !range(ctx.desired).every((o) => ctx.pods.has(o))) return note ? step(note) : undefined;
  let candidate: { id: number; pod: string } | undefined;
  let waiting: string | undefined;
  for (const ord of range(ctx.desired)) {
    const pod = ctx.pods.get(ord)!.metadata.name!;
    const s = storeOfPod(pd.stores, cluster, ctx.kind, pod);
    if (!s || s.state !== 'Down' || records[String(s.id)]) continue;
    const age = unhealthyFor(ctx, `${ctx.kind}/${s.id}`);
    if (age !== undefined && age >= ctx.periodMs) candidate ??= { id: s.id, pod };
    else waiting ??= `store ${s.id} (${pod}) is Down; failover after ${durationText(ctx.periodMs)}`;
  }
  if (!candidate) return waiting ? { reason: waiting, waiting: true, wait: 'failover-period' } : note ? step(note) : undefined;
  if (keys.length >= (ctx.settings.maxFailoverCount ?? 0)) return limitNote(ctx, `store ${candidate.id} (${candidate.pod}) is Down`);
  const others = othersDown(ctx, candidate.pod);
  if (others)
    return {
      reason: `store ${candidate.id} (${candidate.pod}) is Down, but ${podList(others)} not Ready too: ${NOT_A_MEMBER_FAILURE}`,
      waiting: true,
    };
  const record: FailureRecord = { pod: candidate.pod, createdAt: new Date(ctx.input.now).toISOString(), storeId: candidate.id };
  const uid = ctx.failover.failoverUID ?? (ctx.input.options ?? DEFAULT_PLAN_OPTIONS).newFailoverUid;
  return step(
    `store ${candidate.id} (${candidate.pod}) Down for ${durationText(ctx.periodMs)} or more: adding a failover replica`,
    setRecords(ctx, { ...records, [String(candidate.id)]: record }, uid),
    {
      type: 'Warning',
      reason: 'FailoverRecorded',
      message: `store ${candidate.id} has been Down for over ${durationText(ctx.periodMs)}; adding a replica to ${sts(ctx)}`,
      pod: candidate.pod,
    },
  );
}

function tidbFailover(ctx: Ctx): FailoverStep {
  const records = ctx.failover.records;
  const healed = Object.keys(records).filter((k) => {
    const ord = ordinalOf(records[k].pod, sts(ctx));
    const pod = ord === undefined ? undefined : ctx.pods.get(ord);
    return ord === undefined || ord >= ctx.desired || (pod !== undefined && isReady(pod));
  });
  if (healed.length > 0) {
    return step(`TiDB Pod(s) ${healed.join(', ')} Ready again: dropping their failure records`, setRecords(ctx, without(records, healed)), {
      type: 'Normal',
      reason: 'FailoverRecovered',
      message: `${healed.join(', ')} Ready again; removing the failover replica(s)`,
    });
  }
  if (!ctx.enabled) return undefined;
  let candidate: string | undefined;
  let waiting: string | undefined;
  for (const ord of range(ctx.desired)) {
    const pod = ctx.pods.get(ord);
    if (!pod || isReady(pod) || isTerminating(pod) || records[pod.metadata.name!]) continue;
    const age = unhealthyFor(ctx, `tidb/${pod.metadata.name}`);
    if (age !== undefined && age >= ctx.periodMs) candidate ??= pod.metadata.name!;
    else waiting ??= `${pod.metadata.name} is not Ready; failover after ${durationText(ctx.periodMs)}`;
  }
  if (!candidate) return waiting ? { reason: waiting, waiting: true, wait: 'failover-period' } : undefined;
  if (Object.keys(records).length >= (ctx.settings.maxFailoverCount ?? 0)) return limitNote(ctx, `${candidate} is not Ready`);
  const others = othersDown(ctx, candidate);
  if (others)
    return { reason: `${candidate} is not Ready, but ${podList(others)} not Ready either: ${NOT_A_MEMBER_FAILURE}`, waiting: true };
  return step(
    `${candidate} not Ready for ${durationText(ctx.periodMs)} or more: adding a failover replica`,
    setRecords(ctx, { ...records, [candidate]: { pod: candidate, createdAt: new Date(ctx.input.now).toISOString() } }),
    {
      type: 'Warning',
      reason: 'FailoverRecorded',
      message: `${candidate} has not been Ready for over ${durationText(ctx.periodMs)}; adding a replica to ${sts(ctx)}`,
      pod: candidate,
    },
  );
}

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

const NOT_A_MEMBER_FAILURE = 'with no Pod of the component Ready, this is a node or control-plane fault, not a failed member: no failover';

/**
 * The other desired Pods of the component when none of them is Ready, else undefined. Every Pod not
 * Ready at once (the node-lifecycle controller marks them so when a node or the control plane is
 * lost) is the cluster's trouble: a replica added then would not help, and a record made then would
 * outlive the outage.
 */
function othersDown(ctx: Ctx, pod: string): string[] | undefined {
  const others = unreadyPods(ctx.input, ctx.c, ctx.desired, ordinalOf(pod, sts(ctx)));
  return ctx.desired > 1 && others.length === ctx.desired - 1 ? others : undefined;
}
