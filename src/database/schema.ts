/**
 * The schemas of SqlUser and SqlRole, written here by hand (they have no CRD), in the node-table form
 * `validateSchema` reads: unknown fields with a did-you-mean, types, names and enums, as strictly as a
 * TidbCluster's. What spans fields (grant levels, roles, root) is checked by `read.ts`.
 */
import type { CompactSchema } from '../tidbcluster/crd-schema';
import { RESOURCE_GROUP_NAME } from './resource-groups';
import { SchemaBuilder } from './schema-builder';
import { SQL_ROLE_KIND, SQL_USER_KIND } from './types';

/** A MySQL host pattern: a name, an address, `%` and `_` wildcards, or `address/netmask`. */
export const HOST_PATTERN = /^[A-Za-z0-9.%_:/-]{1,255}$/;
/** A user or role name: at most 32 characters (`mysql.user.User`), no quote, backquote, backslash or white space. */
export const USER_PATTERN = /^[^'"`\\\s]{1,32}$/;

function build(kind: typeof SQL_USER_KIND | typeof SQL_ROLE_KIND): CompactSchema {
  const b = new SchemaBuilder();
  // Their patterns are checked by read.ts, whose messages say what a name may hold.
  const host = b.str();
  const user = b.str();
  const grant = b.obj({ privileges: b.list(b.str()), level: b.str({ maxLength: 200 }), withGrantOption: b.bool() }, [
    'privileges',
    'level',
  ]);
  const common: Record<string, number> = {
    cluster: b.cluster(),
    user,
    host,
    roles: b.list(b.obj({ name: user, host }, ['name'])),
    grants: b.list(grant),
    deletionPolicy: b.str({ enum: ['Retain', 'Delete'] }),
    drift: b.str({ enum: ['report', 'correct'] }),
  };
  const spec =
    kind === SQL_USER_KIND
      ? b.obj(
          {
            ...common,
            passwordSecret: b.obj({ name: b.secretName(), key: b.secretKey() }, ['name', 'key']),
            require: b.str({ enum: ['NONE', 'SSL', 'X509'] }),
            resourceGroup: b.str({ pattern: RESOURCE_GROUP_NAME.source }),
            locked: b.bool(),
          },
          ['cluster', 'passwordSecret'],
        )
      : b.obj(common, ['cluster']);
  return b.document(kind, spec);
}

/** The schema of each kind. */
export const SQL_SCHEMAS: Readonly<Record<typeof SQL_USER_KIND | typeof SQL_ROLE_KIND, CompactSchema>> = {
  [SQL_USER_KIND]: build(SQL_USER_KIND),
  [SQL_ROLE_KIND]: build(SQL_ROLE_KIND),
};

/** The SqlUser's fields a role does not have (a role cannot log in). */
export const USER_ONLY_FIELDS = ['passwordSecret', 'require', 'resourceGroup', 'locked'] as const;
