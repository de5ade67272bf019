package testenv

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// stopTimeout is how long a process may take to exit after SIGTERM before
// it is killed and the test fails.
const stopTimeout = 10 * time.Second

// logTail bounds how much of a process's output is logged when the test
// fails: the end, where a panic or a race report is.
const logTail = 16 << 10

// WorkspaceRoot returns the directory of the go.work file at or above the
// working directory, failing t if there is none.
func WorkspaceRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("testenv: no go.work above the working directory")
		}
		dir = parent
	}
}

// Build builds the commands pkgs (package paths relative to the workspace
// root, such as "./services/edge/cmd/edge") and returns the directory of
// the binaries; each is named after the last element of its path. The
// binaries are built with -race when the test binary was, so the services'
// own races fail the test too.
//
// The directory is shared by every test process of this workspace (one per
// race setting, under the system temp dir) and builds into it take a file
// lock: the go command relinks only what changed, so packages that need
// the same binaries, and later runs, do not link them again. Callers must
// not move or change what is in it.
func Build(t testing.TB, pkgs ...string) string {
	t.Helper()
	return build(t, raceEnabled(), pkgs)
}

func build(t testing.TB, race bool, pkgs []string) string {
	t.Helper()
	root := WorkspaceRoot(t)
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s|race=%v|uid=%d", root, race, os.Getuid())))
	dir := filepath.Join(os.TempDir(), "perpgate-testbin-"+hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatalf("testenv: build dir: %v", err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatalf("testenv: build lock: %v", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatalf("testenv: build lock: %v", err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	if race {
		args = append(args, "-race")
	}
	args = append(args, pkgs...)
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOWORK="+filepath.Join(root, "go.work"))
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Logf("built %s in %s", strings.Join(pkgs, ", "), time.Since(start).Round(time.Millisecond))
	return dir
}

// raceEnabled reports whether the running binary was built with -race.
func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// Process is a binary started by Start, with its stdout and stderr.
type Process struct {
	// Name names the process in messages.
	Name string
	// Output is what the process has written so far.
	Output *Output

	t        testing.TB
	bin      string
	args     []string
	env      map[string]string
	cmd      *exec.Cmd
	done     chan struct{} // closed once the process has exited
	err      error         // Wait's result; read only after done
	stopping atomic.Bool   // the test stopped the process, or its exit was reported
	stopOnce sync.Once
}

// Start runs bin with args as a process called name with env as its whole
// environment, plus GORACE=atexit_sleep_ms=0 unless env sets GORACE (a
// race-enabled binary otherwise sleeps 1 s on exit). The process is
// stopped with Stop when the test ends, and its output is logged if the
// test failed. A process that exits before the test stops it fails the
// test: at once through Check, else when the test ends.
func Start(t testing.TB, name, bin string, env map[string]string, args ...string) *Process {
	t.Helper()
	vars := []string{}
	if _, ok := env["GORACE"]; !ok {
		vars = append(vars, "GORACE=atexit_sleep_ms=0")
	}
	for k, v := range env {
		vars = append(vars, k+"="+v)
	}
	sort.Strings(vars)
	p := &Process{Name: name, Output: &Output{}, t: t, bin: bin, args: args, env: env, done: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = vars
	p.cmd.Stdout, p.cmd.Stderr = p.Output, p.Output
	p.cmd.WaitDelay = 5 * time.Second
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			out := p.Output.String()
			if len(out) > logTail {
				out = "...\n" + out[len(out)-logTail:]
			}
			t.Logf("output of %s:\n%s", name, out)
		}
	})
	return p
}

// Stop sends SIGTERM and waits for a clean exit; a process that takes more
// than 10 s is killed. Either failure, a non-zero exit, or a process that
// had already exited unreported, fails the test. Only the first call does
// anything.
func (p *Process) Stop() {
	p.stopOnce.Do(func() {
		reported := p.stopping.Swap(true)
		select {
		case <-p.done:
			if !reported {
				p.t.Errorf("%s exited before the test stopped it (%v); output:\n%s", p.Name, p.err, p.Output)
			}
			return
		default:
		}
		_ = p.cmd.Process.Signal(syscall.SIGCONT) // a paused process cannot act on SIGTERM
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			p.t.Errorf("%s: SIGTERM: %v", p.Name, err)
		}
		select {
		case <-p.done:
		case <-time.After(stopTimeout):
			_ = p.cmd.Process.Kill()
			<-p.done
			p.t.Errorf("%s did not exit within %s of SIGTERM; output:\n%s", p.Name, stopTimeout, p.Output)
			return
		}
		if p.err != nil {
			p.t.Errorf("%s exited with %v after SIGTERM; output:\n%s", p.Name, p.err, p.Output)
		}
	})
}

// Kill ends the process with SIGKILL, as a crash would, and waits for it;
// the exit is not a test failure.
func (p *Process) Kill() {
	p.stopOnce.Do(func() {
		p.stopping.Store(true)
		_ = p.cmd.Process.Kill()
		<-p.done
	})
}

// Pause stops the process with SIGSTOP: its connections stay open but it
// does nothing, like a hung service. Resume undoes it. It returns once the
// kernel shows the process stopped: the signal is delivered
// asynchronously, and on a loaded machine a request sent right after
// kill(2) could otherwise still be served.
func (p *Process) Pause() {
	_ = p.cmd.Process.Signal(syscall.SIGSTOP)
	waitStopped(p.t, p.Name, p.cmd.Process.Pid)
}

// pauseTimeout bounds how long a paused process's threads may take to stop.
const pauseTimeout = 10 * time.Second

// waitStopped returns once every thread of pid is stopped. The group stop
// SIGSTOP starts begins only when the one thread the kernel picked for the
// signal runs; on a loaded machine another thread, woken by a request,
// can run first and answer it. A process still running after pauseTimeout
// fails t (Errorf: Pause may be called from a subtest of the test that
// started the process), as a test relying on the pause would be wrong.
func waitStopped(t testing.TB, name string, pid int) {
	for deadline := time.Now().Add(pauseTimeout); !allThreadsStopped(pid); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("testenv: %s still running %s after SIGSTOP", name, pauseTimeout)
			return
		}
	}
}

