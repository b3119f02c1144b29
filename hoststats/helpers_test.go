package hoststats

import (
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/spmi"
)

var testBase = asn1tree.MustParse("1.3.6.1.4.1.32473.1")

// fixtureRoot is this package's directory, which holds testdata.
func fixtureRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func providers(t testing.TB, cfg Config) []spmi.Provider {
	t.Helper()
	ps, err := Providers(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// build runs every provider once into a new snapshot.
func build(t testing.TB, ps []spmi.Provider, num *spmi.Numbering) *spmi.Snapshot {
	t.Helper()
	b := spmi.NewBuilder(testBase, num, time.Now())
	for _, p := range ps {
		b.SetProvider(p.Name())
		if err := p.Collect(b); err != nil {
			t.Fatalf("%s: %v", p.Name(), err)
		}
	}
	return b.Finish()
}

func fixtureSnapshot(t testing.TB) *spmi.Snapshot {
	t.Helper()
	return build(t, providers(t, FixtureConfig(fixtureRoot(t))), nil)
}

func node(t testing.TB, s *spmi.Snapshot, path string) *spmi.Node {
	t.Helper()
	n, err := s.Lookup(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return n
}

func absent(t testing.TB, s *spmi.Snapshot, path string) {
	t.Helper()
	if n, err := s.Lookup(path); err == nil {
		t.Errorf("%s exists (%s), want it absent", path, n.Rel)
	}
}

// value is a statistic's value, which must have been read.
func value(t testing.TB, s *spmi.Snapshot, path string) spmiwire.Value {
	t.Helper()
	n := node(t, s, path)
	if !n.IsStat() {
		t.Fatalf("%s is a context", path)
	}
	if !n.Value.OK() {
		t.Fatalf("%s has no value", path)
	}
	return n.Value
}

func wantUint(t testing.TB, s *spmi.Snapshot, path string, want uint64) {
	t.Helper()
	if v := value(t, s, path); v.IsText() || v.Uint64() != want || v.Float64() != float64(want) {
		t.Errorf("%s = %s, want %d", path, v, want)
	}
}

func wantFloat(t testing.TB, s *spmi.Snapshot, path string, want float64) {
	t.Helper()
	if v := value(t, s, path); math.Abs(v.Float64()-want) > 1e-9 {
		t.Errorf("%s = %s, want %v", path, v, want)
	}
}

func wantText(t testing.TB, s *spmi.Snapshot, path string, want string) {
	t.Helper()
	if v := value(t, s, path); !v.IsText() || v.TextValue() != want {
		t.Errorf("%s = %q, want %q", path, v, want)
	}
}

func wantNoValue(t testing.TB, s *spmi.Snapshot, path string) {
	t.Helper()
	n := node(t, s, path)
	if !n.IsStat() || n.Value.OK() {
		t.Errorf("%s = %s, want no value", path, n.Value)
	}
}

func wantRel(t testing.TB, s *spmi.Snapshot, path, rel string) {
	t.Helper()
	if n := node(t, s, path); n.Rel.String() != rel {
		t.Errorf("%s has relative id %s, want %s", path, n.Rel, rel)
	}
}

// copyFixture copies testdata (symlinks included) to a temporary root for
// tests that damage it; FixtureConfig(root) reads the copy.
func copyFixture(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	testutil.CopyTree(t, filepath.Join(fixtureRoot(t), "testdata"), filepath.Join(root, "testdata"))
	return root
}

// children lists the names of the instances of a context.
func instances(t testing.TB, s *spmi.Snapshot, path string) map[string]uint32 {
	t.Helper()
	out := map[string]uint32{}
	for _, c := range node(t, s, path).Children {
		if c.Instance {
			out[c.Name] = c.ASN
		}
	}
	return out
}
