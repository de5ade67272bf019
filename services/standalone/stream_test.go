package standalone

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestMarketDataFromStream: through the whole gateway, getMarkPrice on
// paper is answered from the stream view after the first read (the venue
// is not asked again), follows a mark the venue sets, and says when it was
// current; with PERPGATE_STREAM=off every read asks the venue.
func TestMarketDataFromStream(t *testing.T) {
	g := startGateway(t)
	read := func() map[string]any {
		return g.ok(map[string]any{"operation": "getMarkPrice", "market": "BTC-USD-PERP"})
	}
	rest := func() float64 {
		return testutil.ToFloat64(g.metrics.StreamReads.WithLabelValues("paper", contract.OpGetMarkPrice, "rest"))
	}
	read()
	testenv.Poll(t, "getMarkPrice answered without the paper venue", 5*time.Second, func() error {
		before := rest()
		read()
		if rest() != before {
			return errors.New("the read went to the venue")
		}
		return nil
	})
	before := rest()
	g.setMark("BTC-USD-PERP", "64321.5")
	testenv.Poll(t, "the set mark in the stream view", 2*time.Second, func() error {
		if m := read()["markPrice"]; m != "64321.5" {
			return fmt.Errorf("markPrice %v", m)
		}
		return nil
	})
	for range 50 {
		asOf, ok := read()["asOf"].(float64)
		if age := float64(time.Now().UnixMilli()) - asOf; !ok || age < 0 || age > 2000 {
			t.Fatalf("asOf %v is %v ms old", asOf, age)
		}
	}
	if rest() != before {
		t.Fatalf("%v reads went to the venue while the stream was fresh", rest()-before)
	}

	off := startGateway(t, func(c *Config) { c.Stream.Disabled = true })
	for range 3 {
		if r := off.ok(map[string]any{"operation": "getMarkPrice", "market": "BTC-USD-PERP"}); r["asOf"] == nil {
			t.Fatalf("a REST answer without asOf: %v", r)
		}
	}
	if n := testutil.ToFloat64(off.metrics.StreamReads.WithLabelValues("paper", contract.OpGetMarkPrice, "stream")); n != 0 {
		t.Fatalf("%v reads from a disabled stream", n)
	}
}

// TestStreamedFundingKeepsInterval: a funding read served from the stream
// view (whose frames carry no interval) keeps the interval a REST answer
// gave, and with it the hourly rate; so does the market list.
func TestStreamedFundingKeepsInterval(t *testing.T) {
	g := startGateway(t)
	for _, op := range []string{contract.OpGetFundingRate, contract.OpGetMarketsWithFunding} {
		read := func() map[string]any { return g.ok(map[string]any{"operation": op, "market": "BTC-USD-PERP"}) }
		if op == contract.OpGetMarketsWithFunding {
			read = func() map[string]any {
				for _, e := range objects(t, g.ok(map[string]any{"operation": op})["markets"]) {
					if e["symbol"] == "BTC-USD-PERP" {
						return e
					}
				}
				t.Fatal("no BTC-USD-PERP entry")
				return nil
			}
		}
		streamed := func() float64 {
			return testutil.ToFloat64(g.metrics.StreamReads.WithLabelValues("paper", op, "stream"))
		}
		read()
		testenv.Poll(t, op+" from the stream view", 5*time.Second, func() error {
			before := streamed()
			r := read()
			if streamed() == before {
				return errors.New("answered over REST")
			}
			if r["fundingIntervalHours"] != float64(8) || r["fundingRateHourly"] == nil {
				t.Fatalf("%s from the stream: %v", op, r)
			}
			return nil
		})
	}
}
