package scenario

import (
	"encoding/hex"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// ParseSCID parses a short channel id written "block x tx x output", e.g.
// "700123x45x1", into lnd's integer encoding.
func ParseSCID(s string) (uint64, error) {
	parts := strings.Split(s, "x")
	if len(parts) != 3 {
		return 0, fmt.Errorf("want BLOCKxTXxOUTPUT, got %q", s)
	}
	limits := []uint64{1 << 24, 1 << 24, 1 << 16}
	var v [3]uint64
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 10, 64)
		if err != nil || n >= limits[i] {
			return 0, fmt.Errorf("want BLOCKxTXxOUTPUT, got %q", s)
		}
		v[i] = n
	}
	return v[0]<<40 | v[1]<<16 | v[2], nil
}

// FormatSCID writes a short channel id as "BLOCKxTXxOUTPUT".
func FormatSCID(id uint64) string {
	return fmt.Sprintf("%dx%dx%d", id>>40, (id>>16)&0xffffff, id&0xffff)
}

// ParseNodeID decodes a node id: a 33-byte public key in hex.
func ParseNodeID(s string) ([33]byte, error) {
	var v [33]byte
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 33 {
		return v, fmt.Errorf("want 66 hex characters (33-byte public key), got %q", s)
	}
	copy(v[:], b)
	return v, nil
}

// Validate checks the graph's internal consistency.
func (g *Graph) Validate() error {
	errf := func(field, rule, format string, args ...any) error {
		return &FieldError{g.Path, field, rule, fmt.Sprintf(format, args...)}
	}
	if len(g.Nodes) == 0 {
		return errf("nodes", RuleMissing, "graph has no nodes")
	}
	known := make(map[string]bool, len(g.Nodes))
	for i, n := range g.Nodes {
		field := fmt.Sprintf("nodes[%d].id", i)
		if _, err := ParseNodeID(n.ID); err != nil {
			return errf(field, RuleNodeID, "%v", err)
		}
		if known[n.ID] {
			return errf(field, RuleDuplicate, "duplicate node %s: list each node once", n.ID)
		}
		known[n.ID] = true
	}
	seen := make(map[uint64]bool, len(g.Channels))
	for i, c := range g.Channels {
		at := fmt.Sprintf("channels[%d]", i)
		id, err := ParseSCID(c.SCID)
		if err != nil {
			return errf(at+".scid", RuleSCID, "%v", err)
		}
		if seen[id] {
			return errf(at+".scid", RuleDuplicate, "duplicate channel %s: each short channel id names one channel", c.SCID)
		}
		seen[id] = true
		for _, end := range []struct{ field, id string }{
			{".node1", c.Node1}, {".node2", c.Node2},
		} {
			if !known[end.id] {
				return errf(at+end.field, RuleUnknownNode, "unknown node %q: list it in nodes", end.id)
			}
		}
		if c.Node1 == c.Node2 {
			return errf(at+".node2", RuleSelfChannel, "channel connects %s to itself", c.Node1)
		}
		if c.CapacitySat <= 0 {
			return errf(at+".capacity_sat", RuleRange, "capacity must be positive, got %d", c.CapacitySat)
		}
		for _, p := range []struct {
			field string
			pol   *Policy
		}{{".policy1", c.Policy1}, {".policy2", c.Policy2}} {
			if p.pol == nil {
				continue
			}
			capMsat := uint64(c.CapacitySat) * 1000
			if p.pol.HtlcMaxMsat != nil && *p.pol.HtlcMaxMsat > capMsat {
				return errf(at+p.field+".htlc_max_msat", RuleCapacity,
					"%d exceeds the capacity (%d msat)", *p.pol.HtlcMaxMsat, capMsat)
			}
			if p.pol.HtlcMaxMsat != nil && *p.pol.HtlcMaxMsat < p.pol.HtlcMinMsat {
				return errf(at+p.field+".htlc_max_msat", RuleHTLCRange,
					"%d is below htlc_min_msat %d", *p.pol.HtlcMaxMsat, p.pol.HtlcMinMsat)
			}
		}
	}
	return nil
}

