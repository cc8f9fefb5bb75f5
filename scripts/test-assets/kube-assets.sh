#!/usr/bin/env bash
# Builds the Kubernetes control plane the real-API suites start on loopback, from Go modules: the
# program in test/kube/harness runs kube-apiserver, kube-controller-manager and kubectl of the
# k8s.io/kubernetes release its go.mod requires, and etcd of the release that Kubernetes is built
# against. One binary, kube-harness, in a directory (default .kube-assets, where the suites look by
# themselves; TIDB_GITOPS_KUBE_ASSETS names another), with links to it named kube-apiserver,
# kube-controller-manager, kubectl and etcd.
#
# It builds only when the binary is missing or the harness's sources (go.mod, go.sum, *.go) or the
# Go release changed; Go's module and build caches make a rebuild after a change fast.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-.kube-assets}
src=test/kube/harness
command -v go >/dev/null 2>&1 || { echo "kube-assets: go is not on PATH (Go 1.26 or newer builds the control plane)" >&2; exit 1; }
release=$(cd "$src" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
[ -n "$release" ] || { echo "kube-assets: $src/go.mod names no k8s.io/kubernetes release" >&2; exit 1; }
stamp="$(cat "$src/go.mod" "$src/go.sum" "$src"/*.go | sha256sum | cut -c1-16) $(go env GOVERSION)"
if [ ! -x "$out/kube-harness" ] || [ "$(cat "$out/.source" 2>/dev/null)" != "$stamp" ]; then
  mkdir -p "$out"
  echo "kube-assets: building Kubernetes $release into $out (the first build takes a while)" >&2
  start=$(date +%s)
  # The version the servers report (/version, kubectl version), as Kubernetes' own build stamps it.
  minor=${release#v1.}; minor=${minor%%.*}
  ldflags="-s -w"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $pkg.gitVersion=$release -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
  done
  (cd "$src" && go build -trimpath -ldflags="$ldflags" -o "$OLDPWD/$out/kube-harness.tmp" .)
  mv -f "$out/kube-harness.tmp" "$out/kube-harness"
  echo "$stamp" >"$out/.source"
  echo "kube-assets: built in $(($(date +%s) - start)) s" >&2
fi
for b in kube-apiserver kube-controller-manager kubectl etcd; do ln -sfn kube-harness "$out/$b"; done
"$out/kube-harness" version
