/**
 * Storage for the real-API tests: a StorageClass that allows expansion, static PersistentVolumes of
 * its class for the claims to bind to (kube-controller-manager's binder binds them), and the part of
 * a CSI driver's external-resizer that grows them.
 *
 * The resizer does what kubernetes-csi/external-resizer does for a driver that needs no node step
 * (`pkg/controller/controller.go`, `pkg/resizer/csi_resizer.go`): it acts on bound claims whose
 * PersistentVolume is its driver's (`CanSupport`: `pv.Spec.CSI.Driver`) and that ask for more than
 * `status.capacity`, grows the PersistentVolume's `spec.capacity`, then reports the new size in the
 * claim's `status.capacity`, clearing the resize status. (kube-controller-manager's expand controller,
 * `pkg/controller/volume/expand/expand_controller.go`, leaves CSI volumes to it.)
 */
import { resourcePath, type KubeClient, type Obj } from './client';

export interface Storage {
  readonly className: string;
  /** Claims grown so far, by name. */
  readonly resized: Map<string, string>;
  stop(): void;
}

const bytes = (q: string): number => {
  const m = /^(\d+)(Ki|Mi|Gi|Ti)?$/.exec(q);
  if (!m) throw new Error(`resizer: quantity ${q} not handled`);
  return Number(m[1]) * { '': 1, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40 }[m[2] ?? '']!;
};

/** Creates the class and `volumes` PersistentVolumes of `size`, and starts resizing for `namespace`. */
export async function expandableStorage(
  kube: KubeClient,
  namespace: string,
  o: { volumes: number; size: string; expandable?: boolean },
): Promise<Storage> {
  const driver = `resize.${namespace}.test.tidb-gitops.io`;
  const className = `expandable-${namespace}`;
  await kube.create({
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: className },
    provisioner: driver,
    allowVolumeExpansion: o.expandable ?? true,
    volumeBindingMode: 'Immediate',
    reclaimPolicy: 'Retain',
  });
  for (let i = 0; i < o.volumes; i++) {
    await kube.create({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: `${className}-${i}` },
      spec: {
        capacity: { storage: o.size },
        accessModes: ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Retain',
        storageClassName: className,
        csi: { driver, volumeHandle: `${className}-${i}` },
      },
    });
  }
  const resized = new Map<string, string>();
  const busy = new Set<string>();
  const grow = async (pvc: Obj): Promise<void> => {
    const name = pvc.metadata.name as string;
    const want = pvc.spec?.resources?.requests?.storage as string | undefined;
    const have = pvc.status?.capacity?.storage as string | undefined;
    if (pvc.status?.phase !== 'Bound' || !want || !have || !pvc.spec.volumeName || busy.has(name)) return;
    if (bytes(want) <= bytes(have)) return;
    busy.add(name);
    try {
      const pv = await kube.get(resourcePath('v1', 'PersistentVolume', undefined, pvc.spec.volumeName));
      if (pv?.spec?.csi?.driver !== driver) return;
      await kube.patch(resourcePath('v1', 'PersistentVolume', undefined, pvc.spec.volumeName), 'merge', {
        spec: { capacity: { storage: want } },
      });
      await kube.patch(`${resourcePath('v1', 'PersistentVolumeClaim', namespace, name)}/status`, 'merge', {
        status: { capacity: { storage: want }, allocatedResources: { storage: want }, allocatedResourceStatuses: null },
      });
      resized.set(name, want);
    } finally {
      busy.delete(name);
    }
  };
  const path = resourcePath('v1', 'PersistentVolumeClaim', namespace);
  const stopWatch = kube.watch(path, '', (type, pvc) => {
    if (type !== 'DELETED') void grow(pvc).catch(() => {});
  });
  // A resync, as the real resizer's informer has: a grow that failed is tried again.
  const timer = setInterval(
    () =>
      void kube
        .list(path)
        .then((all) => Promise.all(all.map((p) => grow(p).catch(() => {}))))
        .catch(() => {}),
    1000,
  );
  return {
    className,
    resized,
    stop: () => {
      clearInterval(timer);
      stopWatch();
    },
  };
}
