#!/usr/bin/env bash
# Makes the two images of the Dockerfile as an OCI image layout, without docker, a daemon or the
# network: from the root filesystem scripts/release/image-rootfs.sh assembles, with umoci (Debian: umoci).
#
#   scripts/release/oci-image.sh ROOTFS LAYOUT
#     ROOTFS  the output of scripts/release/image-rootfs.sh (made as root, so its owners are the images')
#     LAYOUT  the OCI layout to write (created; must not exist)
#
# Tags `controller` and `argocd-cmp` in LAYOUT, configured as the Dockerfile's stages of those names:
# one layer with the root filesystem, shared by both, under PATH=/usr/local/bin and NODE_ENV=production;
# the controller runs `tidb-gitops controller` as 65532, the plugin image adds plugin.yaml where Argo CD's
# CMP server reads it and runs as 999 with HOME=/tmp. Push them with skopeo:
#
#   skopeo copy oci:LAYOUT:controller docker://REGISTRY/tidb-gitops/tidb-gitops:<version>
#   skopeo copy oci:LAYOUT:argocd-cmp docker://REGISTRY/tidb-gitops/tidb-gitops:<version>-argocd-cmp
#
# The release workflow builds the same images from the Dockerfile with docker buildx, for two
# architectures; test/real/release.test.ts builds these, pushes them to a registry and runs them.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 ROOTFS LAYOUT" >&2; exit 2; }
rootfs=$1 layout=$2
[ -x "$rootfs/usr/local/bin/tidb-gitops" ] || { echo "oci-image: $rootfs is not an image root filesystem (scripts/release/image-rootfs.sh)" >&2; exit 1; }
[ ! -e "$layout" ] || { echo "oci-image: $layout exists" >&2; exit 1; }
command -v umoci >/dev/null || { echo "oci-image: umoci is needed (Debian: umoci)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A layer as docker's COPY makes it: paths relative to /, numeric owners as they are, in a fixed
# order, so the same root filesystem gives the same layer.
layer() {
  local dir=$1 out=$2
  shift 2
  (cd "$dir" && printf '%s\n' "$@" | tar --create --file "$out" --no-recursion --numeric-owner --verbatim-files-from --files-from -)
}
mapfile -t paths < <(cd "$rootfs" && find . -mindepth 1 | sed 's|^\./||' | LC_ALL=C sort)
layer "$rootfs" "$work/rootfs.tar" "${paths[@]}"

# Only the plugin file and the two folders COPY creates for it: /home/argocd is the root
# filesystem's, owned by 999, and stays so.
mkdir -p "$work/plugin/home/argocd/cmp-server/config"
install -m 0644 -o 0 -g 0 "$rootfs/app/argocd/plugin.yaml" "$work/plugin/home/argocd/cmp-server/config/plugin.yaml"
chmod 0755 "$work/plugin/home/argocd/cmp-server" "$work/plugin/home/argocd/cmp-server/config"
layer "$work/plugin" "$work/plugin.tar" home/argocd/cmp-server home/argocd/cmp-server/config home/argocd/cmp-server/config/plugin.yaml

umoci init --layout "$layout"
umoci new --image "$layout:runtime"
umoci raw add-layer --image "$layout:runtime" --history.created_by 'COPY --from=rootfs /rootfs /' "$work/rootfs.tar"
umoci config --image "$layout:runtime" --history.created_by 'ENV PATH=/usr/local/bin NODE_ENV=production' \
  --config.env PATH=/usr/local/bin --config.env NODE_ENV=production

umoci raw add-layer --image "$layout:runtime" --tag argocd-cmp \
  --history.created_by 'COPY argocd/plugin.yaml /home/argocd/cmp-server/config/plugin.yaml' "$work/plugin.tar"
umoci config --image "$layout:argocd-cmp" --history.created_by 'ENV HOME=/tmp; USER 999:999' \
  --config.env HOME=/tmp --config.user 999:999

umoci config --image "$layout:runtime" --tag controller --history.created_by 'USER 65532:65532; ENTRYPOINT ["tidb-gitops"]; CMD ["controller"]' \
  --config.user 65532:65532 --config.entrypoint tidb-gitops --config.cmd controller

umoci rm --image "$layout:runtime"
umoci gc --layout "$layout"
