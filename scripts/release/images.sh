#!/usr/bin/env bash
# Builds the two images from the Dockerfile and checks them: size (at most 130 MB each), user, and
# the commands their Pods run. Needs docker (or buildah, which builds without a daemon) and access
# to Docker Hub for the pinned node base image.
#
#   scripts/release/images.sh [REPOSITORY]     default: ghcr.io/tidb-gitops/tidb-gitops
#
# Tags REPOSITORY:<version> (controller) and REPOSITORY:<version>-argocd-cmp (Argo CD plugin), with
# <version> from package.json; push them yourself (docker push / buildah push). The release
# workflow builds the same stages for linux/amd64 and linux/arm64 and signs them.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=${1:-ghcr.io/tidb-gitops/tidb-gitops}
version=$(node -p 'require("./package.json").version')
limit=130000000

if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
  build() { docker build --target "$1" -t "$2" .; }
  size() { docker image inspect -f '{{.Size}}' "$1"; }
  run() { local user=$1 image=$2; shift 2; docker run --rm -i --user "$user" --entrypoint tidb-gitops "$image" "$@"; }
elif command -v buildah >/dev/null 2>&1; then
  build() { buildah bud --storage-driver vfs --isolation chroot --target "$1" -t "$2" .; }
  size() { buildah --storage-driver vfs inspect --type image --format '{{.Size}}' "$1" 2>/dev/null || buildah --storage-driver vfs images --format '{{.Size}}' "$1"; }
  run() {
    local user=$1 image=$2; shift 2
    local c; c=$(buildah --storage-driver vfs from "$image")
    buildah --storage-driver vfs run --isolation chroot --user "$user" "$c" -- /usr/local/bin/tidb-gitops "$@"
    buildah --storage-driver vfs rm "$c" >/dev/null
  }
else
  echo "images.sh: needs docker (with a running daemon) or buildah" >&2
  exit 1
fi

controller="$repo:$version"
plugin="$repo:$version-argocd-cmp"
build controller "$controller"
build argocd-cmp "$plugin"

for image in "$controller" "$plugin"; do
  bytes=$(size "$image")
  echo "$image: $bytes bytes"
  if [ "${bytes//[^0-9]/}" -gt "$limit" ] 2>/dev/null; then
    echo "images.sh: $image is over $limit bytes" >&2
    exit 1
  fi
done

want=$(node bin/tidb-gitops.js render --controller-image x examples/basic/tidb-cluster.yaml)
got=$(run 65532:65532 "$controller" render --controller-image x - < examples/basic/tidb-cluster.yaml)
[ "$got" = "$want" ] || { echo "images.sh: the controller image renders differently from this checkout" >&2; exit 1; }
run 65532:65532 "$controller" controller --help >/dev/null
run 999:999 "$plugin" argocd install-patch >/dev/null
[ "$(run 65532:65532 "$controller" --version)" = "$version" ]
echo "images.sh: $controller and $plugin built and checked"
