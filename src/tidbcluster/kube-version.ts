/**
 * The Kubernetes version manifests are rendered for. Output is valid for that minor's API (the tests
 * check it against that version's schema), and fields that need a newer Kubernetes say which.
 */

/** The oldest Kubernetes minor this release renders for, and the default target: 1.31. */
export const OLDEST_KUBE_MINOR = 31;
/** The newest Kubernetes minor this release knows: 1.37. Newer clusters get output for it. */
export const NEWEST_KUBE_MINOR = 37;
/** The default target, as the CLI and the library take it. */
export const DEFAULT_KUBE_VERSION = `1.${OLDEST_KUBE_MINOR}`;

/** A supported target, `1.<minor>`. */
export interface KubeTarget {
  /** 31 for Kubernetes 1.31. */
  readonly minor: number;
  /** Set when the version asked for was newer than {@link NEWEST_KUBE_MINOR} and was taken as it. @default none */
  readonly note?: string;
}

/** The supported range in words, for messages and help. */
export const KUBE_RANGE = `1.${OLDEST_KUBE_MINOR} to 1.${NEWEST_KUBE_MINOR}`;

/**
 * Reads a target version as users and tools write it: `1.34`, `v1.34`, `1.34.2`, and what clusters
 * report (`v1.34.1-eks-1a2b3c`, `1.34+`). A version newer than this release knows renders for the
 * newest it knows, with a note: objects valid there stay valid on newer minors.
 */
export function parseKubeVersion(text: string): KubeTarget | { error: string } {
  const m = /^v?(\d+)\.(\d+)\+?(?:\.\d+)?(?:[-+][0-9A-Za-z.-]*)?$/.exec(text.trim());
  if (!m) return { error: `expected a Kubernetes version such as ${DEFAULT_KUBE_VERSION}, got ${JSON.stringify(text)}` };
  const major = Number(m[1]);
  const minor = Number(m[2]);
  if (major !== 1) return { error: `expected a Kubernetes 1.x version, got ${JSON.stringify(text)}` };
  if (minor < OLDEST_KUBE_MINOR) {
    return { error: `Kubernetes 1.${minor} is not supported: this release renders for Kubernetes ${KUBE_RANGE}` };
  }
  if (minor > NEWEST_KUBE_MINOR) {
    return {
      minor: NEWEST_KUBE_MINOR,
      note: `Kubernetes 1.${minor} is newer than this release knows; rendering for 1.${NEWEST_KUBE_MINOR}, whose objects it accepts`,
    };
  }
  return { minor };
}

/** `1.<minor>` */
export function kubeVersionText(minor: number): string {
  return `1.${minor}`;
}

/** A Kubernetes feature a TidbCluster field needs. */
export interface KubeFeature {
  /** What users know it as. */
  readonly name: string;
  /** The first minor where it is on by default. */
  readonly since: number;
  /** The first minor where it is GA, when later than `since`. @default none (GA from `since`) */
  readonly ga?: number;
  /** The first minor where it exists but is off by default, when earlier than `since`. @default none (the field does not exist before `since`) */
  readonly offByDefault?: number;
  /** The feature gate a cluster turns on for it before `since`. @default none */
  readonly gate?: string;
}

/** Features the renderer uses by target version (kubernetes.io feature-gate reference). */
export const KUBE_FEATURES = {
  /** Init containers with `restartPolicy: Always`: alpha in 1.28, beta and on in 1.29, GA in 1.33. */
  nativeSidecars: { name: 'native sidecar containers', since: 29, ga: 33, gate: 'SidecarContainers' },
  /**
   * `volumeAttributesClassName` on claims: alpha in 1.29, beta in 1.31 but off by default (the
   * `VolumeAttributesClass` gate and the storage.k8s.io/v1beta1 API), GA and on in 1.34.
   */
  volumeAttributesClass: {
    name: 'VolumeAttributesClass',
    since: 34,
    offByDefault: 31,
    gate: 'VolumeAttributesClass',
  },
} as const satisfies Record<string, KubeFeature>;

/**
 * What a field that needs `feature` means for target `minor`: fine (undefined), an error when the
 * target lacks it, or a warning when the target has it behind a gate that is off by default.
 */
export function featureCheck(feature: KubeFeature, minor: number): { error: string } | { warning: string } | undefined {
  const target = kubeVersionText(minor);
  const earliest = feature.offByDefault ?? feature.since;
  if (minor < earliest) {
    return {
      error: `needs Kubernetes ${kubeVersionText(earliest)} or newer (${feature.name}); the target is ${target}: set --kube-version`,
    };
  }
  if (minor < feature.since) {
    return {
      warning:
        `${feature.name} is beta and off by default in Kubernetes ${target} (on by default from ${kubeVersionText(feature.since)}): ` +
        `the API server drops this field unless the ${feature.gate} feature gate is on`,
    };
  }
  return undefined;
}
