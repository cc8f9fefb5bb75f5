#!/bin/sh
# Assembles the root filesystem of the tidb-gitops images: Node.js with its debug symbols stripped,
# exactly the shared libraries it loads (as ldd names them, at their paths, so any architecture
# works), the two CLI bundles with the license and notices, the Argo CD plugin files, a /tmp, and
# users for the two images (65532 for the controller, 999 for the Argo CD plugin). Nothing else: no
# shell, no package manager, no node_modules.
#
#   scripts/release/image-rootfs.sh NODE APP OUT
#     NODE  the node binary to ship (the Dockerfile passes the base image's /usr/local/bin/node)
#     APP   a directory holding lib/tidb-gitops.js, lib/tidb-gitops-controller.js, lib/tidb-gitops-status.js, lib/config-schemas/,
#           lib/THIRD-PARTY-NOTICES.txt, LICENSE and argocd/ (a built checkout)
#     OUT   the directory to fill (created; must not exist)
#
# The Dockerfile runs it in its build stage; test/scenarios/package/image.test.ts runs it on the same inputs outside a
# container and checks the result with chroot.
set -eu
[ $# -eq 3 ] || { echo "usage: $0 NODE APP OUT" >&2; exit 2; }
node=$1 app=$2 out=$3
[ ! -e "$out" ] || { echo "image-rootfs: $out exists" >&2; exit 1; }
for f in lib/tidb-gitops.js lib/tidb-gitops-controller.js lib/tidb-gitops-status.js lib/THIRD-PARTY-NOTICES.txt lib/config-schemas/pd.json lib/config-schemas/tikv.json lib/config-schemas/tidb.json LICENSE argocd/plugin.yaml argocd/health/statefulset.lua argocd/health/configmap.lua argocd/health/cronjob.lua; do
  [ -f "$app/$f" ] || { echo "image-rootfs: $app/$f is missing (run npm run build)" >&2; exit 1; }
done
command -v strip >/dev/null || { echo "image-rootfs: strip is needed (Debian: binutils)" >&2; exit 1; }

mkdir -p "$out/usr/local/bin" "$out/etc" "$out/tmp" "$out/app/lib" "$out/home/argocd" "$out/home/nonroot"
strip -o "$out/usr/local/bin/node" "$node"
chmod 755 "$out/usr/local/bin/node"
# A library node needs that this system lacks would make an image that cannot start: stop here.
if ldd "$node" | grep 'not found' >&2; then echo "image-rootfs: $node needs libraries this system lacks (above)" >&2; exit 1; fi
# "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)" and "/lib64/ld-linux-x86-64.so.2 (0x...)".
ldd "$node" | grep -o '/[^ ]*' | while read -r lib; do
  mkdir -p "$out$(dirname "$lib")"
  cp -L "$lib" "$out$lib"
done
chmod 1777 "$out/tmp"
printf '%s\n' 'root:x:0:0:root:/root:/sbin/nologin' 'argocd:x:999:999:argocd:/home/argocd:/sbin/nologin' \
  'nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin' > "$out/etc/passwd"
printf '%s\n' 'root:x:0:' 'argocd:x:999:' 'nonroot:x:65532:' > "$out/etc/group"
chown 999:999 "$out/home/argocd" 2>/dev/null || true
chown 65532:65532 "$out/home/nonroot" 2>/dev/null || true

cp "$app/lib/tidb-gitops.js" "$app/lib/tidb-gitops-controller.js" "$app/lib/tidb-gitops-status.js" "$app/lib/THIRD-PARTY-NOTICES.txt" "$out/app/lib/"
# The config keys of PD, TiKV and TiDB per release, which render checks a cluster's config against.
mkdir -p "$out/app/lib/config-schemas"
cp "$app"/lib/config-schemas/*.json "$out/app/lib/config-schemas/"
cp "$app/LICENSE" "$out/app/LICENSE"
# Node.js's own license, which covers what its binary bundles (V8, OpenSSL, ICU...): Node's release
# archives, and so its images, keep it next to bin/.
node_license=$(dirname "$node")/../LICENSE
if [ -f "$node_license" ]; then
  mkdir -p "$out/usr/local/share/doc/node"
  cp "$node_license" "$out/usr/local/share/doc/node/LICENSE"
else
  echo "image-rootfs: warning: no LICENSE next to $node's bin/; the image carries no Node.js license" >&2
fi
mkdir -p "$out/app/argocd/health"
cp "$app/argocd/plugin.yaml" "$out/app/argocd/plugin.yaml"
cp "$app/argocd/health/statefulset.lua" "$out/app/argocd/health/statefulset.lua"
cp "$app/argocd/health/configmap.lua" "$out/app/argocd/health/configmap.lua"
cp "$app/argocd/health/cronjob.lua" "$out/app/argocd/health/cronjob.lua"
# No /usr/bin/env in the image: the command names node by its path. The compile cache (as in
# bin/tidb-gitops.js) goes to /tmp where it is writable, as in the Argo CD plugin's sidecar.
printf '%s\n' '#!/usr/local/bin/node' "require('node:module').enableCompileCache?.();" "require('/app/lib/tidb-gitops.js').run();" > "$out/usr/local/bin/tidb-gitops"
chmod 755 "$out/usr/local/bin/tidb-gitops"
