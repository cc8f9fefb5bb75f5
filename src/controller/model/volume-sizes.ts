/**
 * The volume sizes Git asks for: the renderer writes them to the `<cluster>-volume-sizes` ConfigMap,
 * because the API server refuses a StatefulSet whose volumeClaimTemplates changed.
 */
import { quantityToBytes } from '../../base/quantity';

/** `{"<component>": {"<claim template>": "<size>"}}`, as the ConfigMap carries it. */
export type VolumeSizes = Readonly<Record<string, Readonly<Record<string, string>>>>;

/** Parses `sizes.json`; throws with what is wrong. */
export function parseVolumeSizes(text: string | undefined): VolumeSizes {
  if (text === undefined) return {};
  const raw: unknown = JSON.parse(text);
  const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isMap(raw)) throw new Error('expected a JSON object of components');
  for (const [kind, sizes] of Object.entries(raw)) {
    if (!isMap(sizes)) throw new Error(`${kind}: expected an object of claim templates`);
    for (const [t, size] of Object.entries(sizes)) {
      if (typeof size !== 'string' || quantityToBytes(size) === undefined)
        throw new Error(`${kind}.${t}: expected a quantity such as "20Gi"`);
    }
  }
  return raw as VolumeSizes;
}
