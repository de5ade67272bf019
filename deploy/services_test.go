package deploy

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/perpgate/perpgate/pkg/testenv"
)

// commands lists every service binary of the repository, every
// services/**/cmd/<name> with a main.go, as name → directory relative to
// the repository root. Nothing lists them by hand, so a new service
// cannot be left out of the deployment files.
func commands(t testing.TB) map[string]string {
	t.Helper()
	root := testenv.WorkspaceRoot(t)
	cmds := map[string]string{}
	err := filepath.WalkDir(filepath.Join(root, "services"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || d.Name() != "main.go" || filepath.Base(filepath.Dir(filepath.Dir(path))) != "cmd" {
			return nil
		}
		dir := filepath.Dir(path)
		rel, err := filepath.Rel(root, dir)
		if err != nil {
			return err
		}
		if prev, ok := cmds[filepath.Base(dir)]; ok {
			t.Errorf("two commands named %s: %s and %s", filepath.Base(dir), prev, rel)
		}
		cmds[filepath.Base(dir)] = filepath.ToSlash(rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(cmds) == 0 {
		t.Fatal("no services/**/cmd/*/main.go found")
	}
	return cmds
}

// connectors returns the exchanges that have a connector command
// (services/connectors/<x>/cmd/connector-<x>), sorted.
func connectors(t testing.TB) []string {
	t.Helper()
	var xs []string
	for name := range commands(t) {
		if x, ok := strings.CutPrefix(name, "connector-"); ok {
			xs = append(xs, x)
		}
	}
	if len(xs) == 0 {
		t.Fatal("no connector-<exchange> command found")
	}
	sort.Strings(xs)
	return xs
}

// natsUsers returns the users deploy/nats.conf defines.
func natsUsers(t testing.TB) map[string]bool {
	t.Helper()
	conf, err := os.ReadFile("nats.conf")
	if err != nil {
		t.Fatal(err)
	}
	users := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s*user:\s*([\w-]+)\s*$`).FindAllStringSubmatch(string(conf), -1) {
		users[m[1]] = true
	}
	return users
}

// isSecretName reports whether an environment variable or config key
// holds a secret, so must come from a Secret, never a literal.
func isSecretName(name string) bool {
	return regexp.MustCompile(`(?i)(PASSWORD|TOKEN|SECRET|MASTER_KEY|DATABASE_URL|REDIS_URL)`).MatchString(name)
}
