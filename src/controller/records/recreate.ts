/**
 * The re-creation record: what the controller keeps in the status ConfigMap while it re-creates a
 * StatefulSet with larger volume claim templates, written before the delete, so that a controller
 * that dies between the delete and the create finds it and creates the StatefulSet on its next pass.
 */

/** A StatefulSet being re-created. */
export interface RecreateRecord {
  /** The uid of the StatefulSet being replaced. */
  readonly uid: string;
  /** The StatefulSet to create: the old one's metadata and spec, with the new claim template sizes. */
  readonly object: any;
  /** The old one's field owners, given back to the new one. */
  readonly managedFields: unknown[];
}

/** The record for re-creating `live` (plain JSON from the API server) with these template sizes. */
export function recreateRecord(live: any, sizes: Readonly<Record<string, string>>): RecreateRecord {
  const m = live.metadata ?? {};
  const spec = structuredClone(live.spec ?? {});
  delete spec.template?.metadata?.creationTimestamp;
  spec.volumeClaimTemplates = (spec.volumeClaimTemplates ?? []).map((t: any) => {
    delete t.metadata?.creationTimestamp;
    const size = sizes[t.metadata?.name];
    if (size === undefined) return t;
    return { ...t, spec: { ...t.spec, resources: { ...t.spec?.resources, requests: { ...t.spec?.resources?.requests, storage: size } } } };
  });
  const object = {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: {
      name: m.name,
      ...(m.namespace !== undefined && { namespace: m.namespace }),
      ...(m.labels && { labels: m.labels }),
      ...(m.annotations && { annotations: m.annotations }),
    },
    spec,
  };
  return { uid: m.uid, object, managedFields: m.managedFields ?? [] };
}

/** Status ConfigMap key of a component's re-creation record. */
export const recreateKey = (kind: string): string => `recreate.${kind}.json`;

/** The re-creation records in the status ConfigMap's data; a record that does not parse is skipped. */
export function recreateRecordsOf(data: Readonly<Record<string, string>> | undefined): Map<string, RecreateRecord> {
  const out = new Map<string, RecreateRecord>();
  for (const [key, text] of Object.entries(data ?? {})) {
    const m = /^recreate\.([a-z]+)\.json$/.exec(key);
    if (!m) continue;
    try {
      const r = JSON.parse(text) as RecreateRecord;
      if (typeof r?.uid === 'string' && r.object?.metadata?.name) out.set(m[1], r);
    } catch {
      // Not ours to guess at: left for a person to read, never acted on.
    }
  }
  return out;
}
