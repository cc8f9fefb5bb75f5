/**
 * TiFlash in an upgrade, as tidb-operator's `tiflash_upgrader.go` checks it: an upgraded store counts
 * once it is Up in PD and, from v5.1.2, its proxy says it serves (`/tiflash/store-status`: Running).
 */
import type { StatefulSet } from '../model/objects';
import { imageTag, versionAtLeast } from '../model/values';
import { OK, wait, type UpgradeChecks } from './action';
import { upStore } from './upgrade-tikv';

/** TiFlash serves `/tiflash/store-status` from v5.1.2; the operator checks it from that version on (`tiflash_upgrader.go`). */
export const tiflashStatusChecked = (sts: StatefulSet): boolean => versionAtLeast(imageTag(sts, 'tiflash'), 'v5.1.2') === true;

export const tiflashUpgrade: UpgradeChecks = {
  upgraded(input, c, pod) {
    const name = pod.metadata.name!;
    const up = upStore(input, c, name);
    if (!('store' in up)) return up;
    if (!tiflashStatusChecked(c.sts)) return OK;
    const status = input.probes?.tiflashStatus?.[name];
    if (!status) return wait(`checking the TiFlash store status of ${name} (/tiflash/store-status)`);
    return status.ok ? OK : wait(`waiting for TiFlash ${name} to serve: ${status.detail}`);
  },
};
