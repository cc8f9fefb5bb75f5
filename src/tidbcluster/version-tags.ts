/**
 * PingCAP tags the release images of its servers with a `v` before the version (`pingcap/pd:v8.5.8`).
 * `version: 8.5.8` renders `pingcap/pd:8.5.8`, a tag that does not exist: every Pod would wait in
 * ImagePullBackOff. Such a version is refused where it is written, with the tag meant.
 *
 * Only for images of PingCAP's repositories (`pingcap/...` on Docker Hub, also written
 * `docker.io/pingcap/...`, and its mirror `uhub.service.ucloud.cn/pingcap/...`): an image of one's own
 * (`baseImage: registry.example.com/team/pd`) may be tagged any way its builder chose.
 */
import { imageTag } from '../base/version';
import { resolveImage } from './component';
import type { ComponentKind } from './names';
import type { SpecIssue } from './errors';
import type { ComponentSpec } from './spec-parts';

/** A release number without its `v`: `8.5.8`, `7.5.0-pre`. */
const BARE_RELEASE = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/;

/** Registries that serve PingCAP's repositories under their own names ('' is Docker Hub, unnamed). */
const PINGCAP_REGISTRIES = new Set(['', 'docker.io', 'index.docker.io', 'registry-1.docker.io', 'uhub.service.ucloud.cn']);

/** The components of `spec` whose image is `baseImage:version`, in the operator's order. */
const SPEC_COMPONENTS = ['pd', 'tiproxy', 'tiflash', 'tikv', 'pump', 'tidb', 'ticdc'] as const;

/** Problems with the image tags `spec.version` and the components' `version` (or `image`) give. */
export function versionTagIssues(spec: Record<string, unknown>): SpecIssue[] {
  const issues = new Map<string, SpecIssue>();
  const clusterVersion = typeof spec.version === 'string' ? spec.version : undefined;
  const check = (kind: ComponentKind, comp: unknown, path: string) => {
    if (!isComponent(comp)) return;
    const image = resolveImage(kind, comp, clusterVersion);
    // Where the tag was written: the full image, the component's version, or the cluster's.
    const at = comp.baseImage === '' && comp.image ? `${path}.image` : comp.version !== undefined ? `${path}.version` : 'spec.version';
    const problem = tagProblem(image);
    if (problem && !issues.has(at)) issues.set(at, { path: at, message: problem });
  };
  for (const kind of SPEC_COMPONENTS) check(kind, spec[kind], `spec.${kind}`);
  if (Array.isArray(spec.pdms)) {
    spec.pdms.forEach((entry, i) => {
      const name = (entry as { name?: unknown } | null)?.name;
      if (name !== 'tso' && name !== 'scheduling') return;
      const e = entry as ComponentSpec;
      // The operator takes PD's image for an entry that names none at all.
      if (e.baseImage === '' && !e.image && spec.pd) check('pd', spec.pd, 'spec.pd');
      else check(name, entry, `spec.pdms[${i}]`);
    });
  }
  return [...issues.values()];
}

/** Why `image` names a tag PingCAP does not publish, or undefined. */
export function tagProblem(image: string): string | undefined {
  const tag = imageTag(image);
  if (!BARE_RELEASE.test(tag) || !isPingcapImage(image)) return undefined;
  return `${image} is no image PingCAP publishes: its release tags start with "v" (${withV(image, tag)}); write v${tag}`;
}

function withV(image: string, tag: string): string {
  const name = image.split('@')[0];
  return `${name.slice(0, name.length - tag.length)}v${tag}`;
}

function isPingcapImage(image: string): boolean {
  const name = image.split('@')[0];
  const parts = name.slice(0, name.lastIndexOf(':') > name.lastIndexOf('/') ? name.lastIndexOf(':') : name.length).split('/');
  const registry = parts.length > 2 || (parts.length === 2 && /[.:]/.test(parts[0])) ? parts.shift()! : '';
  return PINGCAP_REGISTRIES.has(registry) && parts.length === 2 && parts[0] === 'pingcap';
}

/** A component spec whose image fields are what the CRD allows (the schema reports anything else). */
function isComponent(comp: unknown): comp is ComponentSpec {
  if (typeof comp !== 'object' || comp === null || Array.isArray(comp)) return false;
  const c = comp as Record<string, unknown>;
  return ['baseImage', 'version', 'image'].every((k) => c[k] === undefined || typeof c[k] === 'string');
}
