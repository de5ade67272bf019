package standalone

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/perpgate/perpgate/pkg/telemetry"
	"github.com/perpgate/perpgate/services/keys/admin"
)

const usage = `perpgate: a self-hosted trading gateway for perpetual futures

Usage:
  perpgate serve                     run every service in one process
  perpgate bench                     benchmark the gateway against a bare Echo handler
  perpgate account create --tier T [--name N]
  perpgate key create --account ID --env live|test [--operations a,b] [--exchanges x,y]
                      [--credentials id,..] [--expires-at RFC3339]
  perpgate key list --account ID
  perpgate key revoke ID
  perpgate credential create --account ID --exchange X --env mainnet|testnet [--label L] --secret-file F|-
  perpgate credential list --account ID
  perpgate credential delete ID
  perpgate version

Settings are PERPGATE_* environment variables; see the README.
`

// Main runs the perpgate command line and returns the exit status.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, lookup func(string) (string, bool), version string) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "serve":
		return exit(stderr, serve(ctx, stdout, stderr, lookup))
	case "bench":
		dir, err := os.MkdirTemp("", "perpgate-bench-")
		if err != nil {
			return exit(stderr, err)
		}
		defer os.RemoveAll(dir)
		opts := DefaultBenchOptions()
		fs := flag.NewFlagSet("bench", flag.ContinueOnError)
		fs.SetOutput(stderr)
		fs.StringVar(&opts.CPUProfile, "cpuprofile", "", "write a CPU profile of the gateway run to this file")
		fs.DurationVar(&opts.Duration, "duration", opts.Duration, "length of each throughput run")
		fs.IntVar(&opts.Concurrency, "concurrency", opts.Concurrency, "workers of the throughput runs")
		if err := fs.Parse(args[1:]); err != nil {
			return 2
		}
		return exit(stderr, Bench(ctx, stdout, opts, dir))
	case "account", "key", "credential":
		return admin.RunCLI(ctx, args, stdin, stdout, stderr, lookup)
	case "version":
		fmt.Fprintln(stdout, version)
		return 0
	case "help", "-h", "--help":
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
	log := telemetry.NewLogger(stderr, cfg.Log)
	telemetry.RouteRedisLogs(log)
	gw, err := New(cfg, log, stdout)
	if err != nil {
		return err
	}
	return gw.Run(ctx)
}

func exit(stderr io.Writer, err error) int {
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "perpgate:", err)
	return 1
}
