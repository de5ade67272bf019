package stark

import (
	"sync"

	starkcurve "github.com/consensys/gnark-crypto/ecc/stark-curve"
	"github.com/consensys/gnark-crypto/ecc/stark-curve/fp"
)

// Starknet's Pedersen hash (Starknet docs, "Hash functions"):
//
//	H(a, b) = [shift + a_low·P0 + a_high·P1 + b_low·P2 + b_high·P3].x
//
// where a_low is the low 248 bits of a and a_high the rest. We keep our
// own rather than gnark-crypto's pedersen-hash package because that one
// builds its tables in an init function: 120 ms (750 ms under -race) at
// the start of every process that links the Paradex connector, every
// `perpgate` command included. Here the tables are built on first use,
// with additions and doublings instead of a scalar multiplication per
// entry, in a few milliseconds.

// pedersenPoints are shift, P0, P1, P2 and P3, in decimal affine x, y.
var pedersenPoints = [5][2]string{
	{"2089986280348253421170679821480865132823066470938446095505822317253594081284",
		"1713931329540660377023406109199410414810705867260802078187082345529207694986"},
	{"996781205833008774514500082376783249102396023663454813447423147977397232763",
		"1668503676786377725805489344771023921079126552019160156920634619255970485781"},
	{"2251563274489750535117886426533222435294046428347329203627021249169616184184",
		"1798716007562728905295480679789526322175868328062420237419143593021674992973"},
	{"2138414695194151160943305727036575959195309218611738193261179310511854807447",
		"113410276730064486255102093846540133784865286929052426931474106396135072156"},
	{"2379962749567351885752724891227938183011949129833673362440656643086021394946",
		"776496453633298175483985398648758586525933812536653089401905292063708816422"},
}

// nibbles is how many 4-bit digits a 32-byte big-endian felt has.
const nibbles = 2 * fp.Bytes

// pedersenTables[i][j][k] is k·16^j·P_i: one addition per nibble of input.
type pedersenTables struct {
	shift starkcurve.G1Jac
	mult  [4][nibbles][16]starkcurve.G1Jac
}

var pedersen = sync.OnceValue(func() *pedersenTables {
	t := new(pedersenTables)
	t.shift = jacPoint(pedersenPoints[0])
	for i := range 4 {
		q := jacPoint(pedersenPoints[i+1]) // 16^j·P_i
		for j := range nibbles {
			t.mult[i][j][1] = q
			for k := 2; k < 16; k++ {
				t.mult[i][j][k] = t.mult[i][j][k-1]
				t.mult[i][j][k].AddAssign(&q)
			}
			for range 4 {
				q.DoubleAssign()
			}
		}
	}
	return t
})

func jacPoint(xy [2]string) starkcurve.G1Jac {
	var p starkcurve.G1Jac
	if _, err := p.X.SetString(xy[0]); err != nil {
		panic(err)
	}
	if _, err := p.Y.SetString(xy[1]); err != nil {
		panic(err)
	}
	p.Z.SetOne()
	return p
}

// pedersenHash is H(a, b).
func pedersenHash(a, b *fp.Element) fp.Element {
	t := pedersen()
	acc := t.shift
	// add sums the nibbles of digits (big-endian bytes) against base's
	// table; nibble 0 is the lowest of the last byte.
	add := func(digits []byte, base int) {
		for i, v := range digits {
			j := 2 * (len(digits) - 1 - i)
			if lo := v & 0x0f; lo != 0 {
				acc.AddAssign(&t.mult[base][j][lo])
			}
			if hi := v >> 4; hi != 0 {
				acc.AddAssign(&t.mult[base][j+1][hi])
			}
		}
	}
	ab, bb := a.Bytes(), b.Bytes()
	add(ab[1:], 0) // low 248 bits
	add(ab[:1], 1)
	add(bb[1:], 2)
	add(bb[:1], 3)
	// Affine x = X / Z².
	var x fp.Element
	x.Inverse(&acc.Z)
	x.Square(&x)
	x.Mul(&acc.X, &x)
	return x
}

// pedersenArray is Starknet's hash of an array: the hashes chained from 0,
// then the length hashed in.
func pedersenArray(els ...*fp.Element) fp.Element {
	var h fp.Element
	for _, e := range els {
		h = pedersenHash(&h, e)
	}
	n := new(fp.Element).SetUint64(uint64(len(els)))
	return pedersenHash(&h, n)
}
