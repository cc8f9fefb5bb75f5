/**
 * The servers inside a scenario's Pods: what runs when a Pod's containers start and stop, on the
 * simulated or the real Kubernetes API alike. PD and TiKV (and TiFlash) are played by the PD
 * simulator (TiKV's own status and gRPC ports by the TiKV one), TiCDC captures by the TiCDC
 * simulator, Pump nodes by the Pump simulator, PD's TSO and scheduling servers by the PDMS one; each
 * Pod's server listens on the Pod's own loopback address, and the test DNS table (hosts.ts) maps the
 * Pod's names to it, so the controller reaches `<pod>.<peer>.<ns>:<port>` as it would in a cluster.
 * A Pod is Ready while its server serves, as its readiness probe would say.
 */
import type { Hosts } from './hosts';
import { podImageTag } from '../../src/controller/model/values';
import type { Pod } from '../../src/controller/model/objects';
import { TICDC_ARCHITECTURE_ANNOTATION } from '../../src/tidbcluster/names';
import type { PdSim } from './pd-api';
import type { PdmsSim } from './pdms';
import type { PumpSim } from './pump';
import type { TicdcSim } from './ticdc';
import type { TidbSim } from './tidb';
import type { TikvSim } from './tikv';

type Obj = Record<string, any>;

export interface PodServers {
  readonly pd: PdSim;
  readonly ticdc?: TicdcSim;
  readonly pump?: PumpSim;
  /** TiDB's status port (`/info`, `/labels`); without it TiDB Pods run no server. */
  readonly tidb?: TidbSim;
  /** TiKV's own ports (`/metrics`, log backup's FlushNow); without it TiKV Pods serve only PD's side. */
  readonly tikv?: TikvSim;
  /** The TSO and scheduling servers (`spec.pdms`); without it their Pods run no server. */
  readonly pdms?: PdmsSim;
}

/** Pods started and stopped, as one scenario sees them. */
export interface PodStop {
  readonly pod: string;
  readonly component: string;
  readonly time: number;
}

const componentOf = (pod: Obj): string => pod.metadata.labels?.['app.kubernetes.io/component'] ?? '';

export class Processes {
  /** Every Pod stop, in order. */
  readonly stops: PodStop[] = [];
  /** What a server inside a Pod refused to do (a start that failed), one line each. */
  readonly failures: string[] = [];
  /** Claims deleted for good: `<template>-<cluster>-<component>-<n>` takes that Pod's data with it. */
  private readonly claimOf: RegExp;

  constructor(
    readonly cluster: string,
    readonly namespace: string,
    readonly servers: PodServers,
    private readonly hosts: Hosts,
    /** Components whose servers do not start (their Pods run, never Ready): a cluster waiting on them. */
    private readonly hold: readonly string[] = [],
  ) {
    this.claimOf = new RegExp(`-(${cluster.replace(/[.]/g, '\\.')}-(pd|tikv|tiflash|pump)-\\d+)$`);
  }

