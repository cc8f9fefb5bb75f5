/**
 * What Git asks of a component, read from the annotations the renderer writes on its StatefulSet:
 * the desired replicas and the operation settings (update strategy, failover, timeouts...).
 */
import { parseComponentSettings, type ComponentSettings } from '../../tidbcluster/contract';
import { ANNOTATION } from '../../tidbcluster/names';
import type { StatefulSet } from './objects';

/** The operation settings Git asks of the component (`parseComponentSettings`: a bad annotation counts as none). */
export const settingsOf = (sts: StatefulSet): ComponentSettings => parseComponentSettings(sts.metadata.annotations?.[ANNOTATION.settings]);

export function desiredReplicas(sts: StatefulSet): number | undefined {
  const text = sts.metadata.annotations?.[ANNOTATION.replicas];
  return text !== undefined && /^\d+$/.test(text) ? Number(text) : undefined;
}

export const replicasOf = (sts: StatefulSet): number => sts.spec?.replicas ?? 1;

/** The update strategy Git asks for (the settings annotation; RollingUpdate when it names none). */
export const desiredStrategy = (sts: StatefulSet): 'RollingUpdate' | 'OnDelete' =>
  settingsOf(sts).updateStrategy === 'OnDelete' ? 'OnDelete' : 'RollingUpdate';

export const isRolling = (sts: StatefulSet): boolean => desiredStrategy(sts) === 'RollingUpdate';
