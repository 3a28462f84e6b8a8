/** Nodes of a balancer config parsed as plain TOML, for tests that read shipped files raw. */

/** A config's nodes: its top-level `[[nodes]]`, or every chain's `[[chains.nodes]]` in order. */
export function nodesOf<N>(config: {
  readonly nodes?: readonly N[];
  readonly chains?: readonly { readonly nodes?: readonly N[] }[];
}): N[] {
  return [...(config.nodes ?? (config.chains ?? []).flatMap((chain) => chain.nodes ?? []))];
}
