package standalone

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"syscall"
	"time"

	"github.com/perpgate/perpgate/pkg/gcfloor"
	"github.com/perpgate/perpgate/pkg/telemetry"
	"github.com/perpgate/perpgate/services/keys/admin"
)

const usage = `perpgate: a self-hosted trading gateway for perpetual futures

Usage:
  perpgate serve                     run every service in one process
  perpgate bench                     benchmark the gateway against a bare Echo handler (load from separate processes)
  perpgate account create --tier T [--name N]
  perpgate account list
  perpgate key create --account ID --env live|test [--operations a,b] [--exchanges x,y]
                      [--credentials id,..] [--expires-at RFC3339] [guards]
  perpgate key list --account ID
  perpgate key guards ID [--read-only true|false] [--allowed-markets M,..] [--max-order-notional N]
                      [--max-daily-notional N] [--max-position-notional N] [--max-leverage N]
                      (none removes a limit; the camelCase spellings work too)
  perpgate key halt ID [--cancel-orders] [--close-positions]
  perpgate key usage ID [--days N]
  perpgate key revoke ID
  perpgate credential create --account ID --exchange X --env mainnet|testnet [--label L] --secret-file F|-
  perpgate credential list --account ID
  perpgate credential delete ID
  perpgate audit --account ID [--since RFC3339] [--until RFC3339] [--limit N] [--cursor C] [--oldest]
  perpgate version | --version

Every command takes --help. Settings are PERPGATE_* environment variables,
listed in docs/operating.md (Configuration). The admin commands reach the
admin API at PERPGATE_ADMIN_URL (default http://127.0.0.1:8081).
`

const serveUsage = `usage: perpgate serve

Runs the whole gateway in one process: HTTP API on PERPGATE_LISTEN_ADDR
(default :8080: /v1, /mcp, /healthz, /readyz, /metrics), admin API on
PERPGATE_ADMIN_ADDR (default 127.0.0.1:8081), embedded NATS, in-process
limits and the paper exchange. State is kept in PERPGATE_DATA_DIR (default
./.perpgate); on first start it creates an account, a paper credential and
a test key and writes them to bootstrap.json there. PERPGATE_NATS_URL,
PERPGATE_REDIS_URL and PERPGATE_DATABASE_URL switch to external
infrastructure. The admin commands of this CLI find the admin API at
PERPGATE_ADMIN_URL (default http://127.0.0.1:8081): set it when you move
PERPGATE_ADMIN_ADDR. Every setting is listed in docs/operating.md
(Configuration).
`

