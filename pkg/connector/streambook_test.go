package connector

import (
	"strings"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
)

func TestBookFollows(t *testing.T) {
	b := newBook(BookUpdate{Snapshot: true, Seq: 10})
	for _, tt := range []struct {
		name string
		u    BookUpdate
		want bool
	}{
		{"no sequence numbers", BookUpdate{}, true},
		{"pu is the last u", BookUpdate{Prev: 10, First: 11, Seq: 12}, true},
		{"pu skips", BookUpdate{Prev: 9, First: 11, Seq: 12}, false},
		{"first continues", BookUpdate{First: 11, Seq: 11}, true},
		{"first leaves a hole", BookUpdate{First: 12, Seq: 12}, false},
		{"seq only, newer", BookUpdate{Seq: 11}, true},
		{"seq only, older", BookUpdate{Seq: 9}, false},
	} {
		if got := b.follows(tt.u); got != tt.want {
			t.Errorf("%s: follows = %v, want %v", tt.name, got, tt.want)
		}
	}
	// A REST snapshot may be overtaken by the first change (Binance: U <=
	// lastUpdateId+1 <= u), whose pu is then not the snapshot's id.
	r := newBook(BookUpdate{Snapshot: true, Seq: 10})
	r.fromREST = true
	if !r.follows(BookUpdate{Prev: 7, First: 8, Seq: 12}) {
		t.Error("the first change spanning a REST snapshot is refused")
	}
	r.apply(BookUpdate{Prev: 7, First: 8, Seq: 12})
	if r.fromREST || r.follows(BookUpdate{Prev: 11, First: 13, Seq: 14}) {
		t.Error("after the first change, pu must be the last u again")
	}
}

func TestBookPartDepth(t *testing.T) {
	lv := func(p, s int64) contract.Level { return lvl(p, s) }
	b := newBook(BookUpdate{Snapshot: true, Bids: []contract.Level{lv(99, 1), lv(98, 1), lv(97, 1)}, Asks: []contract.Level{lv(101, 1), lv(102, 1)}})
	b.apply(BookUpdate{Bids: []contract.Level{lv(98, 0), lv(100, 2)}, Asks: []contract.Level{lv(101, 3)}})
	p := b.part(2)
	if len(p.Bids) != 2 || !p.Bids[0][0].Equal(lv(100, 0)[0]) || !p.Bids[1][0].Equal(lv(99, 0)[0]) {
		t.Errorf("bids %v, want 100 then 99 (98 removed)", p.Bids)
	}
	if !p.Asks[0][1].Equal(lv(0, 3)[1]) {
		t.Errorf("best ask %v, want size 3", p.Asks[0])
	}
	if p.Depth != 2 {
		t.Errorf("a book deeper than the cap answers depth %d, want 2", p.Depth)
	}
	if whole := b.part(10); whole.Depth < 1000 {
		t.Errorf("a whole book shorter than the cap should answer any depth, says %d", whole.Depth)
	}
	capped := newBook(BookUpdate{Snapshot: true, Depth: 5, Bids: []contract.Level{lv(99, 1)}})
	if d := capped.part(100).Depth; d != 5 {
		t.Errorf("a venue-capped book (5 levels) answers depth %d, want 5", d)
	}
}

func TestLoadStreamConfig(t *testing.T) {
	env := map[string]string{"PERPGATE_STREAM": "off", "PERPGATE_STREAM_PRICE_STALE_MS": "1500",
		"PERPGATE_STREAM_BOOK_STALE_MS": "500", "PERPGATE_STREAM_IDLE_MS": "60000", "PERPGATE_STREAM_LEASE_TTL_MS": "2000"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	c, err := LoadStreamConfig(lookup)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Disabled || c.PriceStale != 1500*time.Millisecond || c.BookStale != 500*time.Millisecond ||
		c.Idle != time.Minute || c.LeaseTTL != 2*time.Second {
		t.Errorf("loaded %+v", c)
	}
	env = map[string]string{"PERPGATE_STREAM": "maybe", "PERPGATE_STREAM_BOOK_STALE_MS": "-1", "PERPGATE_STREAM_IDLE_MS": "soon"}
	if _, err := LoadStreamConfig(lookup); err == nil {
		t.Fatal("bad settings accepted")
	} else {
		for _, name := range []string{"PERPGATE_STREAM:", "PERPGATE_STREAM_BOOK_STALE_MS", "PERPGATE_STREAM_IDLE_MS"} {
			if !strings.Contains(err.Error(), name) {
				t.Errorf("error %q does not name %s", err, name)
			}
		}
	}
	d := StreamConfig{}.withDefaults()
	if d.PriceStale != 2*time.Second || d.BookStale != time.Second {
		t.Errorf("defaults %+v, want 2 s prices and 1 s books", d)
	}
}
