package bus

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/perpgate/perpgate/pkg/testenv"
)

// TestJetStreamBackAfterFullDisk: the embedded server's JetStream fails
// while its disk is full and takes writes again once there is room.
func TestJetStreamBackAfterFullDisk(t *testing.T) {
	disk := testenv.Tmpfs(t, 16<<20)
	store := filepath.Join(disk, "nats")
	emb, err := StartEmbedded(EmbeddedConfig{StoreDir: store})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emb.Shutdown)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var full atomic.Bool
	emb.KeepJetStream(ctx, store, func() error {
		if full.Load() {
			return errors.New("full")
		}
		return nil
	}, testLogger(t))
	nc, err := emb.Connect("t")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "AUDIT", Subjects: []string{"audit"}, Storage: jetstream.FileStorage}); err != nil {
		t.Fatal(err)
	}
	pub := func() error {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		_, err := js.Publish(pctx, "audit", make([]byte, 512))
		return err
	}
	if err := pub(); err != nil {
		t.Fatal(err)
	}
	fill := testenv.FillDisk(t, disk)
	full.Store(true)
	var failed error
	for range 200 {
		if failed = pub(); failed != nil {
			break
		}
	}
	t.Logf("on the full disk: %v, JetStream enabled %v", failed, emb.srv.JetStreamEnabled())
	if failed == nil {
		t.Fatal("publishes went on on a full disk")
	}
	os.Remove(fill)
	full.Store(false)
	testenv.Poll(t, "publish once there is room", 10*time.Second, func() error { return pub() })
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), nil))
}
