package keys

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"
)

func TestSealer(t *testing.T) {
	master := bytes.Repeat([]byte{1}, 32)
	other := bytes.Repeat([]byte{2}, 32)
	s, err := newSealer(master)
	if err != nil {
		t.Fatal(err)
	}
	plain := []byte(`{"apiKey":"k","apiSecret":"s"}`)
	v, err := s.seal("cred-1", plain)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(master)
	if v.KeyID != hex.EncodeToString(sum[:])[:8] {
		t.Fatalf("key id = %q, want the first 8 hex of SHA-256(master)", v.KeyID)
	}
	if bytes.Contains(v.Data, plain) || len(v.Data) != 12+len(plain)+16 {
		t.Fatalf("sealed data is %d bytes or holds the plaintext", len(v.Data))
	}
	again, _ := s.seal("cred-1", plain)
	if bytes.Equal(again.Data[:12], v.Data[:12]) {
		t.Fatal("nonce reused")
	}
	got, err := s.open("cred-1", v)
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("open = %q, %v", got, err)
	}

	rotated, err := newSealer(other, master)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := rotated.open("cred-1", v); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("open after rotation = %q, %v", got, err)
	}

	tampered := Sealed{KeyID: v.KeyID, Data: bytes.Clone(v.Data)}
	tampered.Data[len(tampered.Data)-1] ^= 1
	withOther, _ := newSealer(other)
	tests := []struct {
		name    string
		s       *sealer
		id      string
		v       Sealed
		unknown bool
	}{
		{name: "other credential's row", s: s, id: "cred-2", v: v},
		{name: "tampered", s: s, id: "cred-1", v: tampered},
		{name: "truncated", s: s, id: "cred-1", v: Sealed{KeyID: v.KeyID, Data: v.Data[:20]}},
		{name: "unknown master key", s: withOther, id: "cred-1", v: v, unknown: true},
		{name: "wrong key id", s: s, id: "cred-1", v: Sealed{KeyID: "00000000", Data: v.Data}, unknown: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.s.open(tt.id, tt.v)
			if err == nil {
				t.Fatal("opened")
			}
			if errors.Is(err, errUnknownSealKey) != tt.unknown {
				t.Fatalf("err = %v, unknown key = %v", err, tt.unknown)
			}
		})
	}
	if _, err := newSealer([]byte("short")); err == nil {
		t.Fatal("short master key accepted")
	}
}
