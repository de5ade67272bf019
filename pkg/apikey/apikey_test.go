package apikey

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestGenerate(t *testing.T) {
	tests := []struct {
		name   string
		env    Env
		prefix string
	}{
		{name: "live", env: EnvLive, prefix: "mt_live_"},
		{name: "test", env: EnvTest, prefix: "mt_test_"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := Generate(tt.env)
			if err != nil {
				t.Fatal(err)
			}
			raw := k.Reveal()
			if len(raw) != 51 {
				t.Fatalf("len = %d, want 51", len(raw))
			}
			if !strings.HasPrefix(raw, tt.prefix) {
				t.Fatalf("key %q lacks prefix %q", k.Display(), tt.prefix)
			}
			for i, c := range raw[len(tt.prefix):] {
				if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
					t.Fatalf("body character %d is %q, not base62", i, c)
				}
			}
			if env, err := k.Env(); err != nil || env != tt.env {
				t.Fatalf("Env() = %q, %v; want %q", env, err, tt.env)
			}
			if !WellFormed(raw) {
				t.Fatal("WellFormed(generated key) = false")
			}
		})
	}
}

func TestGenerateUnknownEnv(t *testing.T) {
	_, err := Generate("prod")
	if !errors.Is(err, ErrEnv) {
		t.Fatalf("err = %v, want ErrEnv", err)
	}
	if want := `generate api key: environment must be "live" or "test", got "prod"`; err.Error() != want {
		t.Fatalf("message %q, want %q", err.Error(), want)
	}
}

func TestGenerateUnique(t *testing.T) {
	const n = 20000
	seen := make(map[string]bool, n)
	var counts [256]int
	for range n {
		k, err := Generate(EnvTest)
		if err != nil {
			t.Fatal(err)
		}
		raw := k.Reveal()
		if seen[raw] {
			t.Fatalf("duplicate key after %d keys", len(seen))
		}
		seen[raw] = true
		for i := len(PrefixTest); i < len(raw); i++ {
			counts[raw[i]]++
		}
	}
	// Every base62 character must turn up: n*43/62 ≈ 13900 draws each, so a
	// missing or grossly rare one means a broken alphabet or sampling.
	for _, c := range []byte(Alphabet) {
		if counts[c] < 12000 || counts[c] > 16000 {
			t.Errorf("character %q drawn %d times, want about %d", c, counts[c], n*BodyLength/62)
		}
	}
}

func TestGenerateRejectsBiasedBytes(t *testing.T) {
	// 248..255 must be skipped: were they used, 248%62=0 would put '0' first.
	src := bytes.Repeat([]byte{248, 255, 61, 62, 0}, 64)
	k, err := generate(bytes.NewReader(src), EnvLive)
	if err != nil {
		t.Fatal(err)
	}
	body := k.Reveal()[len(PrefixLive):]
	want := strings.Repeat("z0"+"0", 15)[:BodyLength] // 61→'z', 62→'0', 0→'0'
	if body != want {
		t.Fatalf("body %q, want %q", body, want)
	}
}

func TestGenerateRandomFailure(t *testing.T) {
	_, err := generate(io.LimitReader(bytes.NewReader(make([]byte, 100)), 10), EnvLive)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("err = %v, want io.ErrUnexpectedEOF wrapped", err)
	}
	if !strings.HasPrefix(err.Error(), "generate api key: read random: ") {
		t.Fatalf("message %q lacks the operation", err)
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		env  Env
		err  error
	}{
		{name: "live", raw: "mt_live_" + strings.Repeat("a", 43), env: EnvLive},
		{name: "test", raw: "mt_test_" + strings.Repeat("a", 43), env: EnvTest},
		{name: "well prefixed but short", raw: "mt_live_abc", env: EnvLive},
		{name: "well prefixed bad charset", raw: "mt_test_" + strings.Repeat("!", 43), env: EnvTest},
		{name: "prefix only", raw: "mt_live_", env: EnvLive},
		{name: "empty", raw: "", err: ErrFormat},
		{name: "upper case prefix", raw: "MT_LIVE_" + strings.Repeat("a", 43), err: ErrFormat},
		{name: "other prefix", raw: "sk_live_" + strings.Repeat("a", 43), err: ErrFormat},
		{name: "prefix without underscore", raw: "mt_live", err: ErrFormat},
		{name: "leading space", raw: " mt_live_" + strings.Repeat("a", 43), err: ErrFormat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, err := Parse(tt.raw)
			if !errors.Is(err, tt.err) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if tt.err != nil && err.Error() != "api key must start with mt_live_ or mt_test_" {
				t.Fatalf("message %q", err)
			}
			if env != tt.env {
				t.Fatalf("env = %q, want %q", env, tt.env)
			}
		})
	}
}

func TestWellFormed(t *testing.T) {
	body := strings.Repeat("aZ9", 15)[:43]
	tests := []struct {
		name string
		raw  string
		want bool
	}{
		{name: "live", raw: "mt_live_" + body, want: true},
		{name: "test", raw: "mt_test_" + body, want: true},
		{name: "one short", raw: "mt_live_" + body[1:], want: false},
		{name: "one long", raw: "mt_live_" + body + "a", want: false},
		{name: "dash in body", raw: "mt_live_" + body[1:] + "-", want: false},
		{name: "underscore in body", raw: "mt_live_" + body[1:] + "_", want: false},
		{name: "no prefix", raw: "mt_prod_" + body, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := WellFormed(tt.raw); got != tt.want {
				t.Fatalf("WellFormed(%q) = %v, want %v", tt.raw, got, tt.want)
			}
		})
	}
}

func TestHashAndDisplay(t *testing.T) {
	tests := []struct {
		name    string
		key     string
		hash    string
		display string
	}{
		// printf %s KEY | sha256sum
		{name: "key", key: "mt_live_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG",
			hash: "b564c4feff4d33385eaf9ed82d7996edb911dfa4bc2e868bfda5376268a7d6fc", display: "mt_live_0123"},
		{name: "empty", key: "",
			hash: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", display: ""},
		{name: "short", key: "mt_", hash: "", display: "mt_"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.hash != "" {
				if got := Hash(tt.key); got != tt.hash {
					t.Errorf("Hash = %s, want %s", got, tt.hash)
				}
			}
			if got := Display(tt.key); got != tt.display {
				t.Errorf("Display = %q, want %q", got, tt.display)
			}
		})
	}
}

func TestParseEnv(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Env
		err  string
	}{
		{name: "live", in: "live", want: EnvLive},
		{name: "test", in: "test", want: EnvTest},
		{name: "mainnet", in: "mainnet", err: `environment must be "live" or "test", got "mainnet"`},
		{name: "empty", in: "", err: `environment must be "live" or "test", got ""`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseEnv(tt.in)
			if tt.err == "" {
				if err != nil || got != tt.want {
					t.Fatalf("ParseEnv(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
				}
				return
			}
			if !errors.Is(err, ErrEnv) || err.Error() != tt.err {
				t.Fatalf("ParseEnv(%q) error %v, want %q wrapping ErrEnv", tt.in, err, tt.err)
			}
		})
	}
}
