package bus

import (
	"strings"
	"testing"
)

// TestEmbeddedListenNeedsLogins: an embedded server reachable from other
// processes without users would hand out secrets to any of them.
func TestEmbeddedListenNeedsLogins(t *testing.T) {
	emb, err := StartEmbedded(EmbeddedConfig{Listen: "127.0.0.1:0"})
	if err == nil {
		emb.Shutdown()
		t.Fatal("an embedded server listened without users")
	}
	if !strings.Contains(err.Error(), "needs users") {
		t.Errorf("error %q", err)
	}
}
