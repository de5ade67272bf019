package deploy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/testenv"
	"go.yaml.in/yaml/v3"
)

// kustomize is pinned and built from the Go module proxy: v5.7.x builds
// with Go 1.26, later releases need a newer Go.
const kustomize = "sigs.k8s.io/kustomize/kustomize/v5@v5.7.1"

// TestKustomizeOverlays builds k8s/overlays/dev and prod with the pinned
// kustomize and checks the result: every connector (one per
// services/connectors/*/cmd/connector-*) has its Deployment, Service,
// HorizontalPodAutoscaler and PodDisruptionBudget, logs in to NATS as its
// nats.conf user; every Deployment has readiness (/readyz) and liveness
// (/healthz) probes on a port it serves, resource requests and limits, and
// runs as non-root; Services and budgets select their pods; no Secret
// value is inlined (no Secret objects, secret settings only through
// secretKeyRef, each Secret documented in docs/operating.md).
func TestKustomizeOverlays(t *testing.T) {
	bin := installKustomize(t)
	// The operating guide says how to create every Secret.
	readme, err := os.ReadFile(filepath.Join(testenv.WorkspaceRoot(t), "docs", "operating.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, overlay := range []string{"dev", "prod"} {
		t.Run(overlay, func(t *testing.T) {
			out, err := exec.Command(bin, "build", filepath.Join(testenv.WorkspaceRoot(t), "k8s", "overlays", overlay)).CombinedOutput()
			if err != nil {
				t.Fatalf("kustomize build k8s/overlays/%s: %v\n%s", overlay, err, out)
			}
			checkManifests(t, decodeManifests(t, out), natsUsers(t), connectors(t), string(readme))
		})
	}
}

// installKustomize builds the pinned kustomize into a temporary directory
// (seconds once the module and build caches are warm). Without the module
// proxy the test skips, or fails with PERPGATE_REQUIRE_SERVICES=1.
func installKustomize(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("go", "install", kustomize)
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOWORK=off", "GOFLAGS=")
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		testenv.Unavailable(t, "go install "+kustomize, fmt.Errorf("%v: %s", err, bytes.TrimSpace(out)),
			"it needs the Go module proxy (GOPROXY) or a module cache holding it")
	}
	t.Logf("installed %s in %s", kustomize, time.Since(start).Round(time.Millisecond))
	return filepath.Join(dir, "kustomize")
}

