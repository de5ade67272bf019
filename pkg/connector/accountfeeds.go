package connector

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/events"
)

// EventsIdleVar is how long a credential's private feed stays open after
// the last listener left and its last order or position closed.
const EventsIdleVar = "PERPGATE_EVENTS_IDLE"

// AccountFeedConfig tunes the account feeds of adapters that are
// AccountFeeders (DESIGN §13).
type AccountFeedConfig struct {
	Disabled bool          // no feeds: nothing publishes this venue's events
	Idle     time.Duration // PERPGATE_EVENTS_IDLE; 10 min
	// Beat is how often the holder says it holds a feed, and interest is
	// repeated; 1 s. Interest not repeated for 3 beats (plus Idle) lapses.
	Beat   time.Duration
	Events events.Config // where events go; Subjects are the runtime's
}

// LoadAccountFeedConfig reads PERPGATE_EVENTS_IDLE (Go duration, default
// 10m) and the event stream's settings (events.LoadConfig).
func LoadAccountFeedConfig(lookup func(string) (string, bool), subjects contract.Subjects) (AccountFeedConfig, error) {
	c := AccountFeedConfig{Idle: 10 * time.Minute}
	var err error
	c.Events, err = events.LoadConfig(lookup, subjects)
	if v, ok := lookup(EventsIdleVar); ok && v != "" {
		d, perr := time.ParseDuration(v)
		if perr != nil || d <= 0 {
			return c, fmt.Errorf("%s: %q must be a positive Go duration, e.g. 10m", EventsIdleVar, v)
		}
		c.Idle = d
	}
	return c, err
}

func (c AccountFeedConfig) withDefaults() AccountFeedConfig {
	if c.Beat <= 0 {
		c.Beat = time.Second
	}
	if c.Idle <= 0 {
		c.Idle = 10 * time.Minute
	}
	if c.Events.Retention <= 0 {
		c.Events.Retention = events.DefaultRetention
	}
	return c
}

// interestMsg is one word of interest in a credential's feed, or the
// holder's beat (State subject).
type interestMsg struct {
	CredentialID string `json:"credentialId"`
	// Market: a connector placed or cancelled there (as the client named
	// it), so a reconcile looks for its fills even with nothing open.
	Market  string `json:"market,omitempty"`
	Healthy bool   `json:"healthy,omitempty"` // state: the feed is open and reconciled
	Active  bool   `json:"active,omitempty"`  // state: open orders or positions keep it open
}

// accountFeeds holds, on this replica, the private feeds whose leases it
// won, and hears who wants which feed open.
type accountFeeds struct {
	r       *Runtime
	feeder  AccountFeeder
	cfg     AccountFeedConfig
	lease   StreamConfig // LeaseTTL, Replica, Replicas
	pub     *events.Publisher
	reader  *events.Reader
	log     *slog.Logger
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	subs    []*nats.Subscription
	started bool
	kvMu    sync.Mutex
	kv      jetstream.KeyValue // the lease bucket, once open

	mu      sync.Mutex
	creds   map[string]*credFeed // contended or held here
	heard   map[string]time.Time // last interest in each credential
	healthy map[string]time.Time // last healthy beat of each credential's holder
	told    map[string]time.Time // this replica's own use, last announced
}

// credFeed is one credential's feed on this replica.
type credFeed struct {
	id      string
	mu      sync.Mutex
	holding bool
	ready   bool            // open and reconciled
	waiters []string        // reply subjects of interest requests to answer once ready
	hints   map[string]bool // markets writes named, for the next reconcile
	state   *feedState
	prot    *protectionEvents // the session's watcher; the session's goroutine only
}

// hint remembers a market a write named (a few hundred at most).
func (cf *credFeed) hint(market string) {
	cf.mu.Lock()
	defer cf.mu.Unlock()
	if cf.hints == nil {
		cf.hints = map[string]bool{}
	}
	if len(cf.hints) < 256 {
		cf.hints[market] = true
	}
}

