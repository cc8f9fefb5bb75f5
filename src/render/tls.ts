/**
 * Certificate volumes. Every secret holds `ca.crt`, `tls.crt` and `tls.key`; each is mounted read-only
 * under `/var/lib/<volume>` (the paths the start scripts and configs name).
 */
import type { Volume, VolumeMount } from '../../imports/k8s';

/** Mount directories of the certificate volumes. */
export const TLS_DIR = {
  pd: '/var/lib/pd-tls',
  tikv: '/var/lib/tikv-tls',
  tidb: '/var/lib/tidb-tls',
  tiflash: '/var/lib/tiflash-tls',
  ticdc: '/var/lib/ticdc-tls',
  pump: '/var/lib/pump-tls',
  tidbServer: '/var/lib/tidb-server-tls',
  tidbClient: '/var/lib/tidb-client-tls',
  /** `<cluster>-cluster-client-secret`: components' client certificate, and the controller's towards PD. */
  clusterClient: '/var/lib/cluster-client-tls',
  /** `<cluster>-discovery-cluster-secret`: what discovery serves with `enableDiscoveryMTLS`. */
  discovery: '/var/lib/discovery-tls',
} as const;

const FILE = { ca: 'ca.crt', cert: 'tls.crt', key: 'tls.key' } as const;

export function tlsFile(dir: string, which: keyof typeof FILE): string {
  return `${dir}/${FILE[which]}`;
}

/** A secret volume and its read-only mount at `dir`. */
export interface SecretMount {
  readonly volume: Volume;
  readonly mount: VolumeMount;
}

export function secretMount(volumeName: string, secretName: string, dir: string): SecretMount {
  return {
    volume: { name: volumeName, secret: { secretName } },
    mount: { name: volumeName, mountPath: dir, readOnly: true },
  };
}
