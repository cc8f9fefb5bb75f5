/** Lines the CLI prints on stderr for a good render, as tests expect them. */
import { version } from '../../package.json';

/** The controller image a cluster runs when neither `spec.discovery` nor `--controller-image` names one. */
export const DEFAULT_CONTROLLER_IMAGE = `ghcr.io/tidb-gitops/tidb-gitops:${version}`;

/** The note `render` prints when clusters (named in input order) run the default controller image. */
export function imageNote(...clusters: string[]): string {
  return imageNoteFor('--controller-image', clusters);
}

/** The same note from `argocd generate`, which names the plugin's setting. */
export function pluginImageNote(...clusters: string[]): string {
  return imageNoteFor('the controller-image parameter (or CONTROLLER_IMAGE, or controllerImage in a RenderSettings document)', clusters);
}

function imageNoteFor(setting: string, clusters: string[]): string {
  const shown = clusters.length > 5 ? `${clusters.slice(0, 5).join(', ')} and ${clusters.length - 5} more` : clusters.join(', ');
  const which = clusters.length === 1 ? `cluster ${clusters[0]}` : `clusters ${shown}`;
  return `note: ${which} will run the default controller image ${DEFAULT_CONTROLLER_IMAGE}; to run your own build, set ${setting}\n`;
}
