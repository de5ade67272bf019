package testenv

import (
	"fmt"
	"testing"
)

// NATSConfDaemon runs a nats-server of the test's own with the
// configuration file conf, which must make it listen on 127.0.0.1:port
// (a node of a cluster the test lays out, say).
func NATSConfDaemon(t testing.TB, conf string, port int) *Daemon {
	t.Helper()
	bin := findBinary(t, "nats-server", natsServerInstall)
	return newDaemon(t, "nats-server "+conf, bin, port, fmt.Sprintf("nats://127.0.0.1:%d", port), []string{"-c", conf})
}