// takeHints returns the markets hinted since the last call.
func (cf *credFeed) takeHints() map[string]bool {
	cf.mu.Lock()
	defer cf.mu.Unlock()
	h := cf.hints
	cf.hints = nil
	return h
}

func newAccountFeeds(r *Runtime) *accountFeeds {
	f, ok := r.adapter.(AccountFeeder)
	if !ok || r.nc == nil || r.cfg.AccountFeeds.Disabled {
		return nil
	}
	cfg := r.cfg.AccountFeeds.withDefaults()
	cfg.Events.Subjects = r.cfg.Subjects
	lease := r.cfg.Stream.withDefaults()
	if lease.Replica == "" && r.streams != nil {
		lease.Replica = r.streams.cfg.Replica
	}
	if lease.Replica == "" {
		lease.Replica = randomReplica()
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &accountFeeds{r: r, feeder: f, cfg: cfg, lease: lease, log: r.log.With("component", "account-feed"),
		ctx: ctx, cancel: cancel, creds: map[string]*credFeed{}, heard: map[string]time.Time{},
		healthy: map[string]time.Time{}, told: map[string]time.Time{}}
}

// start opens the event stream and listens for interest.
func (m *accountFeeds) start() error {
	if m == nil {
		return nil
	}
	m.pub = events.NewPublisher(m.r.nc, m.cfg.Events, m.log)
	if err := m.pub.Start(m.ctx); err != nil {
		return fmt.Errorf("account events of %s: %w", m.r.adapter.Exchange(), err)
	}
	reader, err := events.NewReader(m.r.nc, m.cfg.Events)
	if err != nil {
		m.pub.Close()
		return err
	}
	m.reader = reader
	x := m.r.adapter.Exchange()
	for subj, h := range map[string]nats.MsgHandler{
		m.r.cfg.Subjects.AccountFeedInterest(x): m.onInterest,
		m.r.cfg.Subjects.AccountFeedState(x):    m.onState,
	} {
		sub, err := m.r.nc.Subscribe(subj, h)
		if err != nil {
			m.close()
			return fmt.Errorf("account feeds of %s: %w", x, err)
		}
		m.subs = append(m.subs, sub)
	}
	m.started = true
	return nil
}

// close gives up every feed and lease and publishes what is queued.
func (m *accountFeeds) close() {
	if m == nil {
		return
	}
	for _, s := range m.subs {
		_ = s.Unsubscribe()
	}
	m.cancel()
	m.wg.Wait()
	if m.pub != nil {
		m.pub.Close()
	}
}

func (m *accountFeeds) onInterest(msg *nats.Msg) {
	var in interestMsg
	if json.Unmarshal(msg.Data, &in) != nil || in.CredentialID == "" {
		return
	}
	cf := m.want(in.CredentialID)
	if cf != nil && in.Market != "" {
		cf.hint(in.Market)
	}
	if cf == nil || msg.Reply == "" {
		return
	}
	cf.mu.Lock()
	defer cf.mu.Unlock()
	if cf.ready {
		_ = m.r.nc.Publish(msg.Reply, nil)
		return
	}
	if len(cf.waiters) < 64 {
		cf.waiters = append(cf.waiters, msg.Reply)
	}
}

// onState hears holders' beats: an active feed is wanted (so another
// replica takes it over if its holder dies), a healthy one spares the
// protection watcher its polls.
func (m *accountFeeds) onState(msg *nats.Msg) {
	var st interestMsg
	if json.Unmarshal(msg.Data, &st) != nil || st.CredentialID == "" {
		return
	}
	if st.Healthy {
		m.mu.Lock()
		m.healthy[st.CredentialID] = m.r.cfg.Now()
		m.mu.Unlock()
	}
	if st.Active {
		m.want(st.CredentialID)
	}
}

// want records interest in cred and contends for its feed unless this
// replica does already.
func (m *accountFeeds) want(cred string) *credFeed {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ctx.Err() != nil {
		return nil
	}
	m.heard[cred] = m.r.cfg.Now()
	cf := m.creds[cred]
	if cf == nil {
		cf = &credFeed{id: cred}
		m.creds[cred] = cf
		m.wg.Add(1)
		go func() { defer m.wg.Done(); m.contend(cf) }()
	}
	return cf
}

// wanted reports whether anyone wanted cred's feed within three beats plus
// the idle period.
func (m *accountFeeds) wanted(cred string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	at, ok := m.heard[cred]
	return ok && m.r.cfg.Now().Sub(at) <= 3*m.cfg.Beat+m.cfg.Idle
}

// forget drops cred once its feed is not wanted; false when interest came
// back meanwhile (the caller goes on contending).
func (m *accountFeeds) forget(cf *credFeed) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if at, ok := m.heard[cf.id]; ok && m.r.cfg.Now().Sub(at) <= 3*m.cfg.Beat+m.cfg.Idle && m.ctx.Err() == nil {
		return false
	}
	delete(m.creds, cf.id)
	delete(m.heard, cf.id)
	return true
}

