#!/usr/bin/env bash
# The README's test command, and what CI runs (.ci/run): installs what the tests need on a fresh
# machine, then runs every suite with `npm test`.
#
# - Debian's packages: the servers and programs the tests start on loopback (MariaDB, Prometheus,
#   vmagent, the OCI registry and image tools, shellcheck, dash, openssl); their services stay stopped.
# - The Kubernetes control plane of the real-API suites, built from Go modules (scripts/test-assets/kube-assets.sh),
#   and the GCS emulator of the retention tests (scripts/test-assets/fake-gcs-server.sh).
# - Node.js 26 from the npm registry where the machine's Node is older than 24.
# - The project's npm dependencies (npm ci).
#
# Run it from anywhere; as root where Debian's packages are missing (it says what it cannot install).
set -euo pipefail
cd "$(dirname "$0")/.."

apt_install() {
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    # Packages' services stay stopped (the tests start their own servers on loopback): a policy that
    # denies every start, for the time of the install, where the machine has none of its own.
    local policy=""
    if [ ! -e /usr/sbin/policy-rc.d ]; then
      policy=/usr/sbin/policy-rc.d
      printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy"
    fi
    local rc=0
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@") >/dev/null || rc=$?
    if [ -n "$policy" ]; then rm -f "$policy"; fi
    return "$rc"
  else
    echo "test.sh: cannot install $* (no apt-get, or not root); the suites that need them will say so" >&2
    return 0
  fi
}

need=()
# shellcheck lints the rendered start scripts, under dash as their images run them.
command -v shellcheck >/dev/null 2>&1 || need+=(shellcheck)
command -v dash >/dev/null 2>&1 || need+=(dash)
# openssl makes the control plane's and MariaDB's certificates.
command -v openssl >/dev/null 2>&1 || need+=(openssl)
command -v git >/dev/null 2>&1 || need+=(git)
# MariaDB: the MySQL-protocol server the initializer's tests log in to.
[ -x /usr/sbin/mariadbd ] || need+=(mariadb-server)
# Prometheus and promtool (the published rules, the rendered PodMonitors' targets scraped), and
# VictoriaMetrics' vmagent, whose Kubernetes service discovery Debian keeps.
[ -x /usr/bin/promtool ] || need+=(prometheus)
[ -x /usr/bin/vmagent ] || need+=(victoria-metrics)
# The release test's images: umoci makes them as an OCI layout, skopeo pushes and pulls them, and the
# Distribution registry (started by the test) holds them.
command -v umoci >/dev/null 2>&1 || need+=(umoci)
command -v skopeo >/dev/null 2>&1 || need+=(skopeo)
[ -x /usr/bin/docker-registry ] || need+=(docker-registry)
if [ ${#need[@]} -gt 0 ]; then apt_install "${need[@]}"; fi

# kube-apiserver, kube-controller-manager, kubectl and etcd, built from Go modules into .kube-assets/.
bash scripts/test-assets/kube-assets.sh .kube-assets
export TIDB_GITOPS_KUBE_ASSETS="$PWD/.kube-assets"
# fake-gcs-server, the GCS emulator of the retention tests, built from its Go module into .test-assets/.
bash scripts/test-assets/fake-gcs-server.sh .test-assets
export TIDB_GITOPS_TEST_ASSETS="$PWD/.test-assets"

# A machine whose Node is past its end of life (before 24) gets Node 26, the active LTS, from the npm
# registry's node-linux-<arch> package; 24 and 26 (the CI matrix) run as they are.
if [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 24 ]; then
  if [ ! -x .node/package/bin/node ]; then
    arch="$(node -p process.arch)"
    rm -rf .node && mkdir -p .node
    (cd .node && npm pack --silent "node-linux-${arch}@26" >/dev/null && tar xzf node-linux-"${arch}"-*.tgz)
  fi
  export PATH="$PWD/.node/package/bin:$PATH"
fi
node --version
npm ci --no-audit --no-fund
npm test
