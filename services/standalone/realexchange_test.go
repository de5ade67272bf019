package standalone

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perpgate/perpgate/pkg/testenv"
	astersim "github.com/perpgate/perpgate/services/connectors/aster/sim"
	"github.com/perpgate/perpgate/services/connectors/binance/sim"
	bybitsim "github.com/perpgate/perpgate/services/connectors/bybit/sim"
	okxsim "github.com/perpgate/perpgate/services/connectors/okx/sim"
	paradexsim "github.com/perpgate/perpgate/services/connectors/paradex/sim"
)

// TestREADMERealExchange runs the README's "Trade on a real exchange"
// section top to bottom, as printed, against each venue's simulator: a
// testnet credential from the venue's secret fields, testCredentials, a
// guarded test key, a dry run, a real order and its cancel with the events
// stream open, and the same from MCP. Each step's failure fails the script
// (set -e, jq -e).
func TestREADMERealExchange(t *testing.T) {
	if testing.Short() {
		t.Skip("builds perpgate and runs the README against six simulators; skipped with -short")
	}
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: the README section cannot run", tool)
		}
	}
	s := "set -euo pipefail\n" + strings.Join(readmeBlocks(t, "Trade on a real exchange", "Documentation"), "")
	if !strings.Contains(s, "PG=http://localhost:8080\n") {
		t.Fatal("the section does not set PG=http://localhost:8080")
	}
	bins := testenv.Build(t, "./services/standalone/cmd/perpgate")

	venues := []struct {
		name  string
		start func(t *testing.T) *testGateway
		env   []string
	}{
		{"binance", func(t *testing.T) *testGateway {
			// Its websockets (the user data stream too) on the simulator's host.
			return startBinanceAt(t, sim.Config{}, nil, func(c *Config) {
				c.Binance.MainnetStreamURL = "ws" + strings.TrimPrefix(c.Binance.MainnetURL, "http")
				c.Binance.TestnetStreamURL = c.Binance.MainnetStreamURL
			}).testGateway
		},
			[]string{"API_KEY=" + simTestKey, "API_SECRET=" + simTestSecret}},
		{"bybit", func(t *testing.T) *testGateway { return startBybit(t, bybitsim.Config{}, nil).testGateway },
			[]string{"API_KEY=" + bybitKey, "API_SECRET=" + bybitSecret}},
		{"okx", func(t *testing.T) *testGateway { return startOKX(t, okxsim.Config{}, nil).testGateway },
			[]string{"API_KEY=" + okxDemoKey, "API_SECRET=" + okxSecret, "PASSPHRASE=" + okxDemoPass}},
		{"hyperliquid", func(t *testing.T) *testGateway { return startHyperliquid(t).testGateway },
			[]string{"ACCOUNT_ADDRESS=" + hlTestAccount, "AGENT_PRIVATE_KEY=" + hlTestAgentKey}},
		{"paradex", func(t *testing.T) *testGateway { return startParadex(t, paradexsim.Config{}, nil).testGateway },
			[]string{"ACCOUNT_ADDRESS=" + pdxAddress, "STARK_PRIVATE_KEY=" + pdxKey}},
		{"aster", func(t *testing.T) *testGateway { return startAster(t, astersim.Config{}, nil).testGateway },
			[]string{"USER_ADDRESS=" + asterTestUser, "SIGNER_PRIVATE_KEY=" + asterTestKey}},
	}
	for _, v := range venues {
		t.Run(v.name, func(t *testing.T) {
			g := v.start(t)
			dir := t.TempDir()
			for _, d := range []string{"bin", ".perpgate"} {
				if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Symlink(filepath.Join(bins, "perpgate"), filepath.Join(dir, "bin", "perpgate")); err != nil {
				t.Fatal(err)
			}
			boot, _ := json.Marshal(g.Bootstrap())
			if err := os.WriteFile(filepath.Join(dir, ".perpgate", "bootstrap.json"), boot, 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("bash", "-c", strings.Replace(s, "PG=http://localhost:8080\n", "PG="+g.URL()+"\n", 1))
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), append(v.env, "VENUE="+v.name, "PERPGATE_ADMIN_URL="+g.AdminURL())...)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("README section on %s: %v\n%s", v.name, err, out)
			}
			// The events stream printed the order from the venue's private
			// stream: open, then cancelled.
			for _, want := range []string{"true\n", `{"success":true,"leverage":3}`, `"dryRun":true`,
				`"credentials":[{"credentialId"`, `"exchange":"` + v.name + `"`, `"type":"order"`, `"status":"OPEN"`, `"status":"CANCELLED"`} {
				if !strings.Contains(string(out), want) {
					t.Errorf("the run on %s printed no %s:\n%s", v.name, want, out)
				}
			}
			// The events stream runs in the background: an error before it
			// starts would be printed as the JSON envelope.
			if strings.Contains(string(out), `"success":false`) {
				t.Errorf("a call failed on %s:\n%s", v.name, out)
			}
		})
	}
}
