/**
 * The schemas of SqlUser and SqlRole, written here by hand (they have no CRD), in the node-table form
 * `validateSchema` reads: unknown fields with a did-you-mean, types, names and enums, as strictly as a
 * TidbCluster's. What spans fields (grant levels, roles, root) is checked by `read.ts`.
 */
import type { CompactSchema } from '../tidbcluster/crd-schema';
import { SQL_ROLE_KIND, SQL_USER_KIND } from './types';

type SchemaNode = CompactSchema['nodes'][number];

/** A MySQL host pattern: a name, an address, `%` and `_` wildcards, or `address/netmask`. */
export const HOST_PATTERN = /^[A-Za-z0-9.%_:/-]{1,255}$/;
/** A user or role name: at most 32 characters (`mysql.user.User`), no quote, backquote, backslash or white space. */
export const USER_PATTERN = /^[^'"`\\\s]{1,32}$/;
const SECRET_NAME = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
const SECRET_KEY = '^[-._a-zA-Z0-9]+$';
/** A resource group name: an identifier of at most 32 characters. */
const RESOURCE_GROUP = '^[A-Za-z0-9_]{1,32}$';

function build(kind: typeof SQL_USER_KIND | typeof SQL_ROLE_KIND): CompactSchema {
  const nodes: SchemaNode[] = [];
  const add = (n: SchemaNode) => nodes.push(n) - 1;
  const str = (pattern?: string, maxLength?: number) =>
    add({ type: 'string', minLength: 1, ...(pattern && { pattern }), ...(maxLength && { maxLength }) });
  const obj = (properties: Record<string, number>, required: string[] = []) =>
    add({ type: 'object', properties, ...(required.length > 0 && { required }) });
  const list = (items: number) => add({ type: 'array', items });
  const stringMap = add({ type: 'object', additionalProperties: add({ type: 'string' }) });
  const metadata = obj({ name: str(), namespace: str(), labels: stringMap, annotations: stringMap }, ['name']);
  // Their patterns are checked by read.ts, whose messages say what a name may hold.
  const host = str();
  const user = str();
  const grant = obj(
    { privileges: add({ type: 'array', items: str() }), level: str(undefined, 200), withGrantOption: add({ type: 'boolean' }) },
    ['privileges', 'level'],
  );
  const common: Record<string, number> = {
    cluster: obj({ name: str(), namespace: str() }, ['name']),
    user,
    host,
    roles: list(obj({ name: user, host }, ['name'])),
    grants: list(grant),
    deletionPolicy: add({ type: 'string', enum: ['Retain', 'Delete'] }),
    drift: add({ type: 'string', enum: ['report', 'correct'] }),
  };
  const spec =
    kind === SQL_USER_KIND
      ? obj(
          {
            ...common,
            passwordSecret: obj({ name: str(SECRET_NAME, 253), key: str(SECRET_KEY, 253) }, ['name', 'key']),
            require: add({ type: 'string', enum: ['NONE', 'SSL', 'X509'] }),
            resourceGroup: str(RESOURCE_GROUP),
            locked: add({ type: 'boolean' }),
          },
          ['cluster', 'passwordSecret'],
        )
      : obj(common, ['cluster']);
  const root = obj({ apiVersion: add({ type: 'string' }), kind: add({ type: 'string' }), metadata, spec }, [
    'apiVersion',
    'kind',
    'metadata',
    'spec',
  ]);
  return { group: 'tidb-gitops.io', version: 'v1alpha1', kind, root, nodes };
}

/** The schema of each kind. */
export const SQL_SCHEMAS: Readonly<Record<typeof SQL_USER_KIND | typeof SQL_ROLE_KIND, CompactSchema>> = {
  [SQL_USER_KIND]: build(SQL_USER_KIND),
  [SQL_ROLE_KIND]: build(SQL_ROLE_KIND),
};

/** The SqlUser's fields a role does not have (a role cannot log in). */
export const USER_ONLY_FIELDS = ['passwordSecret', 'require', 'resourceGroup', 'locked'] as const;
