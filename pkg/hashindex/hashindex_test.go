package hashindex

import (
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// TestRunFind: every key written is found with all its entries (equal
// keys across block boundaries included), absent keys find nothing, and
// a reopened run answers the same.
func TestRunFind(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run")
	rng := rand.New(rand.NewPCG(1, 2))
	var entries []Entry
	want := map[uint64]int{}
	for i := range 10_000 {
		k := rng.Uint64()
		if i%100 == 0 {
			k = 42 // 100 entries of one key span blocks
		}
		entries = append(entries, Entry{Key: k, Off: uint64(i), N: uint32(i), Aux: uint64(i) * 3})
		want[k]++
	}
	r, err := Write(path, append([]Entry(nil), entries...))
	if err != nil {
		t.Fatal(err)
	}
	check := func(r *Run, when string) {
		t.Helper()
		for _, e := range entries {
			got, ok := 0, false
			if err := r.Find(e.Key, func(f Entry) bool {
				got++
				if f == e {
					ok = true
				}
				return true
			}); err != nil {
				t.Fatal(err)
			}
			if !ok || got != want[e.Key] {
				t.Fatalf("%s: key %d: %d entries, own found %v; want %d", when, e.Key, got, ok, want[e.Key])
			}
		}
		misses := 0
		for range 10_000 {
			k := rng.Uint64()
			if want[k] > 0 {
				continue
			}
			_ = r.Find(k, func(Entry) bool { misses++; return true })
		}
		if misses > 0 {
			t.Fatalf("%s: %d absent keys found", when, misses)
		}
	}
	check(r, "written")
	r.Close()
	r2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if r2.Len() != len(entries) {
		t.Fatalf("reopened run holds %d entries, want %d", r2.Len(), len(entries))
	}
	check(r2, "reopened")
	empty, err := Write(filepath.Join(t.TempDir(), "empty"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer empty.Close()
	if err := empty.Find(42, func(Entry) bool { t.Fatal("found in an empty run"); return true }); err != nil {
		t.Fatal(err)
	}
}

// TestBloomFalsePositives: an absent key reads the file about 1 % of the
// time.
func TestBloomFalsePositives(t *testing.T) {
	const n = 100_000
	f := newBloom(n)
	for i := range uint64(n) {
		f.add(i * 0x9e3779b97f4a7c15)
	}
	fp := 0
	for i := range uint64(n) {
		if f.has(i*0x9e3779b97f4a7c15 + 1) {
			fp++
		}
	}
	if fp > n/50 {
		t.Fatalf("%d false positives in %d; want under 2 %%", fp, n)
	}
}
