package libspmi

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/internal/ctest"
)

// cc is the C compiler: without one the test fails, as ctest's do.
func cc(t *testing.T) string { return ctest.Compiler(t) }

// cLayout compiles and runs test/layout_check.c with extra flags.
func cLayout(t *testing.T, compiler string, flags ...string) (map[string][2]uint64, error) {
	bin := filepath.Join(t.TempDir(), "layout_check")
	args := append([]string{"-std=gnu11", "-Wall", "-Werror", "-o", bin}, flags...)
	args = append(args, "-Iinclude", filepath.Join("test", "layout_check.c"))
	if out, err := exec.Command(compiler, args...).CombinedOutput(); err != nil {
		return nil, &compileError{err, out}
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatalf("layout_check: %v", err)
	}
	m := map[string][2]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 {
			t.Fatalf("layout_check printed %q", sc.Text())
		}
		off, _ := strconv.ParseUint(f[1], 10, 64)
		size, _ := strconv.ParseUint(f[2], 10, 64)
		m[f[0]] = [2]uint64{off, size}
	}
	return m, nil
}

type compileError struct {
	err error
	out []byte
}

func (e *compileError) Error() string { return e.err.Error() + "\n" + string(e.out) }

// Every SpmiShare field of the C header is where the Go constants say.
// SiShArea (a pointer) and SiShT (struct timeval) only need to fit their
// unions; everything else must match exactly.
var goLayout = map[string]struct {
	off, size uint64
	fits      bool
}{
	"SiShMagic": {ddswire.OffMagic, 8, false}, "SiShMajor": {ddswire.OffMajor, 2, false}, "SiShMinor": {ddswire.OffMinor, 2, false},
	"SiShHdrLen": {ddswire.OffHdrLen, 4, false}, "SiShAllocLen": {ddswire.OffAllocLen, 4, false}, "SiShAreaOff": {ddswire.OffAreaOff, 4, false},
	"SiShAreaLen": {ddswire.OffAreaLen, 4, false}, "SiShPermLen": {ddswire.OffPermLen, 4, false}, "SiShGen": {ddswire.OffGen, 8, false},
	"SiShPid": {ddswire.OffPID, 4, false}, "SiShFlags": {ddswire.OffFlags, 4, false}, "SiShStart": {ddswire.OffStart, 8, false},
	"SiShArea": {ddswire.OffArea, 8, true}, "SiShAreaAddr": {ddswire.OffArea, 8, false},
	"SiShT": {ddswire.OffT, ddswire.LenT, true}, "SiShTRaw": {ddswire.OffT, ddswire.LenT, false},
	"SiShGoAway": {ddswire.OffGoAway, 4, false}, "SiShInterval": {ddswire.OffInterval, 4, false}, "SiShSubscrib": {ddswire.OffSubscrib, 4, false},
	"SiShPortNo": {ddswire.OffPortNo, 2, false}, "SiShPad": {ddswire.OffPad, 2, false}, "SiShName": {ddswire.OffName, ddswire.LenName, false},
	"SiShBatch": {ddswire.OffBatch, 4, false}, "SiShBatchEnd": {ddswire.OffBatchEnd, 4, false}, "SiShReading": {ddswire.OffReading, 4, false},
	"SiShPad2": {ddswire.OffPad2, 4, false},
	"SiShRes":  {ddswire.OffRes, 8 * ddswire.NumRes, false}, "sizeof": {ddswire.HeaderSize, ddswire.HeaderSize, false},
}

func compareLayout(t *testing.T, c map[string][2]uint64) {
	t.Helper()
	for name, g := range goLayout {
		got, ok := c[name]
		switch {
		case !ok:
			t.Errorf("layout_check.c does not print %s", name)
		case got[0] != g.off:
			t.Errorf("%s: C offset %d, Go %d", name, got[0], g.off)
		case g.fits && got[1] > g.size, !g.fits && got[1] != g.size:
			t.Errorf("%s: C size %d, Go %d", name, got[1], g.size)
		}
	}
	if len(c) != len(goLayout) {
		t.Errorf("C prints %d fields, Go knows %d", len(c), len(goLayout))
	}
}

