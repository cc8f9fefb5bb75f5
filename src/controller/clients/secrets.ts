/**
 * Reading a Secret: its values decoded, with the version that changes whenever they do. The values
 * are passwords and keys: the callers never log them.
 */
import type { KubeAccess } from './kube';
import { KubeError } from './kube-errors';
import { API } from './kube-rest';

/** A Secret as read: its version and its values (never logged). */
export interface VersionedSecret {
  /** `<uid>/<resourceVersion>`: changes with every change of the Secret. */
  readonly version: string;
  readonly data: Readonly<Record<string, Buffer>>;
}

/** A Secret with its version, or undefined when there is none. */
export async function readSecret(kube: Pick<KubeAccess, 'send' | 'path'>, name: string): Promise<VersionedSecret | undefined> {
  try {
    const s = await kube.send<{ metadata?: { uid?: string; resourceVersion?: string }; data?: Record<string, string> }>(
      `get secret ${name}`,
      'GET',
      kube.path(API.core, 'secrets', name),
      {},
      false,
    );
    const data = Object.fromEntries(Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')]));
    return { version: `${s.metadata?.uid ?? ''}/${s.metadata?.resourceVersion ?? ''}`, data };
  } catch (err) {
    if (err instanceof KubeError && err.code === 404) return undefined;
    throw err;
  }
}

/** A password as a Secret's value holds it: its first line, as the operator's initializer read its password files. */
export const passwordOf = (value: Buffer): string => value.toString('utf8').split(/\r?\n/)[0];
