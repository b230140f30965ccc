package sim

import (
	"hash/fnv"
	"math/rand/v2"
)

// Every random draw of a scenario comes from a named stream derived from the
// scenario's seed. A stream's draws do not depend on what the router does,
// so two routers run on one scenario see the same liquidity, gossip,
// background traffic and attribution draws (common random numbers).
const (
	streamLiquidity   = "liquidity"
	streamLocal       = "local-balances"
	streamGossip      = "stale-gossip"
	streamTraffic     = "traffic"
	streamAttribution = "attribution"
	streamPayment     = "payment"
	streamRules       = "rules"
	streamPeers       = "peers"
)

// newStream returns the RNG of one named stream, optionally keyed further
// (e.g. by payment and attempt index).
func newStream(seed uint64, name string, keys ...uint64) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	k := h.Sum64()
	for _, key := range keys {
		k = splitmix(k ^ splitmix(key))
	}
	return rand.New(rand.NewPCG(seed, k))
}

// splitmix is the SplitMix64 finaliser, used to spread keys over 64 bits.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