// manifest is the part of a Kubernetes object these checks read.
type manifest struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name      string            `yaml:"name"`
		Namespace string            `yaml:"namespace"`
		Labels    map[string]string `yaml:"labels"`
	} `yaml:"metadata"`
	Spec struct {
		// Deployment
		Replicas *int `yaml:"replicas"`
		Selector struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		} `yaml:"selector"`
		Template struct {
			Metadata struct {
				Labels map[string]string `yaml:"labels"`
			} `yaml:"metadata"`
			Spec struct {
				SecurityContext struct {
					RunAsNonRoot bool `yaml:"runAsNonRoot"`
				} `yaml:"securityContext"`
				Containers []container `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
		// Service (its selector is a plain map, unlike the others')
		Ports []struct {
			Name       string `yaml:"name"`
			TargetPort any    `yaml:"targetPort"`
		} `yaml:"ports"`
		// HorizontalPodAutoscaler
		ScaleTargetRef struct {
			Kind string `yaml:"kind"`
			Name string `yaml:"name"`
		} `yaml:"scaleTargetRef"`
		MinReplicas int `yaml:"minReplicas"`
		MaxReplicas int `yaml:"maxReplicas"`
	} `yaml:"spec"`
	Data       map[string]string `yaml:"data"`
	StringData map[string]string `yaml:"stringData"`

	serviceSelector map[string]string
}

type container struct {
	Name  string `yaml:"name"`
	Image string `yaml:"image"`
	Env   []struct {
		Name      string `yaml:"name"`
		Value     string `yaml:"value"`
		ValueFrom *struct {
			SecretKeyRef *struct {
				Name string `yaml:"name"`
				Key  string `yaml:"key"`
			} `yaml:"secretKeyRef"`
		} `yaml:"valueFrom"`
	} `yaml:"env"`
	EnvFrom []struct {
		ConfigMapRef *struct {
			Name string `yaml:"name"`
		} `yaml:"configMapRef"`
		SecretRef *struct {
			Name string `yaml:"name"`
		} `yaml:"secretRef"`
	} `yaml:"envFrom"`
	Ports []struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
	} `yaml:"ports"`
	ReadinessProbe *probe `yaml:"readinessProbe"`
	LivenessProbe  *probe `yaml:"livenessProbe"`
	Resources      struct {
		Requests map[string]string `yaml:"requests"`
		Limits   map[string]string `yaml:"limits"`
	} `yaml:"resources"`
}

type probe struct {
	HTTPGet *struct {
		Path string `yaml:"path"`
		Port any    `yaml:"port"`
	} `yaml:"httpGet"`
}

// decodeManifests splits kustomize's output into objects.
func decodeManifests(t *testing.T, out []byte) []*manifest {
	t.Helper()
	var objs []*manifest
	dec := yaml.NewDecoder(bytes.NewReader(out))
	for {
		var node yaml.Node
		err := dec.Decode(&node)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("kustomize output is not YAML: %v", err)
		}
		m := &manifest{}
		if err := node.Decode(m); err != nil {
			t.Fatalf("decode object: %v", err)
		}
		if m.Kind == "Service" {
			var svc struct {
				Spec struct {
					Selector map[string]string `yaml:"selector"`
				} `yaml:"spec"`
			}
			_ = node.Decode(&svc)
			m.serviceSelector = svc.Spec.Selector
		}
		objs = append(objs, m)
	}
	return objs
}

func checkManifests(t *testing.T, objs []*manifest, users map[string]bool, exchanges []string, readme string) {
	byKind := map[string]map[string]*manifest{}
	for _, o := range objs {
		if byKind[o.Kind] == nil {
			byKind[o.Kind] = map[string]*manifest{}
		}
		byKind[o.Kind][o.Metadata.Name] = o
		if o.Kind == "Secret" {
			t.Errorf("Secret %s is in the manifests; Secrets are created out of band and only referenced", o.Metadata.Name)
		}
		if o.Kind == "ConfigMap" {
			for k := range o.Data {
				if isSecretName(k) {
					t.Errorf("ConfigMap %s holds %s, a secret setting", o.Metadata.Name, k)
				}
			}
		}
	}
	deployments := byKind["Deployment"]

	want := []string{"edge", "keys", "paper-venue"}
	for _, x := range exchanges {
		want = append(want, "connector-"+x)
	}
	for _, name := range want {
		if deployments[name] == nil {
			t.Errorf("no Deployment %s", name)
		}
	}

	for _, x := range exchanges {
		name := "connector-" + x
		d := deployments[name]
		if d == nil {
			continue
		}
		pods := d.Spec.Template.Metadata.Labels
		if s := byKind["Service"][name]; s == nil {
			t.Errorf("%s: no Service", name)
		} else if !selects(s.serviceSelector, pods) {
			t.Errorf("%s: Service selector %v does not select the pods %v", name, s.serviceSelector, pods)
		}
		if h := byKind["HorizontalPodAutoscaler"][name]; h == nil {
			t.Errorf("%s: no HorizontalPodAutoscaler", name)
		} else if h.Spec.ScaleTargetRef.Kind != "Deployment" || h.Spec.ScaleTargetRef.Name != name ||
			h.Spec.MinReplicas < 1 || h.Spec.MaxReplicas < h.Spec.MinReplicas {
			t.Errorf("%s: HorizontalPodAutoscaler scales %s %s from %d to %d", name,
				h.Spec.ScaleTargetRef.Kind, h.Spec.ScaleTargetRef.Name, h.Spec.MinReplicas, h.Spec.MaxReplicas)
		}
		if p := byKind["PodDisruptionBudget"][name]; p == nil {
			t.Errorf("%s: no PodDisruptionBudget", name)
		} else if !selects(p.Spec.Selector.MatchLabels, pods) {
			t.Errorf("%s: PodDisruptionBudget selector %v does not select the pods %v", name, p.Spec.Selector.MatchLabels, pods)
		}
		c := d.Spec.Template.Spec.Containers
		if len(c) != 1 || !strings.HasPrefix(c[0].Image, "perpgate/"+name+":") {
			t.Errorf("%s: want one container of image perpgate/%s:<tag>, got %+v", name, name, c)
		}
	}

	for name, d := range deployments {
		if !selects(d.Spec.Selector.MatchLabels, d.Spec.Template.Metadata.Labels) {
			t.Errorf("Deployment %s: selector %v does not select its pods %v", name, d.Spec.Selector.MatchLabels, d.Spec.Template.Metadata.Labels)
		}
		if !d.Spec.Template.Spec.SecurityContext.RunAsNonRoot {
			t.Errorf("Deployment %s: pods may run as root", name)
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			checkContainer(t, "Deployment "+name, c, byKind["ConfigMap"], users, readme)
		}
	}
}

func checkContainer(t *testing.T, where string, c container, configMaps map[string]*manifest, users map[string]bool, readme string) {
	where += " container " + c.Name
	for _, p := range []struct {
		name, path string
		probe      *probe
	}{{"readinessProbe", "/readyz", c.ReadinessProbe}, {"livenessProbe", "/healthz", c.LivenessProbe}} {
		if p.probe == nil || p.probe.HTTPGet == nil || p.probe.HTTPGet.Path != p.path {
			t.Errorf("%s: want %s httpGet %s", where, p.name, p.path)
			continue
		}
		port := fmt.Sprint(p.probe.HTTPGet.Port)
		found := false
		for _, cp := range c.Ports {
			found = found || cp.Name == port || strconv.Itoa(cp.ContainerPort) == port
		}
		if !found {
			t.Errorf("%s: %s port %s is none of the container's ports", where, p.name, port)
		}
	}
	for _, r := range []string{"cpu", "memory"} {
		if c.Resources.Requests[r] == "" || c.Resources.Limits[r] == "" {
			t.Errorf("%s: want %s request and limit, got requests %v limits %v", where, r, c.Resources.Requests, c.Resources.Limits)
		}
	}
	env := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			ref := e.ValueFrom.SecretKeyRef
			env[e.Name] = "secret " + ref.Name + "/" + ref.Key
			// The operating guide says how to create every Secret and key.
			if !strings.Contains(readme, "create secret generic "+ref.Name) || !strings.Contains(readme, "--from-literal="+ref.Key+"=") {
				t.Errorf("%s: %s comes from Secret %s key %s, which docs/operating.md does not say how to create", where, e.Name, ref.Name, ref.Key)
			}
			continue
		}
		env[e.Name] = e.Value
		if isSecretName(e.Name) {
			t.Errorf("%s: %s is inlined; a secret setting must come from a secretKeyRef", where, e.Name)
		}
	}
	for _, f := range c.EnvFrom {
		if f.SecretRef != nil {
			t.Errorf("%s: envFrom Secret %s; reference each secret key by name", where, f.SecretRef.Name)
		}
		if f.ConfigMapRef != nil && configMaps[f.ConfigMapRef.Name] == nil {
			t.Errorf("%s: envFrom ConfigMap %s, which the manifests do not contain", where, f.ConfigMapRef.Name)
		}
	}
	if user := env["PERPGATE_NATS_USER"]; user != "" {
		if !users[user] {
			t.Errorf("%s: NATS user %s is not in deploy/nats.conf", where, user)
		}
		if want := "secret perpgate-nats/" + user; env["PERPGATE_NATS_PASSWORD"] != want {
			t.Errorf("%s: PERPGATE_NATS_PASSWORD is %q, want the %s", where, env["PERPGATE_NATS_PASSWORD"], want)
		}
	}
	if strings.HasPrefix(c.Name, "connector") && env["PERPGATE_NATS_USER"] == "" {
		t.Errorf("%s: no PERPGATE_NATS_USER", where)
	}
}

// selects reports whether a non-empty selector matches labels.
func selects(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}
