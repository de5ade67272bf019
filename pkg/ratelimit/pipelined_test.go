package ratelimit_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/ratelimit"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/redis/go-redis/v9"
)

func TestPipelined(t *testing.T) {
	testLimiter(t, func(t *testing.T, now func() time.Time) ratelimit.Limiter {
		c, prefix := testenv.RedisPrefix(t)
		return ratelimit.NewPipelined(ratelimit.NewRedis(c, prefix, now))
	})
}

// roundTrips counts what a client sends to Redis: single commands and
// pipelines each count once.
type roundTrips struct{ n atomic.Int64 }

func (r *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }
func (r *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { r.n.Add(1); return next(ctx, cmd) }
}
func (r *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { r.n.Add(1); return next(ctx, cmds) }
}

// TestPipelinedSharesRoundTrips: concurrent calls count exactly as one
// at a time would, across two replicas, in fewer round trips than calls.
func TestPipelinedSharesRoundTrips(t *testing.T) {
	_, prefix := testenv.RedisPrefix(t)
	clk := testenv.NewClock(at(t, "2025-03-09T12:00:00Z"))
	var trips roundTrips
	ca, cb := testenv.Redis(t), testenv.Redis(t)
	ca.AddHook(&trips)
	a := ratelimit.NewPipelined(ratelimit.NewRedis(ca, prefix, clk.Now))
	b := ratelimit.NewPipelined(ratelimit.NewRedis(cb, prefix, clk.Now))
	ok, no := hammer(t, 400, ratelimit.Limits{PerMinute: 30, PerDay: 5000}, a, b)
	if ok != 30 || no != 370 {
		t.Fatalf("allowed %d, denied %d across two replicas; want 30 and 370", ok, no)
	}
	if n := trips.n.Load(); n >= 200 {
		t.Errorf("200 concurrent calls took %d round trips; batching should need fewer", n)
	}
}

// TestPipelinedReloadsScript: after Redis forgets its scripts (a restart
// does), calls load it again instead of failing.
func TestPipelinedReloadsScript(t *testing.T) {
	c, prefix := testenv.RedisPrefix(t)
	l := ratelimit.NewPipelined(ratelimit.NewRedis(c, prefix, nil))
	lim := ratelimit.Limits{PerMinute: 100, PerDay: 100}
	if _, err := l.Allow(context.Background(), "k", lim); err != nil {
		t.Fatal(err)
	}
	if err := c.ScriptFlush(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	ok, _ := hammer(t, 20, lim, l)
	if ok != 20 {
		t.Fatalf("after SCRIPT FLUSH %d of 20 allowed", ok)
	}
}

// TestPipelinedWaiterGivesUp: a call whose context ends while it waits
// for the batch ahead returns at once with the context's error, and the
// calls after it are still answered.
func TestPipelinedWaiterGivesUp(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 4)
	go func() { // a Redis that reads and never answers
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- conn
		}
	}()
	c := redis.NewClient(&redis.Options{Addr: ln.Addr().String(), Protocol: 2, ReadTimeout: 200 * time.Millisecond, DisableIdentity: true})
	defer c.Close()
	l := ratelimit.NewPipelined(ratelimit.NewRedis(c, "t", nil))
	lim := ratelimit.Limits{PerMinute: 1, PerDay: 1}
	leaderCtx, stopLeader := context.WithTimeout(context.Background(), time.Second)
	defer stopLeader()
	leader := make(chan error, 1)
	go func() { _, err := l.Allow(leaderCtx, "a", lim); leader <- err }()
	conn := <-accepted // the leader's batch is in flight and stuck
	defer conn.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = l.Allow(ctx, "b", lim)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > time.Second {
		t.Fatalf("waiting call: %v after %v; want its deadline within a second", err, time.Since(start))
	}
	if err := <-leader; err == nil || !strings.HasPrefix(err.Error(), "rate limit: ") {
		t.Fatalf("leader: %v, want a rate limit error once its deadline passed", err)
	}
}

// TestPipelinedOutageIsQuick: with Redis unreachable, concurrent calls all
// fail as quickly as one alone (the edge's 503 must be quick): those that
// waited behind a failed attempt fail with it.
func TestPipelinedOutageIsQuick(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	l := ratelimit.NewPipelined(ratelimit.NewRedis(c, "t", nil))
	errs := make(chan error, 16)
	start := time.Now()
	for range cap(errs) {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, err := l.Allow(ctx, "k", ratelimit.Limits{PerMinute: 1, PerDay: 1})
			errs <- err
		}()
	}
	for range cap(errs) {
		if err := <-errs; err == nil {
			t.Fatal("allowed with Redis down")
		}
	}
	if took := time.Since(start); took > 2500*time.Millisecond {
		t.Errorf("16 calls took %v to fail; want all within about 2 s, as one alone", took)
	}
}

// TestFailFastRefusedRedis: a limiter on a client set up with FailFast,
// as the edge's is, fails within a fraction of a second when nothing
// listens where Redis was (go-redis's default dial retries took 1.7 s).
func TestFailFastRefusedRedis(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	c := redis.NewClient(ratelimit.FailFast(&redis.Options{Addr: addr}))
	defer c.Close()
	l := ratelimit.NewPipelined(ratelimit.NewRedis(c, "t", nil))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	if _, err := l.Allow(ctx, "k", ratelimit.Limits{PerMinute: 1, PerDay: 1}); err == nil {
		t.Fatal("allowed with Redis down")
	}
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Errorf("failed after %v; want within 500 ms", took)
	}
}
