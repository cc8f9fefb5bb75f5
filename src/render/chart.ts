import { ApiObject, Chart } from 'cdk8s';
import type { Construct } from 'constructs';
import { refusedUnlessValid } from './checked';
import { resolveClusterProps, TidbCluster, type TidbClusterProps } from './cluster';
import type { ResolvedCluster } from '../tidbcluster/resolve';

/** A {@link TidbCluster}'s props: the chart holds that cluster alone. */
export type TidbClusterChartProps = TidbClusterProps;

/**
 * One TidbCluster as a chart of its own, written to a file of its own at `app.synth()`, as the CLI
 * renders it: a {@link TidbCluster} alone in a Chart. To render a cluster in a chart of one's own,
 * beside other objects, use {@link TidbCluster} there (a chart nested in a chart gets a second file).
 */
export class TidbClusterChart extends Chart {
  /** The cluster after defaults were applied. */
  readonly resolved: ResolvedCluster;
  /** The cluster's constructs, with handles to its objects. */
  readonly cluster: TidbCluster;

  constructor(scope: Construct, id: string, props: TidbClusterChartProps) {
    // Resolved before the chart joins its scope: a SpecError caught by the caller leaves no empty
    // chart behind for `app.synth()` to write.
    const resolved = resolveClusterProps(props, 'TidbClusterChart');
    super(scope, id, { disableResourceNameHashes: true });
    this.resolved = resolved;
    this.cluster = new TidbCluster(this, 'cluster', { resolved, ...(props.operations && { operations: props.operations }) });
  }

  /**
   * What `toJson` gives, for a chart that nothing was added to after construction (the CLI's): its
   * objects in construct order, each serialised once, checked once. cdk8s's synthesis would build a
   * dependency graph (there are no dependencies, so its order is the construct order), run every
   * construct's validation (serialising every object and checking them), then serialise again.
   * Throws `ApiRefusalError` listing every problem when the API server would refuse one.
   */
  objectsAsBuilt(): any[] {
    const made = this.node.findAll().filter((c): c is ApiObject => c instanceof ApiObject && Chart.of(c) === this);
    return refusedUnlessValid(
      made.map((c) => c.toJson()),
      this.resolved.kubeMinor,
      made.map((c) => c.node.path),
    );
  }
}
