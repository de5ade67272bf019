// Command perpgate is the standalone gateway (`perpgate serve`) and the
// admin command line.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/standalone"
)

// version and commit are stamped at build time (make: -X main.version=
// from the VERSION file, -X main.commit=); a plain go build falls back to
// the release constant and the commit Go recorded.
var (
	version = contract.Version
	commit  = ""
)

func buildCommit() string {
	if commit != "" {
		return commit
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		rev, dirty := "", ""
		for _, s := range info.Settings {
			switch {
			case s.Key == "vcs.revision" && len(s.Value) >= 12:
				rev = s.Value[:12]
			case s.Key == "vcs.modified" && s.Value == "true":
				dirty = "-dirty"
			}
		}
		if rev != "" {
			return rev + dirty
		}
	}
	return "unknown"
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := standalone.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.LookupEnv, version+" ("+buildCommit()+")")
	stop()
	os.Exit(code)
}
