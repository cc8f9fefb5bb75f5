# The tidb-gitops images. The default (last) stage, `controller`, is the controller image: each
# cluster's `<cluster>-discovery` Deployment runs `tidb-gitops controller` from it, and `render` works
# too (`docker run -i IMAGE render -`). The `argocd-cmp` stage is the Argo CD plugin sidecar.
#
#   docker build -t ghcr.io/tidb-gitops/tidb-gitops:$(node -p 'require("./package.json").version') .
#   docker build --target argocd-cmp -t ghcr.io/tidb-gitops/tidb-gitops:$(node -p 'require("./package.json").version')-argocd-cmp .
#
# Both images are FROM scratch: Node.js 26, the active LTS with the longest support left (stripped of
# its debug symbols), the shared libraries it loads, the two CLI bundles, the plugin files, the
# licenses. No shell, no package manager, no node_modules. The build runs on node:24-bookworm-slim,
# pinned by digest (NODE_IMAGE overrides it); the Node.js the images ship is Node.js's own linux build
# as the npm registry publishes it (node-linux-<arch>), pinned by version and by the integrity of each
# architecture's package, and loads the build image's glibc.

ARG NODE_IMAGE=node:24-bookworm-slim@sha256:6f7b03f7c2c8e2e784dcf9295400527b9b1270fd37b7e9a7285cf83b6951452d

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# No scripts: esbuild's JS API finds its binary through its platform package without its install script.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json tsconfig.types.json LICENSE ./
COPY scripts ./scripts
COPY imports ./imports
COPY src ./src
COPY bin ./bin
COPY argocd ./argocd
RUN npm run build

# The root filesystem both images share (scripts/release/image-rootfs.sh says what goes in).
FROM ${NODE_IMAGE} AS rootfs
RUN apt-get update \
  && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends binutils libatomic1 \
  && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/lib /app/lib
COPY --from=build /src/argocd /app/argocd
COPY --from=build /src/LICENSE /app/LICENSE
COPY scripts/release/image-rootfs.sh /usr/local/sbin/image-rootfs
ARG TARGETARCH
ARG NODE_RUNTIME=26.12.1
ARG NODE_INTEGRITY_AMD64=sha512-jk5LMAmgHlPlPMWpsUrSOqNaEZG+11UNd35hWQ+p5/XGaelWuTqJ69IcAy/5xtPPN4d5ZRBNOGB6gLMCh2kL9A==
ARG NODE_INTEGRITY_ARM64=sha512-8Oxs6Y7rDcKufVIM/zYRSwytj46WOrZk7yFCLTKDcs17bBjAeD9HMAqo97hMfMyxozIud0S4vZCs5WB/3iavNQ==
WORKDIR /node
RUN case "${TARGETARCH:-amd64}" in \
      amd64) arch=x64 integrity="$NODE_INTEGRITY_AMD64" ;; \
      arm64) arch=arm64 integrity="$NODE_INTEGRITY_ARM64" ;; \
      *) echo "no Node.js package pinned for $TARGETARCH" >&2; exit 1 ;; \
    esac \
  && npm pack --silent "node-linux-$arch@$NODE_RUNTIME" >/dev/null \
  && got="sha512-$(node -e 'process.stdout.write(require("crypto").createHash("sha512").update(require("fs").readFileSync(process.argv[1])).digest("base64"))' node-linux-$arch-$NODE_RUNTIME.tgz)" \
  && if [ "$got" != "$integrity" ]; then echo "node-linux-$arch@$NODE_RUNTIME: integrity $got, pinned $integrity" >&2; exit 1; fi \
  && tar xzf "node-linux-$arch-$NODE_RUNTIME.tgz" \
  && image-rootfs /node/package/bin/node /app /rootfs

FROM scratch AS runtime
COPY --from=rootfs /rootfs /
ENV PATH=/usr/local/bin NODE_ENV=production

# The Argo CD config-management plugin: a sidecar of argocd-repo-server whose command is Argo CD's own
# /var/run/argocd/argocd-cmp-server (see `tidb-gitops argocd install-patch`). That server reads the
# plugin's configuration from /home/argocd/cmp-server/config/plugin.yaml and runs
# `tidb-gitops argocd generate` without a shell; nothing is installed or downloaded when it renders.
FROM runtime AS argocd-cmp
COPY argocd/plugin.yaml /home/argocd/cmp-server/config/plugin.yaml
# The root filesystem is read-only in the sidecar; HOME points at its /tmp emptyDir.
ENV HOME=/tmp
# 999: the user Argo CD's CMP server expects, the same as Argo CD's own images.
USER 999:999

# The controller image (the default target).
FROM runtime AS controller
# 65532: the user the rendered Deployment's securityContext expects (runAsNonRoot needs a numeric user).
USER 65532:65532
ENTRYPOINT ["tidb-gitops"]
CMD ["controller"]
