package testenv

import (
	"fmt"
	"strings"
	"testing"
)

// recorder is a testing.TB that records how a helper gave up instead of
// ending the calling test.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper()        {}
func (r *recorder) Name() string   { return "TestRecorder" }
func (r *recorder) Cleanup(func()) {}
func (r *recorder) Skipf(format string, args ...any) {
	r.skipped = fmt.Sprintf(format, args...)
	panic(r)
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	panic(r)
}

// call runs f, catching the panic recorder uses to stop it like
// runtime.Goexit would.
func call(r *recorder, f func()) {
	defer func() {
		if p := recover(); p != nil && p != r {
			panic(p)
		}
	}()
	f()
}

func TestUnavailable(t *testing.T) {
	tests := []struct {
		name    string
		require string
		call    func(tb testing.TB)
		skip    bool
		want    []string
	}{
		{name: "redis skips", call: func(tb testing.TB) { Redis(tb) }, skip: true,
			want: []string{"Redis at redis://127.0.0.1:1/0 is unreachable", "redis-server --daemonize yes", "PERPGATE_REQUIRE_SERVICES=1"}},
		{name: "redis fails when required", require: "1", call: func(tb testing.TB) { Redis(tb) },
			want: []string{"Redis at redis://127.0.0.1:1/0 is unreachable", "PERPGATE_REQUIRE_SERVICES=1", "redis-server --daemonize yes"}},
		{name: "nats skips", call: func(tb testing.TB) { NATS(tb) }, skip: true,
			want: []string{"NATS at nats://127.0.0.1:1 is unreachable", "start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server"}},
		{name: "nats fails when required", require: "1", call: func(tb testing.TB) { NATS(tb) },
			want: []string{"NATS at nats://127.0.0.1:1 is unreachable", "nats-server"}},
		{name: "postgres skips", call: func(tb testing.TB) { Postgres(tb) }, skip: true,
			want: []string{"Postgres at postgres://postgres@127.0.0.1:1/test", "pg_ctlcluster --skip-systemctl-redirect"}},
		{name: "postgres fails when required", require: "1", call: func(tb testing.TB) { Postgres(tb) },
			want: []string{"Postgres at postgres://postgres:xxxxx@127.0.0.1:1/test", "pg_ctlcluster"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("PERPGATE_TEST_REDIS_URL", "redis://127.0.0.1:1/0")
			t.Setenv("PERPGATE_TEST_NATS_URL", "nats://127.0.0.1:1")
			db := "postgres://postgres@127.0.0.1:1/test?sslmode=disable"
			if tt.require == "1" {
				db = "postgres://postgres:hunter2@127.0.0.1:1/test?sslmode=disable"
			}
			t.Setenv("PERPGATE_TEST_DATABASE_URL", db)
			t.Setenv("PERPGATE_REQUIRE_SERVICES", tt.require)
			r := &recorder{TB: t}
			call(r, func() { tt.call(r) })
			got := r.failed
			if tt.skip {
				if r.failed != "" || r.skipped == "" {
					t.Fatalf("want a skip, got skip %q fail %q", r.skipped, r.failed)
				}
				got = r.skipped
			} else if r.skipped != "" || r.failed == "" {
				t.Fatalf("want a failure, got skip %q fail %q", r.skipped, r.failed)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("message %q does not contain %q", got, w)
				}
			}
			if strings.Contains(got, "hunter2") {
				t.Errorf("message %q shows the database password", got)
			}
		})
	}
}
