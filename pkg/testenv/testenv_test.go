package testenv_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/perpgate/perpgate/pkg/testenv"
)

func TestPrefix(t *testing.T) {
	tests := []struct {
		name string
	}{
		{name: "plain"},
		{name: "Mixed Case/with.dots*and>wildcards"},
		{name: strings.Repeat("very long name ", 10)},
	}
	valid := regexp.MustCompile(`^t_[a-z0-9_]*[a-z0-9]_[0-9a-f]{10}$`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := testenv.Prefix(t), testenv.Prefix(t)
			if a == b {
				t.Fatalf("two prefixes are both %q", a)
			}
			for _, p := range []string{a, b} {
				if !valid.MatchString(p) || len(p) > 40 {
					t.Fatalf("prefix %q is not a safe key, subject token and identifier of at most 40 characters", p)
				}
			}
		})
	}
}

func TestEmbeddedNATS(t *testing.T) {
	s := testenv.EmbeddedNATS(t)
	for _, opt := range []nats.Option{nil, nats.InProcessServer(s)} {
		var opts []nats.Option
		if opt != nil {
			opts = append(opts, opt)
		}
		nc, err := nats.Connect(s.ClientURL(), opts...)
		if err != nil {
			t.Fatal(err)
		}
		subject := testenv.Prefix(t) + ".echo"
		sub, err := nc.Subscribe(subject, func(m *nats.Msg) { _ = m.Respond(m.Data) })
		if err != nil {
			t.Fatal(err)
		}
		reply, err := nc.Request(subject, []byte("hi"), 2*time.Second)
		if err != nil || string(reply.Data) != "hi" {
			t.Fatalf("request: %v, %v", reply, err)
		}
		_ = sub.Unsubscribe()
		nc.Close()
	}
}

func TestEmbeddedNATSShutdownOnCleanup(t *testing.T) {
	var url string
	t.Run("inner", func(t *testing.T) {
		url = testenv.EmbeddedNATS(t).ClientURL()
	})
	if _, err := nats.Connect(url, nats.Timeout(time.Second)); err == nil {
		t.Fatalf("server at %s still accepts connections after the test ended", url)
	}
}

func TestNATS(t *testing.T) {
	nc := testenv.NATS(t)
	if !nc.IsConnected() {
		t.Fatal("not connected")
	}
	if url := testenv.NATSURL(t); url == "" {
		t.Fatal("empty URL")
	}
}

func TestRedisPrefixCleansUp(t *testing.T) {
	c := testenv.Redis(t)
	ctx := context.Background()
	var prefix string
	t.Run("inner", func(t *testing.T) {
		var ic = c
		ic, prefix = testenv.RedisPrefix(t)
		for _, k := range []string{":a", ":b:c", ":d"} {
			if err := ic.Set(ctx, prefix+k, "1", time.Minute).Err(); err != nil {
				t.Fatal(err)
			}
		}
	})
	n, err := c.Exists(ctx, prefix+":a", prefix+":b:c", prefix+":d").Result()
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("%d keys under %s survived the test", n, prefix)
	}
}

func TestPostgres(t *testing.T) {
	var schema, dsn string
	t.Run("inner", func(t *testing.T) {
		pool, d := testenv.Postgres(t)
		dsn = d
		ctx := context.Background()
		if err := pool.QueryRow(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(schema, "t_testpostgres_inner_") {
			t.Fatalf("current_schema() = %q, want the test schema", schema)
		}
		if _, err := pool.Exec(ctx, "CREATE TABLE widgets (id int)"); err != nil {
			t.Fatal(err)
		}
		var where string
		if err := pool.QueryRow(ctx, "SELECT table_schema FROM information_schema.tables WHERE table_name = 'widgets' AND table_schema = $1", schema).Scan(&where); err != nil {
			t.Fatalf("unqualified table not created in %s: %v", schema, err)
		}
	})
	if !strings.Contains(dsn, "search_path="+schema) {
		t.Fatalf("dsn %q does not set search_path to %s", dsn, schema)
	}
	pool, _ := testenv.Postgres(t)
	var n int
	if err := pool.QueryRow(context.Background(), "SELECT count(*) FROM information_schema.schemata WHERE schema_name = $1", schema).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("schema %s still exists after its test ended", schema)
	}
}
