package paradex

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisTokens is a TokenStore shared by connector replicas: every replica
// serving a credential reuses the one JWT Paradex issued for it, so a
// scaled-out connector does not authenticate once per replica. Keys are a
// hash of the cache key; a token expires from Redis when it expires.
type RedisTokens struct {
	rdb    redis.UniversalClient
	prefix string
}

// redisTimeout bounds one token read or write; a slow Redis means a miss
// (the replica authenticates itself), never a stalled request.
const redisTimeout = 300 * time.Millisecond

// NewRedisTokens stores tokens under prefix in rdb.
func NewRedisTokens(rdb redis.UniversalClient, prefix string) *RedisTokens {
	return &RedisTokens{rdb: rdb, prefix: prefix}
}

type storedToken struct {
	JWT     string `json:"jwt"`
	Expires int64  `json:"expires"` // Unix ms
}

func (s *RedisTokens) key(k string) string {
	sum := sha256.Sum256([]byte(k))
	return s.prefix + hex.EncodeToString(sum[:])
}

// Get implements TokenStore.
func (s *RedisTokens) Get(k string) (Token, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), redisTimeout)
	defer cancel()
	raw, err := s.rdb.Get(ctx, s.key(k)).Bytes()
	if err != nil {
		return Token{}, false
	}
	var st storedToken
	if json.Unmarshal(raw, &st) != nil || st.JWT == "" {
		return Token{}, false
	}
	return Token{JWT: st.JWT, Expires: time.UnixMilli(st.Expires)}, true
}

// Put implements TokenStore.
func (s *RedisTokens) Put(k string, t Token) {
	ttl := time.Until(t.Expires)
	if ttl <= 0 {
		return
	}
	raw, _ := json.Marshal(storedToken{JWT: t.JWT, Expires: t.Expires.UnixMilli()})
	ctx, cancel := context.WithTimeout(context.Background(), redisTimeout)
	defer cancel()
	_ = s.rdb.Set(ctx, s.key(k), raw, ttl).Err()
}

// Delete implements TokenStore.
func (s *RedisTokens) Delete(k string) {
	ctx, cancel := context.WithTimeout(context.Background(), redisTimeout)
	defer cancel()
	_ = s.rdb.Del(ctx, s.key(k)).Err()
}
