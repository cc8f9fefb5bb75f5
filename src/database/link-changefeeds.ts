/**
 * Ties each Changefeed to the TidbCluster its `spec.cluster` names, and checks it against that
 * cluster's TiCDC: a cluster with TiCDC, a sink scheme its release takes, a replica config of the
 * fields its release reads (and its architecture), each id once. Gathers each cluster's changefeeds
 * into what its controller is told (`ControllerClusterInfo.changefeeds`).
 */
import { compareCodeUnits } from '../base/order';
import { imageTag } from '../base/version';
import type { ChangefeedsInfo } from '../tidbcluster/contract';
import { formatIssue } from '../tidbcluster/errors';
import type { LoadedCluster, LoadedDocument } from '../tidbcluster/load';
import { replicaConfigIssues, sinkUriIssues } from './changefeed-config';
import { clusterName, lineOf, placeDocument } from './link';
import type { ResolvedChangefeed } from './types';

export interface LinkedChangefeeds {
  /** Per cluster of the input, in the same order: its changefeeds, or none. */
  readonly changefeeds: readonly (ChangefeedsInfo | undefined)[];
  /** `file: document N: path (line L): message`, one per problem. */
  readonly errors: string[];
}

export function linkChangefeeds(
  clusters: readonly LoadedCluster[],
  documents: readonly LoadedDocument<ResolvedChangefeed>[],
): LinkedChangefeeds {
  const errors: string[] = [];
  const perCluster = clusters.map(() => [] as LoadedDocument<ResolvedChangefeed>[]);
  for (const doc of documents) {
    const index = placeDocument(clusters, doc, errors);
    if (index < 0) continue;
    const cluster = clusters[index].resolved;
    const fail = (path: string, message: string, line?: number) =>
      errors.push(formatIssue({ path, line: line ?? lineOf(doc, path), message }, doc.source));
    if (!cluster.ticdc) {
      fail('spec.cluster.name', `TidbCluster ${clusterName(cluster)} has no TiCDC (spec.ticdc) to run the changefeed`);
      continue;
    }
    const version = imageTag(cluster.ticdc.image);
    const { feed } = doc.value;
    const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(feed.sinkUri)?.[1];
    const issues = [
      ...sinkUriIssues(feed.sinkUri, { version }),
      ...replicaConfigIssues(feed.replicaConfig ?? {}, version, {
        newArchitecture: cluster.ticdc.newArchitecture,
        ...(scheme && { sinkScheme: scheme }),
      }),
    ];
    for (const i of issues) fail(i.path, `${i.message} (TidbCluster ${clusterName(cluster)} runs ${cluster.ticdc.image})`, i.line);
    if (issues.length === 0) perCluster[index].push(doc);
  }
  const changefeeds = perCluster.map((docs, i): ChangefeedsInfo | undefined => {
    if (docs.length === 0) return undefined;
    const seen = new Map<string, LoadedDocument<ResolvedChangefeed>>();
    for (const doc of docs) {
      const first = seen.get(doc.value.feed.id);
      if (!first) seen.set(doc.value.feed.id, doc);
      else {
        const path = doc.value.idGiven ? 'spec.id' : 'metadata.name';
        const message = `the changefeed ${doc.value.feed.id} is already declared by the Changefeed ${JSON.stringify(first.value.name)} at ${first.source.file}: document ${first.source.document}; declare each changefeed once`;
        errors.push(formatIssue({ path, line: lineOf(doc, path), message }, doc.source));
      }
    }
    return {
      architecture: clusters[i].resolved.ticdc?.newArchitecture ? 'new' : 'tiflow',
      feeds: [...seen.values()].map((d) => d.value.feed).sort((a, b) => compareCodeUnits(a.id, b.id)),
    };
  });
  return { changefeeds, errors };
}
