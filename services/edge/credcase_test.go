package edge

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/perpgate/perpgate/pkg/contract"
)

// TestCredentialIDCachedInOneSpelling: an upper-case credentialId is the
// lower-case one, so the edge caches one entry for both (the entry a
// deletion event drops) and asks keys once.
func TestCredentialIDCachedInOneSpelling(t *testing.T) {
	h := newMCPHarness(t)
	cs := h.session(t, h.raw[contract.TierBuilder])
	for _, id := range []string{strings.ToUpper(h.cred), h.cred, strings.ToUpper(h.cred)} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_mark_price",
			Arguments: map[string]any{"credentialId": id, "market": "BTC"}})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %v", id, err, res)
		}
	}
	if n := h.credLookups.Load(); n != 1 {
		t.Fatalf("%d credential look-ups for one credential in two spellings, want 1", n)
	}
}
