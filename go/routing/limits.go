package routing

// MaxRouteHops is the longest route a payment may use: BOLT 4's 1,300-byte
// onion holds 20 hops of the classic 65-byte payload. (lnd bounds a route by
// the size of its payloads, which with TLV payloads comes to about the same;
// the sphinx package's NumMaxHops, 27, is only what the smallest payloads
// would allow.) The simulator refuses a longer route, the toolkit searches
// no further, and the scorer checks the same limit (score/invariants.py);
// docs/examples/limits.json carries it to the Python side's parity test.
const MaxRouteHops = 20