// numberRange is the range a number field must lie in, and how an error
// message says so.
type numberRange struct {
	min, max float64
	want     string
}

var (
	// share is the range of shares and rates: fractions of a whole.
	share = numberRange{0, 1, "must lie in [0, 1]"}

	// nonNegative is the range of durations, frequencies and fee limits.
	nonNegative = numberRange{0, math.Inf(1), "must not be negative"}
)

// Validate checks the scenario against itself and its graph.
func (sc *Scenario) Validate() error {
	errf := func(field, rule, format string, args ...any) error {
		return &FieldError{sc.Path, field, rule, fmt.Sprintf(format, args...)}
	}
	if sc.Name == "" {
		return errf("name", RuleMissing, "missing scenario name")
	}
	if err := sc.validateArena(); err != nil {
		return err
	}
	// First every number with a range of its own, then the checks that
	// relate one field to another.
	for _, n := range []struct {
		field string
		v     float64
		in    numberRange
	}{
		{"liquidity.uniform_share", sc.Liquidity.UniformShare, share},
		{"gossip.stale_share", sc.Gossip.StaleShare, share},
		{"attribution.stripped_rate", sc.Attribution.StrippedRate, share},
		{"attribution.shift_before_rate", sc.Attribution.ShiftBeforeRate, share},
		{"attribution.shift_after_rate", sc.Attribution.ShiftAfterRate, share},
		{"clock.payment_interval_s", sc.Clock.PaymentIntervalSec, nonNegative},
		{"clock.attempt_latency_s", sc.Clock.AttemptLatencySec, nonNegative},
		{"traffic.events_per_hour", sc.Traffic.EventsPerHour, nonNegative},
		{"defaults.fee_limit_ppm", sc.Defaults.FeeLimitPPM, nonNegative},
	} {
		if n.v < n.in.min || n.v > n.in.max {
			return errf(n.field, RuleRange, "%s, got %v", n.in.want, n.v)
		}
	}
	a := sc.Attribution
	if sum := a.StrippedRate + a.ShiftBeforeRate + a.ShiftAfterRate; sum > 1 {
		return errf("attribution", RuleRateSum, "rates add up to %v, more than 1", sum)
	}
	if sc.Liquidity.BimodalScaleSat <= 0 {
		return errf("liquidity.bimodal_scale_sat", RuleRange, "must be positive, got %v", sc.Liquidity.BimodalScaleSat)
	}
	if sc.Gossip.StaleShare > 0 && sc.Gossip.StaleFeeRateFactor < 1 {
		return errf("gossip.stale_fee_rate_factor", RuleRange, "must be at least 1 when stale_share > 0, got %v", sc.Gossip.StaleFeeRateFactor)
	}
	if sc.Traffic.EventsPerHour > 0 && sc.Traffic.MedianShiftSat <= 0 {
		return errf("traffic.median_shift_sat", RuleRange, "must be positive when traffic is on, got %v", sc.Traffic.MedianShiftSat)
	}
	if sc.StartTime.IsZero() {
		return errf("start_time", RuleMissing, "missing start time (RFC 3339, e.g. \"2026-01-01T00:00:00Z\")")
	}
	if err := sc.validateDefaults(); err != nil {
		return err
	}
	if err := sc.validateRules(); err != nil {
		return err
	}
	if err := sc.validateSource(); err != nil {
		return err
	}
	return sc.validatePayments()
}

func (sc *Scenario) validateArena() error {
	arena, ok := arenaOf(sc.Arena)
	switch {
	case !ok:
		return &FieldError{sc.Path, "arena", RuleArenaUnknown, fmt.Sprintf(
			"unknown arena %q (want %s)", sc.Arena, arenaNames())}
	case !arena.on(sc):
		return &FieldError{sc.Path, "arena", RuleArenaOff, fmt.Sprintf(
			"arena %q needs %s", sc.Arena, arena.needs)}
	}
	return nil
}

