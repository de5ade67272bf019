package standalone

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/testenv"
)

// TestSimulatorsAnswerHelp: every venue simulator binary answers --help
// with its usage and exits 0 without starting (a started one would serve
// until killed), and refuses an unknown argument with exit 2.
func TestSimulatorsAnswerHelp(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the simulator binaries; skipped with -short")
	}
	sims := []string{"binance-sim", "bybit-sim", "okx-sim", "paradex-sim", "aster-sim", "hyperliquid-sim"}
	pkgs := make([]string, len(sims))
	for i, s := range sims {
		pkgs[i] = "./services/connectors/" + strings.TrimSuffix(s, "-sim") + "/cmd/" + s
	}
	bins := testenv.Build(t, pkgs...)
	for _, s := range sims {
		t.Run(s, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			out, err := exec.CommandContext(ctx, filepath.Join(bins, s), "--help").CombinedOutput()
			if err != nil || !strings.HasPrefix(string(out), "usage: "+s) || !strings.Contains(string(out), "listen address") {
				t.Errorf("%s --help: %v, %q", s, err, out)
			}
			out, err = exec.CommandContext(ctx, filepath.Join(bins, s), "--port=1").CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), "usage: "+s) {
				t.Errorf("%s --port=1: %v, %q; want exit 2 with the usage", s, err, out)
			}
		})
	}
}
