package deploy

import (
	"context"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/perpgate/perpgate/pkg/testenv"
)

// TestCompose loads docker-compose.yml with compose's own loader (schema,
// interpolation, anchors, profiles), with the secrets `make compose-env`
// writes, and checks that every service of the repository (every
// services/**/cmd/<name>) is a compose service of that name built from
// deploy/Dockerfile with SERVICE=<name> and has a healthcheck probing a
// port it listens on; that every depends_on waits for a healthy
// dependency; that each service using NATS logs in as its own nats.conf
// user with the password the NATS server gets; that every secret comes
// from .env; and that compose refuses to start without any one of them
// rather than run on a default.
func TestCompose(t *testing.T) {
	root := testenv.WorkspaceRoot(t)
	envFile := filepath.Join(t.TempDir(), ".env")
	if out, err := exec.Command("sh", "compose-env.sh", envFile).CombinedOutput(); err != nil {
		t.Fatalf("compose-env.sh: %v\n%s", err, out)
	}
	p := loadCompose(t, root, cli.WithEnvFiles(envFile), cli.WithDotEnv)
	users := natsUsers(t)

	for name, dir := range commands(t) {
		s, ok := p.Services[name]
		if !ok {
			t.Errorf("%s (%s) is not a service of docker-compose.yml", name, dir)
			continue
		}
		if s.Build == nil || s.Build.Dockerfile != "deploy/Dockerfile" || s.Build.Args["SERVICE"] == nil || *s.Build.Args["SERVICE"] != name {
			t.Errorf("%s: want build deploy/Dockerfile with SERVICE=%s, got %+v", name, name, s.Build)
		}
		checkHealthcheck(t, name, s)
	}
	for _, infra := range []string{"nats", "redis", "postgres"} {
		if s, ok := p.Services[infra]; !ok {
			t.Errorf("no %s service", infra)
		} else if s.HealthCheck == nil || len(s.HealthCheck.Test) == 0 {
			t.Errorf("%s: no healthcheck", infra)
		}
	}
	if cmd := strings.Join(p.Services["nats"].Command, " "); !strings.Contains(cmd, "-c /etc/nats/nats.conf") || !strings.Contains(cmd, "-sd ") {
		t.Errorf("nats: want -c /etc/nats/nats.conf and a JetStream store (-sd), got %q", cmd)
	}
	mounted := false
	for _, v := range p.Services["nats"].Volumes {
		mounted = mounted || (v.Source == filepath.Join(root, "deploy", "nats.conf") && v.Target == "/etc/nats/nats.conf")
	}
	if !mounted {
		t.Error("nats: deploy/nats.conf is not mounted at /etc/nats/nats.conf")
	}

	for name, s := range p.Services {
		for dep, d := range s.DependsOn {
			if d.Condition != types.ServiceConditionHealthy {
				t.Errorf("%s: depends on %s with condition %q; want %s", name, dep, d.Condition, types.ServiceConditionHealthy)
			}
		}
		user := env(s, "PERPGATE_NATS_USER")
		if user == "" {
			if strings.HasPrefix(name, "connector-") || name == "edge" || name == "keys" {
				t.Errorf("%s: no PERPGATE_NATS_USER", name)
			}
			continue
		}
		if !users[user] {
			t.Errorf("%s: NATS user %s is not in deploy/nats.conf", name, user)
		}
		pw, serverPW := env(s, "PERPGATE_NATS_PASSWORD"), env(p.Services["nats"], passwordVar(user))
		if pw == "" || pw != serverPW {
			t.Errorf("%s: PERPGATE_NATS_PASSWORD is not the %s the NATS server gets", name, passwordVar(user))
		}
		for _, dep := range []string{"nats", "keys"} {
			if _, ok := s.DependsOn[dep]; !ok && name != dep {
				t.Errorf("%s: does not depend on %s", name, dep)
			}
		}
	}

	secrets := readEnvFile(t, envFile)
	t.Run("no secret is inlined", func(t *testing.T) {
		isSecret := map[string]bool{}
		for _, v := range secrets {
			isSecret[v] = true
		}
		for name, s := range p.Services {
			for k, v := range s.Environment {
				if v == nil || !isSecretName(k) {
					continue
				}
				val := *v
				if u, err := url.Parse(val); err == nil && u.Scheme != "" && u.Host != "" {
					pw, ok := u.User.Password()
					if !ok {
						continue // a URL without a password
					}
					val = pw
				}
				if !isSecret[val] {
					t.Errorf("%s: %s is not one of the secrets of .env", name, k)
				}
			}
		}
	})
	t.Run("every secret is required", func(t *testing.T) {
		for name := range secrets {
			var rest []string
			for k, v := range secrets {
				if k != name {
					rest = append(rest, k+"="+v)
				}
			}
			o, err := cli.NewProjectOptions([]string{filepath.Join(root, "docker-compose.yml")},
				cli.WithWorkingDirectory(root), cli.WithEnv(rest), cli.WithProfiles([]string{"*"}))
			if err != nil {
				t.Fatal(err)
			}
			_, err = o.LoadProject(context.Background())
			if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "run make compose-env") {
				t.Errorf("without %s: want an error naming it and saying to run make compose-env, got %v", name, err)
			}
		}
	})
}

// readEnvFile reads the NAME=value lines of an env file.
func readEnvFile(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			vars[k] = v
		}
	}
	if len(vars) == 0 {
		t.Fatalf("%s holds no variables", path)
	}
	return vars
}

func loadCompose(t *testing.T, root string, opts ...cli.ProjectOptionsFn) *types.Project {
	t.Helper()
	opts = append(opts, cli.WithWorkingDirectory(root), cli.WithProfiles([]string{"*"}))
	o, err := cli.NewProjectOptions([]string{filepath.Join(root, "docker-compose.yml")}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	p, err := o.LoadProject(context.Background())
	if err != nil {
		t.Fatalf("load docker-compose.yml: %v", err)
	}
	return p
}

// checkHealthcheck wants the service's healthcheck to run the image's
// /healthcheck probe against a port the service listens on (one of its
// *_ADDR settings).
func checkHealthcheck(t *testing.T, name string, s types.ServiceConfig) {
	t.Helper()
	hc := s.HealthCheck
	if hc == nil || hc.Disable || len(hc.Test) < 3 || hc.Test[0] != "CMD" || hc.Test[1] != "/healthcheck" {
		t.Errorf("%s: want healthcheck [CMD /healthcheck <url>], got %+v", name, hc)
		return
	}
	u, err := url.Parse(hc.Test[len(hc.Test)-1])
	if err != nil {
		t.Errorf("%s: healthcheck target: %v", name, err)
		return
	}
	var listens []string
	for k, v := range s.Environment {
		if strings.HasSuffix(k, "_ADDR") && v != nil {
			if _, port, err := net.SplitHostPort(*v); err == nil {
				listens = append(listens, port)
				if port == u.Port() {
					return
				}
			}
		}
	}
	t.Errorf("%s: healthcheck probes port %s; the service listens on %v", name, u.Port(), listens)
}

// env returns a service's environment variable, "" when unset.
func env(s types.ServiceConfig, name string) string {
	if v := s.Environment[name]; v != nil {
		return *v
	}
	return ""
}
