package standalone

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/perpgate/perpgate/pkg/appendlog"
)

// SoakOptions size `perpgate bench --soak N`.
type SoakOptions struct {
	Pairs int     // placements, each cancelled after it rests
	Rate  float64 // pairs a second
	Exe   string  // the perpgate binary; empty means this process's own
}

// soakBatches is how many times the soak samples memory and disk.
const soakBatches = 10

// soakWarmUp is the least time before the soak's warm memory sample:
// JetStream keeps every account event's id for its 2-minute duplicate
// window and purges them once a window, so its index holds up to two
// windows of events and grows until then with the rate, not the count.
const soakWarmUp = 4 * time.Minute

// Soak runs `perpgate serve` on a fresh data directory and places and
// cancels opts.Pairs resting paper orders at a steady rate from a load
// generator process, then reports serve's memory after the warm-up (at
// least the first fifth and soakWarmUp) and at the end, the data directory's growth per 1,000
// pairs, and how long serve takes to restart on that directory until it
// answers a trading call.
func Soak(ctx context.Context, out io.Writer, opts SoakOptions, dataDir string) error {
	exe := opts.Exe
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return fmt.Errorf("soak: find own binary: %w", err)
		}
	}
	if opts.Pairs < soakBatches || opts.Rate <= 0 {
		return fmt.Errorf("soak: need at least %d pairs and a positive rate", soakBatches)
	}
	gwAddr, adminAddr, _, err := freeAddrs()
	if err != nil {
		return err
	}
	env := append(os.Environ(), "PERPGATE_DATA_DIR="+dataDir, "PERPGATE_LISTEN_ADDR="+gwAddr, "PERPGATE_ADMIN_ADDR="+adminAddr,
		"PERPGATE_TIER_LIMITS_BUILDER=1000000000/1000000000", "PERPGATE_LOG_LEVEL=warn", "PERPGATE_NATS_URL=",
		"PERPGATE_REDIS_URL=", "PERPGATE_DATABASE_URL=")
	stop, pid, err := startChildPID(ctx, exe, env, "serve")
	if err != nil {
		return err
	}
	if err := waitReady(ctx, "http://"+gwAddr+"/healthz"); err != nil {
		stop()
		return err
	}
	var boot Bootstrap
	b, err := os.ReadFile(filepath.Join(dataDir, "bootstrap.json"))
	if err == nil {
		err = json.Unmarshal(b, &boot)
	}
	if err != nil {
		stop()
		return fmt.Errorf("soak: read the gateway's bootstrap.json: %w", err)
	}
	gw := loadTarget{url: "http://" + gwAddr + "/v1", key: boot.APIKey}
	if err := prepareAccount(ctx, gw, boot.CredentialID); err != nil {
		stop()
		return err
	}
	diskStart := dirBytes(dataDir)
	batch := opts.Pairs / soakBatches
	per := time.Duration(float64(batch)/opts.Rate*float64(time.Second)) * 3 // a bound, not the pace
	fmt.Fprintf(out, "soak: %d place+cancel pairs at %.0f a second on perpgate serve (paper), load from a separate process\n",
		opts.Pairs, opts.Rate)
	var rssWarm, rssEnd float64
	warmAt, began := 0, time.Now()
	failures := 0
	var failedBy map[string]int
	for i := range soakBatches {
		r, err := runLoadgen(ctx, exe, gw, 4, per+time.Minute, "place-cancel", boot.CredentialID,
			"--count", fmt.Sprint(batch), "--rate", fmt.Sprint(opts.Rate))
		if err != nil {
			stop()
			return err
		}
		failures += r.Failures
		failedBy = addCounts(failedBy, r.FailedBy)
		rss := rssMiB(pid)
		if warmAt == 0 && i >= 1 && (time.Since(began) >= soakWarmUp || i == soakBatches-2) {
			rssWarm, warmAt = rss, (i+1)*batch // at least the first fifth warms up
		}
		rssEnd = rss
		fmt.Fprintf(out, "  %8d pairs: p50 %.3f ms  p99 %.3f ms  RSS %.0f MiB  data %.1f MiB\n", (i+1)*batch, r.P50, r.P99, rss,
			float64(dirBytes(dataDir))/(1<<20))
	}
	stop()
	fmt.Fprintf(out, "  warm-up: %d pairs (the first sample after %s, or the last but one)\n", warmAt, soakWarmUp)
	fmt.Fprintf(out, "  data directory:")
	entries, _ := os.ReadDir(dataDir)
	for _, e := range entries {
		fmt.Fprintf(out, " %s %.1f MiB", e.Name(), float64(dirBytes(filepath.Join(dataDir, e.Name())))/(1<<20))
	}
	fmt.Fprintln(out)
	diskPer1000 := float64(dirBytes(dataDir)-diskStart) / float64(batch*soakBatches) * 1000 / 1024
	restart, err := timeRestart(ctx, exe, env, gw, boot.CredentialID)
	if err != nil {
		return err
	}
	growth := 0.0
	if rssWarm > 0 {
		growth = (rssEnd - rssWarm) / rssWarm * 100
	}
	fmt.Fprintf(out, "soak: pairs=%d failed=%d rss_warm_mib=%.0f rss_end_mib=%.0f rss_growth_pct=%.1f disk_per_1000_kib=%.1f restart_ms=%d\n",
		batch*soakBatches, failures, rssWarm, rssEnd, growth, diskPer1000, restart.Milliseconds())
	if failures > 0 {
		return fmt.Errorf("soak saw %d failed pairs: %s", failures, countsText(failedBy))
	}
	return nil
}

// timeRestart starts serve on the soaked data directory and measures
// until it answers a trading call (a cancel of everything left).
func timeRestart(ctx context.Context, exe string, env []string, gw loadTarget, cred string) (time.Duration, error) {
	t0 := time.Now()
	stop, _, err := startChildPID(ctx, exe, env, "serve")
	if err != nil {
		return 0, err
	}
	defer stop()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		if err := cancelAll(ctx, gw, cred); err == nil {
			return time.Since(t0), nil
		} else if time.Now().After(deadline) || ctx.Err() != nil {
			return 0, fmt.Errorf("soak: serve did not answer within 5 minutes of its restart: %w", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// dirBytes is the size of the files under dir. A file's zero bytes at its
// end do not count: the paper journal keeps up to 1 MiB allocated past its
// records while serve runs, and cuts it off when it stops, so counting it
// would compare a running directory with a stopped one.
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if size, err := appendlog.Length(path); err == nil {
				n += size
			}
		}
		return nil
	})
	return n
}
