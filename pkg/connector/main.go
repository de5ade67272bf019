package connector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/perpgate/perpgate/pkg/gcfloor"
	"github.com/perpgate/perpgate/pkg/telemetry"
)

// Setup is what a connector command has when it builds its adapter.
type Setup struct {
	Service ServiceConfig
	Log     *slog.Logger
}

// Main is the whole of a connector command (connector-<venue>): it reads
// the log, service and venue settings (load), reporting every invalid one
// at once, builds the adapter, serves it on NATS until SIGINT or SIGTERM,
// and exits 1 with the error. build may return a cleanup, run after Serve.
func Main[C any](name, version string, load func(lookup func(string) (string, bool)) (C, error),
	build func(cfg C, s Setup) (Adapter, func(), error)) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, name, version, load, build)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
}

func run[C any](ctx context.Context, name, version string, load func(func(string) (string, bool)) (C, error),
	build func(C, Setup) (Adapter, func(), error)) error {
	logCfg, err1 := telemetry.LoadLogConfig(os.LookupEnv, "json")
	svcCfg, err2 := LoadServiceConfig(os.LookupEnv)
	cfg, err3 := load(os.LookupEnv)
	if err := errors.Join(err1, err2, err3); err != nil {
		return err
	}
	log := telemetry.NewLogger(os.Stdout, logCfg)
	telemetry.RouteRedisLogs(log)
	log.Info(name+" starting", "version", version)
	stopProfile, err := telemetry.StartCPUProfile(os.LookupEnv)
	if err != nil {
		return err
	}
	defer stopProfile()
	stopGCFloor, err := gcfloor.Start(os.LookupEnv)
	if err != nil {
		return err
	}
	defer stopGCFloor()
	adapter, cleanup, err := build(cfg, Setup{Service: svcCfg, Log: log})
	if err != nil {
		return err
	}
	if cleanup != nil {
		defer cleanup()
	}
	return Serve(ctx, svcCfg, adapter, log)
}

// SimulatorMain is the whole of a venue simulator command (<venue>-sim):
// it serves the handler newHandler builds (from the environment, through
// lookup) on the address in addrVar (default defaultAddr) until SIGINT or
// SIGTERM, and exits 1 with an error.
func SimulatorMain(name, addrVar, defaultAddr, usage string, newHandler func(lookup func(string) (string, bool)) (http.Handler, error)) {
	if code, done := SimulatorArgs(os.Args[1:], usage, os.Stdout, os.Stderr); done {
		os.Exit(code)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := serveSimulator(ctx, name, addrVar, defaultAddr, newHandler)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
}

// SimulatorArgs handles a simulator's command line, which takes no
// arguments (settings come from the environment): -h, --help or help
// prints usage and is done with 0, anything else prints it to stderr and
// is done with 2; no arguments is not done, and the simulator starts.
func SimulatorArgs(args []string, usage string, stdout, stderr io.Writer) (code int, done bool) {
	switch {
	case len(args) == 0:
		return 0, false
	case len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help" || args[0] == "help"):
		fmt.Fprint(stdout, usage)
		return 0, true
	}
	fmt.Fprintf(stderr, "unexpected argument %q: settings come from the environment\n\n%s", args[0], usage)
	return 2, true
}

// SimKeys reads the API keys a simulator accepts from keysVar: apiKey:secret
// pairs, comma separated; default sim-api-key:sim-api-secret.
func SimKeys(lookup func(string) (string, bool), keysVar string) (map[string]string, error) {
	keys := map[string]string{}
	for _, pair := range strings.Split(lookupOr(lookup, keysVar, "sim-api-key:sim-api-secret"), ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(pair), ":")
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("%s must be apiKey:apiSecret pairs separated by commas", keysVar)
		}
		keys[k] = v
	}
	return keys, nil
}

func serveSimulator(ctx context.Context, name, addrVar, defaultAddr string, newHandler func(func(string) (string, bool)) (http.Handler, error)) error {
	h, err := newHandler(os.LookupEnv)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", lookupOr(os.LookupEnv, addrVar, defaultAddr))
	if err != nil {
		return fmt.Errorf("%w (set %s to another address)", err, addrVar)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	log := slog.New(slog.NewTextHandler(os.Stdout, nil))
	log.Info(name+" listening", "url", "http://"+ln.Addr().String())
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func lookupOr(lookup func(string) (string, bool), name, def string) string {
	if v, ok := lookup(name); ok && v != "" {
		return v
	}
	return def
}
