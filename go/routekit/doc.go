// Package routekit is the toolkit candidate routers may import: the
// machinery every strong router needs, so that a candidate's own file holds
// its strategy and nothing else.
//
//   - Graph: a snapshot of the gossip view, indexed once per scenario, with
//     each node's incoming channels (lnd's search walks backward from the
//     target) and the policies a failure's channel update refreshes.
//   - Searcher: Dijkstra from the target back to the source under a
//     pluggable edge cost, the fee budget, the cltv limit, a hop limit and
//     exclusions; its Path becomes a route in lnd's encoding (Graph.Route).
//   - MaxFlow: Dinic's max flow under any capacity per edge.
//   - MinCostFlow: a min-cost flow on convex piecewise-linear edge costs
//     (−ln of the success probability linearised, plus fees, after
//     Pickhardt and Richter and Core Lightning's askrene), decomposed into
//     at most MaxParts paths.
//   - Beliefs and Payment: what a router knows of each channel's balance
//     (sure bounds, soft bounds, a bimodal/uniform prior mix, optional decay
//     with virtual time) and what one payment's own shards lock (in flight
//     and held at the receiver).
//   - Settings: the assumptions beyond a strategy (prior, half-lives,
//     attribution, padding, a single route's hop cost and least
//     probability); DefaultSettings are the champion routers' values.
//   - What every router repeats: the best single route for a shard
//     (Payment.Best), handing a route out (Send), the whole rest first
//     (WholeFirst), halvings (Halvings, FirstBest), a router that plans a
//     round at a time (Planner) and how many parts a round may use while
//     attempts are kept for later rounds (Payment.RoundParts), and
//     learning from an attempt's outcome
//     (Payment.ReportAttempt, which a router embedding *Payment inherits).
//   - Decompose: a flow split into paths (also the oracle's).
//
// It is trusted code compiled into every candidate: it reads nothing but
// the routing contract's SimNetworkView, the routes a router hands out and
// the results it is told, so it gives a candidate no data the candidate
// could not read itself. It keeps no package-level state.
package routekit
