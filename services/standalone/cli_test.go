package standalone

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommandHelp: --help on every command prints help and exits 0 with
// no side effect: no data dir is created and no token is needed.
func TestCommandHelp(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	env := map[string]string{"PERPGATE_DATA_DIR": filepath.Join(dir, "data"), "PERPGATE_ADMIN_URL": "http://127.0.0.1:1"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--help"}, "perpgate serve"},
		{[]string{"-h"}, "perpgate key create"},
		{[]string{"help"}, "perpgate credential list"},
		{[]string{"serve", "--help"}, "PERPGATE_LISTEN_ADDR"},
		{[]string{"serve", "--help"}, "PERPGATE_ADMIN_URL"},
		{[]string{"serve", "--help"}, "docs/operating.md"},
		{[]string{"--help"}, "docs/operating.md"},
		{[]string{"serve", "-h"}, "bootstrap.json"},
		{[]string{"bench", "--help"}, "-duration"},
		{[]string{"key", "--help"}, "perpgate key list"},
		{[]string{"key", "create", "--help"}, "-expires-at"},
		{[]string{"credential", "delete", "-h"}, "perpgate credential delete ID"},
		{[]string{"--version"}, "perpgate v-test\n"},
		{[]string{"version"}, "perpgate v-test\n"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := Main(context.Background(), tt.args, strings.NewReader(""), &out, &errOut, lookup, "v-test")
			if code != 0 || errOut.Len() != 0 || !strings.Contains(out.String(), tt.want) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 0 and %q", code, out.String(), errOut.String(), tt.want)
			}
		})
	}
	for _, name := range []string{"data", ".perpgate"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("help created %s (%v)", name, err)
		}
	}
}

func TestServeRefusesArguments(t *testing.T) {
	var out, errOut bytes.Buffer
	code := Main(context.Background(), []string{"serve", "--port", "9000"}, strings.NewReader(""), &out, &errOut,
		func(string) (string, bool) { return "", false }, "v-test")
	if code != 2 || !strings.Contains(errOut.String(), "settings are environment variables") {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
}

// TestBusyPortNamesSetting: a taken port's error says which setting moves it.
func TestBusyPortNamesSetting(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dir := t.TempDir()
	env := map[string]string{"PERPGATE_DATA_DIR": dir, "PERPGATE_LISTEN_ADDR": ln.Addr().String(), "PERPGATE_ADMIN_ADDR": "127.0.0.1:0"}
	var out, errOut bytes.Buffer
	code := Main(context.Background(), []string{"serve"}, strings.NewReader(""), &out, &errOut,
		func(k string) (string, bool) { v, ok := env[k]; return v, ok }, "v-test")
	if code != 1 || !strings.Contains(errOut.String(), "PERPGATE_LISTEN_ADDR") || !strings.Contains(errOut.String(), "address already in use") {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
	// The ports are checked first: nothing was bootstrapped into the data dir.
	for _, name := range []string{"bootstrap.json", "master.key"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("a busy port left %s in a fresh data dir (%v)", name, err)
		}
	}
}