func TestCHeaderLayout(t *testing.T) {
	compiler := cc(t)
	c, err := cLayout(t, compiler)
	if err != nil {
		t.Fatal(err)
	}
	compareLayout(t, c)
	// The 32-bit ABI, where the compiler can build for it (it needs 32-bit
	// libc headers; without them only the static asserts stand for it).
	c32, err := cLayout(t, compiler, "-m32")
	if err != nil {
		t.Logf("no -m32 build here, 32-bit layout not run: %.200s", err)
		return
	}
	compareLayout(t, c32)
}

// The guide's sample suppliers compile against the header with only their
// include line changed (and SpmiDdsInit's non-AIX sixth argument).
func TestGuideSamplesCompile(t *testing.T) {
	compiler := cc(t)
	for _, src := range []string{"SpmiSupl1.c", "SpmiSupl.c"} {
		obj := filepath.Join(t.TempDir(), src+".o")
		cmd := exec.Command(compiler, "-c", "-Iinclude", "-o", obj, filepath.Join("..", "samples", "spmi", src))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", src, err, out)
		}
	}
	// C++ and strict C11 take the header too.
	for _, flags := range [][]string{{"-x", "c++", "-std=c++11"}, {"-std=c11", "-pedantic-errors"}} {
		args := append(flags, "-fsyntax-only", "-Wall", "-Werror", "-Iinclude", filepath.Join("test", "layout_check.c"))
		if out, err := exec.Command(compiler, args...).CombinedOutput(); err != nil {
			t.Errorf("%v: %v\n%s", flags, err, out)
		}
	}
}

// The 32-bit layout, checked at compile time: the Go constants become
// static asserts, compiled with -m32 against stand-in libc headers (a
// 32-bit libc need not be installed), once with a 32-bit and once with a
// 64-bit time_t (_TIME_BITS=64).
func TestCHeaderLayout32(t *testing.T) {
	compiler := cc(t)
	dir := t.TempDir()
	fake := map[string]string{"stdio.h": "", "stdlib.h": "", "unistd.h": "", "sys/types.h": ""}
	var src strings.Builder
	src.WriteString("#include \"spmi_dds.h\"\n_Static_assert(sizeof(char *) == 4, \"32-bit\");\n")
	for name, g := range goLayout {
		if name == "sizeof" {
			fmt.Fprintf(&src, "_Static_assert(sizeof(SpmiShare) == %d, \"sizeof\");\n", g.size)
			continue
		}
		op := "=="
		if g.fits {
			op = "<="
		}
		fmt.Fprintf(&src, "_Static_assert(offsetof(SpmiShare, %s) == %d, \"%s offset\");\n", name, g.off, name)
		fmt.Fprintf(&src, "_Static_assert(sizeof(((SpmiShare *)0)->%s) %s %d, \"%s size\");\n", name, op, g.size, name)
	}
	fake["check.c"] = src.String()
	for _, tv := range []string{"long", "long long"} {
		fake["sys/time.h"] = fmt.Sprintf("struct timeval { %s tv_sec; %s tv_usec; };\n", tv, tv)
		for name, text := range fake {
			p := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command(compiler, "-m32", "-ffreestanding", "-fsyntax-only", "-std=gnu11", "-Wall", "-Werror",
			"-I", dir, "-I", "include", filepath.Join(dir, "check.c"))
		out, err := cmd.CombinedOutput()
		if err != nil && bytes.Contains(out, []byte("m32")) {
			t.Skipf("the compiler cannot target 32-bit: %s", out)
		}
		if err != nil {
			t.Fatalf("timeval of %s: %v\n%s", tv, err, out)
		}
	}
}
