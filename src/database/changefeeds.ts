/**
 * The `Changefeed` document: its schema (written here by hand, in the node-table form
 * `validateSchema` reads; the replica config is checked by `changefeed-config.ts`) and its reader,
 * which checks what needs no cluster: the id as TiCDC takes it, the sink URI with no credential in it,
 * where each credential comes from, and the TSOs. What depends on the cluster's TiCDC release (the
 * schemes it takes, the replica config's fields) is checked by `link.ts`.
 */
import type { ChangefeedInfo, SinkCredentialsInfo } from '../tidbcluster/contract';
import type { CompactSchema } from '../tidbcluster/crd-schema';
import type { SpecIssue } from '../tidbcluster/errors';
import type { DocumentKind } from '../tidbcluster/load';
import { ownKind, placement } from './kind';
import { SchemaBuilder } from './schema-builder';
import { SINK_CREDENTIAL_FIELDS, SINK_CREDENTIAL_PARAMS, SINK_USERINFO_PASSWORD, sinkFamily, sinkUriIssues } from './changefeed-config';
import { CHANGEFEED_KIND, type ChangefeedSpec, type ResolvedChangefeed } from './types';

/** A `Changefeed` document. */
interface ChangefeedDocument {
  metadata: { name: string; namespace?: string };
  spec: ChangefeedSpec;
}

/** A changefeed id as TiCDC takes it (pingcap/tiflow `pkg/cmd/util` `ValidateChangefeedID`): at most 128 characters. */
export const CHANGEFEED_ID = /^[a-zA-Z0-9]+(-[a-zA-Z0-9]+)*$/;
/** The largest uint64, TiCDC's TSO type. */
const MAX_TSO = 18446744073709551615n;

function build(): CompactSchema {
  const b = new SchemaBuilder();
  const keyMap = b.add({ type: 'object', additionalProperties: b.secretKey() });
  const tso = b.add({ 'x-kubernetes-int-or-string': true });
  const spec = b.obj(
    {
      cluster: b.cluster(),
      id: b.str({ maxLength: 128 }),
      sinkURI: b.add({ type: 'string' }),
      sinkCredentials: b.obj({ secretName: b.secretName(), password: b.secretKey(), params: keyMap, fields: keyMap }, ['secretName']),
      startTs: tso,
      targetTs: tso,
      paused: b.bool(),
      replicaConfig: b.add({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true }),
      deletionPolicy: b.str({ enum: ['Retain', 'Delete'] }),
    },
    ['cluster', 'sinkURI'],
  );
  return b.document(CHANGEFEED_KIND, spec);
}

/** The Changefeed's schema. */
export const CHANGEFEED_SCHEMA: CompactSchema = build();

/** The reader of Changefeed documents, for `parseDocuments`. */
export function changefeedKind(options: { readonly namespace?: string } = {}): DocumentKind<ResolvedChangefeed> {
  return ownKind({
    kind: CHANGEFEED_KIND,
    schema: CHANGEFEED_SCHEMA,
    // The URI's own words (a credential written into it) in place of the schema's: they say where it belongs.
    refused: (doc) => {
      const spec = doc.spec;
      return typeof spec === 'object' && spec !== null ? sinkUriIssues((spec as { sinkURI?: unknown }).sinkURI) : [];
    },
    resolve: (doc: ChangefeedDocument) => resolveChangefeed(doc, options),
  });
}

/** A TSO as decimal text, or why not: YAML numbers past 2^53 have already lost digits. */
function readTso(v: string | number | undefined, path: string, issues: SpecIssue[]): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v === 'number' && !Number.isSafeInteger(v)) {
    issues.push({
      path,
      message: `a TSO this large loses its last digits as a YAML number: write it quoted, ${path.split('.').pop()}: "<digits>"`,
    });
    return undefined;
  }
  const t = String(v);
  if (!/^\d{1,20}$/.test(t) || BigInt(t) > MAX_TSO || BigInt(t) === 0n) {
    issues.push({ path, message: `expected a TSO (a positive 64-bit integer, as TiDB's tidb_current_ts gives), got ${JSON.stringify(v)}` });
    return undefined;
  }
  return t;
}

