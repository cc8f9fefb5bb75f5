import type { Container, VolumeMount } from '../../imports/k8s';
import type { ResolvedLogTailer } from '../spec/resolve';
import { hasResources } from './component';

/**
 * A sidecar that follows a log file so `kubectl logs -c <name>` shows it. `touch` first: the server
 * may not have created the file yet, and `tail -F` keeps following across rotation.
 */
export function logTailerContainer(name: string, file: string, mount: VolumeMount, tailer: ResolvedLogTailer): Container {
  return {
    name,
    image: tailer.image,
    imagePullPolicy: tailer.imagePullPolicy as Container['imagePullPolicy'],
    command: ['sh', '-c', `touch ${file}; tail -n0 -F ${file};`],
    volumeMounts: [mount],
    ...(hasResources(tailer) && { resources: tailer.resources }),
    ...(tailer.securityContext && { securityContext: tailer.securityContext }),
  };
}

/**
 * Where a tailed log lives: on the named storage volume (`<component>-<name>`) or additional mount,
 * else on the default mount. Returns the mount and the directory to put the file in.
 */
export function logVolume(
  volumeName: string | undefined,
  storageVolumeName: (name: string) => string,
  storageMounts: VolumeMount[],
  additionalMounts: VolumeMount[],
  fallback: VolumeMount,
): VolumeMount | undefined {
  if (!volumeName) return fallback;
  const storage = storageMounts.find((m) => m.name === storageVolumeName(volumeName));
  if (storage) return storage;
  return additionalMounts.find((m) => m.name === volumeName);
}
