package bus

import (
	"context"
	"log/slog"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// KeepJetStream restarts the embedded server's JetStream once its disk
// has room again after being full (full reports that, as
// health.DiskSpace.Err does): a stream that failed to write keeps failing
// until it is loaded again, so the audit trail, and with it every trading
// call, would stay refused until the process restarts. It looks every
// second until ctx ends.
func (e *Embedded) KeepJetStream(ctx context.Context, storeDir string, full func() error, log *slog.Logger) {
	if storeDir == "" {
		return
	}
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		wasFull := false
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			isFull := full() != nil
			if wasFull && !isFull {
				e.restartJetStream(storeDir, log)
			}
			wasFull = isFull
		}
	}()
}

func (e *Embedded) restartJetStream(storeDir string, log *slog.Logger) {
	if e.srv.JetStreamEnabled() {
		if err := e.srv.DisableJetStream(); err != nil {
			log.Warn("embedded JetStream not restarted after the disk was full", "err", err)
			return
		}
	}
	if err := e.srv.EnableJetStream(&server.JetStreamConfig{StoreDir: storeDir}); err != nil {
		log.Error("embedded JetStream could not be started again after the disk was full; restart perpgate", "store_dir", storeDir, "err", err)
		return
	}
	log.Info("embedded JetStream restarted: the disk has room again", "store_dir", storeDir)
}
