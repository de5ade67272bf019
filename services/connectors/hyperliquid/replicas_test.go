package hyperliquid_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/connectors/hyperliquid"
	"github.com/perpgate/perpgate/services/connectors/hyperliquid/sim"
	"github.com/redis/go-redis/v9"
	"github.com/shopspring/decimal"
)

// TestReplicasShareNonces runs two connector replicas (adapters with their
// own Redis connections, as two processes have) that sign for the same
// agent at the same time, on clocks stuck on the same millisecond. With the
// shared RedisNonces the venue accepts every action on first try: no
// nonce is used twice and none falls below the signer's kept set.
func TestReplicasShareNonces(t *testing.T) {
	rdb, prefix := testenv.RedisPrefix(t)
	frozen := time.Now().Truncate(time.Millisecond)
	clock := func() time.Time { return frozen }
	s, url := simVenue(t, sim.Config{Seed: 5, Now: clock})
	replica := func() *hyperliquid.Adapter {
		c := redis.NewClient(rdb.Options())
		t.Cleanup(func() { c.Close() })
		return hyperliquid.NewAdapter(hyperliquid.Config{URL: url}, nil, hyperliquid.WithClock(clock),
			hyperliquid.WithNonces(hyperliquid.NewRedisNonces(c, prefix+":hl:nonce:", clock)))
	}
	replicas := []*hyperliquid.Adapter{replica(), replica()}
	cred := credential("shared", accountA, agentKeyA)
	eth := market(t, replicas[0], cred, "ETH")
	market(t, replicas[1], cred, "ETH")

	// 16 actions in all: below the 20 nonces the venue keeps per signer, so
	// arrival order cannot push one under the kept set (with more in
	// flight, a late low nonce is refused and re-signed, which is right but
	// would make this count vary).
	const perReplica = 8
	var wg sync.WaitGroup
	errs := make(chan error, 2*perReplica)
	for r, a := range replicas {
		for i := range perReplica {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := a.PlaceLimitOrder(context.Background(), cred, connector.OrderRequest{Market: eth, Side: contract.Buy,
					Size: decimal.RequireFromString("0.01"), Price: decimal.NewFromInt(int64(2000 + i)), ClientOrderID: fmt.Sprintf("r%d-%d", r, i)})
				errs <- err
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("placement: %v", err)
		}
	}
	nonces := s.AcceptedNonces(agentOf(t, agentKeyA))
	if len(nonces) != 2*perReplica {
		t.Fatalf("venue accepted %d nonces, want %d", len(nonces), 2*perReplica)
	}
	if sent := s.ExchangeRequests(); sent != 2*perReplica {
		t.Fatalf("%d actions reached the venue, want %d: none refused for its nonce and re-signed", sent, 2*perReplica)
	}
}
