package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/perpgate/perpgate/pkg/testenv"
)

// TestDockerfile checks deploy/Dockerfile without a Docker engine (this
// machine and CI have none): the runtime stage is distroless/static as a
// numeric non-root user, and the build stage's script, run here by sh
// with a stand-in for go that records its calls, builds every service of
// the repository (every services/**/cmd/<name>) as SERVICE=<name>
// statically, stamped with the VERSION build argument, plus the
// healthcheck probe, and refuses an unknown SERVICE.
func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	df := string(b)
	stages := regexp.MustCompile(`(?m)^FROM\s+(\S+)`).FindAllStringSubmatch(df, -1)
	if len(stages) != 2 {
		t.Fatalf("want two stages (build, runtime), got %d", len(stages))
	}
	if img := stages[1][1]; !regexp.MustCompile(`^gcr\.io/distroless/static[\w.-]*:nonroot$`).MatchString(img) {
		t.Errorf("runtime image is %s; want distroless/static :nonroot", img)
	}
	runtime := df[strings.LastIndex(df, "\nFROM "):]
	for _, want := range []string{"\nUSER 65532:65532\n", "\nENTRYPOINT [\"/service\"]\n", "COPY --from=build /out/healthcheck /healthcheck\n"} {
		if !strings.Contains(runtime, want) {
			t.Errorf("runtime stage lacks %q", strings.TrimSpace(want))
		}
	}
	env := regexp.MustCompile(`(?m)^ENV\s+(.+)$`).FindStringSubmatch(df)
	if env == nil {
		t.Fatal("build stage sets no ENV (CGO_ENABLED=0)")
	}
	script := regexp.MustCompile(`(?s)<<'SH'\n(.*?)\nSH\n`).FindStringSubmatch(df)
	if script == nil {
		t.Fatal("no build script (RUN <<'SH' ... SH) in the Dockerfile")
	}

	root := testenv.WorkspaceRoot(t)
	stub := t.TempDir()
	if err := os.WriteFile(filepath.Join(stub, "go"), []byte(`#!/bin/sh
echo "CGO_ENABLED=$CGO_ENABLED $*" >>"$GO_CALLS"
while [ $# -gt 0 ]; do
  if [ "$1" = -o ]; then shift; : >"$1"; fi
  shift
done
`), 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(service string) (calls []string, out string, err error) {
		outDir, log := t.TempDir(), filepath.Join(t.TempDir(), "calls")
		// The script writes to /out in the image; here to a temp dir.
		cmd := exec.Command("sh", "-c", strings.ReplaceAll(script[1], "/out", outDir))
		cmd.Dir = root
		cmd.Env = append(strings.Fields(env[1]), "PATH="+stub+string(os.PathListSeparator)+os.Getenv("PATH"),
			"GO_CALLS="+log, "SERVICE="+service, "VERSION=v9.8.7-test")
		b, err := cmd.CombinedOutput()
		raw, _ := os.ReadFile(log)
		for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
			if l != "" {
				calls = append(calls, strings.ReplaceAll(l, outDir, "/out"))
			}
		}
		return calls, string(b), err
	}

	for name, dir := range commands(t) {
		t.Run(name, func(t *testing.T) {
			calls, out, err := run(name)
			if err != nil {
				t.Fatalf("build script with SERVICE=%s: %v\n%s", name, err, out)
			}
			want := []string{
				`CGO_ENABLED=0 build -trimpath -ldflags -s -w -X main.version=v9.8.7-test -o /out/service ./` + dir,
				`CGO_ENABLED=0 build -trimpath -ldflags -s -w -o /out/healthcheck ./deploy/cmd/healthcheck`,
			}
			if strings.Join(calls, "\n") != strings.Join(want, "\n") {
				t.Errorf("go calls:\n%s\nwant:\n%s", strings.Join(calls, "\n"), strings.Join(want, "\n"))
			}
		})
	}
	t.Run("unknown service", func(t *testing.T) {
		if calls, out, err := run("nope"); err == nil || !strings.Contains(out, "SERVICE=nope") || len(calls) != 0 {
			t.Errorf("SERVICE=nope: want a failure naming it before any build; err %v, calls %v, output %s", err, calls, out)
		}
	})
}
