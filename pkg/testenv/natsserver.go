package testenv

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"
)

const natsServerInstall = "apt-get install nats-server"

// listeningRe finds the client address in nats-server's start-up log.
var listeningRe = regexp.MustCompile(`Listening for client connections on (\S+:\d+)`)

// NATSServer runs the nats-server binary (from PATH, else /usr/sbin) as
// its own process with the configuration file conf, the variables of env
// as its whole environment (nats.conf reads $NAME from it), a free port on
// 127.0.0.1 and JetStream files in a temporary directory. It returns the
// client URL and the server's log, and stops the server when the test
// ends. Without the binary it skips t (or fails it with
// PERPGATE_REQUIRE_SERVICES=1).
func NATSServer(t testing.TB, conf string, env map[string]string) (string, *Output) {
	t.Helper()
	bin, err := exec.LookPath("nats-server")
	if err != nil {
		if _, statErr := os.Stat("/usr/sbin/nats-server"); statErr != nil {
			Unavailable(t, "the nats-server binary", err, natsServerInstall)
		}
		bin = "/usr/sbin/nats-server"
	}
	vars := make([]string, 0, len(env))
	for k, v := range env {
		vars = append(vars, k+"="+v)
	}
	sort.Strings(vars)
	out := &Output{}
	cmd := exec.Command(bin, "-c", conf, "-a", "127.0.0.1", "-p", "-1", "-sd", t.TempDir())
	cmd.Env = vars
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatalf("testenv: start %s: %v", bin, err)
	}
	// done is closed, never sent on, so the start loop and the cleanup can
	// both wait for the exit.
	done := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Errorf("testenv: nats-server did not stop within 10s of SIGTERM")
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		if m := listeningRe.FindStringSubmatch(out.String()); m != nil {
			return "nats://" + m[1], out
		}
		select {
		case <-done:
			t.Fatalf("testenv: nats-server -c %s exited (%v):\n%s", conf, waitErr, out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("testenv: nats-server -c %s not listening within 10s:\n%s", conf, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Output collects what a process writes, safe to read while it runs.
type Output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

// String returns everything written so far.
func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// Unavailable skips t because something it needs (a service, a binary,
// the Go module proxy) cannot be had, saying how to get it, or fails t when
// PERPGATE_REQUIRE_SERVICES=1.
func Unavailable(t testing.TB, what string, err error, how string) {
	t.Helper()
	if err == nil {
		err = errors.New("not available")
	}
	if os.Getenv(requireEnv) == "1" {
		t.Fatalf("%s: %v, and %s=1; %s", what, err, requireEnv, how)
	}
	t.Skipf("%s: %v; %s (set %s=1 to fail instead of skip)", what, err, how, requireEnv)
}
