package fault

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
)

var (
	serveOnce sync.Once
	serveBin  string
)

// serve starts `perpgate serve` on dataDir (a tmpfs of the test's own)
// and returns the process, its base URL and its bootstrap key and
// credential.
func serve(t *testing.T, dataDir string) (*testenv.Process, string, string, string) {
	t.Helper()
	serveOnce.Do(func() { serveBin = filepath.Join(testenv.Build(t, "./services/standalone/cmd/perpgate"), "perpgate") })
	p := testenv.Start(t, "perpgate", serveBin, map[string]string{
		"PERPGATE_DATA_DIR": dataDir, "PERPGATE_LISTEN_ADDR": "127.0.0.1:0", "PERPGATE_ADMIN_ADDR": "127.0.0.1:0",
		"PERPGATE_LOG_FORMAT": "json", "PERPGATE_EXCHANGES": "paper",
	}, "serve")
	url := "http://" + p.Field(t, "edge listening", "addr")
	var boot struct{ APIKey, CredentialID string }
	b, err := os.ReadFile(filepath.Join(dataDir, "bootstrap.json"))
	if err != nil || json.Unmarshal(b, &boot) != nil {
		t.Fatalf("bootstrap.json: %v %s", err, b)
	}
	return p, url, boot.APIKey, boot.CredentialID
}

// TestFullDisk (case 14): `perpgate serve` on a full disk refuses
// placements at once with 503 naming the disk and its path, keeps
// answering reads, logs the cause, and does not flood its log.
func TestFullDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("runs perpgate serve on a tmpfs; skipped with -short")
	}
	disk := testenv.Tmpfs(t, 32<<20)
	data := filepath.Join(disk, "data")
	p, url, key, cred := serve(t, data)
	place := func(id string) reply {
		return post(url, key, map[string]any{"operation": "placeLimitOrder", "credentialId": cred, "market": "BTC",
			"side": "BUY", "size": "0.01", "price": "30000", "clientOrderId": id})
	}
	if r := place("disk-1"); r.Status != 200 {
		t.Fatalf("placement with room: %d %s", r.Status, r.Raw)
	}
	fill := testenv.FillDisk(t, disk)
	var r reply
	n := 1
	// The data dir's free space is looked at every second; until then a
	// placement may fail on whichever store is first to find the disk full.
	testenv.Poll(t, "placements refused naming the full disk", 5*time.Second, func() error {
		time.Sleep(200 * time.Millisecond) // within the key's rate limit
		n++
		r = place(fmt.Sprintf("disk-%d", n))
		if r.code() != string(contract.CodeServiceUnavailable) || !contains(fmt.Sprint(r.Body["error"]), "disk holding "+data+" is full") {
			return errorf("got %d %s, want 503 naming the full disk of %s", r.Status, r.Raw, data)
		}
		return nil
	})
	if r.Took > time.Second {
		t.Errorf("refused after %s, want at once", r.Took)
	}
	if r := post(url, key, map[string]any{"operation": "getBalance", "credentialId": cred}); r.Status != 200 {
		t.Errorf("a read on the full disk: %d %s", r.Status, r.Raw)
	}
	time.Sleep(3 * time.Second) // let anything that fails in a loop fail
	counts := map[string]int{}
	named := false
	for _, rec := range p.Records() {
		counts[fmt.Sprint(rec["level"], " ", rec["msg"])]++
		if rec["msg"] == "disk full: trading calls are refused" && rec["path"] == data {
			named = true
		}
	}
	if !named {
		t.Error(`no "disk full" line naming the data dir`)
	}
	for line, c := range counts {
		if c > 20 && !contains(line, "INFO") {
			t.Errorf("%d lines of %q within seconds", c, line)
		}
	}
	if err := os.Remove(fill); err != nil {
		t.Fatal(err)
	}
	testenv.Poll(t, "placements once the disk has room", 5*time.Second, func() error {
		time.Sleep(200 * time.Millisecond)
		n++
		if r := place(fmt.Sprintf("disk-%d", n)); r.Status != 200 {
			return errorf("%d %s", r.Status, r.Raw)
		}
		return nil
	})
}
