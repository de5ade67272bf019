package paradex

import (
	"encoding/json"
	"time"

	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/redis/go-redis/v9"
)

// RedisTokens is a TokenStore shared by connector replicas: every replica
// serving a credential reuses the one JWT Paradex issued for it, so a
// scaled-out connector does not authenticate once per replica. A token
// expires from Redis when it expires.
type RedisTokens struct{ c *venuekit.RedisCache }

// NewRedisTokens stores tokens under prefix in rdb.
func NewRedisTokens(rdb redis.UniversalClient, prefix string) *RedisTokens {
	return &RedisTokens{venuekit.NewRedisCache(rdb, prefix)}
}

type storedToken struct {
	JWT     string `json:"jwt"`
	Expires int64  `json:"expires"` // Unix ms
}

// Get implements TokenStore.
func (s *RedisTokens) Get(k string) (Token, bool) {
	raw, ok := s.c.Get(k)
	var st storedToken
	if !ok || json.Unmarshal(raw, &st) != nil || st.JWT == "" {
		return Token{}, false
	}
	return Token{JWT: st.JWT, Expires: time.UnixMilli(st.Expires)}, true
}

// Put implements TokenStore.
func (s *RedisTokens) Put(k string, t Token) {
	raw, _ := json.Marshal(storedToken{JWT: t.JWT, Expires: t.Expires.UnixMilli()})
	s.c.Set(k, raw, time.Until(t.Expires))
}

// Delete implements TokenStore.
func (s *RedisTokens) Delete(k string) { s.c.Delete(k) }
