/**
 * The constructs of `tidb-gitops` extend cdk8s's and constructs' classes, which an app installs
 * beside it (peer dependencies, so that one copy is shared). Where they are missing, say so and what
 * loads without them, rather than Node's bare "Cannot find module".
 */
for (const peer of ['cdk8s', 'constructs']) {
  try {
    require.resolve(peer);
  } catch {
    throw new Error(
      `tidb-gitops: its cdk8s constructs need the packages cdk8s and constructs (npm install cdk8s constructs); ` +
        `to load and validate TidbClusters without them, require 'tidb-gitops/inputs'`,
    );
  }
}