  /** The Pod's containers run, at `ip`: its server starts, reachable by the Pod's names. */
  started(pod: Obj, ip: string): void {
    const name: string = pod.metadata.name;
    const component = componentOf(pod);
    // The pump's headless Service has no -peer suffix (as the operator names it).
    const peer = component === 'pump' ? `${this.cluster}-pump` : `${this.cluster}-${component}-peer`;
    this.hosts.setPod(name, peer, this.namespace, ip);
    if (this.hold.includes(component)) return;
    const { pd, ticdc, pump, tidb, tikv, pdms } = this.servers;
    const failed = (e: unknown) => this.failures.push(`${name}: ${(e as Error).message}`);
    if (component === 'pd') pd.pdStart(name, undefined, ip);
    if (component === 'tikv') {
      pd.tikvStart(name);
      tikv?.serverStart(name, ip, podImageTag(pod as Pod, 'tikv')).catch(failed);
    }
    if (component === 'tiflash') pd.tiflashStart(name, undefined, ip);
    if (component === 'ticdc') {
      // TiCDC runs its new architecture when TICDC_NEWARCH is exactly "true" or its config says `newarch = true`
      // (pingcap/ticdc cmd/cdc/server/server.go `isNewArchEnabled`); the rendered Pod notes the config's in an annotation.
      const env: { name: string; value?: string }[] = pod.spec?.containers?.find((c: { name: string }) => c.name === 'ticdc')?.env ?? [];
      const newArch =
        env.some((e) => e.name === 'TICDC_NEWARCH' && e.value === 'true') ||
        pod.metadata.annotations?.[TICDC_ARCHITECTURE_ANNOTATION] === 'new';
      const architecture = newArch ? ('new' as const) : undefined;
      ticdc?.captureStart(name, ip, { version: podImageTag(pod as Pod, 'ticdc'), architecture }).catch(failed);
    }
    if (component === 'pump') pump?.pumpStart(name, ip).catch(failed);
    if (component === 'tidb') tidb?.serverStart(name, ip, podImageTag(pod as Pod, 'tidb')).catch(failed);
    // The container is named after the service (tidb-operator pd_ms_member_manager.go); its tag is the release.
    if (component === 'tso' || component === 'scheduling')
      pdms?.serverStart(name, ip, component, podImageTag(pod as Pod, component)).catch(failed);
  }

  /** The Pod's containers stop (its data stays with its claims). */
  stopped(pod: Obj): void {
    const name: string = pod.metadata.name;
    const component = componentOf(pod);
    this.stops.push({ pod: name, component, time: Date.now() });
    const { pd, ticdc, pump, tidb, tikv, pdms } = this.servers;
    if (component === 'pd') pd.pdStop(name);
    if (component === 'tikv') {
      pd.tikvStop(name);
      void tikv?.serverStop(name);
    }
    if (component === 'tiflash') pd.tiflashStop(name);
    if (component === 'ticdc') void ticdc?.captureStop(name);
    if (component === 'pump') void pump?.pumpStop(name);
    if (component === 'tidb') void tidb?.serverStop(name);
    if (component === 'tso' || component === 'scheduling') void pdms?.serverStop(name);
  }

  /** A claim is gone for good: the data of the Pod it belonged to goes with it. */
  claimGone(claim: Obj): void {
    if (claim.metadata.namespace !== undefined && claim.metadata.namespace !== this.namespace) return;
    const m = this.claimOf.exec(claim.metadata.name);
    if (!m) return;
    const { pd, pump } = this.servers;
    if (m[2] === 'pd') pd.wipeData(m[1]);
    if (m[2] === 'tikv') pd.tikvWipe(m[1]);
    if (m[2] === 'tiflash') pd.tiflashWipe(m[1]);
    if (m[2] === 'pump') pump?.pumpWipe(m[1]);
  }

  /**
   * Whether the Pod's readiness probe would pass: PD while its member runs; TiKV while tikv-server
   * runs and its store is Up or Offline (still serving while it drains); Pump while it serves (its TCP
   * probe on 8250); TSO and scheduling while their server runs (registered and listening: it starts
   * only once PD has a cluster id); the rest (TiDB, TiFlash and TiCDC, which the operator gives no
   * probe, TiProxy) while the Pod runs.
   */
  ready(pod: Obj): boolean {
    const name: string = pod.metadata.name;
    const { pd, pump, pdms } = this.servers;
    if (this.hold.includes(componentOf(pod))) return false;
    switch (componentOf(pod)) {
      case 'pd':
        return pd.pdState(name) === 'running';
      // TiKV has no readiness probe unless the spec sets one: its container is Ready once it runs,
      // whatever PD says of its store (the readiness gate the controller keeps says that).
      case 'tikv':
        return pd.tikvState(name) === 'running';
      case 'pump':
        return pump === undefined || pump.processState(name) === 'serving';
      case 'tso':
      case 'scheduling':
        return pdms === undefined || pdms.running(name);
      default:
        return true;
    }
  }
}
