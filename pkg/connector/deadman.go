package connector

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/perpgate/perpgate/pkg/contract"
)

// setDeadManSwitch (an extension operation, DESIGN §13): unless renewed in
// time, every open order of the credential (or of one market) is
// cancelled. Where the venue's own switch fits the request's scope and
// range the venue keeps it (DeadManSwitcher); otherwise the gateway does:
// the deadline is a key of a JetStream KV bucket that every replica of the
// exchange's connector watches, so the timer outlives the replica that
// armed it, and the replica that claims the key first cancels the orders.

// DeadManSwitcher is implemented by adapters of venues with a dead man's
// switch of their own.
type DeadManSwitcher interface {
	// NativeDeadMan reports whether the venue's switch serves this scope
	// (nil: every market of the credential) and timeout (0: off).
	NativeDeadMan(m *Market, timeoutSeconds int) bool
	// SetDeadManSwitch arms the venue's switch for timeoutSeconds, or
	// turns it off with 0, and returns the deadline (zero when off).
	SetDeadManSwitch(ctx context.Context, c Credential, m *Market, timeoutSeconds int) (time.Time, error)
}

// deadManEntry is the value of an emulated switch's key.
type deadManEntry struct {
	AccountID    string `json:"accountId"`
	CredentialID string `json:"credentialId"`
	Market       string `json:"market,omitempty"` // canonical; empty: every market
	Deadline     int64  `json:"deadline"`         // Unix ms
	// FiringSince is set (Unix ms) by the replica that claimed the key to
	// cancel the orders; another replica fires again when it is stale.
	FiringSince int64 `json:"firingSince,omitempty"`
}

// deadManLook is how often a replica looks for the bucket before any
// switch was armed, and retries an unreachable JetStream.
const deadManLook = 10 * time.Second

// deadManRefire is how long a claimed switch may take to cancel before
// another replica fires it again (its claimer died).
const deadManRefire = 30 * time.Second

func (d dispatch) setDeadManSwitch(ctx context.Context, p *contract.DeadManSwitchParams) (any, error) {
	m, err := d.optMarket(ctx, p.Market)
	if err != nil {
		return nil, err
	}
	if m != nil {
		if err := d.allowMarket(*m); err != nil {
			return nil, err
		}
	} else if d.guards != nil && len(d.guards.AllowedMarkets) > 0 {
		return nil, contract.Errorf(contract.CodeMarketNotAllowed,
			"this key is limited to allowedMarkets (%s): give market, a switch over every market would cancel orders elsewhere",
			strings.Join(d.guards.AllowedMarkets, ", "))
	}
	key := d.r.deadman.key(d.cred.ID, m)
	if sw, ok := d.r.adapter.(DeadManSwitcher); ok && sw.NativeDeadMan(m, p.TimeoutSeconds) {
		deadline, err := sw.SetDeadManSwitch(ctx, d.cred, m, p.TimeoutSeconds)
		if err != nil {
			return nil, err
		}
		if err := d.r.deadman.clear(ctx, key); err != nil { // an emulated switch of the same scope is replaced
			return nil, err
		}
		return contract.DeadManSwitchResult{Mode: contract.DeadManNative, Deadline: unixOrZero(deadline)}, nil
	}
	if p.TimeoutSeconds == 0 {
		return contract.DeadManSwitchResult{Mode: contract.DeadManEmulated}, d.r.deadman.clear(ctx, key)
	}
	deadline := d.r.cfg.Now().Add(time.Duration(p.TimeoutSeconds) * time.Second)
	e := deadManEntry{AccountID: d.cred.AccountID, CredentialID: d.cred.ID, Deadline: deadline.UnixMilli()}
	if m != nil {
		e.Market = m.Canonical
	}
	if err := d.r.deadman.arm(ctx, key, e); err != nil {
		return nil, err
	}
	return contract.DeadManSwitchResult{Mode: contract.DeadManEmulated, Deadline: deadline.Unix()}, nil
}

func unixOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

// deadMen keeps the emulated switches of one runtime: their keys in the
// shared bucket and a local timer per key.
type deadMen struct {
	r      *Runtime
	prefix string // <exchange>.

	mu     sync.Mutex
	kv     jetstream.KeyValue
	timers map[string]*time.Timer
	ready  chan struct{} // closed once this replica has the bucket open
	opened sync.Once
}

func newDeadMen(r *Runtime) *deadMen {
	return &deadMen{r: r, prefix: string(r.adapter.Exchange()) + ".", timers: map[string]*time.Timer{}, ready: make(chan struct{})}
}

func (dm *deadMen) key(credID string, m *Market) string {
	scope := "_all"
	if m != nil {
		scope = m.Canonical
	}
	return dm.prefix + credID + "." + scope
}

// bucket opens the KV bucket; create makes it when it does not exist yet
// (on the first switch armed), so a deployment that never arms one has
// no bucket.
func (dm *deadMen) bucket(ctx context.Context, create bool) (jetstream.KeyValue, error) {
	dm.mu.Lock()
	defer dm.mu.Unlock()
	if dm.kv != nil {
		return dm.kv, nil
	}
	js, err := jetstream.New(dm.r.nc)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	name := dm.r.cfg.Subjects.DeadManSwitches()
	kv, err := js.KeyValue(cctx, name)
	if errors.Is(err, jetstream.ErrBucketNotFound) && create {
		kv, err = js.CreateOrUpdateKeyValue(cctx, jetstream.KeyValueConfig{
			Bucket:      name,
			Description: "deadlines of the dead man's switches the gateway emulates",
			History:     1,
		})
	}
	if err != nil {
		return nil, err
	}
	dm.kv = kv
	dm.opened.Do(func() { close(dm.ready) })
	return kv, nil
}

