/**
 * Values the controller reads from objects as text: Go durations, times, image tags and versions.
 */
import { GO_DURATION } from '../../base/patterns';
import { tagVersionAtLeast } from '../../base/version';
import { TICDC_ARCHITECTURE_ANNOTATION } from '../../tidbcluster/names';
import type { Pod, StatefulSet } from './objects';

/**
 * Go duration (`1500m`, `400s`, `1h30m`, `250ms`, `0`, `-5m`, `.5s`) in milliseconds, as
 * time.ParseDuration reads it; undefined when it does not parse (the renderer refuses such text).
 */
export function parseDuration(text: string | undefined): number | undefined {
  if (!text || !GO_DURATION.test(text)) return undefined;
  const sign = text.startsWith('-') ? -1 : 1;
  const unit: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, μs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let total = 0;
  for (const m of text.matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g)) total += Number(m[1]) * unit[m[2]];
  return sign * total;
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
export const podImageTag = (pod: Pod, container: string): string | undefined =>
  tagOf(pod.spec?.containers?.find((c) => c.name === container)?.image);

/**
 * What the renderer and the image say of a TiCDC Pod's capture before it is asked: whether it runs
 * TiCDC's new architecture (the Pod's `tidb-gitops.io/ticdc-architecture: new`) and its image tag.
 */
export function captureHints(pod: Pod | undefined): { readonly newArchitecture: boolean; readonly imageTag?: string } {
  if (!pod) return { newArchitecture: false };
  return { newArchitecture: pod.metadata.annotations?.[TICDC_ARCHITECTURE_ANNOTATION] === 'new', imageTag: podImageTag(pod, 'ticdc') };
}
