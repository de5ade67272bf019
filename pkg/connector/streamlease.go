package connector

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// contend holds f's sockets while this replica has the lease: a key in a
// JetStream KV bucket whose entries expire after LeaseTTL. The holder
// renews it every third of that; the others try to create it as often, so
// a holder that dies is replaced within about LeaseTTL plus a third. A NATS
// without JetStream cannot arbitrate, so each replica then holds its own.
func (f *feed) contend(ctx context.Context) {
	cfg := f.s.cfg
	kv, err := f.leaseBucket(ctx)
	if err != nil {
		f.s.log.Warn("no stream lease bucket (JetStream?); this replica holds its own sockets", "env", f.env, "err", err)
		f.hold(ctx)
		return
	}
	// <exchange>.<env>: a connector's NATS user may be granted its own keys only.
	key := string(f.s.x) + "." + string(f.env)
	every := cfg.LeaseTTL / 3
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		rev, err := kv.Create(ctx, key, []byte(cfg.Replica))
		if err == nil {
			f.holdLeased(ctx, kv, key, rev, every)
		} else if !errors.Is(err, jetstream.ErrKeyExists) && ctx.Err() == nil {
			f.s.log.Warn("stream lease not readable", "env", f.env, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// holdLeased runs the sockets until the lease cannot be renewed or ctx
// ends; on a clean end it deletes the key so another replica takes over
// at its next try rather than after the TTL.
func (f *feed) holdLeased(ctx context.Context, kv jetstream.KeyValue, key string, rev uint64, every time.Duration) {
	f.s.log.Info("holding stream sockets", "env", f.env, "replica", f.s.cfg.Replica)
	hctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); f.hold(hctx) }()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			stop()
			<-done
			dctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = kv.Delete(dctx, key, jetstream.LastRevision(rev))
			cancel()
			return
		case <-t.C:
		}
		rctx, cancel := context.WithTimeout(ctx, every)
		next, err := kv.Update(rctx, key, []byte(f.s.cfg.Replica), rev)
		cancel()
		if err != nil {
			f.s.log.Warn("stream lease lost; closing sockets", "env", f.env, "err", err)
			stop()
			<-done
			return
		}
		rev = next
	}
}

func (f *feed) leaseBucket(ctx context.Context) (jetstream.KeyValue, error) {
	return openLeaseBucket(ctx, f.s.nc, f.s.subjects, f.s.cfg.LeaseTTL, f.s.cfg.Replicas)
}
