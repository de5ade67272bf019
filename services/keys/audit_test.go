package keys_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/keys"
)

// TestAuditEntriesWaitForTheKeysService: entries an edge publishes while
// no keys service runs stay in the stream and are stored once one starts;
// a PENDING entry arriving after its outcome does not replace it.
func TestAuditEntriesWaitForTheKeysService(t *testing.T) {
	srv := testenv.EmbeddedNATS(t)
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	cfg := testConfig()
	cfg.SubjectPrefix = testenv.Prefix(t)
	subjects := contract.NewSubjects(cfg.SubjectPrefix)

	first := newFixture(t, cfg, nc)
	if err := first.svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	acct := first.account(t, contract.TierPro)
	if err := first.svc.Close(); err != nil {
		t.Fatal(err)
	}

	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	// The service's clock, not the wall clock: retention drops entries
	// older than 90 days by it, and the fixtures' clock stands in 2030.
	at := newClock().Now().Truncate(time.Millisecond)
	final := contract.AuditEntry{Time: at, RequestID: "r-1", AccountID: acct.ID, KeyID: "k", KeyDisplay: "mt_test_abcd",
		Operation: contract.OpPlaceLimitOrder, Code: "OK", OrderIDs: []string{"42"}, Via: "v1"}
	pending := final
	pending.Code, pending.OrderIDs = contract.AuditPending, nil
	for _, e := range []contract.AuditEntry{final, pending} {
		data, _ := json.Marshal(e)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := js.Publish(ctx, subjects.Audit(), data)
		cancel()
		if err != nil {
			t.Fatalf("publish with no keys service running: %v", err)
		}
	}

	second := newFixtureOn(t, cfg, nc, first.store, first.dir)
	if err := second.svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		page, err := second.svc.AuditLog(context.Background(), acct.ID, time.Time{}, time.Time{}, 10, "", false)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Entries) == 1 && page.Entries[0].Code == "OK" {
			if page.Entries[0].OrderIDs[0] != "42" {
				t.Fatalf("stored entry %+v", page.Entries[0])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("audit log = %+v, want the final entry of r-1", page.Entries)
		}
		time.Sleep(20 * time.Millisecond)
	}
	info, err := js.Stream(context.Background(), keys.AuditStreamConfig(subjects, 1).Name)
	if err != nil {
		t.Fatal(err)
	}
	checkEmpty := time.Now().Add(2 * time.Second)
	for {
		st, err := info.Info(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if st.State.Msgs == 0 {
			break
		}
		if time.Now().After(checkEmpty) {
			t.Fatalf("%d entries left in the stream after they were stored", st.State.Msgs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
