// Package apikey makes and recognizes perpgate API keys (SPEC §2, §5;
// DESIGN §5): mt_live_ or mt_test_ followed by 43 base62 characters from
// crypto/rand. The keys service stores only Hash of a key and shows only
// Display; the edge uses Parse to tell a malformed key (INVALID_KEY_FORMAT)
// from one to look up by hash. Key holds a full key and prints as a mask
// everywhere (fmt, slog, JSON) except through Reveal.
package apikey

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Env is the environment a key may trade in: a live key reaches mainnet
// credentials only, a test key testnet credentials only.
type Env string

// Environments.
const (
	EnvLive Env = "live"
	EnvTest Env = "test"
)

// Key layout.
const (
	PrefixLive    = "mt_live_" // prefix of EnvLive keys
	PrefixTest    = "mt_test_" // prefix of EnvTest keys
	BodyLength    = 43         // base62 characters after the prefix
	Length        = 51         // whole key: prefix plus body
	DisplayLength = 12         // characters Display keeps: prefix plus 4
)

// Alphabet is the base62 alphabet of a key's body.
const Alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// ErrFormat means a key does not start with mt_live_ or mt_test_; the edge
// answers INVALID_KEY_FORMAT.
var ErrFormat = errors.New("api key must start with mt_live_ or mt_test_")

// ErrEnv means an environment is neither "live" nor "test".
var ErrEnv = errors.New(`environment must be "live" or "test"`)

// ParseEnv returns the Env named s ("live" or "test"), or ErrEnv.
func ParseEnv(s string) (Env, error) {
	switch e := Env(s); e {
	case EnvLive, EnvTest:
		return e, nil
	}
	return "", fmt.Errorf("%w, got %q", ErrEnv, s)
}

// Prefix returns the key prefix of e, or "" when e is not a known Env.
func (e Env) Prefix() string {
	switch e {
	case EnvLive:
		return PrefixLive
	case EnvTest:
		return PrefixTest
	}
	return ""
}

// Parse returns the environment a raw key claims by its prefix, or
// ErrFormat when it has neither prefix. It deliberately checks nothing
// else: a well-prefixed key of the wrong length or alphabet is still looked
// up by hash and so fails as INVALID_API_KEY, as SPEC §5 orders the checks.
// WellFormed tells whether that look-up can be skipped.
func Parse(raw string) (Env, error) {
	switch {
	case strings.HasPrefix(raw, PrefixLive):
		return EnvLive, nil
	case strings.HasPrefix(raw, PrefixTest):
		return EnvTest, nil
	}
	return "", ErrFormat
}

// WellFormed reports whether raw has a known prefix, Length characters and
// a base62 body, i.e. whether Generate could have made it. A key that is
// not well formed can be answered INVALID_API_KEY without a look-up.
func WellFormed(raw string) bool {
	if _, err := Parse(raw); err != nil || len(raw) != Length {
		return false
	}
	for i := len(PrefixLive); i < len(raw); i++ {
		if strings.IndexByte(Alphabet, raw[i]) < 0 {
			return false
		}
	}
	return true
}

// Hash returns the hex SHA-256 of a key, the only form the keys service
// stores and looks keys up by.
func Hash(key string) string {
	sum := sha256.Sum256([]byte(key))
	// Encoded on the stack: the edge hashes the key of every request.
	var out [2 * sha256.Size]byte
	hex.Encode(out[:], sum[:])
	return string(out[:])
}

// Display returns the first DisplayLength characters of a key (prefix plus
// four), the only part listings show; a shorter input is returned whole.
func Display(key string) string {
	if len(key) > DisplayLength {
		return key[:DisplayLength]
	}
	return key
}

// Generate returns a new key for env: its prefix and BodyLength base62
// characters from crypto/rand. It fails only on an unknown env or when the
// system's random source fails.
func Generate(env Env) (Key, error) {
	return generate(rand.Reader, env)
}

// generate reads bytes from r and keeps those below 248, the largest
// multiple of 62 that fits a byte, so that b%62 picks every character with
// the same probability (rejection sampling; no modulo bias).
func generate(r io.Reader, env Env) (Key, error) {
	prefix := env.Prefix()
	if prefix == "" {
		return Key{}, fmt.Errorf("generate api key: %w, got %q", ErrEnv, string(env))
	}
	const limit = 256 - 256%len(Alphabet)
	out := make([]byte, 0, Length)
	out = append(out, prefix...)
	buf := make([]byte, 64)
	for len(out) < Length {
		if _, err := io.ReadFull(r, buf); err != nil {
			return Key{}, fmt.Errorf("generate api key: read random: %w", err)
		}
		for _, b := range buf {
			if int(b) >= limit {
				continue
			}
			out = append(out, Alphabet[int(b)%len(Alphabet)])
			if len(out) == Length {
				break
			}
		}
	}
	return FromString(string(out)), nil
}
