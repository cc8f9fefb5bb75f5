/**
 * The documents read beside the TidbClusters (Backup, BackupSchedule, Restore, TidbInitializer and
 * TidbMonitor, and the kinds of the layers above: SqlUser, SqlRole), and one YAML text read with them:
 * every problem of every document at once.
 */
import { aliasErrors, parseDocuments, type DocumentKind, type ParsedDocuments } from '../tidbcluster/load';
import type { ResolveOptions } from '../tidbcluster/resolve';
import { targetMinor } from '../tidbcluster/job-pod-input';
import { operationKinds } from './kinds';
import type { ResolvedOperation } from './resolve';
import { initializerKind } from '../initializer/read';
import type { ResolvedInitializer } from '../initializer/types';
import { monitorKind } from '../monitoring/read';
import type { ResolvedMonitor } from '../monitoring/types';

/** A document read beside the clusters. */
export type CompanionDocument = ResolvedOperation | ResolvedInitializer | ResolvedMonitor;

/** The readers of every kind read beside the clusters, for `parseDocuments`. */
export function companionKinds(
  options: { readonly namespace?: string; readonly kubeVersion?: string } = {},
): DocumentKind<CompanionDocument>[] {
  const { namespace } = options;
  return [
    ...operationKinds({ namespace, kubeMinor: targetMinor(options.kubeVersion) }),
    initializerKind({ namespace }),
    monitorKind({ namespace }),
  ];
}

/**
 * Parses and checks every document of one YAML text (`loadTidbClusters`, with the operations), and
 * those of `more` kinds, which the layers above read (`load/clusters.ts` adds SqlUser and SqlRole).
 */
export function loadInputs<T = never>(
  text: string,
  file: string,
  options: ResolveOptions = {},
  more: readonly DocumentKind<T>[] = [],
): ParsedDocuments<CompanionDocument | T> {
  const bombs = aliasErrors(text, file);
  if (bombs.length > 0) return { clusters: [], errors: bombs, skipped: [], documents: [], others: [] };
  const kinds: DocumentKind<CompanionDocument | T>[] = [
    ...companionKinds({ namespace: options.namespace, kubeVersion: options.kubeVersion }),
    ...more,
  ];
  return parseDocuments(text, file, options, kinds);
}
