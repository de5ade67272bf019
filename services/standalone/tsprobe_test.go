package standalone

import (
	"context"
	"encoding/json"
	"github.com/perpgate/perpgate/pkg/contract"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// tsSDKVersion is the @modelcontextprotocol/sdk the probe runs.
const tsSDKVersion = "1.32.2"

// TestMCPTypeScriptClient connects the official TypeScript MCP SDK to a
// live gateway: it lists the tools and calls get_orderbook and two dry
// runs, validating every result against the tool's output schema with its
// draft-07 validator (the SDK that found the tuple schema bug). It needs
// node and npm and installs the SDK once into the user cache; without them
// it skips and says why.
func TestMCPTypeScriptClient(t *testing.T) {
	if testing.Short() {
		t.Skip("installs the TypeScript MCP SDK with npm; skipped with -short")
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: the TypeScript MCP client probe cannot run", tool)
		}
	}
	dir := tsSDK(t)
	g := startGateway(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	probe, _ := filepath.Abs(filepath.Join("testdata", "mcp-probe.mjs"))
	script := filepath.Join(dir, "mcp-probe.mjs") // beside node_modules, so imports resolve
	src, err := os.ReadFile(probe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, src, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, "node", script, g.URL()+"/mcp", g.Bootstrap().APIKey, g.Bootstrap().CredentialID)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("TypeScript MCP client: %v\n%s", err, out)
	}
	var seen struct {
		Tools      int    `json:"tools"`
		Bids       int    `json:"bids"`
		DryRun     bool   `json:"dryRun"`
		TakeProfit string `json:"takeProfit"`
	}
	if err := json.Unmarshal(out, &seen); err != nil || seen.Tools != len(contract.Operations) || seen.Bids == 0 || !seen.DryRun || seen.TakeProfit != "63000" {
		t.Fatalf("TypeScript MCP client saw %s (%v)", out, err)
	}
}

// tsSDK installs the SDK into a cache directory shared by runs and returns
// it; a failed install (no registry) skips the test.
func tsSDK(t *testing.T) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "perpgate", "mcp-ts-sdk-"+tsSDKVersion)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err == nil {
		return dir
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", dir,
		"@modelcontextprotocol/sdk@"+tsSDKVersion)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("npm could not install @modelcontextprotocol/sdk@%s (no registry?): %v\n%s", tsSDKVersion, err, out)
	}
	return dir
}
