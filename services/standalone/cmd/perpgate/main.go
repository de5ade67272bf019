// Command perpgate is the standalone gateway (`perpgate serve`) and the
// admin command line.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/perpgate/perpgate/services/standalone"
)

// version is stamped at build time (-X main.version=...).
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := standalone.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.LookupEnv, version)
	stop()
	os.Exit(code)
}
