package keys_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/perpgate/perpgate/services/keys"
)

func TestLoadConfig(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    func(keys.Config) bool
		errPart []string
	}{
		{
			name: "defaults with required secrets",
			env:  map[string]string{"PERPGATE_ADMIN_TOKEN": testAdminToken, "PERPGATE_MASTER_KEY": testMasterKey},
			want: func(c keys.Config) bool {
				return c.DataDir == "./.perpgate" && c.NATSURL == "nats://127.0.0.1:4222" && c.AdminAddr == "127.0.0.1:8081" &&
					c.SubjectPrefix == "perpgate" && c.DatabaseURL == "" && c.AdminToken.Reveal() == testAdminToken
			},
		},
		{
			name: "overrides",
			env: map[string]string{
				"PERPGATE_ADMIN_TOKEN": testAdminToken, "PERPGATE_MASTER_KEY": testMasterKey,
				"PERPGATE_DATABASE_URL": "postgres://u:p@db/x", "PERPGATE_DATA_DIR": "/d", "PERPGATE_NATS_URL": "nats://n:1",
				"PERPGATE_ADMIN_ADDR": ":9", "PERPGATE_SUBJECT_PREFIX": "p2",
			},
			want: func(c keys.Config) bool {
				return c.DatabaseURL.Reveal() == "postgres://u:p@db/x" && c.DataDir == "/d" && c.NATSURL == "nats://n:1" &&
					c.AdminAddr == ":9" && c.SubjectPrefix == "p2"
			},
		},
		{
			name:    "missing secrets reported together",
			env:     map[string]string{},
			errPart: []string{"PERPGATE_ADMIN_TOKEN is required", "PERPGATE_MASTER_KEY is required"},
		},
		{
			name:    "bad master key",
			env:     map[string]string{"PERPGATE_ADMIN_TOKEN": testAdminToken, "PERPGATE_MASTER_KEY": "not base64!"},
			errPart: []string{"PERPGATE_MASTER_KEY is not valid standard base64"},
		},
		{
			name:    "short master key and token",
			env:     map[string]string{"PERPGATE_ADMIN_TOKEN": "short", "PERPGATE_MASTER_KEY": "c2hvcnQ="},
			errPart: []string{"must decode to 32 bytes, got 5", "PERPGATE_ADMIN_TOKEN must be at least 16"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := keys.LoadConfig(func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok })
			if len(tt.errPart) > 0 {
				if err == nil {
					t.Fatal("no error")
				}
				for _, p := range tt.errPart {
					if !strings.Contains(err.Error(), p) {
						t.Fatalf("error %q does not contain %q", err, p)
					}
				}
				return
			}
			if err != nil || !tt.want(cfg) {
				t.Fatalf("config = %+v, %v", cfg, err)
			}
		})
	}
}

func TestConfigSecretsMasked(t *testing.T) {
	cfg := testConfig()
	cfg.DatabaseURL = "postgres://user:dbpassword@db/x"
	var logs bytes.Buffer
	slog.New(slog.NewTextHandler(&logs, nil)).Info("config", "cfg", cfg, "token", cfg.AdminToken)
	js, _ := json.Marshal(cfg)
	outputs := map[string]string{
		"%v": fmt.Sprintf("%v", cfg), "%+v": fmt.Sprintf("%+v", cfg), "%#v": fmt.Sprintf("%#v", cfg),
		"%s": fmt.Sprintf("%s", cfg.MasterKey), "json": string(js), "slog": logs.String(),
	}
	for name, out := range outputs {
		for _, secret := range []string{testAdminToken, testMasterKey, "dbpassword"} {
			if strings.Contains(out, secret) {
				t.Fatalf("%s output %q reveals a secret", name, out)
			}
		}
	}
}
