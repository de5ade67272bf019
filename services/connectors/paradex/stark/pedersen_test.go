package stark

import (
	"math/rand/v2"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/stark-curve/fp"
	gnarkpedersen "github.com/consensys/gnark-crypto/ecc/stark-curve/pedersen-hash"
)

// TestPedersenMatchesGnark checks our lazily tabled hash against
// gnark-crypto's on edge values and random felts (the message-hash tests
// check it against starknet.js's hashes too).
func TestPedersenMatchesGnark(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	felt := func() *fp.Element {
		var b [32]byte
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		b[0] &= 0x07 // below 2^251
		var e fp.Element
		e.SetBytes(b[:])
		return &e
	}
	max := new(fp.Element).SetOne()
	max.Neg(max) // P-1, every nibble of the top byte in use
	cases := [][2]*fp.Element{{new(fp.Element), new(fp.Element)}, {new(fp.Element).SetOne(), max}, {max, max}}
	for range 200 {
		cases = append(cases, [2]*fp.Element{felt(), felt()})
	}
	for _, c := range cases {
		got, want := pedersenHash(c[0], c[1]), gnarkpedersen.Pedersen(c[0], c[1])
		if !got.Equal(&want) {
			t.Fatalf("H(%s, %s) = %s, gnark says %s", c[0], c[1], got.String(), want.String())
		}
	}
	got, want := pedersenArray(cases[5][0], cases[6][1], max), gnarkpedersen.PedersenArray(cases[5][0], cases[6][1], max)
	if !got.Equal(&want) {
		t.Fatalf("array hash %s, gnark says %s", got.String(), want.String())
	}
}

func BenchmarkPedersenHash(b *testing.B) {
	x, y := new(fp.Element).SetUint64(12345), new(fp.Element).SetUint64(67890)
	for b.Loop() {
		pedersenHash(x, y)
	}
}
