#!/usr/bin/env bash
# Fills a directory (default .kube-assets) with the binaries of the real-API test suite:
# kube-apiserver and kube-controller-manager unpacked from ../shared/kube, and a link to etcd
# (Debian's etcd-server package). Point TIDB_GITOPS_KUBE_ASSETS at it, or keep the default,
# which the suite finds by itself. Where ../shared/kube does not exist (a GitHub runner),
# TIDB_GITOPS_KUBE_DOWNLOAD=v1.32.13 fetches the same release of the two binaries from dl.k8s.io.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.kube-assets}
kit=${TIDB_GITOPS_KUBE_KIT:-../shared/kube}
mkdir -p "$out"
for b in kube-apiserver kube-controller-manager; do
  if [ ! -x "$out/$b" ] || [ "$kit/$b.xz" -nt "$out/$b" ]; then
    if [ -f "$kit/$b.xz" ]; then
      xz -dc "$kit/$b.xz" > "$out/$b.tmp"
    elif [ -n "${TIDB_GITOPS_KUBE_DOWNLOAD:-}" ]; then
      arch=$(uname -m | sed 's/x86_64/amd64/; s/aarch64/arm64/')
      curl -fsSL --retry 3 "https://dl.k8s.io/release/$TIDB_GITOPS_KUBE_DOWNLOAD/bin/linux/$arch/$b" -o "$out/$b.tmp"
    else
      echo "kube-assets: $kit/$b.xz not found (set TIDB_GITOPS_KUBE_DOWNLOAD=v1.32.13 to download it)" >&2
      exit 1
    fi
    chmod +x "$out/$b.tmp" && mv "$out/$b.tmp" "$out/$b"
  fi
done
if [ ! -x "$out/etcd" ]; then
  etcd=$(command -v etcd || true)
  [ -n "$etcd" ] || { echo "kube-assets: no etcd on PATH (Debian: apt-get install etcd-server)" >&2; exit 1; }
  ln -sf "$etcd" "$out/etcd"
fi
"$out/kube-apiserver" --version
