# The tidb-gitops images: the CLI on PATH as `tidb-gitops`. The default (last) stage is the controller
# image: each cluster's `<cluster>-discovery` Deployment runs `tidb-gitops controller` from it; `render`
# works too (`docker run -i IMAGE render -`). The `argocd-cmp` stage is the Argo CD plugin sidecar.
#
#   docker build -t ghcr.io/tidb-gitops/tidb-gitops:$(node -p 'require("./package.json").version') .
#   docker build --target argocd-cmp -t ghcr.io/tidb-gitops/tidb-gitops:$(node -p 'require("./package.json").version')-argocd-cmp .

FROM node:20-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
# No scripts: `prepare` would build before the sources are here (the build runs below), and esbuild's
# JS API finds its binary through its platform package without its install script.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY imports ./imports
COPY src ./src
COPY bin ./bin
RUN npm run build && npm prune --omit=dev --ignore-scripts

# What both images share: the built CLI from the build stage, on PATH.
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/lib ./lib
COPY --from=build /src/bin ./bin
RUN ln -s /app/bin/tidb-gitops.js /usr/local/bin/tidb-gitops

# The Argo CD config-management plugin: a sidecar of argocd-repo-server whose command is Argo CD's own
# /var/run/argocd/argocd-cmp-server (see `tidb-gitops argocd install-patch`). That server reads the
# plugin's configuration from /home/argocd/cmp-server/config/plugin.yaml and runs
# `tidb-gitops argocd generate`; nothing is installed or downloaded when it renders.
FROM runtime AS argocd-cmp
# The package's argocd/ folder, for `tidb-gitops argocd install-patch` run from this image.
COPY argocd ./argocd
COPY argocd/plugin.yaml /home/argocd/cmp-server/config/plugin.yaml
# The root filesystem is read-only in the sidecar; HOME points at its /tmp emptyDir.
ENV HOME=/tmp
# 999: the user Argo CD's CMP server expects, the same as Argo CD's own images.
USER 999:999

# The controller image (the default target).
FROM runtime
# 65532: the user the rendered Deployment's securityContext expects (runAsNonRoot needs a numeric user).
USER 65532:65532
ENTRYPOINT ["tidb-gitops"]
CMD ["controller"]
