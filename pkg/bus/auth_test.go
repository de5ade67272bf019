package bus

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestLoadAuth(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    Auth
		wantErr []string // every substring must be in the error
	}{
		{name: "unset connects anonymously", env: map[string]string{}, want: Auth{}},
		{
			name: "user gets an inbox of its own",
			env:  map[string]string{"PERPGATE_NATS_USER": "connector-binance", "PERPGATE_NATS_PASSWORD": "pw"},
			want: Auth{User: "connector-binance", Password: "pw", InboxPrefix: "_INBOX_connector-binance"},
		},
		{
			name: "explicit inbox prefix wins",
			env:  map[string]string{"PERPGATE_NATS_USER": "edge", "PERPGATE_NATS_INBOX_PREFIX": "_R_edge.a"},
			want: Auth{User: "edge", InboxPrefix: "_R_edge.a"},
		},
		{
			name:    "password without user",
			env:     map[string]string{"PERPGATE_NATS_PASSWORD": "pw"},
			wantErr: []string{"PERPGATE_NATS_PASSWORD is set but PERPGATE_NATS_USER is not"},
		},
		{
			name:    "every problem at once",
			env:     map[string]string{"PERPGATE_NATS_USER": "a b", "PERPGATE_NATS_INBOX_PREFIX": "_INBOX.>"},
			wantErr: []string{"PERPGATE_NATS_USER: \"a b\" contains white space", "PERPGATE_NATS_INBOX_PREFIX: \"_INBOX.>\""},
		},
		{
			name:    "prefix ending in a dot",
			env:     map[string]string{"PERPGATE_NATS_INBOX_PREFIX": "_INBOX."},
			wantErr: []string{"PERPGATE_NATS_INBOX_PREFIX"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := LoadAuth(func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok })
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("want an error containing %q, got none (%+v)", tt.wantErr, got)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestPasswordMasked: a NATS password never shows in prints, logs or JSON.
func TestPasswordMasked(t *testing.T) {
	const pw = "s3cr3t-nats-pw"
	a := Auth{User: "edge", Password: pw}
	var logs bytes.Buffer
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("config", "auth", a, "password", a.Password)
	js, _ := json.Marshal(a)
	for name, out := range map[string]string{
		"%v": fmt.Sprintf("%v", a), "%+v": fmt.Sprintf("%+v", a), "%#v": fmt.Sprintf("%#v", a),
		"%s": fmt.Sprintf("%s", a.Password), "slog": logs.String(), "json": string(js),
	} {
		if strings.Contains(out, pw) {
			t.Errorf("%s shows the password: %s", name, out)
		}
	}
	if a.Password.Reveal() != pw {
		t.Error("Reveal does not return the password")
	}
}

// TestConnectErrorHidesPassword: a password given in the URL does not
// reach the error (which main prints).
func TestConnectErrorHidesPassword(t *testing.T) {
	_, err := Connect("nats://edge:url-pw-123@127.0.0.1:1", "test", Auth{}, nil)
	if err == nil {
		t.Fatal("connecting to port 1 succeeded")
	}
	if strings.Contains(err.Error(), "url-pw-123") || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("error should name the server without the password: %v", err)
	}
}
