#!/usr/bin/env bash
# Builds fake-gcs-server, the Google Cloud Storage emulator the retention tests start on loopback,
# from its Go module at the version below, into a directory (default .test-assets, where the tests
# look by themselves; TIDB_GITOPS_TEST_ASSETS names another). It builds only when the binary is
# missing or was built from another version or Go release.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-.test-assets}
module=github.com/fsouza/fake-gcs-server
version=v1.56.1
command -v go >/dev/null 2>&1 || { echo "fake-gcs-server: go is not on PATH (Go builds the GCS emulator)" >&2; exit 1; }
stamp="$module@$version $(go env GOVERSION)"
if [ ! -x "$out/fake-gcs-server" ] || [ "$(cat "$out/.fake-gcs-server" 2>/dev/null)" != "$stamp" ]; then
  mkdir -p "$out"
  echo "fake-gcs-server: building $module@$version into $out" >&2
  start=$(date +%s)
  GOBIN="$PWD/$out" go install -trimpath -ldflags="-s -w" "$module@$version"
  echo "$stamp" >"$out/.fake-gcs-server"
  echo "fake-gcs-server: built in $(($(date +%s) - start)) s" >&2
fi
