/**
 * The lookups every part of the planner needs, over the view: a component's Pods by ordinal, a Pod's
 * PD member, store and claims, PD's state or why it is unknown, the StatefulSet's strategy and
 * revisions. Pure.
 */
import { names, type ComponentKind } from '../../tidbcluster/names';
import type { PdMember, PdStore } from '../clients/pd';
import { isReady, ordinalOf, podRevision, type Pod, type Pvc, type StatefulSet } from '../model/objects';
import { desiredReplicas } from '../model/settings';
import { extraReplicas } from '../records/failover';
import type { ComponentState, PdState, PlanInput } from './view';

/** Pods of a StatefulSet by ordinal (Pods of other shapes are ignored). */
export function podsByOrdinal(cluster: string, kind: ComponentKind, pods: readonly Pod[]): Map<number, Pod> {
  const out = new Map<number, Pod>();
  for (const p of pods) {
    const ord = ordinalOf(p.metadata.name ?? '', names.statefulSet(cluster, kind));
    if (ord !== undefined) out.set(ord, p);
  }
  return out;
}

/** The PD member that runs in a Pod: named after the Pod, or after its FQDN (acrossK8s, clusterDomain). */
export const memberOfPod = (members: readonly PdMember[], pod: string): PdMember | undefined =>
  members.find((m) => m.name === pod || m.name.startsWith(`${pod}.`));

/** The store a TiKV or TiFlash Pod serves, matched on its advertised address. */
export function storeOfPod(stores: readonly PdStore[], cluster: string, kind: ComponentKind, pod: string): PdStore | undefined {
  const prefix = `${names.peerHost(cluster, kind, pod)}.`;
  return stores.find((s) => s.address.startsWith(prefix) && s.state !== 'Tombstone');
}

/** Stores of this cluster's component (addresses under its peer Service). */
export const storesOf = (stores: readonly PdStore[], cluster: string, kind: ComponentKind): PdStore[] =>
  stores.filter((s) => s.address.includes(`.${names.peerService(cluster, kind)}.`));

/** The claims a Pod has, or will have: `<template>-<pod>` for each claim template of its StatefulSet. */
export function volumesOfPod(volumes: readonly Pvc[], sts: StatefulSet, pod: string): Pvc[] {
  const wanted = new Set((sts.spec?.volumeClaimTemplates ?? []).map((t) => `${t.metadata?.name}-${pod}`));
  return volumes.filter((v) => wanted.has(v.metadata.name ?? ''));
}

/** PD's view of its members and leader, or why it is not known. */
export function pdOf(input: PlanInput): PdState | string {
  if (input.pd === undefined) return 'PD state was not read';
  if ('error' in input.pd) return `PD API unavailable: ${input.pd.error}`;
  return input.pd;
}

/** PD's view for decisions about stores: as `pdOf`, and also unknown when stores could not be read. */
export function pdStoresOf(input: PlanInput): PdState | string {
  const pd = pdOf(input);
  if (typeof pd === 'string') return pd;
  return pd.storesError === undefined ? pd : `PD stores unavailable: ${pd.storesError}`;
}

/** Whether the evict-leader scheduler of a store is one this controller added. */
export const ownsEviction = (input: PlanInput, storeId: number): boolean => input.evictions?.[String(storeId)] !== undefined;

/** Pods of the component at ordinals below `replicas`, other than `except`, that are not Ready (missing ones count). */
export function unreadyPods(input: PlanInput, c: ComponentState, replicas: number, except?: number): string[] {
  const pods = podsByOrdinal(input.cluster.name, c.kind, c.pods);
  const out: string[] = [];
  for (let ord = 0; ord < replicas; ord++) {
    if (ord === except) continue;
    const pod = pods.get(ord);
    if (!pod || !isReady(pod)) out.push(names.pod(input.cluster.name, c.kind, ord));
  }
  return out;
}

/** "Pod a is" / "Pods a, b are", for reasons. */
export const podList = (pods: readonly string[]): string => (pods.length === 1 ? `Pod ${pods[0]} is` : `Pods ${pods.join(', ')} are`);

/** The strategy the StatefulSet has now (the API server defaults it to RollingUpdate). */
export const liveStrategy = (sts: StatefulSet): string => sts.spec?.updateStrategy?.type ?? 'RollingUpdate';

/** The partition in effect: the StatefulSet controller reads a missing one as 0. */
export const partitionOf = (sts: StatefulSet): number => sts.spec?.updateStrategy?.rollingUpdate?.partition ?? 0;

/** The StatefulSet controller has seen the latest spec: its status and revisions are about it. */
export const statusCurrent = (sts: StatefulSet): boolean =>
  sts.status?.observedGeneration === undefined ||
  sts.metadata.generation === undefined ||
  sts.status.observedGeneration >= sts.metadata.generation;

/** A rolling upgrade is pending: the StatefulSet's revisions differ or a Pod is not at the update revision. */
export function isUpgrading(sts: StatefulSet, pods: readonly Pod[]): boolean {
  const update = sts.status?.updateRevision;
  if (!update) return false;
  return sts.status?.currentRevision !== update || pods.some((p) => podRevision(p) !== update);
}

/** Desired replicas plus failover replicas; undefined when the annotation is missing. */
export function targetReplicas(input: Pick<PlanInput, 'failover'>, c: ComponentState): number | undefined {
  const desired = desiredReplicas(c.sts);
  return desired === undefined ? undefined : desired + extraReplicas(c.kind, input.failover);
}
