package libspmi

import (
	"github.com/perfagent/subagent/client/spmiwire"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/perfagent/subagent/control"
	"github.com/perfagent/subagent/internal/ctest"
)

// cDefine is the value of a #define in the library's sources: a number,
// or (a << b).
func cDefine(t *testing.T, name string) int {
	t.Helper()
	var files []string
	for _, h := range ctest.Halves {
		m, _ := filepath.Glob(filepath.Join("src", h, "*.[ch]"))
		files = append(files, m...)
	}
	re := regexp.MustCompile(`(?m)^#define ` + name + `\s+\(?(\d+)u?(?:\s*<<\s*(\d+))?\)?`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if m := re.FindSubmatch(b); m != nil {
			v, _ := strconv.Atoi(string(m[1]))
			if len(m[2]) > 0 {
				s, _ := strconv.Atoi(string(m[2]))
				v <<= s
			}
			return v
		}
	}
	t.Fatalf("no #define %s in the library's sources", name)
	return 0
}

// The C library's bounds are the daemon's (control): a statset the
// daemon would refuse is refused by the library first, with its own
// message, and no request or page the library makes passes the daemon's.
func TestCLimitsAreTheDaemons(t *testing.T) {
	for _, c := range []struct {
		name string
		want int
		same bool // equal, or at most want
	}{
		{"SET_MAX_STATS", control.MaxStatSetPaths, true},
		{"SET_ADD_PATHS", spmiwire.MaxPaths, true},
		{"HOT_MAX_PEERS", control.MaxHotsetPeerSets, true},
		{"MAX_REQUEST", spmiwire.MaxRequest, true},
		{"ADD_BYTES", spmiwire.MaxRequest - 1024, false},
		{"PEEK_PAGE", spmiwire.MaxPeekPage, false},
	} {
		got := cDefine(t, c.name)
		if c.same && got != c.want || !c.same && got > c.want {
			t.Errorf("%s is %d; the daemon's bound is %d", c.name, got, c.want)
		}
	}
	// A statset's answer, about 40 bytes a value, fits one answer.
	if n := cDefine(t, "CONS_MAX_ANSWER"); control.MaxStatSetPaths*40 > n {
		t.Errorf("CONS_MAX_ANSWER %d holds no read of %d statistics", n, control.MaxStatSetPaths)
	}
}
