package standalone

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMakeCleanKeepsData: `make clean` removes build output only; the data
// directory (keys, credentials, master.key) goes only through `make
// clean-data`, which refuses without CONFIRM=1.
func TestMakeCleanKeepsData(t *testing.T) {
	root := filepath.Join("..", "..")
	data := t.TempDir()
	key := filepath.Join(data, "master.key")
	if err := os.WriteFile(key, []byte("made-up"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, error) {
		out, err := exec.Command("make", append([]string{"-s", "-C", root}, args...)...).CombinedOutput()
		return string(out), err
	}
	out, err := run("-n", "clean", "DATA_DIR="+data)
	if err != nil || strings.Contains(out, data) || strings.Contains(out, ".perpgate") {
		t.Errorf("make clean would run %q (%v): it must not touch the data directory", out, err)
	}
	out, err = run("clean-data", "DATA_DIR="+data)
	if err == nil || !strings.Contains(out, "CONFIRM=1") || !strings.Contains(out, "master.key") {
		t.Errorf("clean-data without CONFIRM=1: %v, %q", err, out)
	}
	if _, err := os.Stat(key); err != nil {
		t.Fatalf("clean-data without CONFIRM=1 deleted the data: %v", err)
	}
	if out, err := run("clean-data", "CONFIRM=1", "DATA_DIR="+data); err != nil {
		t.Fatalf("clean-data CONFIRM=1: %v %s", err, out)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("clean-data CONFIRM=1 left %s: %v", data, err)
	}
}
