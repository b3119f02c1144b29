package mib

import (
	"strings"
	"testing"

	"github.com/perfagent/subagent/asn1tree"
)

func TestPlainDescriptorFromPaths(t *testing.T) {
	cases := []struct {
		path string
		rel  string
		want string
	}{
		{"Mem/Real/%free", "2.1.3", "memRealPctFree"},
		{"CPU/cpu0/idle", "1.1.4", "cpuCpu0Idle"},
		{"CPU/", "1", "cpu"},
		{"PagSp/sda3/priority", "3.4.5", "pagSpSda3Priority"},
		{"RTime/ARM/", "13.1", "rTimeARM"},
		{"DDS/IBM/sample1/", "99.2.1", "ddsIBMSample1"},
		{"FS/srv_backup_set/%iused", "11.6.7", "fsSrvBackupSetPctIused"},
		{"LAN/eth0.100/rx-bytes", "5.7.1", "lanEth0100RxBytes"},
		{"Disk/#1/x", "4.1.1", "diskNum1X"},
		// Nothing usable: the ASN.1 number stands in.
		{"Proc/()/name", "10.7.1", "procN7Name"},
		// Letters other than ASCII are dropped.
		{"FS/caf\u00e9/size", "11.3.1", "fsCafSize"},
		// A first component starting with a digit gets a leading n.
		{"3D/a", "20.1", "n3DA"},
		{"%/a", "21.1", "pctA"},
	}
	for _, c := range cases {
		got := plainDescriptor(strings.Split(c.path, "/")[:len(asn1tree.MustParse(c.rel))], asn1tree.MustParse(c.rel))
		if got != c.want {
			t.Errorf("%s: got %q, want %q", c.path, got, c.want)
		}
		if err := validDescriptor(got); err != nil {
			t.Errorf("%s: %v", c.path, err)
		}
	}
}

func TestSuffixedFitsAndNamesTheRelativeID(t *testing.T) {
	must := func(plain string, rel asn1tree.OID, extra int) string {
		t.Helper()
		s, err := suffixed(plain, rel, extra)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	rel := asn1tree.MustParse("2.1.3")
	if got := must("memRealFree", rel, 0); got != "memRealFreeR2x1x3" {
		t.Errorf("got %q", got)
	}
	if got := must("memRealFree", rel, 2); got != "memRealFreeR2x1x3ZZ" {
		t.Errorf("with extra: got %q", got)
	}
	long := strings.Repeat("abcdefghij", 8) // 80 characters
	rel = asn1tree.MustParse("10.100.4194304.12")
	got := must(long, rel, 0)
	want := long[:64-len("R10x100x4194304x12")] + "R10x100x4194304x12"
	if got != want || len(got) != MaxDescriptor {
		t.Errorf("got %q (%d), want %q", got, len(got), want)
	}
	// A 63-character suffix leaves room for one letter; 64 leave none.
	rel63 := asn1tree.MustParse("1000000000.1000000000.1000000000.1000000000.1000000000.1000000")
	if got := must("abc", rel63, 0); len(got) != MaxDescriptor || got[:2] != "aR" {
		t.Errorf("63-character suffix: got %q (%d)", got, len(got))
	}
	for _, extra := range []int{1, 5} {
		if s, err := suffixed("abc", rel63, extra); err == nil {
			t.Errorf("suffix of %d characters accepted: %q", 63+extra, s)
		}
	}
	deep := asn1tree.MustParse(strings.TrimSuffix(strings.Repeat("123456.", 14), "."))
	if s, err := suffixed("a", deep, 0); err == nil || !strings.Contains(err.Error(), "98 characters") {
		t.Errorf("14 arcs of 6 digits: %q, %v", s, err)
	}
}

func TestValidDescriptorRejects(t *testing.T) {
	for _, s := range []string{"", "Cpu", "1cpu", "cpu-idle", "cpu_idle", strings.Repeat("a", 65)} {
		if validDescriptor(s) == nil {
			t.Errorf("%q accepted", s)
		}
	}
	if err := validDescriptor(strings.Repeat("a", 64)); err != nil {
		t.Error(err)
	}
}

func TestModuleNames(t *testing.T) {
	for _, s := range []string{"SUBAGENT-MIB", "ACME-PERF-MIB", "X", "A1-B2"} {
		if err := ValidModuleName(s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	for _, s := range []string{"", "subagent-MIB", "SUB--MIB", "SUB-", "SUB_MIB", "1MIB", "SUB MIB", strings.Repeat("A", 65)} {
		if ValidModuleName(s) == nil {
			t.Errorf("%q accepted", s)
		}
	}
	prefixes := map[string]string{"SUBAGENT-MIB": "subagent", "ACME-PERF-MIB": "acmePerf", "HostStats-MIB": "hostStats", "X": "x"}
	for mod, want := range prefixes {
		if got := modulePrefix(mod); got != want {
			t.Errorf("prefix of %s: got %q, want %q", mod, got, want)
		}
	}
}

func TestQuotedTextIsSafeAndWrapped(t *testing.T) {
	got := quoted("  ", "say \"hi\"\tnow caf\u00e9\nsecond "+strings.Repeat("word ", 30))
	if strings.Count(got, `"`) != 2 || !strings.HasPrefix(got, `  "`) || !strings.HasSuffix(got, `"`) {
		t.Errorf("quotes inside the text survived: %s", got)
	}
	if !strings.Contains(got, "say 'hi' now caf?") {
		t.Errorf("text not cleaned: %s", got)
	}
	for _, l := range strings.Split(got, "\n") {
		if len(l) > lineWidth+1 { // +1: the closing quote
			t.Errorf("line of %d characters: %q", len(l), l)
		}
	}
	if !strings.Contains(got, "\n\n   second") {
		t.Errorf("paragraph break lost: %s", got)
	}
}
