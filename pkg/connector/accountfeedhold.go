package connector

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/events"
)

func randomReplica() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Backoffs of a feed's reconnects: a dropped connection from 100 ms, a
// refused login from 5 s (it will not pass by itself), both up to 1 min.
const (
	feedMinBackoff  = 100 * time.Millisecond
	feedAuthBackoff = 5 * time.Second
	feedMaxBackoff  = time.Minute
)

// contend holds cf's feed while this replica has its lease (the market
// streams' lease bucket, key <exchange>.acct.<credential>) and the feed is
// wanted. Without JetStream each replica holds its own.
func (m *accountFeeds) contend(cf *credFeed) {
	key := string(m.r.adapter.Exchange()) + ".acct." + cf.id
	every := m.lease.LeaseTTL / 3
	// Tried twice per renewal period: a dead holder's feed moves within
	// the TTL and half a renewal period.
	t := time.NewTicker(every / 2)
	defer t.Stop()
	for {
		if !m.wanted(cf.id) && m.forget(cf) {
			return
		}
		kv, err := m.leaseBucket()
		switch {
		case errors.Is(err, jetstream.ErrJetStreamNotEnabled):
			m.log.Warn("no JetStream for the lease; this replica holds its own account feed", "credential_id", cf.id)
			m.holdWhileWanted(cf, nil, "", 0, every)
		case err != nil:
			m.log.Warn("account feed lease bucket not ready; retrying", "credential_id", cf.id, "err", err)
		default:
			m.contendOnce(cf, kv, key, every)
		}
		select {
		case <-m.ctx.Done():
			m.forget(cf)
			return
		case <-t.C:
		}
	}
}

// contendOnce tries to take cf's lease and holds the feed while it has it.
func (m *accountFeeds) contendOnce(cf *credFeed, kv jetstream.KeyValue, key string, every time.Duration) {
	if rev, err := kv.Create(m.ctx, key, []byte(m.lease.Replica)); err == nil {
		m.holdWhileWanted(cf, kv, key, rev, every)
	} else if !errors.Is(err, jetstream.ErrKeyExists) && m.ctx.Err() == nil {
		m.log.Warn("account feed lease not readable", "credential_id", cf.id, "err", err)
	}
}

// holdWhileWanted runs cf's feed until the lease cannot be renewed, the
// feed is no longer wanted, or the runtime stops; then it frees the lease
// so another replica need not wait out its TTL.
func (m *accountFeeds) holdWhileWanted(cf *credFeed, kv jetstream.KeyValue, key string, rev uint64, every time.Duration) {
	m.log.Info("holding account feed", "credential_id", cf.id, "replica", m.lease.Replica)
	hctx, stop := context.WithCancel(m.ctx)
	done := make(chan struct{})
	cf.mu.Lock()
	cf.holding, cf.state = true, nil // a lease won afresh reloads what was published
	cf.mu.Unlock()
	go func() { defer close(done); m.hold(hctx, cf) }()
	end := func(why string) {
		stop()
		<-done
		cf.mu.Lock()
		cf.holding = false
		cf.mu.Unlock()
		m.setReady(cf, false)
		if kv != nil {
			dctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = kv.Delete(dctx, key, jetstream.LastRevision(rev))
			cancel()
		}
		m.log.Info("account feed released", "credential_id", cf.id, "why", why)
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-m.ctx.Done():
			end("stopping")
			return
		case <-t.C:
		}
		if !m.wanted(cf.id) {
			end("idle")
			return
		}
		if kv == nil {
			continue
		}
		rctx, cancel := context.WithTimeout(m.ctx, every)
		next, err := kv.Update(rctx, key, []byte(m.lease.Replica), rev)
		cancel()
		if err != nil {
			m.log.Warn("account feed lease lost", "credential_id", cf.id, "err", err)
			kv = nil // another replica may hold it now: do not delete its key
			end("lease lost")
			return
		}
		rev = next
	}
}

// leaseBucket is the lease bucket, opened once and shared by the feeds.
func (m *accountFeeds) leaseBucket() (jetstream.KeyValue, error) {
	m.kvMu.Lock()
	defer m.kvMu.Unlock()
	if m.kv != nil {
		return m.kv, nil
	}
	kv, err := openLeaseBucket(m.ctx, m.r.nc, m.r.cfg.Subjects, m.lease.LeaseTTL, m.lease.Replicas)
	if err == nil {
		m.kv = kv
	}
	return kv, err
}

// openLeaseBucket creates (or updates) the bucket of the leases on market
// streams and account feeds; when another replica or feed is creating it
// at the same moment, it binds to theirs.
func openLeaseBucket(ctx context.Context, nc *nats.Conn, subjects contract.Subjects, ttl time.Duration, replicas int) (jetstream.KeyValue, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	kv, err := js.CreateOrUpdateKeyValue(cctx, jetstream.KeyValueConfig{
		Bucket:      subjects.StreamLeases(),
		Description: "which connector replica holds each venue's market-data sockets and each credential's account feed",
		TTL:         ttl,
		History:     1,
		Replicas:    max(replicas, 1),
	})
	if err != nil && !errors.Is(err, jetstream.ErrJetStreamNotEnabled) {
		if bound, berr := js.KeyValue(cctx, subjects.StreamLeases()); berr == nil {
			return bound, nil
		}
	}
	return kv, err
}

