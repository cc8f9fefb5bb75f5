/**
 * Values the controller reads from objects as text: Go durations, times, image tags and versions.
 */
import { tagVersionAtLeast } from '../../base/version';
import { TICDC_ARCHITECTURE_ANNOTATION } from '../../tidbcluster/names';
import type { Pod, StatefulSet } from './objects';

/**
 * Go duration (`1500m`, `400s`, `1h30m`, `250ms`) in milliseconds; undefined when it does not parse.
 */
export function parseDuration(text: string | undefined): number | undefined {
  if (!text) return undefined;
  const unit: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/gy;
  let total = 0;
  let m: RegExpExecArray | null;
  let consumed = 0;
  while ((m = re.exec(text)) !== null) {
    total += Number(m[1]) * unit[m[2]];
    consumed = re.lastIndex;
  }
  return consumed === text.length && consumed > 0 ? total : undefined;
}

/** The tag of the image of a StatefulSet's container (`pingcap/tiflash:v8.5.0` -> `v8.5.0`), if any. */
export function imageTag(sts: StatefulSet, container: string): string | undefined {
  const image = sts.spec?.template?.spec?.containers?.find((c) => c.name === container)?.image;
  const name = image?.split('@')[0];
  const colon = name?.lastIndexOf(':') ?? -1;
  return name !== undefined && colon > name.lastIndexOf('/') ? name.slice(colon + 1) : undefined;
}

/** Whether a version tag is at least `min`, as tidb-operator compares them; undefined for no tag or no version. */
export function versionAtLeast(tag: string | undefined, min: string): boolean | undefined {
  return tag === undefined ? undefined : tagVersionAtLeast(tag, min);
}

export function toMillis(t: Date | string | undefined): number | undefined {
  if (t === undefined) return undefined;
  const ms = t instanceof Date ? t.getTime() : Date.parse(t);
  return Number.isNaN(ms) ? undefined : ms;
}

/** The tag of a container image; undefined for a digest reference or an image without a tag (as the operator reads it). */
export function tagOf(image: string | undefined): string | undefined {
  if (!image || image.includes('@')) return undefined;
  const colon = image.lastIndexOf(':');
  return colon > image.lastIndexOf('/') && colon < image.length - 1 ? image.slice(colon + 1) : undefined;
}

/** The tag a Pod's container runs. */
export const podImageTag = (pod: Pod, container: string): string | undefined => tagOf(pod.spec?.containers?.find((c) => c.name === container)?.image);

/**
 * What the renderer and the image say of a TiCDC Pod's capture before it is asked: whether it runs
 * TiCDC's new architecture (the Pod's `tidb-gitops.io/ticdc-architecture: new`) and its image tag.
 */
export function captureHints(pod: Pod | undefined): { readonly newArchitecture: boolean; readonly imageTag?: string } {
  if (!pod) return { newArchitecture: false };
  return { newArchitecture: pod.metadata.annotations?.[TICDC_ARCHITECTURE_ANNOTATION] === 'new', imageTag: podImageTag(pod, 'ticdc') };
}