func (sc *Scenario) validateDefaults() error {
	d := sc.Defaults
	switch {
	case d.MaxParts < 1:
		return &FieldError{sc.Path, "defaults.max_parts", RuleRange, "must be at least 1"}
	case d.MaxAttempts < 1:
		return &FieldError{sc.Path, "defaults.max_attempts", RuleRange, "must be at least 1"}
	case d.FinalCLTVDelta < 1:
		return &FieldError{sc.Path, "defaults.final_cltv_delta", RuleRange, "must be at least 1"}
	case d.CltvLimitDelta <= uint32(d.FinalCLTVDelta):
		return &FieldError{sc.Path, "defaults.cltv_limit_delta", RuleRange, fmt.Sprintf(
			"must exceed final_cltv_delta (%d), got %d", d.FinalCLTVDelta, d.CltvLimitDelta)}
	}
	return nil
}

// validateRules checks the rules block, when there is one.
func (sc *Scenario) validateRules() error {
	r := sc.Rules
	if r == nil {
		return nil
	}
	s := r.HTLCSlots
	for _, n := range []struct {
		field string
		v     float64
	}{
		{"rules.reserve_share", r.ReserveShare},
		{"rules.htlc_slots.small_share", s.SmallShare},
		{"rules.htlc_slots.busy_share", s.BusyShare},
		{"rules.peers.flaky_share", r.Peers.FlakyShare},
	} {
		if n.v < share.min || n.v > share.max {
			return &FieldError{sc.Path, n.field, RuleRange, fmt.Sprintf("%s, got %v", share.want, n.v)}
		}
	}
	for _, n := range []struct {
		field string
		v     uint16
	}{
		{"rules.htlc_slots.large_limit", s.LargeLimit},
		{"rules.htlc_slots.small_limit", s.SmallLimit},
	} {
		if n.v > MaxAcceptedHTLCs {
			return &FieldError{sc.Path, n.field, RuleRange, fmt.Sprintf(
				"must be at most %d (BOLT 02's max_accepted_htlcs), got %d", MaxAcceptedHTLCs, n.v)}
		}
	}
	if (s.LargeLimit == 0) != (s.SmallLimit == 0) {
		return &FieldError{sc.Path, "rules.htlc_slots", RuleRange,
			"large_limit and small_limit are both 0 (no slot limit) or both positive"}
	}
	if p := r.Peers; p.FlakyShare > 0 && (p.OnlineMeanSec <= 0 || p.OfflineMeanSec <= 0) {
		return &FieldError{sc.Path, "rules.peers", RuleRange, fmt.Sprintf(
			"online_mean_s and offline_mean_s must be positive when flaky_share > 0, got %v and %v",
			p.OnlineMeanSec, p.OfflineMeanSec)}
	}
	if s.BusyHTLCsMin > s.BusyHTLCsMax {
		return &FieldError{sc.Path, "rules.htlc_slots.busy_htlcs_min", RuleRange, fmt.Sprintf(
			"must not exceed busy_htlcs_max (%d), got %d", s.BusyHTLCsMax, s.BusyHTLCsMin)}
	}
	return nil
}

func (sc *Scenario) validateSource() error {
	if _, err := ParseNodeID(sc.Source); err != nil {
		return &FieldError{sc.Path, "source", RuleNodeID, err.Error()}
	}
	local := make(map[string]int64)
	for _, c := range sc.Graph.Channels {
		if c.Node1 == sc.Source || c.Node2 == sc.Source {
			local[c.SCID] = c.CapacitySat
		}
	}
	if len(local) == 0 {
		return &FieldError{sc.Path, "source", RuleNoChannel, fmt.Sprintf(
			"node %s has no channel in %s: the sender needs one", sc.Source, sc.Graph.Path)}
	}
	for scid, bal := range sc.Local {
		field := fmt.Sprintf("local_balances_msat[%q]", scid)
		capSat, ok := local[scid]
		if !ok {
			return &FieldError{sc.Path, field, RuleNotOwn, "not a channel of the source"}
		}
		if bal > uint64(capSat)*1000 {
			return &FieldError{sc.Path, field, RuleCapacity, fmt.Sprintf(
				"%d msat exceeds the capacity %d sat", bal, capSat)}
		}
	}
	return sc.validateSenderPolicies(local)
}

