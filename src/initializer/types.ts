/**
 * The `TidbInitializer` input (apiVersion `pingcap.com/v1alpha1`), as tidb-operator v1 users write it
 * beside their TidbCluster: root's password, more users and the SQL a new cluster starts with. The CRD
 * schema decides what is valid; `read.ts` what is carried out.
 */
import type { LocalObjectReference, PodSecurityContext, Toleration } from '../../imports/k8s';

export const INITIALIZER_KIND = 'TidbInitializer';

export interface TidbInitializer {
  apiVersion: string;
  kind: typeof INITIALIZER_KIND;
  metadata: {
    name: string;
    /** @default the `--namespace` of `render`, else the namespace of the cluster it names */
    namespace?: string;
    /** @default {} */
    labels?: Record<string, string>;
    /** @default {} */
    annotations?: Record<string, string>;
  };
  spec: TidbInitializerSpec;
}

export interface TidbInitializerSpec {
  /** The TidbCluster to initialize. */
  cluster: {
    name: string;
    /** @default the initializer's namespace */
    namespace?: string;
    /** Not used: the controller runs in the cluster's own Kubernetes cluster. @default "" */
    clusterDomain?: string;
  };
  /**
   * A Secret whose keys are user names and values their passwords: `root` sets root's password, every
   * other key creates that user at `permitHost`. Read, never written. @default none (no password is set)
   */
  passwordSecret?: string;
  /** SQL run once, after the passwords, as root. @default none */
  initSql?: string;
  /** A ConfigMap whose key `init-sql` holds the SQL; refused together with `initSql`. @default none */
  initSqlConfigMap?: string;
  /** The host root and the created users may log in from (MySQL's host pattern). @default "%" */
  permitHost?: string;
  /** The session time zone the SQL runs in (`SET time_zone`): an IANA name, `SYSTEM` or `+HH:MM`. @default the server's */
  timezone?: string;
  /** The client certificate to reach TiDB with when its MySQL port has TLS. @default `<cluster>-tidb-client-secret` */
  tlsClientSecretName?: string;
  /** The image of the operator's Job. Not used: the controller runs the SQL itself, with no Pod. @default none */
  image: string;
  /** Not used (no Pod). @default none */
  imagePullPolicy?: string;
  /** Not used (no Pod). @default [] */
  imagePullSecrets?: LocalObjectReference[];
  /** Not used (no Pod). @default {} */
  nodeSelector?: Record<string, string>;
  /** Not used (no Pod). @default [] */
  tolerations?: Toleration[];
  /** Not used (no Pod). @default none */
  podSecurityContext?: PodSecurityContext;
  /** Not used (no Pod). @default none */
  resources?: Record<string, unknown>;
  /** Not used (no Pod). @default none */
  serviceAccountName?: string;
}

/** A TidbInitializer as the renderer and the controller act on it. */
export interface ResolvedInitializer {
  readonly kind: typeof INITIALIZER_KIND;
  readonly name: string;
  /** @default none (objects take the namespace they are applied to) */
  readonly namespace?: string;
  readonly cluster: {
    readonly name: string;
    /** @default the initializer's */
    readonly namespace?: string;
  };
  /** @default none */
  readonly passwordSecret?: string;
  /** From the annotation `tidb-gitops.io/existing-cluster`. @default none */
  readonly existingCluster?: 'run' | 'skip';
  /** @default none */
  readonly initSql?: string;
  /** @default none */
  readonly initSqlConfigMap?: string;
  readonly permitHost: string;
  /** @default none (the server's) */
  readonly timezone?: string;
  /** @default none (`<cluster>-tidb-client-secret`) */
  readonly tlsClientSecretName?: string;
}
