import type { Container, VolumeMount } from '../../imports/k8s';
import type { ResolvedLogTailer } from '../tidbcluster/resolve';
import { hasResources } from './component';

/**
 * A sidecar that follows a log file so `kubectl logs -c <name>` shows it. `touch` first: the server
 * may not have created the file yet, and `tail -F` keeps following across rotation.
 *
 * As a native sidecar (`useSidecar`) it is an init container with `restartPolicy: Always`: it starts
 * before the server and is stopped after it, so the last lines reach the log. `tail` runs in the
 * background because, as PID 1, it would ignore SIGTERM; the shell's trap waits `sleepTimeSeconds`
 * (to let the final lines through) and exits 0.
 */
export function logTailerContainer(name: string, file: string, mount: VolumeMount, tailer: ResolvedLogTailer): Container {
  const follow = `touch ${file}; tail -n0 -F ${file}`;
  const sleep = tailer.sleepTimeSeconds !== undefined ? `sleep ${tailer.sleepTimeSeconds}; ` : '';
  return {
    name,
    image: tailer.image,
    imagePullPolicy: tailer.imagePullPolicy as Container['imagePullPolicy'],
    command: ['sh', '-c', tailer.useSidecar ? `trap "${sleep}exit 0" TERM; ${follow} & wait $!` : `${follow};`],
    volumeMounts: [mount],
    ...(hasResources(tailer) && { resources: tailer.resources }),
    ...(tailer.securityContext && { securityContext: tailer.securityContext }),
    ...(tailer.useSidecar && { restartPolicy: 'Always' }),
  };
}

/**
 * Where the tailers go: with `useSidecar`, into the init containers at `initIndex` (the operator puts
 * TiKV's and TiDB's after its own init containers and before the user's, TiFlash's after all of
 * them); otherwise they stay regular containers for the caller to place.
 */
export function placeTailers(tailers: Container[], tailer: ResolvedLogTailer, initContainers: Container[], initIndex: number): Container[] {
  if (!tailer.useSidecar) return tailers;
  initContainers.splice(initIndex, 0, ...tailers);
  return [];
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
