/**
 * The volume sizes Git asks for (the `<cluster>-volume-sizes` ConfigMap), read at most every few
 * seconds (it has no watch: a resize is never urgent), and the API server's refusals to grow a
 * component's claims, which stand until Git asks for other sizes.
 */
import { names, VOLUME_SIZES_KEY } from '../../tidbcluster/names';
import type { KubeAccess } from '../clients/kube';
import { parseVolumeSizes, type VolumeSizes } from '../model/volume-sizes';
import type { Logger } from '../runtime/log';
import type { VolumeRefusal } from '../view/view';

/** How often, at most, the ConfigMap is read. */
const EVERY_MS = 5_000;

export class VolumeSizesReader {
  private sizes: VolumeSizes = {};
  private readAt = -Infinity;
  private refused: Record<string, VolumeRefusal> = {};

  constructor(
    private readonly kube: Pick<KubeAccess, 'getConfigMapData'>,
    private readonly cluster: string,
    private readonly log: Logger,
  ) {}

  /** Claims the API server refused to grow, by component, with the sizes asked for then. */
  get refusals(): Readonly<Record<string, VolumeRefusal>> {
    return this.refused;
  }

  /** The sizes in the ConfigMap; {} when it is missing or bad. */
  async read(): Promise<VolumeSizes> {
    const now = Date.now();
    if (now - this.readAt < EVERY_MS) return this.sizes;
    const name = names.volumeSizes(this.cluster);
    let sizes: VolumeSizes = {};
    try {
      sizes = parseVolumeSizes((await this.kube.getConfigMapData(name))?.[VOLUME_SIZES_KEY]);
    } catch (e) {
      this.log.warn(`ConfigMap ${name}: ${VOLUME_SIZES_KEY}: ${(e as Error).message}; volumes are left as they are`);
    }
    // A refusal stands for the sizes it refused; new sizes from Git are tried again.
    this.refused = Object.fromEntries(Object.entries(this.refused).filter(([k, r]) => r.sizes === JSON.stringify(sizes[k])));
    this.sizes = sizes;
    this.readAt = now;
    return sizes;
  }

  /** The API server refused to grow the component's claims to the sizes last read. */
  refuse(kind: string, message: string): void {
    this.refused = { ...this.refused, [kind]: { message, sizes: JSON.stringify(this.sizes[kind]) } };
  }
}
