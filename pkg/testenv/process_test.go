package testenv

import (
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperEnv makes the test binary act as the process Start runs: "serve"
// logs and waits for SIGTERM, then exits 0; "fail-on-term" exits 3 on
// SIGTERM; "exit" exits 2 at once.
const helperEnv = "TESTENV_HELPER"

func TestMain(m *testing.M) {
	mode := os.Getenv(helperEnv)
	switch mode {
	case "":
		os.Exit(m.Run())
	case "exit":
		fmt.Println("giving up")
		os.Exit(2)
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	fmt.Printf(`{"msg":"ready","env":%q}`+"\n", strings.Join(os.Environ(), " "))
	fmt.Println("a line that is not JSON")
	<-term
	if mode == "fail-on-term" {
		os.Exit(3)
	}
	os.Exit(0)
}

// processTB is a testing.TB that records what a Process reports instead of
// failing the calling test, and runs its cleanups when told.
type processTB struct {
	testing.TB
	fatal    string
	errors   []string
	logs     []string
	cleanups []func()
}

func (r *processTB) Helper()          {}
func (r *processTB) Failed() bool     { return r.fatal != "" || len(r.errors) > 0 }
func (r *processTB) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *processTB) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *processTB) Logf(format string, args ...any) {
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}
func (r *processTB) Fatalf(format string, args ...any) {
	r.fatal = fmt.Sprintf(format, args...)
	panic(r)
}

// end runs the cleanups as the end of a test would, last first.
func (r *processTB) end() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

func TestProcess(t *testing.T) {
	waitExit := func(p *Process) {
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			t.Fatal("the helper process did not exit")
		}
	}
	tests := []struct {
		name   string
		mode   string
		run    func(r *processTB, p *Process) // the test's body
		fatal  string                         // in the Fatalf the body ends with
		errors []string                       // in each Errorf, in order
	}{
		{name: "stopped when the test ends", mode: "serve"},
		{name: "stopped by the test", mode: "serve", run: func(r *processTB, p *Process) {
			p.Stop()
			p.Check(r)
		}},
		{name: "non-zero exit after SIGTERM", mode: "fail-on-term",
			errors: []string{"helper exited with exit status 3 after SIGTERM; output:\n{\"msg\":\"ready\""}},
		{name: "exit before the test ends", mode: "exit", run: func(r *processTB, p *Process) { waitExit(p) },
			errors: []string{"helper exited before the test stopped it (exit status 2); output:\ngiving up"}},
		{name: "exit seen by Check", mode: "exit", run: func(r *processTB, p *Process) {
			waitExit(p)
			p.Check(r)
		}, fatal: "helper exited early (exit status 2); output:\ngiving up"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &processTB{TB: t}
			p := Start(r, "helper", os.Args[0], map[string]string{helperEnv: tt.mode})
			if tt.mode != "exit" {
				// SIGTERM before the handler is installed would kill it.
				Poll(t, "the helper logs ready", 10*time.Second, func() error {
					if recs := p.Records(); len(recs) != 1 || recs[0]["msg"] != "ready" {
						return fmt.Errorf("records %v of output %q", recs, p.Output)
					}
					return nil
				})
				want := "GORACE=atexit_sleep_ms=0 " + helperEnv + "=" + tt.mode
				if env := p.Records()[0]["env"]; env != want {
					t.Errorf("environment of the process: got %q, want %q", env, want)
				}
			}
			if tt.run != nil {
				func() {
					defer func() {
						if v := recover(); v != nil && v != r {
							panic(v)
						}
					}()
					tt.run(r, p)
				}()
			}
			if tt.fatal == "" && r.fatal != "" || !strings.Contains(r.fatal, tt.fatal) {
				t.Errorf("Fatalf: got %q, want one containing %q", r.fatal, tt.fatal)
			}
			r.end()
			if len(r.errors) != len(tt.errors) {
				t.Fatalf("Errorf: got %q, want %q", r.errors, tt.errors)
			}
			for i, want := range tt.errors {
				if !strings.Contains(r.errors[i], want) {
					t.Errorf("Errorf: got %q, want one containing %q", r.errors[i], want)
				}
			}
			logged := strings.Join(r.logs, "\n")
			if r.Failed() != strings.Contains(logged, "output of helper:\n") {
				t.Errorf("failed %t, but logged %q", r.Failed(), logged)
			}
			select {
			case <-p.done:
			default:
				t.Error("the process runs on after the test ended")
			}
		})
	}
}
