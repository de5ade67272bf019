package stark

import "math/big"

// refVerify is an independent Stark ECDSA verifier in plain math/big
// (affine arithmetic, both y for the public x), written from the Starkware
// reference, so our signer is not only checked by the library it uses.
var (
	refP  = mustBig("800000000000011000000000000000000000000000000000000000000000001")
	refB  = mustBig("6f21413efbe40de150e596d72f7a8c5609ad26c15c915c1f4cdfcb99cee9e89")
	refGx = mustBig("1ef15c18599971b7beced415a40f0c7deacfd9b0d1819e03d723d8bc943cfca")
	refGy = mustBig("5668060aa49730b7be4801df46ec62de53ecd11abe43a32873000c36e8dc1f")
)

type refPt struct{ x, y *big.Int } // nil x = infinity

func refAdd(a, b refPt) refPt {
	if a.x == nil {
		return b
	}
	if b.x == nil {
		return a
	}
	var l *big.Int
	if a.x.Cmp(b.x) == 0 {
		if new(big.Int).Mod(new(big.Int).Add(a.y, b.y), refP).Sign() == 0 {
			return refPt{}
		}
		num := new(big.Int).Mul(a.x, a.x)
		num.Mul(num, big.NewInt(3)).Add(num, big.NewInt(1))
		den := new(big.Int).Lsh(a.y, 1)
		l = num.Mul(num, den.ModInverse(den, refP))
	} else {
		num := new(big.Int).Sub(b.y, a.y)
		den := new(big.Int).Sub(b.x, a.x)
		den.Mod(den, refP)
		l = num.Mul(num, den.ModInverse(den, refP))
	}
	l.Mod(l, refP)
	x := new(big.Int).Mul(l, l)
	x.Sub(x, a.x).Sub(x, b.x).Mod(x, refP)
	y := new(big.Int).Sub(a.x, x)
	y.Mul(y, l).Sub(y, a.y).Mod(y, refP)
	return refPt{x, y}
}

func refMul(p refPt, k *big.Int) refPt {
	r := refPt{}
	for i := k.BitLen() - 1; i >= 0; i-- {
		r = refAdd(r, r)
		if k.Bit(i) == 1 {
			r = refAdd(r, p)
		}
	}
	return r
}

func refVerify(pubX, hash, r, s *big.Int) bool {
	if r.Sign() <= 0 || r.Cmp(two251) >= 0 || s.Sign() <= 0 || s.Cmp(ecOrder) >= 0 || hash.Cmp(two251) >= 0 {
		return false
	}
	y2 := new(big.Int).Exp(pubX, big.NewInt(3), refP)
	y2.Add(y2, pubX).Add(y2, refB).Mod(y2, refP)
	y := new(big.Int).ModSqrt(y2, refP)
	if y == nil {
		return false
	}
	w := new(big.Int).ModInverse(s, ecOrder)
	u1 := new(big.Int).Mul(hash, w)
	u1.Mod(u1, ecOrder)
	u2 := new(big.Int).Mul(r, w)
	u2.Mod(u2, ecOrder)
	g := refPt{refGx, refGy}
	for _, yy := range []*big.Int{y, new(big.Int).Sub(refP, y)} {
		q := refPt{pubX, yy}
		R := refAdd(refMul(g, u1), refMul(q, u2))
		if R.x != nil && new(big.Int).Mod(R.x, ecOrder).Cmp(r) == 0 {
			return true
		}
	}
	return false
}
