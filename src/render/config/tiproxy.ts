/**
 * TiProxy's `proxy.toml`: the user's table with the keys the renderer owns (work dir, PD address,
 * certificate paths) overlaid, and which certificate Secrets the Pod mounts for them. Pure functions of
 * the resolved spec.
 */
import type { ResolvedCluster } from '../../tidbcluster/resolve';
import { TIPROXY_CLUSTER_TLS_DIR, type ResolvedTiProxy } from '../../tidbcluster/tiproxy';
import { names, PORT, SKIP_TLS_TO_TIDB } from '../../tidbcluster/names';
import { TLS_DIR, tlsFile } from '../tls';
import { encodeToml, TomlEditor } from '../../base/toml';

/** Certificate directories in the TiProxy container. */
export const TIPROXY_TLS_DIR = {
  /** `<cluster>-cluster-client-secret`: legacy layout's cluster certificate, and the probe's client cert. */
  clusterClient: TLS_DIR.clusterClient,
  /** `<cluster>-tiproxy-cluster-secret` with `certLayout: v1`. */
  cluster: TIPROXY_CLUSTER_TLS_DIR,
  /** `<cluster>-tidb-server-secret`: TiProxy serves MySQL clients with TiDB's server certificate. */
  server: '/var/lib/tiproxy-server-tls',
  /** The client certificate towards TiDB (legacy layout). */
  sql: '/var/lib/tiproxy-sql-tls',
  /** `<cluster>-tiproxy-cluster-secret` for the HTTP API (legacy layout, cluster TLS without TiDB TLS). */
  httpServer: '/var/lib/tiproxy-http-server-tls',
} as const;

export const TIPROXY_WORK_DIR = '/var/lib/tiproxy/work';

/** Which TLS links are on for TiProxy; the config keys and the mounted Secrets both follow from it. */
export interface TiProxyTls {
  /** `spec.tlsCluster.enabled`: TiProxy talks to PD (and serves its API) with certificates. */
  readonly cluster: boolean;
  /** `spec.tidb.tlsClient.enabled` (with `spec.tidb`): MySQL clients reach TiProxy over TLS. */
  readonly tidb: boolean;
  /**
   * TiProxy reaches TiDB over TLS: TiDB TLS on, and `sslEnableTiDB` or no
   * `skip-tls-when-connect-tidb` annotation on the TidbCluster.
   */
  readonly toTiDB: boolean;
  readonly skipInternalClientCA: boolean;
  readonly disableClientAuthn: boolean;
}

export function tiproxyTls(cluster: ResolvedCluster, tiproxy: ResolvedTiProxy): TiProxyTls {
  const tidb = !!cluster.tidb && !!cluster.sqlTls;
  return {
    cluster: cluster.tlsCluster,
    tidb,
    toTiDB: tidb && (tiproxy.sslEnableTiDB || !(SKIP_TLS_TO_TIDB in cluster.annotations)),
    skipInternalClientCA: cluster.sqlTls?.skipInternalClientCA ?? false,
    disableClientAuthn: cluster.sqlTls?.disableClientAuthn ?? false,
  };
}

/** `proxy.pd-addrs`: this cluster's PD, or with `spec.cluster` and no PD of its own, the other cluster's. */
export function tiproxyPdAddress(cluster: ResolvedCluster): string {
  const owner = !cluster.pd && cluster.joinCluster ? cluster.joinCluster.name : cluster.name;
  return `${names.service(owner, 'pd')}:${PORT.pdClient}`;
}

/** `<prefix>.ca`, `.key`, `.cert` from the certificate directory `dir`. */
function setCerts(
  config: TomlEditor,
  prefix: string,
  dir: string,
  which: readonly ('ca' | 'key' | 'cert')[] = ['ca', 'key', 'cert'],
): void {
  for (const w of which) config.set(`${prefix}.${w}`, tlsFile(dir, w));
}

export function tiproxyConfig(cluster: ResolvedCluster, tiproxy: ResolvedTiProxy): string {
  const config = new TomlEditor(tiproxy.config);
  config.set('workdir', TIPROXY_WORK_DIR);
  config.set('proxy.pd-addrs', tiproxyPdAddress(cluster));
  config.setDefault('proxy.require-backend-tls', false);
  const tls = tiproxyTls(cluster, tiproxy);
  if (tiproxy.certLayout === 'v1') tlsV1(config, tls);
  else tlsLegacy(config, tls);
  return encodeToml(config.table);
}

/** TiProxy -> TiDB: the CA check follows `skipInternalClientCA` unless the user decided `skip-ca`. */
function sqlTlsCa(config: TomlEditor, tls: TiProxyTls, caDir: string): void {
  if (!config.has('security.sql-tls.skip-ca') && tls.skipInternalClientCA) config.set('security.sql-tls.skip-ca', true);
  else config.set('security.sql-tls.ca', tlsFile(caDir, 'ca'));
}

function tlsLegacy(config: TomlEditor, tls: TiProxyTls): void {
  const dir = TIPROXY_TLS_DIR;
  if (tls.cluster) setCerts(config, 'security.cluster-tls', dir.clusterClient);
  if (tls.tidb) {
    setCerts(config, 'security.server-tls', dir.server);
    config.setDefault('security.server-tls.skip-ca', true);
    if (tls.toTiDB) {
      sqlTlsCa(config, tls, dir.sql);
      if (!tls.disableClientAuthn) setCerts(config, 'security.sql-tls', dir.sql, ['key', 'cert']);
    }
  }
  // The operator also secures the API with TiDB's server certificate when only TiDB TLS is on.
  if (tls.cluster || tls.tidb) {
    setCerts(config, 'security.server-http-tls', tls.tidb ? dir.server : dir.httpServer);
    config.set('security.server-http-tls.skip-ca', true);
  }
}

function tlsV1(config: TomlEditor, tls: TiProxyTls): void {
  const dir = TIPROXY_TLS_DIR;
  if (tls.cluster) setCerts(config, 'security.cluster-tls', dir.cluster);
  if (tls.tidb) {
    setCerts(config, 'security.server-tls', dir.server, ['key', 'cert']);
    config.setDefault('security.server-tls.skip-ca', true);
    // No client certificate towards TiDB in this layout: TiDB's own CA verifies its server certificate.
    if (tls.toTiDB) sqlTlsCa(config, tls, dir.server);
  }
  // Set whatever TLS is on (the resolver refuses v1 when nothing is mounted there).
  setCerts(config, 'security.server-http-tls', dir.cluster);
  config.set('security.server-http-tls.skip-ca', true);
}