// hold keeps cf's feed connected until ctx ends, reconnecting with backoff.
// A refused login is published once as an error event, until a connection
// succeeds again.
func (m *accountFeeds) hold(ctx context.Context, cf *credFeed) {
	backoff, refused := feedMinBackoff, false
	for ctx.Err() == nil {
		cred, err := m.r.secrets.get(ctx, cf.id)
		var ce *contract.Error
		if errors.As(err, &ce) && ce.Code == contract.CodeCredentialNotFound {
			m.log.Info("account feed's credential is gone", "credential_id", cf.id)
			m.unwant(cf.id)
			return
		}
		if err == nil {
			var opened bool
			opened, err = m.session(ctx, cf, cred)
			if opened {
				backoff, refused = feedMinBackoff, false
			}
		}
		if ctx.Err() != nil {
			return
		}
		if ce, ok := contract.AsError(err); ok && ce.Reason == contract.ReasonAuthenticationFailed {
			if !refused {
				m.publishRefusal(cf.id, ce)
				refused = true
			}
			backoff = max(backoff, feedAuthBackoff)
		}
		m.log.Info("account feed closed; reconnecting", "credential_id", cf.id, "in", backoff.String(), "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, feedMaxBackoff)
	}
}

// publishRefusal is the one error event of a refused login: it names the
// credential and the venue's reason (never the secret).
func (m *accountFeeds) publishRefusal(cred string, ce *contract.Error) {
	x := m.r.adapter.Exchange()
	m.log.Warn("the venue refused the account feed's login", "credential_id", cred, "reason", ce.Message)
	m.pub.Publish(events.New(x, cred, contract.SourceStream, m.r.cfg.Now(), contract.ErrorEvent{
		Code: string(contract.ReasonAuthenticationFailed),
		Message: "the " + string(x) + " private stream refused the login of credential " + cred + ": " + ce.Message +
			"; fix the credential (testCredentials says why); events resume once it logs in",
	}))
}

// feedItem is what a feed hands its session, in order: the venue's
// confirmation (ready) or an event.
type feedItem struct {
	ready bool
	ev    AccountEvent
}

// feedQueue is an unbounded queue: emit must never block the adapter's reader.
type feedQueue struct {
	mu    sync.Mutex
	items []feedItem
	wake  chan struct{}
}

func (q *feedQueue) push(it feedItem) {
	q.mu.Lock()
	q.items = append(q.items, it)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// hold puts items back at the head of the queue, before anything pushed
// since they were taken.
func (q *feedQueue) hold(items []feedItem) {
	q.mu.Lock()
	q.items = append(append([]feedItem{}, items...), q.items...)
	q.mu.Unlock()
}

func (q *feedQueue) take() []feedItem {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.items
	q.items = nil
	return out
}

// session runs one connection of cf's feed: the adapter follows the
// venue's private stream; once it is ready the session reconciles from
// REST, then publishes the events that arrived meanwhile and after. It
// returns whether the feed became ready, and why it ended.
func (m *accountFeeds) session(ctx context.Context, cf *credFeed, cred Credential) (bool, error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	q := &feedQueue{wake: make(chan struct{}, 1)}
	done := make(chan error, 1)
	go func() {
		done <- m.feeder.FollowAccount(sctx, cred, func() { q.push(feedItem{ready: true}) },
			func(ev AccountEvent) { q.push(feedItem{ev: ev}) })
	}()
	cf.prot = m.r.protectionWorker(sctx, cred)
	defer func() { cf.prot.stop(); cf.prot = nil }()
	beat := time.NewTicker(m.cfg.Beat)
	defer beat.Stop()
	opened, unreconciled := false, false
	// A failed reconcile (REST or the stream not answering) is tried again
	// every beat; the feed is not healthy meanwhile.
	reconcile := func() {
		if err := m.reconcile(sctx, cf, cred); err != nil {
			m.log.Warn("account feed not reconciled yet; retrying", "credential_id", cred.ID, "err", err)
			unreconciled = true
			m.setReady(cf, false) // its events wait, so the watchers must poll meanwhile
			return
		}
		unreconciled = false
		m.setReady(cf, true)
	}
	// While a reconcile is owed, the venue's events wait in the queue:
	// published first, a newer fill would become the point the reconcile
	// reads fills from, and older fills it missed would never be published.
	drain := func() {
		items := q.take()
		for i, it := range items {
			if it.ready {
				opened = true
				reconcile()
				continue
			}
			if unreconciled {
				q.hold(items[i:])
				return
			}
			m.publishStream(sctx, cf, cred, it.ev)
		}
	}
	for {
		select {
		case <-q.wake:
			drain()
		case err := <-done:
			drain() // what the venue sent before the end happened
			m.setReady(cf, false)
			return opened, err
		case <-beat.C:
			if unreconciled {
				reconcile()
				if !unreconciled {
					drain()
				}
			}
			cf.mu.Lock()
			ready := cf.ready
			cf.mu.Unlock()
			m.beat(cf, ready)
		}
	}
}
