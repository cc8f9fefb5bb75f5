/**
 * What a test needs from outside `node_modules` (a server, a program, root), in one catalogue, and the
 * one way a suite says it needs them.
 *
 * ```ts
 * const mariadb = requires(MARIADB);
 * mariadb.describe('against MariaDB', () => { ... });
 * ```
 *
 * Where everything is there, `describe` and `test` are Jest's own. Where something is missing:
 * - outside CI the tests are skipped, and one skipped test, `needs …`, says what is missing and the
 *   command that installs it; `test/support/skip-reporter.js` prints that line at the end of the run;
 * - in CI (`CI=true`), where `scripts/test.sh` has installed everything, the same test fails instead:
 *   a missing server is a broken machine there, never a quiet skip.
 */
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { executable, findKubeAssets } from '../kube/assets';
import { findAzurite } from './azurite';
import { findFakeGcsServer } from './fake-gcs';
import { PROMETHEUS_BIN, PROMTOOL_BIN } from './prometheus';
import { VMAGENT_BIN } from './vmagent';

/** The README's test command: it installs every requirement below, then runs the tests. */
export const INSTALL_COMMAND = 'bash scripts/test.sh';

/** The title of the skipped test a suite leaves where something it needs is missing. */
export const NEEDS_PREFIX = 'needs ';

/** Something a suite needs, and why it is missing here. */
export interface Requirement {
  /** What it is, as a user names it: `MariaDB`, `a Kubernetes control plane`. */
  readonly name: string;
  /** Why it cannot be had here, with what installs it; `undefined` when it is there. */
  readonly missing: () => string | undefined;
}

/** The first executable called `name` on PATH. */
export function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && executable(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

/** `find`, asked once per test file and its answer kept. */
function once(find: () => string | undefined): () => string | undefined {
  let done = false;
  let answer: string | undefined;
  return () => {
    if (!done) [answer, done] = [find(), true];
    return answer;
  };
}

/** Programs a Debian package installs, at fixed paths or on PATH. */
function debian(name: string, pkg: string, programs: readonly string[]): Requirement {
  return {
    name,
    missing: once(() => {
      const absent = programs.filter((p) => (p.startsWith('/') ? !executable(p) : !onPath(p)));
      return absent.length ? `${absent.join(', ')} not found (Debian package ${pkg})` : undefined;
    }),
  };
}

/** Debian's MariaDB, the MySQL-protocol server the initializer's and the MySQL client's tests log in to. */
export const MARIADB = debian('MariaDB', 'mariadb-server', ['/usr/sbin/mariadbd', '/usr/bin/mariadb-install-db', '/usr/bin/mariadb']);
/** Debian's Prometheus and promtool. */
export const PROMETHEUS = debian('Prometheus', 'prometheus', [PROMETHEUS_BIN, PROMTOOL_BIN]);
/** VictoriaMetrics' vmagent, whose Kubernetes service discovery Debian keeps. */
export const VMAGENT = debian('vmagent', 'victoria-metrics', [VMAGENT_BIN]);
/** The Distribution registry, and umoci and skopeo that make and push the release's images. */
export const OCI_TOOLS = debian('the OCI image tools', 'docker-registry, umoci and skopeo', [
  '/usr/bin/docker-registry',
  'umoci',
  'skopeo',
]);
/** git, for the commands that read a revision. */
export const GIT = debian('git', 'git', ['git']);

/** The real Kubernetes control plane (`scripts/test-assets/kube-assets.sh` builds it from Go modules). */
export const KUBE_CONTROL_PLANE: Requirement = {
  name: 'a Kubernetes control plane',
  missing: once(() => {
    const lookup = findKubeAssets();
    return 'missing' in lookup ? `${lookup.missing} (\`bash scripts/test-assets/kube-assets.sh\` builds it)` : undefined;
  }),
};

/** fake-gcs-server, the Google Cloud Storage emulator (`scripts/test-assets/fake-gcs-server.sh` builds it from its Go module). */
export const FAKE_GCS_SERVER: Requirement = {
  name: 'fake-gcs-server',
  missing: once(() => {
    const found = findFakeGcsServer();
    return 'missing' in found ? found.missing : undefined;
  }),
};

/** Azurite, the Azure Storage emulator, from npm. */
export const AZURITE: Requirement = {
  name: 'Azurite',
  missing: once(() => {
    const found = findAzurite();
    return 'missing' in found ? found.missing : undefined;
  }),
};

/** kubectl: the control plane's own (test/kube/harness), else one on PATH. */
export const KUBECTL: Requirement = {
  name: 'kubectl',
  missing: once(() =>
    onPath('kubectl') ? undefined : 'kubectl not found (`bash scripts/test-assets/kube-assets.sh` builds it beside the control plane)',
  ),
};

/** Root and chroot, to run a command inside an image's root filesystem. */
export const CHROOT: Requirement = {
  name: 'root and chroot',
  missing: once(() => {
    if (process.getuid?.() !== 0) return 'not running as root';
    return chrootPath() ? undefined : 'chroot not found (Debian package coreutils)';
  }),
};

/** Where chroot is. */
export function chrootPath(): string | undefined {
  return ['/usr/sbin/chroot', '/usr/bin/chroot', '/sbin/chroot'].find((p) => existsSync(p));
}

/** Jest's `describe` and `test`, or skipping ones where a requirement is missing. */
export interface Gate {
  /** Whether everything required is there. */
  readonly ok: boolean;
  readonly describe: jest.Describe;
  readonly test: jest.It;
}

/**
 * Gates tests on what they need. Call it where the gated tests are declared (a file's top level or a
 * `describe`): the `needs …` test it leaves where something is missing belongs to that scope.
 */
export function requires(...needs: Requirement[]): Gate {
  const missing = needs.flatMap((n) => {
    const why = n.missing();
    return why === undefined ? [] : [`${n.name}: ${why}`];
  });
  if (missing.length === 0) return { ok: true, describe, test };
  const title = `${NEEDS_PREFIX}${missing.join('; ')}; \`${INSTALL_COMMAND}\` installs ${missing.length === 1 ? 'it' : 'them'}`;
  if (process.env.CI === 'true') {
    test(title, () => {
      throw new Error(`${title}, and CI runs after it: the machine is missing what the tests need`);
    });
  } else {
    test.skip(title, () => undefined);
  }
  return { ok: false, describe: describe.skip, test: test.skip };
}
