package admin_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/keys/admin"
)

// TestCLICredentialCreateHelpListsSecrets: credential create --help names
// every exchange id and each one's secret fields.
func TestCLICredentialCreateHelpListsSecrets(t *testing.T) {
	r := runCLI(t, nil, "", "credential", "create", "--help")
	if r.code != admin.ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, x := range contract.Exchanges {
		line := "  " + string(x) + " "
		i := strings.Index(r.stdout, line)
		if i < 0 {
			t.Errorf("help lacks %s's secret fields:\n%s", x, r.stdout)
			continue
		}
		for _, f := range contract.SecretFields[x] {
			if !strings.Contains(r.stdout[i:], f) {
				t.Errorf("help lacks %s's field %s", x, f)
			}
		}
	}
}

// TestCLIUnknownFlagPrintsCommandUsage: a wrong flag prints that
// command's usage, not every command's.
func TestCLIUnknownFlagPrintsCommandUsage(t *testing.T) {
	r := runCLI(t, map[string]string{"PERPGATE_ADMIN_TOKEN": "made-up-token-0123456789"}, "", "key", "list", "--acount", "x")
	if r.code != admin.ExitUsage || !strings.Contains(r.stderr, "acount") || !strings.Contains(r.stderr, "perpgate key list --account ID") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "perpgate account create") || strings.Contains(r.stderr, "perpgate audit") {
		t.Errorf("printed every command's usage:\n%s", r.stderr)
	}
}

// TestCLIAdminUnreachable: with nothing at PERPGATE_ADMIN_URL the CLI
// names the URL it tried and asks whether perpgate serve is running.
func TestCLIAdminUnreachable(t *testing.T) {
	url := fmt.Sprintf("http://127.0.0.1:%d", testenv.FreePort(t)) // nothing listens there
	r := runCLI(t, map[string]string{"PERPGATE_ADMIN_TOKEN": "made-up-token-0123456789", "PERPGATE_ADMIN_URL": url}, "", "account", "list")
	if r.code != admin.ExitError || !strings.Contains(r.stderr, url) || !strings.Contains(r.stderr, "perpgate serve") ||
		!strings.Contains(r.stderr, "PERPGATE_ADMIN_URL") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
}
