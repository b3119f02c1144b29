//go:build linux

package libspmi

import (
	"os"
	"strconv"
	"testing"

	"github.com/perfagent/subagent/client/ddswire"
)

// SPMI error codes (spmi_dds.h).
const (
	siInvalidCx   = 180
	siAssumedDead = 183
	siNotInit     = 186
	siBadArgument = 187
	siInitFailed  = 190
	siDuplicate   = 193
)

// The guide's sample registers; its values, written through SiShArea,
// are served under 99.<enterprise number>; volatile contexts come and go
// at once; SpmiExit removes everything, the file too.
func TestGuideSample(t *testing.T) {
	bothLibs(t, func(t *testing.T, static bool) {
		d := startDaemon(t, "")
		s := startSup(t, static, d.RunDir)
		s.ok("init %s 65536 guide", s.file)

		hdr := s.ok("hdr")
		if hdr[0] != "65536" || hdr[1] != "32" || hdr[2] != strconv.Itoa(256+65536) || hdr[3] != strconv.Itoa(s.cmd.Process.Pid) {
			t.Fatalf("header area, perm, alloc, pid = %v", hdr)
		}
		fi, err := os.Lstat(s.file)
		if err != nil || fi.Mode().Perm() != 0o600 || fi.Size() != 256+65536 {
			t.Fatalf("shared file %v %v", fi, err)
		}
		b, _ := os.ReadFile(s.file)
		if h := ddswire.DecodeHeader(b); h.Gen == 0 || h.FileName() != s.file || string(h.Magic[:]) != ddswire.Magic {
			t.Fatalf("header %+v", h)
		}

		for i, v := range []int{22, 42, 28, 62} {
			s.ok("put %d %d", 8*i, v)
		}
		d.want(t, "DDS/IBM/Test/gadgets", "99.2.220.1", 22)
		d.want(t, "DDS/IBM/Test/widgets", "99.2.220.2", 42)
		d.want(t, "DDS/IBM/Moretest/SubTest/level", "99.2.221.222.1", 28)
		d.want(t, "DDS/IBM/Moretest/SubTest/queue", "99.2.221.222.2", 62)
		s.ok("put 0 23")
		d.want(t, "DDS/IBM/Test/gadgets", "99.2.220.1", 23)

		off := s.offset("add 0 1 DDS/IBM/Moretest/Bingo Dynamically added")
		if off < 32 || off%8 != 0 {
			t.Fatalf("slot offset %d", off)
		}
		d.want(t, "DDS/IBM/Moretest/Bingo/solutions", "99.2.221.1.2", 0)
		s.ok("put %d 77", off+8)
		d.want(t, "DDS/IBM/Moretest/Bingo/solutions", "99.2.221.1.2", 77)
		if n := d.Node("DDS/IBM/Moretest/Bingo/"); n == nil || n.Descr != "Dynamically added" {
			t.Fatalf("Bingo context %+v", n)
		}

		s.fails(siDuplicate, []string{"Bingo"}, "add 0 2 DDS/IBM/Moretest/Bingo again")
		s.fails(siDuplicate, []string{"SubTest"}, "add 0 222 DDS/IBM/Moretest/SubTest clash")
		s.fails(siInvalidCx, []string{"DDS/IBM/Nowhere"}, "add 0 3 DDS/IBM/Nowhere/X orphan")
		s.fails(siBadArgument, []string{"ix 4"}, "add 4 3 DDS/IBM/X bad ix")
		s.ok("del %d", off)
		if d.Node("DDS/IBM/Moretest/Bingo/") != nil {
			t.Fatal("Bingo still served after SpmiDdsDelCx")
		}
		s.fails(siBadArgument, []string{"not the data area"}, "del %d", off)

		if f := s.ok("exit"); f[0] != "0" {
			t.Fatalf("SpmiErrno after SpmiExit: %v", f)
		}
		if d.Node("DDS/IBM/") != nil {
			t.Fatal("DDS/IBM still served after SpmiExit")
		}
		if _, err := os.Lstat(s.file); !os.IsNotExist(err) {
			t.Fatalf("shared file left after SpmiExit: %v", err)
		}
		s.fails(siNotInit, []string{"SpmiDdsInit"}, "add 0 1 DDS/IBM/Moretest/Bingo late")
	})
}

// A second supplier with the same contexts is refused with the daemon's
// SiDuplicate and message, and leaves no file; so is a table whose
// context has no parent (SiInvalidCx).
func TestRefusedRegistrations(t *testing.T) {
	d := startDaemon(t, "")
	a := startSup(t, false, d.RunDir)
	a.ok("init %s 4096 guide", a.file)

	b := startSup(t, true, d.RunDir)
	b.fails(siDuplicate, []string{"DDS/IBM/Test"}, "init %s 4096 guide", b.file)
	if _, err := os.Lstat(b.file); !os.IsNotExist(err) {
		t.Fatalf("refused supplier left its file: %v", err)
	}
	c := startSup(t, false, d.RunDir)
	c.fails(siInvalidCx, []string{"parent", "DDS/IBM/Nowhere"}, "init %s 4096 orphan", c.file)
	c.fails(siBadArgument, []string{"absolute"}, "init relative/file 4096 guide")
	c.fails(siBadArgument, []string{"size -1"}, "init %s -1 guide", c.file)
	d.want(t, "DDS/IBM/Test/gadgets", "99.2.220.1", 0) // a's registration is untouched
	a.fails(siBadArgument, []string{"already registered"}, "init %s 4096 guide", a.file)
}

// With no daemon, SpmiDdsInit fails cleanly: SiInitFailed naming the
// socket it tried, and no file left behind.
func TestNoDaemon(t *testing.T) {
	bothLibs(t, func(t *testing.T, static bool) {
		run := t.TempDir()
		s := startSup(t, static, run)
		s.fails(siInitFailed, []string{run + "/dds.sock", "SUBAGENT_RUN_DIR"}, "init %s 4096 guide", s.file)
		if _, err := os.Lstat(s.file); !os.IsNotExist(err) {
			t.Fatalf("file left behind: %v", err)
		}
		s.fails(siNotInit, nil, "check")
	})
}
