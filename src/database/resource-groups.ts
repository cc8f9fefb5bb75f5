/**
 * The `ResourceGroup` document: its schema (written here by hand, in the node-table form
 * `validateSchema` reads) and its reader, which checks it as strictly as a TidbCluster (unknown fields
 * with a did-you-mean, types, enums), then its name and durations, and gives the group as the
 * controller keeps it (`ResourceGroupInfo`). Which release has what is checked by `link.ts`, which
 * knows the cluster.
 */
import { parseDurationMs } from '../base/duration';
import { DEFAULT_RESOURCE_GROUP, type ResourceGroupInfo } from '../tidbcluster/contract';
import type { CompactSchema } from '../tidbcluster/crd-schema';
import type { SpecIssue } from '../tidbcluster/errors';
import type { DocumentKind } from '../tidbcluster/load';
import { ownKind, placement } from './kind';
import { SchemaBuilder } from './schema-builder';
import { RESOURCE_GROUP_KIND, type ResolvedResourceGroup, type ResourceGroupDocument } from './types';

/**
 * A resource group's name: TiDB's limit is 32 characters (pingcap/tidb `pkg/resourcegroup`
 * `MaxGroupNameLength`); letters, digits and `_` keep it an identifier that needs no quoting.
 */
export const RESOURCE_GROUP_NAME = /^[A-Za-z0-9_]{1,32}$/;

function build(): CompactSchema {
  const b = new SchemaBuilder();
  const watch = b.obj({ type: b.str({ enum: ['EXACT', 'SIMILAR', 'PLAN'] }), duration: b.str() }, ['type']);
  const queryLimit = b.obj({ execElapsed: b.str(), action: b.str({ enum: ['DRYRUN', 'COOLDOWN', 'KILL'] }), watch }, [
    'execElapsed',
    'action',
  ]);
  const spec = b.obj(
    {
      cluster: b.cluster(),
      name: b.str(),
      ruPerSecond: b.add({ type: 'integer', minimum: 1, maximum: 2_147_483_647 }),
      priority: b.str({ enum: ['LOW', 'MEDIUM', 'HIGH'] }),
      burstable: b.bool(),
      queryLimit,
      deletionPolicy: b.str({ enum: ['Retain', 'Delete'] }),
      drift: b.str({ enum: ['report', 'correct'] }),
    },
    ['cluster', 'ruPerSecond'],
  );
  return b.document(RESOURCE_GROUP_KIND, spec);
}

/** The ResourceGroup's schema. */
export const RESOURCE_GROUP_SCHEMA: CompactSchema = build();

/** The reader of ResourceGroup documents, for `parseDocuments`. */
export function resourceGroupKind(options: { readonly namespace?: string } = {}): DocumentKind<ResolvedResourceGroup> {
  return ownKind({
    kind: RESOURCE_GROUP_KIND,
    schema: RESOURCE_GROUP_SCHEMA,
    resolve: (doc: ResourceGroupDocument) => resolveResourceGroup(doc, options),
  });
}

/** The document as the controller keeps it (defaults omitted), or its problems. */
export function resolveResourceGroup(
  doc: ResourceGroupDocument,
  options: { readonly namespace?: string } = {},
): { value?: ResolvedResourceGroup; issues: SpecIssue[] } {
  const s = doc.spec;
  const issues: SpecIssue[] = [];
  const name = s.name ?? doc.metadata.name.replace(/-/g, '_');
  if (!RESOURCE_GROUP_NAME.test(name))
    issues.push({
      path: s.name === undefined ? 'metadata.name' : 'spec.name',
      message: `invalid resource group name ${JSON.stringify(name)}: expected at most 32 letters, digits and '_'${s.name === undefined ? ' (the name is metadata.name with - as _ unless spec.name is written)' : ''}`,
    });
  if (name.toLowerCase() === DEFAULT_RESOURCE_GROUP && s.deletionPolicy === 'Delete')
    issues.push({ path: 'spec.deletionPolicy', message: 'the default resource group is never dropped: leave deletionPolicy out (Retain)' });
  const limit = s.queryLimit;
  const execElapsedMs = limit && durationMs(limit.execElapsed, 'spec.queryLimit.execElapsed', issues);
  const watchMs =
    limit?.watch?.duration === undefined ? undefined : durationMs(limit.watch.duration, 'spec.queryLimit.watch.duration', issues);
  if (issues.length > 0) return { issues };
  const group: ResourceGroupInfo = {
    document: doc.metadata.name,
    name: name.toLowerCase(),
    ruPerSecond: s.ruPerSecond,
    ...(s.priority !== undefined && s.priority !== 'MEDIUM' && { priority: s.priority }),
    ...(s.burstable === true && { burstable: true }),
    ...(limit &&
      execElapsedMs !== undefined && {
        queryLimit: {
          execElapsedMs,
          action: limit.action,
          ...(limit.watch && { watch: { type: limit.watch.type, ...(watchMs !== undefined && { durationMs: watchMs }) } }),
        },
      }),
    ...(s.deletionPolicy === 'Delete' && { deletionPolicy: 'Delete' as const }),
    ...(s.drift === 'correct' && { drift: 'correct' as const }),
  };
  return {
    issues,
    value: {
      kind: RESOURCE_GROUP_KIND,
      name: doc.metadata.name,
      ...placement(doc.metadata, s.cluster, options),
      nameGiven: s.name !== undefined,
      group,
    },
  };
}

function durationMs(text: string, path: string, issues: SpecIssue[]): number | undefined {
  const ms = parseDurationMs(text);
  if (ms === undefined)
    issues.push({
      path,
      message: `invalid duration ${JSON.stringify(text)}: expected a duration of at least 1ms such as 500ms, 60s, 10m or 1h30m`,
    });
  return ms;
}
