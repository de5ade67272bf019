package testenv

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago and
// that this process has not handed out before. It is taken from below the
// kernel's ephemeral range: a port from inside it, once released, can be
// given to any process that binds ":0" (a service's admin or health
// listener) before the test's own process binds it, and a CI run lost a
// paper venue that way. Ports are drawn at random so that the test
// binaries go test runs side by side rarely pick the same one.
func FreePort(t testing.TB) int {
	t.Helper()
	lo, hi := portPool()
	for range 200 {
		port := lo + rand.IntN(hi-lo)
		if !reservePort(port) {
			continue
		}
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		ln.Close()
		return port
	}
	t.Fatalf("no free TCP port in %d-%d after 200 tries", lo, hi)
	return 0
}

var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

func reservePort(port int) bool {
	handedOut.Lock()
	defer handedOut.Unlock()
	if handedOut.ports[port] {
		return false
	}
	handedOut.ports[port] = true
	return true
}

// portPool is the range FreePort draws from: 20000 up to the start of the
// ephemeral range (32768 on Linux by default, read from /proc when it can
// be), which keeps clear of the well-known services below 10000.
func portPool() (lo, hi int) {
	lo, hi = 20000, 32768
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return lo, hi
	}
	fields := strings.Fields(string(b))
	if len(fields) == 0 {
		return lo, hi
	}
	if start, err := strconv.Atoi(fields[0]); err == nil && start > 12000 {
		hi = start
		lo = min(lo, start-2000)
		lo = max(lo, 10000)
	}
	return lo, hi
}

// Daemon is a dependency (nats-server, redis-server) run by the test as
// its own process on a fixed port, so a fault test can stop, kill or pause
// it and start it again where its clients reconnect. It never touches the
// machine's shared services. The process is killed when the test ends.
type Daemon struct {
	// Name names the daemon in messages.
	Name string
	// URL is how clients reach it.
	URL string
	// Port is its TCP port on 127.0.0.1.
	Port int

	t    testing.TB
	bin  string
	args []string
	// run, when set, adjusts each command before it starts (the user to
	// run as); stopSig and killSig replace SIGTERM and SIGKILL.
	run              func(*exec.Cmd)
	stopSig, killSig syscall.Signal

	mu     sync.Mutex
	cmd    *exec.Cmd
	done   chan struct{}
	output *Output
}

func newDaemon(t testing.TB, name, bin string, port int, url string, args []string, opts ...func(*Daemon)) *Daemon {
	d := &Daemon{Name: name, URL: url, Port: port, t: t, bin: bin, args: args, stopSig: syscall.SIGTERM, killSig: syscall.SIGKILL}
	for _, o := range opts {
		o(d)
	}
	t.Cleanup(func() {
		d.Kill()
		if t.Failed() {
			t.Logf("output of %s:\n%s", name, d.Output())
		}
	})
	d.Start()
	return d
}

// Start starts the daemon and waits until its port accepts connections.
func (d *Daemon) Start() {
	d.t.Helper()
	d.mu.Lock()
	if d.cmd != nil {
		d.mu.Unlock()
		d.t.Fatalf("testenv: %s is already running", d.Name)
	}
	out := &Output{}
	cmd := exec.Command(d.bin, d.args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = 5 * time.Second
	if d.run != nil {
		d.run(cmd)
	}
	if err := cmd.Start(); err != nil {
		d.mu.Unlock()
		d.t.Fatalf("testenv: start %s: %v", d.Name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	d.cmd, d.done, d.output = cmd, done, out
	d.mu.Unlock()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(d.Port), 200*time.Millisecond)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-done:
			d.t.Fatalf("testenv: %s exited at start:\n%s", d.Name, out)
		default:
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("testenv: %s not listening on %d within 10s:\n%s", d.Name, d.Port, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop ends the daemon with SIGTERM (Postgres: SIGINT, its fast
// shutdown), as an orderly restart would.
func (d *Daemon) Stop() { d.end(d.stopSig) }

// Kill ends the daemon with SIGKILL (Postgres: SIGQUIT, which takes its
// backends along), as a crash would. It is a no-op when the daemon is not
// running.
func (d *Daemon) Kill() { d.end(d.killSig) }

func (d *Daemon) end(sig syscall.Signal) {
	d.mu.Lock()
	cmd, done := d.cmd, d.done
	d.cmd = nil
	d.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGCONT) // a paused daemon cannot act on SIGTERM
	_ = cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// Pause stops the daemon with SIGSTOP: it keeps its connections open but
// answers nothing, like a hung server. Resume undoes it. Like
// Process.Pause, it returns once every thread of the daemon is stopped.
func (d *Daemon) Pause() {
	d.mu.Lock()
	cmd := d.cmd
	d.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGSTOP)
	waitStopped(d.t, d.Name, cmd.Process.Pid)
}

// Resume continues a paused daemon.
func (d *Daemon) Resume() { d.signal(syscall.SIGCONT) }

func (d *Daemon) signal(sig syscall.Signal) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cmd != nil {
		_ = d.cmd.Process.Signal(sig)
	}
}

// Output is what the current (or last) run of the daemon wrote.
func (d *Daemon) Output() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.output == nil {
		return ""
	}
	return d.output.String()
}

func findBinary(t testing.TB, name, install string) string {
	t.Helper()
	if bin, err := exec.LookPath(name); err == nil {
		return bin
	}
	for _, dir := range []string{"/usr/sbin", "/usr/bin", "/usr/local/bin"} {
		if _, err := os.Stat(dir + "/" + name); err == nil {
			return dir + "/" + name
		}
	}
	Unavailable(t, "the "+name+" binary", errors.New("not found in PATH, /usr/sbin or /usr/bin"), install)
	return ""
}

// NATSDaemon runs a nats-server of the test's own (JetStream on, files in
// a temporary directory kept across restarts, no authentication) on a
// free port.
func NATSDaemon(t testing.TB) *Daemon {
	t.Helper()
	return NATSDaemonConf(t, "")
}

// NATSDaemonConf is NATSDaemon with conf (nats-server configuration
// lines, such as "max_payload: 16KB") as its configuration file.
func NATSDaemonConf(t testing.TB, conf string) *Daemon {
	t.Helper()
	bin := findBinary(t, "nats-server", natsServerInstall)
	port := FreePort(t)
	args := []string{"-a", "127.0.0.1", "-p", strconv.Itoa(port), "-js", "-sd", t.TempDir()}
	if conf != "" {
		path := filepath.Join(t.TempDir(), "nats.conf")
		if err := os.WriteFile(path, []byte(conf+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, "-c", path)
	}
	return newDaemon(t, "nats-server", bin, port, fmt.Sprintf("nats://127.0.0.1:%d", port), args)
}

// RedisDaemon runs a redis-server of the test's own on a free port. With
// persist it writes every change to an append-only file (fsync always) in
// a temporary directory that restarts keep; without it, it keeps nothing
// on disk, like a cache.
func RedisDaemon(t testing.TB, persist bool) *Daemon {
	t.Helper()
	bin := findBinary(t, "redis-server", "apt-get install redis-server")
	port := FreePort(t)
	aof := "no"
	if persist {
		aof = "yes"
	}
	return newDaemon(t, "redis-server", bin, port, fmt.Sprintf("redis://127.0.0.1:%d/0", port),
		[]string{"--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--save", "", "--appendonly", aof,
			"--appendfsync", "always", "--dir", t.TempDir()})
}
