package hyperliquid

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/redis/go-redis/v9"
)

// drawNonces draws each times nonces per worker from every source at once
// and returns them per worker, in the order each worker got them.
func drawNonces(t *testing.T, sources []NonceSource, workers, each int, signer string) [][]uint64 {
	t.Helper()
	out := make([][]uint64, len(sources)*workers)
	var wg sync.WaitGroup
	for s, src := range sources {
		for w := range workers {
			wg.Add(1)
			go func(slot int) {
				defer wg.Done()
				for range each {
					n, err := src.Next(context.Background(), signer)
					if err != nil {
						t.Errorf("next nonce: %v", err)
						return
					}
					out[slot] = append(out[slot], n)
				}
			}(s*workers + w)
		}
	}
	wg.Wait()
	return out
}

// checkNonces requires every nonce distinct and each worker's strictly
// increasing, and returns them sorted.
func checkNonces(t *testing.T, drawn [][]uint64) []uint64 {
	t.Helper()
	var all []uint64
	for w, seq := range drawn {
		for i := 1; i < len(seq); i++ {
			if seq[i] <= seq[i-1] {
				t.Fatalf("worker %d: nonce %d after %d", w, seq[i], seq[i-1])
			}
		}
		all = append(all, seq...)
	}
	slices.Sort(all)
	for i := 1; i < len(all); i++ {
		if all[i] == all[i-1] {
			t.Fatalf("nonce %d handed out twice", all[i])
		}
	}
	return all
}

// TestNoncesMonotonicUnderConcurrency draws nonces from many goroutines on
// a frozen clock: all distinct, and increasing in the order handed out.
func TestNoncesMonotonicUnderConcurrency(t *testing.T) {
	frozen := time.UnixMilli(1735689600000)
	n := NewNonces(func() time.Time { return frozen })
	const workers, each = 16, 500
	all := checkNonces(t, drawNonces(t, []NonceSource{n}, workers, each, "0xagent"))
	if len(all) != workers*each || all[0] != uint64(frozen.UnixMilli()) {
		t.Fatalf("%d nonces from %d, want %d from the clock", len(all), all[0], workers*each)
	}
	if got, _ := n.Next(context.Background(), "0xother"); got != uint64(frozen.UnixMilli()) {
		t.Fatalf("another signer starts at the clock: got %d", got)
	}
	if got, _ := n.Next(context.Background(), "0xagent"); got != uint64(frozen.UnixMilli())+workers*each {
		t.Fatalf("next nonce %d, want clock+%d", got, workers*each)
	}
}

// TestNoncesAcrossReplicas: connector replicas are separate processes
// with separate Redis connections and clocks that need not agree. Sharing
// RedisNonces, their nonces for one signer never repeat and each replica's
// keep increasing, even when both clocks read the same millisecond (the
// worst case) or one runs an hour behind. Per-process Nonces in the same
// situation hand out the same nonces twice, which is why the connector
// process uses RedisNonces whenever PERPGATE_REDIS_URL is set.
func TestNoncesAcrossReplicas(t *testing.T) {
	rdb, prefix := testenv.RedisPrefix(t)
	replica := func(now func() time.Time) NonceSource {
		// A client of its own, as another process would have.
		c := redis.NewClient(rdb.Options())
		t.Cleanup(func() { c.Close() })
		return NewRedisNonces(c, prefix+":hl:nonce:", now)
	}
	frozen := time.UnixMilli(1735689600000)
	clock := func() time.Time { return frozen }
	const workers, each = 8, 150

	t.Run("same millisecond on both replicas", func(t *testing.T) {
		all := checkNonces(t, drawNonces(t, []NonceSource{replica(clock), replica(clock)}, workers, each, "0xsame"))
		if len(all) != 2*workers*each || all[0] != uint64(frozen.UnixMilli()) || all[len(all)-1] != all[0]+2*workers*each-1 {
			t.Fatalf("want %d consecutive nonces from the clock, got %d from %d to %d", 2*workers*each, len(all), all[0], all[len(all)-1])
		}
	})
	t.Run("one replica an hour behind", func(t *testing.T) {
		behind := func() time.Time { return frozen.Add(-time.Hour) }
		drawn := drawNonces(t, []NonceSource{replica(clock), replica(behind)}, workers, each, "0xskew")
		all := checkNonces(t, drawn)
		if all[0] < uint64(frozen.Add(-time.Hour).UnixMilli()) {
			t.Fatalf("nonce %d below both clocks", all[0])
		}
		// Whoever comes after the fast replica continues above it.
		late, _ := replica(behind).Next(context.Background(), "0xskew")
		if late <= all[len(all)-1] {
			t.Fatalf("nonce %d from the slow clock is not above %d", late, all[len(all)-1])
		}
	})
	t.Run("fast-forwards to the clock", func(t *testing.T) {
		r := replica(clock)
		first, _ := r.Next(context.Background(), "0xff")
		later := frozen.Add(time.Minute)
		n, err := NewRedisNonces(rdb, prefix+":hl:nonce:", func() time.Time { return later }).Next(context.Background(), "0xff")
		if err != nil || n != uint64(later.UnixMilli()) || first != uint64(frozen.UnixMilli()) {
			t.Fatalf("first %d then %d (%v), want the clock each time", first, n, err)
		}
	})
	t.Run("per-process nonces collide across replicas", func(t *testing.T) {
		drawn := drawNonces(t, []NonceSource{NewNonces(clock), NewNonces(clock)}, 1, 5, "0xlocal")
		if !slices.Equal(drawn[0], drawn[1]) {
			t.Fatalf("expected the same nonces from two unshared sources on one clock: %v %v", drawn[0], drawn[1])
		}
	})
	t.Run("unreachable store is an error", func(t *testing.T) {
		dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
		t.Cleanup(func() { dead.Close() })
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if _, err := NewRedisNonces(dead, prefix, clock).Next(ctx, "0xdead"); err == nil {
			t.Fatal("a nonce without its store")
		}
	})
}

