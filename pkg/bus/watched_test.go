package bus

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
)

// TestRequestConnectorWatched: a request whose reply is lost with the
// connection answers ErrBusLost soon after the connection is back, not at
// its deadline; one answered normally is unaffected.
func TestRequestConnectorWatched(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a nats-server; skipped with -short")
	}
	srv := testenv.NATSDaemon(t)
	nc, err := Connect(srv.URL, "watched", Auth{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	if _, err := nc.Subscribe("echo", func(m *nats.Msg) { _ = m.Respond([]byte(`{"ok":true}`)) }); err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Subscribe("lost", func(*nats.Msg) {}); err != nil { // never answers: the reply is "lost"
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out struct{ OK bool }
	if err := RequestConnectorWatched(ctx, nc, "echo", contract.ConnectorRequest{Operation: "getBalance"}, &out); err != nil || !out.OK {
		t.Fatalf("echo: %v %+v", err, out)
	}
	errc := make(chan error, 1)
	go func() {
		errc <- RequestConnectorWatched(ctx, nc, "lost", contract.ConnectorRequest{Operation: "placeLimitOrder"}, nil)
	}()
	time.Sleep(200 * time.Millisecond)
	srv.Stop()
	time.Sleep(500 * time.Millisecond)
	srv.Start()
	back := time.Now()
	select {
	case err := <-errc:
		if !errors.Is(err, ErrBusLost) {
			t.Fatalf("got %v, want ErrBusLost", err)
		}
		if took := time.Since(back); took > 2*time.Second {
			t.Errorf("answered %s after the bus was back", took)
		}
	case <-time.After(8 * time.Second):
		t.Fatal("no answer 8 s after the bus was back: waited for the deadline")
	}
}