// touch is this replica serving a write of cred on market: it wants the
// feed open (its orders and positions come and go through the feed), said
// at most once a beat per market.
func (m *accountFeeds) touch(cred, market string) {
	if m == nil || !m.started {
		return
	}
	now := m.r.cfg.Now()
	m.mu.Lock()
	last := m.told[cred+"\x00"+market]
	fresh := now.Sub(last) >= m.cfg.Beat
	if fresh {
		m.told[cred+"\x00"+market] = now
		if len(m.told) > 100_000 {
			clear(m.told)
		}
	}
	m.mu.Unlock()
	if fresh {
		data, _ := json.Marshal(interestMsg{CredentialID: cred, Market: market})
		_ = m.r.nc.Publish(m.r.cfg.Subjects.AccountFeedInterest(m.r.adapter.Exchange()), data)
	}
}

// eventDriven reports whether cred's protection pairs are watched through
// its feed now: its holder beat healthy within three beats, and the pairs
// are where the holder sees them (this replica holds it, or the store is
// shared).
func (m *accountFeeds) eventDriven(cred string) bool {
	if m == nil {
		return false
	}
	_, local := m.r.protections.(*MemoryProtections)
	return m.driven(cred, !local)
}

// driven reports whether what the runtime keeps of cred in a store (shared
// by the replicas, or local) follows cred's feed now: its holder beat
// healthy within three beats, and, for a local store, this replica holds it.
func (m *accountFeeds) driven(cred string, shared bool) bool {
	if m == nil {
		return false
	}
	m.mu.Lock()
	at, ok := m.healthy[cred]
	cf := m.creds[cred]
	m.mu.Unlock()
	if !ok || m.r.cfg.Now().Sub(at) > 3*m.cfg.Beat {
		return false
	}
	if shared {
		return true
	}
	if cf == nil {
		return false
	}
	cf.mu.Lock()
	defer cf.mu.Unlock()
	return cf.holding && cf.ready
}

// setReady marks cf's feed open and reconciled (or not) and answers those
// waiting for it.
func (m *accountFeeds) setReady(cf *credFeed, ready bool) {
	cf.mu.Lock()
	cf.ready = ready
	var waiters []string
	if ready {
		waiters, cf.waiters = cf.waiters, nil
	}
	cf.mu.Unlock()
	for _, w := range waiters {
		_ = m.r.nc.Publish(w, nil)
	}
	if ready {
		m.beat(cf, true)
	}
}

// beat tells every replica this one holds cf's feed.
func (m *accountFeeds) beat(cf *credFeed, healthy bool) {
	active := false
	if cf.state != nil {
		active = cf.state.active()
	}
	data, _ := json.Marshal(interestMsg{CredentialID: cf.id, Healthy: healthy, Active: active})
	_ = m.r.nc.Publish(m.r.cfg.Subjects.AccountFeedState(m.r.adapter.Exchange()), data)
}

// unwant drops the interest in cred: its feed closes at the next beat.
func (m *accountFeeds) unwant(cred string) {
	m.mu.Lock()
	delete(m.heard, cred)
	m.mu.Unlock()
}