// allThreadsStopped reports whether every thread of pid is in the stopped
// state, or that it cannot tell (not Linux, or the process is gone).
func allThreadsStopped(pid int) bool {
	stats, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // a thread that ended
		}
		// The state follows the ")" that ends the command name.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 || i+2 >= len(b) || (b[i+2] != 'T' && b[i+2] != 't') {
			return false
		}
	}
	return true
}

// Resume continues a paused process.
func (p *Process) Resume() { _ = p.cmd.Process.Signal(syscall.SIGCONT) }

// Restart starts the same binary with the same environment again, as a
// new Process; p must have been stopped or killed.
func (p *Process) Restart(t testing.TB) *Process {
	t.Helper()
	select {
	case <-p.done:
	default:
		t.Fatalf("testenv: restart %s while it runs", p.Name)
	}
	return Start(t, p.Name, p.bin, p.env, p.args...)
}

// Field waits for the process's first JSON log line with message msg and
// returns its string field key (services listen on port 0 and log the
// address). It fails t if the process exits meanwhile or the line lacks
// the field.
func (p *Process) Field(t testing.TB, msg, key string) string {
	t.Helper()
	var v string
	Poll(t, fmt.Sprintf("%s logs %q", p.Name, msg), 15*time.Second, func() error {
		p.Check(t)
		for _, rec := range p.Records() {
			if rec["msg"] == msg {
				if v, _ = rec[key].(string); v != "" {
					return nil
				}
				t.Fatalf("%s: %q line has no %s", p.Name, msg, key)
			}
		}
		return errors.New("no such line yet")
	})
	return v
}

// Check fails t at once if p has exited though the test did not stop it.
// An exit is reported once, by Check or Stop.
func (p *Process) Check(t testing.TB) {
	t.Helper()
	select {
	case <-p.done:
		if !p.stopping.Swap(true) {
			t.Fatalf("%s exited early (%v); output:\n%s", p.Name, p.err, p.Output)
		}
	default:
	}
}

// Records returns the process's JSON log lines decoded; other lines (such
// as a race report) are left out.
func (p *Process) Records() []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(p.Output.String()))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		var rec map[string]any
		if json.Unmarshal(sc.Bytes(), &rec) == nil {
			out = append(out, rec)
		}
	}
	return out
}

// Poll calls f until it returns nil, failing t with what and f's last
// error after timeout. It is how a test waits for an eventual property
// instead of sleeping.
func Poll(t testing.TB, what string, timeout time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s: %v", what, timeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
