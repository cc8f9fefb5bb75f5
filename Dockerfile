# The tidb-gitops image: the CLI on PATH as `tidb-gitops`. Each cluster's `<cluster>-discovery`
# Deployment runs `tidb-gitops controller` from it; `render` works too (`docker run -i IMAGE render -`).
#
#   docker build -t ghcr.io/tidb-gitops/tidb-gitops:$(node -p 'require("./package.json").version') .

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

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/lib ./lib
COPY --from=build /src/bin ./bin
RUN ln -s /app/bin/tidb-gitops.js /usr/local/bin/tidb-gitops
# 65532: the user the rendered Deployment's securityContext expects (runAsNonRoot needs a numeric user).
USER 65532:65532
ENTRYPOINT ["tidb-gitops"]
CMD ["controller"]