func (dm *deadMen) unavailable(err error) error {
	dm.r.log.Warn("dead man's switch store unavailable", "err", err)
	ce := contract.Errorf(contract.CodeServiceUnavailable,
		"the gateway cannot keep the dead man's switch (its JetStream store is unreachable); the switch was not changed, retry shortly")
	ce.RetryAfterSeconds = 2
	return ce
}

func (dm *deadMen) arm(ctx context.Context, key string, e deadManEntry) error {
	kv, err := dm.bucket(ctx, true)
	if err != nil {
		return dm.unavailable(err)
	}
	b, _ := json.Marshal(e)
	if _, err := kv.Put(ctx, key, b); err != nil {
		return dm.unavailable(err)
	}
	return nil
}

func (dm *deadMen) clear(ctx context.Context, key string) error {
	kv, err := dm.bucket(ctx, false)
	if errors.Is(err, jetstream.ErrBucketNotFound) || errors.Is(err, jetstream.ErrJetStreamNotEnabled) ||
		errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) {
		return nil // no emulated switch can stand
	}
	if err != nil {
		return dm.unavailable(err)
	}
	if err := kv.Delete(ctx, key); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return dm.unavailable(err)
	}
	return nil
}

// watch follows the exchange's keys until ctx ends, keeping one timer per
// armed key. Until a switch is first armed there is no bucket: it looks
// again every deadManLook (at once when this replica creates it).
func (dm *deadMen) watch(ctx context.Context) {
	warned, ready := false, dm.ready
	for ctx.Err() == nil {
		wait := 2 * time.Second
		err := dm.watchOnce(ctx)
		switch {
		case ctx.Err() != nil:
		case errors.Is(err, jetstream.ErrBucketNotFound):
			wait = deadManLook
		case err != nil && !warned:
			dm.r.log.Warn("dead man's switches not watched (JetStream?); retrying", "err", err)
			warned, wait = true, deadManLook
		case err != nil:
			wait = deadManLook
		}
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		case <-ready:
			ready = nil // this replica created the bucket: watch it now, once
		}
	}
	dm.mu.Lock()
	for k, t := range dm.timers {
		t.Stop()
		delete(dm.timers, k)
	}
	dm.mu.Unlock()
}

func (dm *deadMen) watchOnce(ctx context.Context) error {
	kv, err := dm.bucket(ctx, false)
	if err != nil {
		return err
	}
	w, err := kv.Watch(ctx, dm.prefix+">")
	if err != nil {
		return err
	}
	defer func() { _ = w.Stop() }()
	for {
		select {
		case <-ctx.Done():
			return nil
		case en, ok := <-w.Updates():
			if !ok {
				return errors.New("watch ended")
			}
			if en != nil {
				dm.schedule(ctx, kv, en)
			}
		}
	}
}

// schedule sets (or stops) the local timer of one key.
func (dm *deadMen) schedule(ctx context.Context, kv jetstream.KeyValue, en jetstream.KeyValueEntry) {
	dm.mu.Lock()
	defer dm.mu.Unlock()
	if t := dm.timers[en.Key()]; t != nil {
		t.Stop()
		delete(dm.timers, en.Key())
	}
	var e deadManEntry
	if en.Operation() != jetstream.KeyValuePut || json.Unmarshal(en.Value(), &e) != nil {
		return
	}
	at := time.UnixMilli(e.Deadline)
	if e.FiringSince != 0 {
		at = time.UnixMilli(e.FiringSince).Add(deadManRefire)
	}
	key, rev := en.Key(), en.Revision()
	dm.timers[key] = time.AfterFunc(time.Until(at), func() { dm.fire(ctx, kv, key, rev, e) })
}

// fire claims the key at revision rev (so one replica fires), cancels the
// orders and deletes the key. A claim lost means another replica renewed,
// cleared or fired it.
func (dm *deadMen) fire(ctx context.Context, kv jetstream.KeyValue, key string, rev uint64, e deadManEntry) {
	if ctx.Err() != nil {
		return
	}
	e.FiringSince = time.Now().UnixMilli()
	b, _ := json.Marshal(e)
	cctx, cancel := context.WithTimeout(ctx, deadManRefire)
	defer cancel()
	claimed, err := kv.Update(cctx, key, b, rev)
	if err != nil {
		return
	}
	n, err := dm.cancelOrders(cctx, e)
	if err != nil {
		dm.r.log.Error("dead man's switch fired but the orders were not all cancelled; another replica retries",
			"credential_id", e.CredentialID, "market", e.Market, "cancelled", n, "err", err)
		return
	}
	dm.r.log.Warn("dead man's switch fired: orders cancelled", "credential_id", e.CredentialID, "market", e.Market, "cancelled", n)
	_ = kv.Delete(cctx, key, jetstream.LastRevision(claimed))
}

// cancelOrders cancels the open orders the switch covers.
func (dm *deadMen) cancelOrders(ctx context.Context, e deadManEntry) (int, error) {
	cred, err := dm.r.secrets.get(ctx, e.CredentialID)
	if err != nil {
		return 0, err
	}
	d := dispatch{r: dm.r, cred: cred}
	markets := []string{e.Market}
	if e.Market == "" {
		open, err := dm.r.adapter.GetOrders(ctx, cred, nil)
		if err != nil {
			return 0, err
		}
		markets = markets[:0]
		seen := map[string]bool{}
		for _, o := range open.Orders {
			if c := d.canon(ctx, o.Market); !seen[c] {
				seen[c] = true
				markets = append(markets, c)
			}
		}
	}
	total := 0
	for _, raw := range markets {
		m, err := d.market(ctx, raw)
		if err != nil {
			return total, err
		}
		n, err := dm.r.adapter.CancelAllOrders(ctx, cred, m)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}
