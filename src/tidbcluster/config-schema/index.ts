/**
 * The config keys of PD, TiKV and TiDB per release (`generated/<server>.json`, read on first use
 * only, so a render whose clusters set no config never pays for them), and the check of a
 * component's config against the release its image runs. Keys can be passed unchecked with the
 * TidbCluster annotation `tidb-gitops.io/unchecked-config` (`tikv:raftstore.new-key, pd:schedule`),
 * for keys a hotfix release added.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { imageTag } from '../../base/version';
import type { TomlTable } from '../../base/toml';
import type { SpecIssue } from '../errors';
import { configIssues, linesOf, nodeOf, onlineAt } from './check';
import type { ConfigSchema } from './types';

export type { ConfigNode, ConfigSchema, ConfigType } from './types';
export { compareLines, linesOf, nodeOf, onlineAt, readAt, tomlKeyLine } from './check';

/** The servers whose keys are known, by component. */
export const CHECKED_SERVERS = { pd: 'PD', tikv: 'TiKV', tidb: 'TiDB' } as const;
export type CheckedServer = keyof typeof CHECKED_SERVERS;

/** The TidbCluster annotation listing `<component>:<key prefix>` entries left unchecked. */
export const UNCHECKED_CONFIG_ANNOTATION = 'tidb-gitops.io/unchecked-config';

const schemas = new Map<CheckedServer, ConfigSchema>();

/** A server's schema: beside this module (`generated/`), or beside the bundles (`config-schemas/`). */
export function configSchema(server: CheckedServer): ConfigSchema {
  let schema = schemas.get(server);
  if (schema) return schema;
  const file = [join(__dirname, 'generated', `${server}.json`), join(__dirname, 'config-schemas', `${server}.json`)].find(existsSync);
  if (!file) throw new Error(`the config keys of ${CHECKED_SERVERS[server]} are missing from this installation (${server}.json)`);
  schema = JSON.parse(readFileSync(file, 'utf8')) as ConfigSchema;
  schemas.set(server, schema);
  return schema;
}

/** The annotation's entries for one component: the key prefixes left unchecked; malformed entries are errors. */
export function uncheckedPrefixes(annotations: Readonly<Record<string, string>> | undefined, component: string): string[] {
  const value = annotations?.[UNCHECKED_CONFIG_ANNOTATION];
  if (!value) return [];
  return value
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e.startsWith(`${component}:`))
    .map((e) => e.slice(component.length + 1).trim())
    .filter(Boolean);
}

/** What is wrong with the annotation itself: an entry that names no checked component or no key. */
export function uncheckedAnnotationIssues(annotations: Readonly<Record<string, string>> | undefined): SpecIssue[] {
  const value = annotations?.[UNCHECKED_CONFIG_ANNOTATION];
  if (value === undefined) return [];
  return value
    .split(',')
    .map((e) => e.trim())
    .filter((e) => {
      const m = /^([a-z]+):\s*(\S+)$/.exec(e);
      return !m || !(m[1] in CHECKED_SERVERS);
    })
    .map((e) => ({
      path: `metadata.annotations.${UNCHECKED_CONFIG_ANNOTATION}`,
      message: `invalid entry ${JSON.stringify(e)}: expected <component>:<key prefix>, the component one of ${Object.keys(CHECKED_SERVERS).join(', ')} (tikv:raftstore.some-key)`,
    }));
}

/** A component's config against its image's release: errors and warnings at their paths. */
export function componentConfigIssues(
  server: CheckedServer,
  image: string,
  config: TomlTable,
  o: { readonly path: string; readonly text?: string; readonly unchecked?: readonly string[] },
): { errors: SpecIssue[]; warnings: SpecIssue[] } {
  if (Object.keys(config).length === 0) return { errors: [], warnings: [] };
  const schema = configSchema(server);
  const view = linesOf(schema, imageTag(image));
  if (!view) return { errors: [], warnings: [] };
  return configIssues(schema, view, config, { ...o, server: CHECKED_SERVERS[server] });
}

/**
 * Whether a dotted key of a server's config can be changed online at the image's release: every line
 * the release is checked against changes it online. Unknown keys and releases are not.
 */
export function changedOnline(server: CheckedServer, image: string, dotted: readonly string[]): boolean {
  const schema = configSchema(server);
  const view = linesOf(schema, imageTag(image));
  const node = view && nodeOf(schema, dotted);
  return !!view && !!node && view.lines.every((l) => onlineAt(node, l));
}
