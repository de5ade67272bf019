package connector_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/connectortest"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/shopspring/decimal"
)

// cancelVenue counts cancel-alls per market; every other method panics
// through the nil embedded interface.
type cancelVenue struct {
	connector.Adapter
	mu        sync.Mutex
	cancelled map[string]int
}

func (v *cancelVenue) Exchange() contract.Exchange { return contract.Paper }

func (v *cancelVenue) Markets(context.Context, connector.Credential) ([]connector.Market, error) {
	return []connector.Market{{Canonical: "BTC-USD-PERP", Native: "BTC", Base: "BTC", Quote: "USD", Multiplier: 1,
		TickSize: decimal.RequireFromString("0.1"), LotSize: decimal.RequireFromString("0.001")}}, nil
}

func (v *cancelVenue) CancelAllOrders(_ context.Context, _ connector.Credential, m connector.Market) (int, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.cancelled[m.Canonical]++
	return 1, nil
}

func (v *cancelVenue) count(market string) int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.cancelled[market]
}

// TestEmulatedDeadManSwitchFiresOnce: a switch armed through one of three
// replicas is seen by all of them and fires at its deadline exactly once.
func TestEmulatedDeadManSwitchFiresOnce(t *testing.T) {
	v := &cancelVenue{cancelled: map[string]int{}}
	opts := connectortest.Options{URL: testenv.EmbeddedNATS(t).ClientURL(), Subjects: contract.NewSubjects(testenv.Prefix(t)), Env: contract.Testnet}
	// The bucket exists (a switch was armed before), so every replica
	// watches it from its start.
	nc, err := nats.Connect(opts.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	if _, err := js.CreateKeyValue(context.Background(), jetstream.KeyValueConfig{Bucket: opts.Subjects.DeadManSwitches(), History: 1}); err != nil {
		t.Fatal(err)
	}
	replicas := []*connectortest.Replica{connectortest.Serve(t, v, opts), connectortest.Serve(t, v, opts), connectortest.Serve(t, v, opts)}
	p, _ := json.Marshal(contract.DeadManSwitchParams{TimeoutSeconds: 5, Market: "BTC"})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := replicas[1].Runtime.Handle(ctx, contract.ConnectorRequest{RequestID: "r", Operation: contract.OpSetDeadManSwitch,
		AccountID: "acct-1", Credential: contract.CredentialInfo{ID: "cred-1"}, Params: p})
	if err != nil {
		t.Fatal(err)
	}
	sw := res.(contract.DeadManSwitchResult)
	if sw.Mode != contract.DeadManEmulated || sw.Deadline < time.Now().Unix()+4 {
		t.Fatalf("setDeadManSwitch answered %+v", sw)
	}
	if v.count("BTC-USD-PERP") != 0 {
		t.Fatal("the switch fired before its deadline")
	}
	connectortest.Eventually(t, 10*time.Second, "the switch fires", func() bool { return v.count("BTC-USD-PERP") > 0 })
	time.Sleep(2 * time.Second) // the other replicas' timers have run out too
	if n := v.count("BTC-USD-PERP"); n != 1 {
		t.Fatalf("three replicas cancelled %d times, want once", n)
	}
}
