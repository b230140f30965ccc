// Package realnet serves a candidate router to a driver that plays its
// payments on real lnd nodes (routesim_evolve/realnet): the driver sends
// the real graph, each payment and each real attempt's result as JSON
// lines; the router answers with routes. The driver, not this package,
// talks to lnd, checks every route against its own copy of the payment and
// counts attempts and parts: a candidate's binary is untrusted, and nothing
// it says is taken for a result.
//
// The protocol is documented in docs/realnet.md ("The router protocol").
// One request per line on the input, one answer per line on the output:
//
//	{"begin": {...}}    a payment starts   → {"ok": true}
//	{"request": {...}}  a route, please    → {"route": {...}} | {"error": "..."}
//	{"report": {...}}   an attempt's result → {"ok": true} | {"error": "..."}
//	{"end": {...}}      the payment ended  → {"ok": true}
//
// A malformed line ends the session with an error answer and exit code 2.
package realnet