// validateSenderPolicies checks that every channel of the sender has a
// usable outgoing policy, from the graph or from sender_policies, and that
// sender_policies names only the sender's channels, with enabled policies.
func (sc *Scenario) validateSenderPolicies(local map[string]int64) error {
	for _, scid := range sortedKeys(sc.SenderPolicies) {
		p := sc.SenderPolicies[scid]
		field := fmt.Sprintf("sender_policies[%q]", scid)
		capSat, ok := local[scid]
		switch {
		case !ok:
			return &FieldError{sc.Path, field, RuleNotOwn, "not a channel of the source"}
		case p.Disabled:
			return &FieldError{sc.Path, field + ".disabled", RulePolicy, "the sender's own policy must be enabled"}
		case p.HtlcMaxMsat != nil && *p.HtlcMaxMsat > uint64(capSat)*1000:
			return &FieldError{sc.Path, field + ".htlc_max_msat", RuleCapacity, fmt.Sprintf(
				"%d msat exceeds the capacity %d sat", *p.HtlcMaxMsat, capSat)}
		case p.HtlcMaxMsat != nil && *p.HtlcMaxMsat < p.HtlcMinMsat:
			return &FieldError{sc.Path, field + ".htlc_max_msat", RuleHTLCRange, fmt.Sprintf(
				"%d is below htlc_min_msat %d", *p.HtlcMaxMsat, p.HtlcMinMsat)}
		}
	}
	for _, c := range sc.Graph.Channels {
		own := c.Policy1
		if c.Node2 == sc.Source {
			own = c.Policy2
		} else if c.Node1 != sc.Source {
			continue
		}
		if _, set := sc.SenderPolicies[c.SCID]; !set && (own == nil || own.Disabled) {
			return &FieldError{sc.Path, fmt.Sprintf("sender_policies[%q]", c.SCID), RulePolicy,
				"the sender's channel has no enabled policy in the graph, so the scenario must " +
					"give one (the generator writes lnd's defaults)"}
		}
	}
	return nil
}

// sortedKeys returns m's keys in order, so that the first problem reported
// is the same on every run.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (sc *Scenario) validatePayments() error {
	if len(sc.Payments) == 0 {
		return &FieldError{sc.Path, "payments", RuleMissing, "scenario has no payments"}
	}
	known := make(map[string]bool, len(sc.Graph.Nodes))
	for _, n := range sc.Graph.Nodes {
		known[n.ID] = true
	}
	for i, p := range sc.Payments {
		at := fmt.Sprintf("payments[%d]", i)
		switch {
		case !known[p.Target]:
			return &FieldError{sc.Path, at + ".target", RuleUnknownNode, fmt.Sprintf("unknown node %q: not in the graph", p.Target)}
		case p.Target == sc.Source:
			return &FieldError{sc.Path, at + ".target", RuleSelfPayment, "payment to the source itself"}
		case p.AmountMsat == 0:
			return &FieldError{sc.Path, at + ".amount_msat", RuleRange, "must be positive"}
		case p.MaxAttempts < 0:
			return &FieldError{sc.Path, at + ".max_attempts", RuleRange, "must not be negative (0 takes defaults.max_attempts)"}
		case sc.AtomicMPP && float64(p.Attempts(sc.Defaults))*sc.Clock.AttemptLatencySec > MPPTimeoutSec:
			field := at + ".max_attempts"
			if p.MaxAttempts == 0 {
				field = "defaults.max_attempts"
			}
			return &FieldError{sc.Path, field, RuleRange, fmt.Sprintf(
				"%d rounds of clock.attempt_latency_s (%v s) could hold shards past lnd's MPP timeout "+
					"of %d s, which the simulator does not play: lower either",
				p.Attempts(sc.Defaults), sc.Clock.AttemptLatencySec, MPPTimeoutSec)}
		}
	}
	return nil
}