/** Where the credentials come from, checked against what the sink's family reads. */
function readCredentials(spec: ChangefeedSpec, issues: SpecIssue[]): SinkCredentialsInfo | undefined {
  const c = spec.sinkCredentials;
  if (!c) return undefined;
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(spec.sinkURI)?.[1] ?? '';
  const family = sinkFamily(scheme);
  if (!family) return undefined;
  if (c.password !== undefined && !SINK_USERINFO_PASSWORD.includes(family))
    issues.push({
      path: 'spec.sinkCredentials.password',
      message: `a ${scheme} sink has no password in its URI: name its credentials in params or fields`,
    });
  for (const p of Object.keys(c.params ?? {}))
    if (!SINK_CREDENTIAL_PARAMS[family].includes(p.toLowerCase()))
      issues.push({
        path: `spec.sinkCredentials.params.${p}`,
        message: `a ${scheme} sink reads no secret from the URI parameter ${p}${SINK_CREDENTIAL_PARAMS[family].length ? ` (it reads ${SINK_CREDENTIAL_PARAMS[family].join(', ')})` : ''}`,
      });
  for (const f of Object.keys(c.fields ?? {}))
    if (!SINK_CREDENTIAL_FIELDS[family].includes(f))
      issues.push({
        path: `spec.sinkCredentials.fields.${f}`,
        message: `${f} is no secret field of a ${scheme} sink's replica config${SINK_CREDENTIAL_FIELDS[family].length ? ` (its secret fields: ${SINK_CREDENTIAL_FIELDS[family].join(', ')})` : ''}`,
      });
  if (c.password === undefined && !c.params && !c.fields)
    issues.push({ path: 'spec.sinkCredentials', message: 'name at least one key: password, params or fields' });
  return {
    secret: c.secretName,
    ...(c.password !== undefined && { password: c.password }),
    ...(c.params && { params: c.params }),
    ...(c.fields && { fields: c.fields }),
  };
}

/** The document as the controller keeps it (defaults omitted), or its problems. */
export function resolveChangefeed(
  doc: ChangefeedDocument,
  options: { readonly namespace?: string } = {},
): { value?: ResolvedChangefeed; issues: SpecIssue[] } {
  const s = doc.spec;
  const issues: SpecIssue[] = [];
  const id = s.id ?? doc.metadata.name;
  if (!CHANGEFEED_ID.test(id) || id.length > 128)
    issues.push({
      path: s.id === undefined ? 'metadata.name' : 'spec.id',
      message: `invalid changefeed id ${JSON.stringify(id)}: TiCDC takes letters and digits in groups joined by single '-', at most 128 characters`,
    });
  const startTs = readTso(s.startTs, 'spec.startTs', issues);
  const targetTs = readTso(s.targetTs, 'spec.targetTs', issues);
  if (startTs !== undefined && targetTs !== undefined && BigInt(targetTs) <= BigInt(startTs))
    issues.push({
      path: 'spec.targetTs',
      message: `targetTs ${targetTs} must be after startTs ${startTs}: TiCDC refuses a changefeed that ends before it starts`,
    });
  const credentials = readCredentials(s, issues);
  if (issues.length > 0) return { issues };
  const feed: ChangefeedInfo = {
    document: doc.metadata.name,
    id,
    sinkUri: s.sinkURI,
    ...(credentials && { credentials }),
    ...(startTs !== undefined && { startTs }),
    ...(targetTs !== undefined && { targetTs }),
    ...(s.paused === true && { paused: true }),
    ...(s.replicaConfig && Object.keys(s.replicaConfig).length > 0 && { replicaConfig: s.replicaConfig }),
    ...(s.deletionPolicy === 'Delete' && { deletionPolicy: 'Delete' as const }),
  };
  return {
    issues,
    value: {
      kind: CHANGEFEED_KIND,
      name: doc.metadata.name,
      ...placement(doc.metadata, s.cluster, options),
      idGiven: s.id !== undefined,
      feed,
    },
  };
}
