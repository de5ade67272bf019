package edge

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/perpgate/perpgate/pkg/contract"
)

// A credential's private feed is held open by a connector while anyone
// listens (DESIGN §13). The edge says who listens: when an event stream or
// waitForOrder opens, it asks and waits (at most feedWait) until the feed
// is open and reconciled, so nothing that follows is missed; while they
// stay open it repeats the interest every feedBeat.

const (
	feedWait = 2 * time.Second
	feedBeat = time.Second
)

type feedKey struct {
	x    contract.Exchange
	cred string
}

type feedInterest struct {
	nc       *nats.Conn
	subjects contract.Subjects
	stop     chan struct{}
	done     chan struct{}

	mu   sync.Mutex
	open map[feedKey]int
}

func newFeedInterest(nc *nats.Conn, subjects contract.Subjects) *feedInterest {
	f := &feedInterest{nc: nc, subjects: subjects, stop: make(chan struct{}), done: make(chan struct{}), open: map[feedKey]int{}}
	go f.run()
	return f
}

// add counts one listener of cred's events until release, after waiting
// for its feed (connectors of venues without feeds do not answer: no
// responders ends the wait at once).
func (f *feedInterest) add(ctx context.Context, x contract.Exchange, cred string) (release func()) {
	k := feedKey{x, cred}
	f.mu.Lock()
	f.open[k]++
	f.mu.Unlock()
	f.await(ctx, k)
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.open[k]--; f.open[k] <= 0 {
			delete(f.open, k)
		}
	}
}

func (f *feedInterest) await(ctx context.Context, k feedKey) {
	wctx, cancel := context.WithTimeout(ctx, feedWait)
	defer cancel()
	_, _ = f.nc.RequestWithContext(wctx, f.subjects.AccountFeedInterest(k.x), f.msg(k))
}

// poke says once that someone reads cred's events (getEvents).
func (f *feedInterest) poke(x contract.Exchange, cred string) {
	k := feedKey{x, cred}
	_ = f.nc.Publish(f.subjects.AccountFeedInterest(k.x), f.msg(k))
}

func (f *feedInterest) msg(k feedKey) []byte {
	data, _ := json.Marshal(struct {
		CredentialID string `json:"credentialId"`
	}{k.cred})
	return data
}

func (f *feedInterest) run() {
	defer close(f.done)
	t := time.NewTicker(feedBeat)
	defer t.Stop()
	for {
		select {
		case <-f.stop:
			return
		case <-t.C:
		}
		f.mu.Lock()
		keys := make([]feedKey, 0, len(f.open))
		for k := range f.open {
			keys = append(keys, k)
		}
		f.mu.Unlock()
		for _, k := range keys {
			_ = f.nc.Publish(f.subjects.AccountFeedInterest(k.x), f.msg(k))
		}
	}
}

func (f *feedInterest) close() {
	select {
	case <-f.stop:
		return
	default:
	}
	close(f.stop)
	<-f.done
}
