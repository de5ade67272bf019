package paradex

import (
	"context"
	"net/http"
	"testing"

	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/connectors/paradex/sim"
)

// TestRedisTokensSharedByReplicas: two adapters (two connector replicas)
// on one Redis authenticate once between them; the token expires from
// Redis with itself.
func TestRedisTokensSharedByReplicas(t *testing.T) {
	rdb, prefix := testenv.RedisPrefix(t)
	f := newFixture(t, sim.Config{})
	cfg := f.a.cfg
	cfg.Tokens = NewRedisTokens(rdb, prefix+"paradex:jwt:")
	one, two := NewAdapter(cfg, http.DefaultClient), NewAdapter(cfg, http.DefaultClient)
	for _, a := range []*Adapter{one, two, one, two} {
		if _, err := a.GetBalance(context.Background(), f.cred); err != nil {
			t.Fatal(err)
		}
	}
	if n := f.sim.TokensIssued(); n != 1 {
		t.Fatalf("%d tokens issued to two replicas, want 1", n)
	}
	keys, _ := rdb.Keys(context.Background(), prefix+"paradex:jwt:*").Result()
	if len(keys) != 1 {
		t.Fatalf("redis holds %v", keys)
	}
	raw, _ := rdb.Get(context.Background(), keys[0]).Result()
	if ttl := rdb.TTL(context.Background(), keys[0]).Val(); ttl <= 0 || raw == "" {
		t.Fatalf("stored token without expiry: ttl %v", ttl)
	}
}
