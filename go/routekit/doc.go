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
//   - Decompose: a flow split into paths (the oracle's decomposition too).
//
// Payment's methods, by the idea they serve (payment.go unless named):
//
//   - The payment's own state and limits: Request, Now, AttemptsLeft,
//     FeeBudget, FinalLock, Locked and Held (what its shards lock and hold
//     on a channel), RoundParts (router.go).
//   - What a channel likely carries: Prob, PriorProb; what the network can
//     carry: UpperBound (for sure), ExpectedBound (as believed),
//     CanComplete; whether to start or go on at all: WorthStarting,
//     LikelyFeasible (feasible.go).
//   - One route: Query (a search under the payment's limits and a cost),
//     ProbCost (lnd-like −ln P plus fees), Route (a path as lnd's route),
//     Best and LastTry (router.go).
//   - A round planned as a flow: Pieces (a channel's convex cost pieces),
//     PlanFlow (the min-cost flow split into routes).
//   - Handing routes out: Dispatch (booking), Send, WholeFirst, FirstBest
//     (router.go).
//   - Learning from outcomes: ReportAttempt (router.go: the whole of it),
//     Returned (booking), Passed and Failed (what the route showed),
//     LearnFailure, Diagnose, Blame, FailureWeights and Attribution
//     (router.go: how far a reported position is trusted), Finish (an
//     atomic payment's settle).
//
// It is trusted code compiled into every candidate: it reads nothing but
// the routing contract's SimNetworkView, the routes a router hands out and
// the results it is told, so it gives a candidate no data the candidate
// could not read itself. It keeps no package-level state.
package routekit
