package deploy

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/testenv"
)

// repoRoot is the workspace root, one level above this module.
func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.work")); err != nil {
		t.Fatalf("no go.work in %s: %v", root, err)
	}
	return root
}

// buildCommands builds the named commands (directories under the
// workspace root) into a temporary directory and returns it; with -race
// when this test binary has it, so the services' own races fail the test.
func buildCommands(t testing.TB, pkgs ...string) string {
	t.Helper()
	root := repoRoot(t)
	dir := t.TempDir()
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	if raceEnabled() {
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
	t.Logf("built %d commands in %s", len(pkgs), time.Since(start).Round(time.Millisecond))
	return dir
}

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

// process is a running service binary.
type process struct {
	name string
	out  *testenv.Output
	done chan error
}

// startProcess runs bin with env as its whole environment and stops it
// with SIGTERM when the test ends; its output is logged if the test failed.
func startProcess(t *testing.T, name, bin string, env map[string]string) *process {
	t.Helper()
	vars := []string{"GORACE=atexit_sleep_ms=0"} // a race-enabled binary otherwise sleeps 1 s on exit
	for k, v := range env {
		vars = append(vars, k+"="+v)
	}
	sort.Strings(vars)
	p := &process{name: name, out: &testenv.Output{}, done: make(chan error, 1)}
	cmd := exec.Command(bin)
	cmd.Env = vars
	cmd.Stdout, cmd.Stderr = p.out, p.out
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-p.done
			t.Errorf("%s did not stop within 10s of SIGTERM", name)
		}
		if t.Failed() {
			t.Logf("output of %s:\n%s", name, p.out)
		}
	})
	return p
}

// records returns the process's JSON log lines, decoded.
func (p *process) records() []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(p.out.String()))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		var rec map[string]any
		if json.Unmarshal(sc.Bytes(), &rec) == nil {
			out = append(out, rec)
		}
	}
	return out
}

// field waits for p's first log line with message msg and returns its
// string field (the services listen on port 0 and log the address).
func (p *process) field(t *testing.T, msg, field string) string {
	t.Helper()
	var v string
	poll(t, fmt.Sprintf("%s logs %q", p.name, msg), 15*time.Second, func() error {
		select {
		case err := <-p.done:
			t.Fatalf("%s exited (%v):\n%s", p.name, err, p.out)
		default:
		}
		for _, rec := range p.records() {
			if rec["msg"] == msg {
				if v, _ = rec[field].(string); v != "" {
					return nil
				}
				t.Fatalf("%s: %q line has no %s", p.name, msg, field)
			}
		}
		return errors.New("no such line yet")
	})
	return v
}

// poll calls f until it returns nil, failing t after timeout.
func poll(t testing.TB, what string, timeout time.Duration, f func() error) {
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