// Main runs the perpgate command line and returns the exit status.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, lookup func(string) (string, bool), version string) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "serve":
		if len(args) > 1 {
			if slices.ContainsFunc(args[1:], isHelp) {
				fmt.Fprint(stdout, serveUsage)
				return 0
			}
			fmt.Fprintf(stderr, "perpgate serve: unexpected argument %q: serve takes no arguments, settings are environment variables\n\n%s", args[1], serveUsage)
			return 2
		}
		return exit(stderr, serve(ctx, stdout, stderr, lookup))
	case "bench":
		opts := DefaultBenchOptions()
		fs := flag.NewFlagSet("bench", flag.ContinueOnError)
		fs.SetOutput(stderr)
		fs.Usage = func() {} // help goes to stdout below; errors print their line to stderr
		fs.StringVar(&opts.CPUProfile, "cpuprofile", "", "write a CPU profile of the gateway run to this file, and of each distributed process to this file.<process>")
		fs.DurationVar(&opts.Duration, "duration", opts.Duration, "length of each throughput run")
		fs.IntVar(&opts.Concurrency, "concurrency", opts.Concurrency, "connections of the throughput runs")
		fs.IntVar(&opts.Rounds, "rounds", opts.Rounds, "the runs of every mode alternate this many times; each figure is the median")
		fs.IntVar(&opts.PlaceCount, "places", opts.PlaceCount, "placements of the concurrency-1 placement run (at least 2000)")
		soak := fs.Int("soak", 0, "instead of the benchmark, place and cancel this many orders at --rate and report memory, disk and restart time")
		rate := fs.Float64("rate", 200, "place+cancel pairs a second of --soak")
		keep := fs.Bool("keep", false, "keep the data directory of --soak and print where it is, to restart serve on it again")
		if err := fs.Parse(args[1:]); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprintln(stdout, "usage: perpgate bench [flags]\n\nflags:")
				fs.SetOutput(stdout)
				fs.PrintDefaults()
				return 0
			}
			return 2
		}
		dir, err := os.MkdirTemp("", "perpgate-bench-")
		if err != nil {
			return exit(stderr, err)
		}
		if *soak > 0 && *keep {
			fmt.Fprintf(stdout, "soak: data directory %s (kept)\n", dir)
		} else {
			defer os.RemoveAll(dir)
		}
		if *soak > 0 {
			return exit(stderr, Soak(ctx, stdout, SoakOptions{Pairs: *soak, Rate: *rate}, dir))
		}
		return exit(stderr, Bench(ctx, stdout, opts, dir))
	case "loadgen": // run by bench as a process of its own
		return exit(stderr, loadgen(ctx, args[1:], stdout, stderr))
	case "bench-target": // the bare Echo handler bench compares with
		fs := flag.NewFlagSet("bench-target", flag.ContinueOnError)
		fs.SetOutput(stderr)
		addr := fs.String("addr", "127.0.0.1:0", "listen address")
		mode := fs.String("mode", "bare", "bare; skeleton (Echo + in-memory limiter + request to embedded NATS); or pipe (Echo + Redis limiter + NATS request on the local services)")
		if err := fs.Parse(args[1:]); err != nil {
			return 2
		}
		switch *mode {
		case "pipe":
			return exit(stderr, ServePipe(ctx, *addr, benchNATS, benchRedis, "benchpipe"))
		case "skeleton":
			return exit(stderr, ServeSkeleton(ctx, *addr))
		case "bare":
			return exit(stderr, ServeBare(ctx, *addr))
		}
		fmt.Fprintf(stderr, "perpgate bench-target: unknown --mode %q; use bare, skeleton or pipe\n", *mode)
		return 2
	case "account", "key", "credential", "audit":
		return admin.RunCLI(ctx, args, stdin, stdout, stderr, lookup)
	case "version", "--version", "-version", "-v":
		fmt.Fprintln(stdout, "perpgate", version)
		return 0
	case "help", "-h", "--help", "-help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "perpgate: unknown command %q\n\n%s", args[0], usage)
	return 2
}

func serve(ctx context.Context, stdout, stderr io.Writer, lookup func(string) (string, bool)) error {
	cfg, err := LoadConfig(lookup)
	if err != nil {
		return fmt.Errorf("configuration:\n%w", err)
	}
	shutdownTracing, err := telemetry.SetupTracing(ctx, "perpgate", lookup)
	if err != nil {
		return err
	}
	defer shutdownTracing(context.WithoutCancel(ctx))
	stopProfile, err := telemetry.StartCPUProfile(lookup)
	if err != nil {
		return err
	}
	defer stopProfile()
	stopGCFloor, err := gcfloor.Start(lookup)
	if err != nil {
		return err
	}
	defer stopGCFloor()
	log := telemetry.NewLogger(stderr, cfg.Log)
	telemetry.RouteRedisLogs(log)
	gw, err := New(cfg, log, stdout)
	if err != nil {
		return err
	}
	return gw.Run(ctx)
}

func loadgen(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o LoadOptions
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.URL, "url", "", "target URL")
	fs.StringVar(&o.Key, "key", "", "API key")
	fs.StringVar(&o.Body, "body", "", "request body (read mode)")
	fs.StringVar(&o.Mode, "mode", "read", "read, place-cancel or place")
	fs.StringVar(&o.Credential, "credential", "", "credential id (place-cancel and place modes)")
	fs.IntVar(&o.Count, "count", 0, "stop after this many requests (0: run for the duration)")
	fs.Float64Var(&o.Rate, "rate", 0, "requests a second across the connections (0: as fast as they go)")
	fs.IntVar(&o.Concurrency, "concurrency", 1, "connections")
	fs.DurationVar(&o.Duration, "duration", time.Second, "how long")
	if err := fs.Parse(args); err != nil {
		return err
	}
	res, err := Load(ctx, o)
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(res)
}

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool {
	return arg == "-h" || arg == "--help" || arg == "-help" || arg == "help"
}

func exit(stderr io.Writer, err error) int {
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "perpgate:", err)
	if errors.Is(err, syscall.EADDRINUSE) {
		fmt.Fprintln(stderr, "perpgate: another program is listening on that address: stop it, or set the variable named above to a free address")
	}
	return 1
}
