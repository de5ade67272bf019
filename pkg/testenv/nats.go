package testenv

import (
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

const natsStart = "start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server"

// NATSURL returns the URL of the test NATS server, PERPGATE_TEST_NATS_URL
// or nats://127.0.0.1:4222, after checking that it answers; it skips (or
// fails) t when it does not.
func NATSURL(t testing.TB) string {
	t.Helper()
	nc := NATS(t)
	return nc.ConnectedUrl()
}

// NATS returns a connection to the test NATS server, closed when the test
// ends. Use Prefix for subjects so parallel runs do not meet. It skips t
// (or fails it with PERPGATE_REQUIRE_SERVICES=1) when NATS is unreachable.
func NATS(t testing.TB) *nats.Conn {
	t.Helper()
	url := env("PERPGATE_TEST_NATS_URL", "nats://127.0.0.1:4222")
	nc, err := nats.Connect(url, nats.Timeout(dialTimeout), nats.Name("testenv "+t.Name()))
	if err != nil {
		unavailable(t, "NATS", url, err, natsStart)
	}
	t.Cleanup(nc.Close)
	return nc
}

// EmbeddedNATS starts a NATS server inside the test process on a free
// port of 127.0.0.1 (no signal handling, no logs) and shuts it down when
// the test ends, with JetStream on (files in a temporary directory).
// Connect with s.ClientURL() or nats.InProcessServer(s).
func EmbeddedNATS(t testing.TB) *server.Server {
	t.Helper()
	s, err := server.NewServer(&server.Options{
		Host:      "127.0.0.1",
		Port:      server.RANDOM_PORT,
		NoSigs:    true,
		NoLog:     true,
		JetStream: true, // the audit trail's stream
		StoreDir:  t.TempDir(),
	})
	if err != nil {
		t.Fatalf("embedded nats: %v", err)
	}
	go s.Start()
	t.Cleanup(func() {
		s.Shutdown()
		s.WaitForShutdown()
	})
	if !s.ReadyForConnections(5 * time.Second) {
		t.Fatal("embedded nats: not ready for connections within 5s")
	}
	return s
}
