package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/routesim-evolve/routesim/realnet"
)

// observedLine is one attempt over a two-hop line whose forwarder holds
// less than the shard: the rules must fail it at the forwarder, with lnd's
// code name and the update.
const observedLine = `{"height": 800000, "final_cltv_delta": 40,
 "routes": [{"total_time_lock": 800080, "total_amount_msat": 100101000,
  "source": "020100000000000000000000000000000000000000000000000000000000000000",
  "hops": [{"pub_key": "020200000000000000000000000000000000000000000000000000000000000000",
            "scid": "100x1x0", "amt_to_forward_msat": 100000000, "outgoing_time_lock": 800040},
           {"pub_key": "020300000000000000000000000000000000000000000000000000000000000000",
            "scid": "200x1x0", "amt_to_forward_msat": 100000000, "outgoing_time_lock": 800040}]}],
 "channels": [
  {"scid": "100x1x0", "nodes": ["020100000000000000000000000000000000000000000000000000000000000000",
                                "020200000000000000000000000000000000000000000000000000000000000000"],
   "capacity_sat": 2000944, "balance_sat": [1000000, 1000000], "reserve_sat": [20000, 20000],
   "funder": 0, "commit_fee_sat": 284, "fee_per_kw": 253, "dust_limit_sat": 354,
   "in_flight": [0, 0], "in_flight_msat": [0, 0], "max_htlcs": [483, 483],
   "policies": [null, {"fee_base_msat": 1000, "fee_rate_ppm": 1000, "cltv_delta": 40,
                       "htlc_min_msat": 1000, "htlc_max_msat": 500000000}]},
  {"scid": "200x1x0", "nodes": ["020300000000000000000000000000000000000000000000000000000000000000",
                                "020200000000000000000000000000000000000000000000000000000000000000"],
   "capacity_sat": 1050944, "balance_sat": [1000000, 50000], "reserve_sat": [20000, 20000],
   "funder": 1, "commit_fee_sat": 284, "fee_per_kw": 253, "dust_limit_sat": 354,
   "in_flight": [0, 0], "in_flight_msat": [0, 0], "max_htlcs": [483, 483],
   "policies": [null, {"fee_base_msat": 1000, "fee_rate_ppm": 1000, "cltv_delta": 40,
                       "htlc_min_msat": 1000, "htlc_max_msat": 500000000}]}],
 "offline": []}`

func TestRun(t *testing.T) {
	in := strings.ReplaceAll(observedLine, "\n", "") + "\n" + "not json\n"
	var out, stderr bytes.Buffer
	if code := run(nil, strings.NewReader(in), &out, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	dec := json.NewDecoder(&out)
	var first, second realnet.RoundPredicted
	if err := dec.Decode(&first); err != nil {
		t.Fatal(err)
	}
	if err := dec.Decode(&second); err != nil {
		t.Fatal(err)
	}
	want := realnet.Predicted{Outcome: "TEMPORARY_CHANNEL_FAILURE", FailureIndex: 1, HasUpdate: true}
	if len(first.Predictions) != 1 || first.Predictions[0] != want || first.Error != "" {
		t.Errorf("first line: got %+v, want %+v", first, want)
	}
	if !strings.HasPrefix(second.Error, "unreadable observation") {
		t.Errorf("second line: got %+v, want an unreadable observation", second)
	}
}

func TestUsage(t *testing.T) {
	var out, stderr bytes.Buffer
	if code := run([]string{"extra"}, strings.NewReader(""), &out, &stderr); code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
}
