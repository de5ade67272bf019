package fapi

import (
	"context"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
)

// ModeTTL is how long a credential's position mode is trusted.
const ModeTTL = 5 * time.Minute

// Modes caches each credential's position mode (dualSidePosition).
type Modes struct {
	Venue string
	Key   func(c connector.Credential) (string, error)                    // REST base and the credential's identity
	Read  func(ctx context.Context, c connector.Credential) (bool, error) // reads the mode (and Puts it)
	Now   func() time.Time
	memo  venuekit.Memo[bool]
}

// Put records a mode just read for key.
func (m *Modes) Put(key string, hedge bool) { m.memo.Put(key, hedge, m.Now()) }

// OneWay refuses to trade for an account in hedge position mode: its
// orders need positionSide and may not be reduce-only, and the contract
// speaks of one position per market.
func (m *Modes) OneWay(ctx context.Context, c connector.Credential) error {
	key, err := m.Key(c)
	if err != nil {
		return err
	}
	hedge, ok := m.memo.Get(key, m.Now(), ModeTTL)
	if !ok {
		if hedge, err = m.Read(ctx, c); err != nil {
			return err
		}
	}
	if hedge {
		return contract.Errorf(contract.CodeInvalidRequest,
			"the %s account is in hedge position mode (dualSidePosition=true); perpgate trades one-way mode only: "+
				"switch Position Mode to One-way in %s's futures preferences (no open orders or positions) and retry", m.Venue, m.Venue)
	}
	return nil
}

// Forget drops a cached mode after the venue said it differs (-4061).
func (m *Modes) Forget(c connector.Credential) {
	if key, err := m.Key(c); err == nil {
		m.memo.Forget(key)
	}
}