// TestNoncesAcrossProcesses: the same as TestNoncesAcrossReplicas with the
// replicas as two OS processes (this test binary run again), both clocks
// stuck on one millisecond: the nonces they hand out for one signer never
// repeat and each worker's keep increasing.
func TestNoncesAcrossProcesses(t *testing.T) {
	_, prefix := testenv.RedisPrefix(t)
	const workers, each = 4, 100
	cmds := make([]*exec.Cmd, 2)
	outs := make([]*bytes.Buffer, 2)
	for i := range cmds {
		cmds[i] = exec.Command(os.Args[0], "-test.run=^TestNonceChildProcess$", "-test.count=1")
		cmds[i].Env = append(os.Environ(), "HL_NONCE_CHILD_PREFIX="+prefix+":hl:nonce:", fmt.Sprintf("HL_NONCE_CHILD_DRAWS=%d,%d", workers, each))
		outs[i] = &bytes.Buffer{}
		cmds[i].Stdout, cmds[i].Stderr = outs[i], outs[i]
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	var drawn [][]uint64
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("replica process %d: %v\n%s", i, err, outs[i])
		}
		seqs := map[string][]uint64{}
		for _, line := range strings.Split(outs[i].String(), "\n") {
			var w string
			var n uint64
			if _, err := fmt.Sscanf(line, "nonce %s %d", &w, &n); err == nil {
				seqs[w] = append(seqs[w], n)
			}
		}
		if len(seqs) != workers {
			t.Fatalf("replica process %d reported %d workers:\n%s", i, len(seqs), outs[i])
		}
		for _, s := range seqs {
			drawn = append(drawn, s)
		}
	}
	if all := checkNonces(t, drawn); len(all) != 2*workers*each {
		t.Fatalf("%d nonces, want %d", len(all), 2*workers*each)
	}
}

// TestNonceChildProcess is one replica of TestNoncesAcrossProcesses; it
// does nothing unless started by it.
func TestNonceChildProcess(t *testing.T) {
	prefix := os.Getenv("HL_NONCE_CHILD_PREFIX")
	if prefix == "" {
		return
	}
	var workers, each int
	if _, err := fmt.Sscanf(os.Getenv("HL_NONCE_CHILD_DRAWS"), "%d,%d", &workers, &each); err != nil {
		t.Fatal(err)
	}
	frozen := time.UnixMilli(1735689600000)
	src := NewRedisNonces(testenv.Redis(t), prefix, func() time.Time { return frozen })
	for w, seq := range drawNonces(t, []NonceSource{src}, workers, each, "0xprocesses") {
		for _, n := range seq {
			fmt.Printf("nonce w%d %d\n", w, n)
		}
	}
}
