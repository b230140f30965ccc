package ldkref

// The messages to and from the bridge, one JSON object per line each way.
// docs/ldk-reference.md describes them; ldk/src/protocol.rs is the other
// side.

type graphMsg struct {
	Op       string       `json:"op"`
	NowS     int64        `json:"now_s"`
	Nodes    []string     `json:"nodes"`
	Channels []channelMsg `json:"channels"`
}

type gossipMsg struct {
	Op       string       `json:"op"`
	Channels []channelMsg `json:"channels"`
}

type channelMsg struct {
	SCID        uint64        `json:"scid"`
	Node1       int           `json:"node1"`
	Node2       int           `json:"node2"`
	CapacitySat int64         `json:"capacity_sat"`
	Policies    [2]*policyMsg `json:"policies"`
}

type policyMsg struct {
	Disabled    bool    `json:"disabled"`
	CltvDelta   uint16  `json:"cltv_delta"`
	HtlcMinMsat uint64  `json:"htlc_min_msat"`
	HtlcMaxMsat *uint64 `json:"htlc_max_msat"`
	FeeBaseMsat uint32  `json:"fee_base_msat"`
	FeePPM      uint32  `json:"fee_ppm"`
}

type payMsg struct {
	Op           string        `json:"op"`
	NowS         int64         `json:"now_s"`
	Height       uint32        `json:"height"`
	Source       int           `json:"source"`
	Target       int           `json:"target"`
	AmountMsat   uint64        `json:"amount_msat"`
	FeeLimitMsat uint64        `json:"fee_limit_msat"`
	MaxParts     uint32        `json:"max_parts"`
	CltvLimit    uint32        `json:"cltv_limit"`
	FinalCltv    uint16        `json:"final_cltv"`
	MPP          bool          `json:"mpp"`
	Seed         string        `json:"seed"`
	FirstHops    []firstHopMsg `json:"first_hops"`
}

type firstHopMsg struct {
	SCID         uint64 `json:"scid"`
	Peer         int    `json:"peer"`
	CapacitySat  int64  `json:"capacity_sat"`
	OutboundMsat uint64 `json:"outbound_msat"`
}

type routeMsg struct {
	Op         string `json:"op"`
	AmountMsat uint64 `json:"amount_msat"`
	NewRound   bool   `json:"new_round"`
}

type resultMsg struct {
	Op        string `json:"op"`
	ID        uint64 `json:"id"`
	NowS      int64  `json:"now_s"`
	Outcome   string `json:"outcome"`
	Code      uint16 `json:"code"`
	HasUpdate bool   `json:"has_update"`
	SourceIdx int    `json:"source_idx"`
}

type endMsg struct {
	Op      string `json:"op"`
	NowS    int64  `json:"now_s"`
	Success bool   `json:"success"`
}

// reply is the bridge's answer to any request.
type reply struct {
	Path    *pathMsg `json:"path"`
	NoRoute string   `json:"no_route"`
	Refused *int     `json:"refused"`
	Error   string   `json:"error"`
}

type pathMsg struct {
	ID   uint64   `json:"id"`
	Hops []hopMsg `json:"hops"`
}

type hopMsg struct {
	SCID      uint64 `json:"scid"`
	Node      int    `json:"node"`
	FeeMsat   uint64 `json:"fee_msat"`
	CltvDelta uint32 `json:"cltv_delta"`
}
