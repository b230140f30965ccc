package scenario

import "strings"

// Arena labels a scenario with the behaviour it tests; the scenario's
// settings must switch that behaviour on (see Validate).
type Arena string

// The arenas, each with its row in arenaTable.
const (
	ArenaBase        Arena = "base"
	ArenaDrift       Arena = "drift"
	ArenaAtomicMPP   Arena = "atomic_mpp"
	ArenaAttribution Arena = "attribution"
)

// arenaSpec is one arena, all that validation knows of it.
type arenaSpec struct {
	name Arena
	// switches are the scenario fields (dotted JSON paths) of which one
	// positive value, or true, switches the arena on; none: always on.
	// Python's registry (routesim_evolve/corpus/arenas.py) lists the same,
	// compared through docs/examples/arenas.json (arenas_test.go).
	switches []string
	// needs is what the arena-off error says the scenario lacks.
	needs string
	// on reads the switches.
	on func(*Scenario) bool
}

// arenaTable is the arenas, once for Go, in the canonical order.
var arenaTable = []arenaSpec{
	{ArenaBase, nil, "", func(*Scenario) bool { return true }},
	{ArenaDrift, []string{"traffic.events_per_hour"}, "traffic.events_per_hour > 0",
		func(sc *Scenario) bool { return sc.Traffic.EventsPerHour > 0 }},
	{ArenaAtomicMPP, []string{"atomic_mpp"}, "atomic_mpp: true",
		func(sc *Scenario) bool { return sc.AtomicMPP }},
	{ArenaAttribution, []string{"attribution.stripped_rate", "attribution.shift_before_rate",
		"attribution.shift_after_rate"}, "a positive attribution rate",
		func(sc *Scenario) bool { return sc.Attribution.Enabled() }},
}

// arenaOf is the arena's row; false for a name not in the table.
func arenaOf(name Arena) (arenaSpec, bool) {
	for _, a := range arenaTable {
		if a.name == name {
			return a, true
		}
	}
	return arenaSpec{}, false
}

// arenaNames lists the arenas as the unknown-arena error does: "a, b or c".
func arenaNames() string {
	names := make([]string, len(arenaTable))
	for i, a := range arenaTable {
		names[i] = string(a.name)
	}
	last := len(names) - 1
	return strings.Join(names[:last], ", ") + " or " + names[last]
}
