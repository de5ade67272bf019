package edge

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/perpgate/perpgate/pkg/bus"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
)

// TestDirectoryLateFlightReadsTheCache: a caller that missed the cache
// just before another's look-up stored its answer starts its flight after
// that one ended; the flight answers from the cache instead of asking the
// keys service again (a cold CI run saw a burst on two edges cost three
// look-ups).
func TestDirectoryLateFlightReadsTheCache(t *testing.T) {
	nc := testenv.NATS(t)
	subjects := contract.NewSubjects(testenv.Prefix(t))
	var keyAsks, credAsks atomic.Int32
	answer := func(count *atomic.Int32, v any) nats.MsgHandler {
		return func(m *nats.Msg) {
			count.Add(1)
			b, _ := json.Marshal(v)
			_ = bus.Answer(nc, m.Reply, b)
		}
	}
	for subject, h := range map[string]nats.MsgHandler{
		subjects.KeyLookup():        answer(&keyAsks, contract.KeyInfo{ID: "key-1", Hash: "h"}),
		subjects.CredentialLookup(): answer(&credAsks, contract.CredentialInfo{ID: "cred-1"}),
	} {
		if _, err := nc.Subscribe(subject, h); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	d := newDirectory(nc, subjects, time.Minute, time.Now)
	ctx := context.Background()
	if k, err := d.key(ctx, "h"); err != nil || k.ID != "key-1" {
		t.Fatalf("key: %+v, %v", k, err)
	}
	if c, err := d.credential(ctx, "cred-1"); err != nil || c.ID != "cred-1" {
		t.Fatalf("credential: %+v, %v", c, err)
	}
	// The late caller's flight, as it runs once the first has ended.
	if k, err := d.lookupKey(ctx, "h"); err != nil || k.ID != "key-1" {
		t.Fatalf("late key flight: %+v, %v", k, err)
	}
	if c, err := d.lookupCredential(ctx, "cred-1"); err != nil || c.ID != "cred-1" {
		t.Fatalf("late credential flight: %+v, %v", c, err)
	}
	if keyAsks.Load() != 1 || credAsks.Load() != 1 {
		t.Fatalf("the keys service was asked %d times for the key and %d for the credential; want once each",
			keyAsks.Load(), credAsks.Load())
	}
}
