package spmi

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/trustdir"
)

// Numbers are assigned lowest first, skipping what taken reports, kept
// across a save and a reload, and never given to another name.
func TestNumberingAssignPersistReloadNeverReuse(t *testing.T) {
	file := filepath.Join(t.TempDir(), "state", "numbering.json")
	n := NewNumbering(file)
	stat := func(k uint32) bool { return k == 1 } // the context's own statistic
	for i, name := range []string{"sda", "sdb", "sdc"} {
		if k, err := n.Assign("Disk", name, stat); err != nil || k != uint32(i+2) {
			t.Fatalf("%s: %d %v, want %d", name, k, err, i+2)
		}
	}
	if k, _ := n.Assign("Disk/", "sdb", stat); k != 3 {
		t.Errorf("sdb again (path with a slash): %d, want 3", k)
	}
	if k, _ := n.Assign("FS", "home", nil); k != 1 {
		t.Errorf("contexts share numbers: FS/home is %d, want 1", k)
	}
	n.Mark("RTime/LAN", "referenced", "farvel", true)
	if err := n.Save(); err != nil {
		t.Fatal(err)
	}
	r, err := LoadNumbering(file)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Names("Disk"); !reflect.DeepEqual(got, map[string]uint32{"sda": 2, "sdb": 3, "sdc": 4}) {
		t.Errorf("after reload: %v", got)
	}
	if !r.IsMarked("RTime/LAN", "referenced", "farvel") || r.IsMarked("RTime/LAN", "referenced", "gw") {
		t.Errorf("marks after reload: %v", r.Marked("RTime/LAN", "referenced"))
	}
	// sda is gone for good: a new disk gets 5, never 2.
	if k, _ := r.Assign("Disk", "sdd", stat); k != 5 {
		t.Errorf("sdd: %d, want 5", k)
	}
	if k, ok := r.Lookup("Disk", "sda"); !ok || k != 2 {
		t.Errorf("sda forgotten: %d %v", k, ok)
	}
}

// A lookup never assigns, and a load never writes.
func TestNumberingReadsNeverWrite(t *testing.T) {
	file := filepath.Join(t.TempDir(), "numbering.json")
	n := NewNumbering(file)
	if k, ok := n.Lookup("Disk", "sda"); ok || k != 0 {
		t.Fatalf("lookup of a new name: %d %v", k, ok)
	}
	if err := n.Save(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("a lookup made the numbering save: %v", err)
	}
	if k, _ := n.Assign("Disk", "sdb", nil); k != 1 {
		t.Errorf("the first name assigned is %d, want 1: the lookup took a number", k)
	}
	n.Save()
	before, _ := os.Stat(file)
	r, err := LoadNumbering(file)
	if err != nil {
		t.Fatal(err)
	}
	r.Lookup("Disk", "sdz")
	if err := r.Save(); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(file); !os.SameFile(before, after) {
		t.Error("a loaded numbering that only was read saved itself")
	}
}

// Beyond the cap a context refuses new names with an error naming the
// setting; names it has keep their numbers, other contexts are free.
func TestNumberingCapPerContext(t *testing.T) {
	n := NewNumbering("")
	n.SetMaxNames(3)
	for _, name := range []string{"a", "b", "c"} {
		if _, err := n.Assign("RTime/ARM", name, nil); err != nil {
			t.Fatal(err)
		}
	}
	_, err := n.Assign("RTime/ARM", "d", nil)
	if !errors.Is(err, ErrNumberingFull) || !strings.Contains(err.Error(), "state.max_names_per_context") || !strings.Contains(err.Error(), "RTime/ARM/d") {
		t.Fatalf("a fourth name: %v", err)
	}
	if _, ok := n.Lookup("RTime/ARM", "d"); ok {
		t.Error("the refused name has a number")
	}
	if k, err := n.Assign("RTime/ARM", "b", nil); k != 2 || err != nil {
		t.Errorf("a known name beyond the cap: %d %v", k, err)
	}
	if _, err := n.Assign("Disk", "sda", nil); err != nil {
		t.Errorf("another context: %v", err)
	}
}

// However many contexts, the file stays small enough to be read back.
func TestNumberingFileStaysReadable(t *testing.T) {
	defer func(m int) { maxFileBytes = m }(maxFileBytes)
	maxFileBytes = 4096
	file := filepath.Join(t.TempDir(), "numbering.json")
	n := NewNumbering(file)
	var err error
	i := 0
	for ; err == nil && i < 1000; i++ {
		_, err = n.Assign(fmt.Sprintf("RTime/ARM/app%d", i), "tran", nil)
	}
	if !errors.Is(err, ErrNumberingFull) || !strings.Contains(err.Error(), file) {
		t.Fatalf("after %d contexts: %v, want the file full", i, err)
	}
	if err := n.Save(); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(file); fi.Size() > 4096 {
		t.Errorf("the file has %d bytes, above the bound of 4096", fi.Size())
	}
}

// Merging older files keeps every number; a conflict names both files
// and merges nothing; merging twice changes nothing.
func TestNumberingMerge(t *testing.T) {
	n := NewNumbering("/s/numbering.json")
	n.Put("Disk", "sda", 1)
	arm := NewNumbering("/s/arm-numbering.json")
	arm.Put("RTime/ARM/app", "t1", 1)
	arm.Put("RTime/ARM/app", "t2", 2)
	arm.Mark("RTime/ARM/app", "x", "t2", true)
	for range 2 {
		if err := n.Merge(arm); err != nil {
			t.Fatal(err)
		}
	}
	if got := n.Names("RTime/ARM/app"); !reflect.DeepEqual(got, map[string]uint32{"t1": 1, "t2": 2}) || !n.IsMarked("RTime/ARM/app", "x", "t2") {
		t.Errorf("merged: %v %v", got, n.Marked("RTime/ARM/app", "x"))
	}
	if k, _ := n.Assign("RTime/ARM/app", "t3", nil); k != 3 {
		t.Errorf("a new name after the merge: %d, want 3", k)
	}
	for name, bad := range map[string][2]any{
		"same name, other number": {"t1", uint32(7)},
		"same number, other name": {"t9", uint32(2)},
	} {
		o := NewNumbering("/s/other.json")
		o.Put("RTime/ARM/app", "fresh", 40)
		o.Put("RTime/ARM/app", bad[0].(string), bad[1].(uint32))
		err := n.Merge(o)
		if err == nil || !strings.Contains(err.Error(), "/s/numbering.json") || !strings.Contains(err.Error(), "/s/other.json") {
			t.Errorf("%s: %v, want an error naming both files", name, err)
		}
		if _, ok := n.Lookup("RTime/ARM/app", "fresh"); ok {
			t.Errorf("%s: a conflicting file was merged in part", name)
		}
	}
}

// Version 1 files, as older daemons wrote them, load; damaged ones are
// refused naming the file.
func TestNumberingReadsVersion1AndRefusesDamage(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "numbering.json")
	os.WriteFile(file, []byte(`{"version":1,"contexts":{"Disk":{"sda":2,"sdb":3}}}`), 0o600)
	n, err := LoadNumbering(file)
	if err != nil {
		t.Fatal(err)
	}
	if k, _ := n.Assign("Disk", "sdc", nil); k != 1 {
		t.Errorf("sdc: %d, want 1, the lowest free", k)
	}
	for name, body := range map[string]string{
		"not json":     "{",
		"version 3":    `{"version":3}`,
		"number 0":     `{"version":2,"contexts":{"Disk":{"sda":0}}}`,
		"shared":       `{"version":2,"contexts":{"Disk":{"sda":4,"sdb":4}}}`,
		"marks broken": `{"version":2,"marks":{"RTime/LAN":{"referenced":"farvel"}}}`,
	} {
		f := filepath.Join(dir, strings.ReplaceAll(name, " ", "_"))
		os.WriteFile(f, []byte(body), 0o600)
		if _, err := LoadNumbering(f); err == nil || !strings.Contains(err.Error(), f) {
			t.Errorf("%s: %v, want an error naming %s", name, err, f)
		}
	}
}

// Saves go through trustdir.WriteFile and are coalesced: a refresh that
// numbers many new instances writes the file once.
func TestNumberingSavesDurablyOncePerBatch(t *testing.T) {
	n := NewNumbering(filepath.Join(t.TempDir(), "numbering.json"))
	if reflect.ValueOf(n.write).Pointer() != reflect.ValueOf(trustdir.WriteFile).Pointer() {
		t.Fatal("the numbering is not written with trustdir.WriteFile")
	}
	writes := 0
	n.write = func(p string, b []byte, m os.FileMode) error { writes++; return trustdir.WriteFile(p, b, m) }
	b := NewBuilder(testBase, n, time.Now())
	d, _ := b.Context(nil, &diskCx)
	for i := range 200 {
		if _, err := b.Instance(d, &cpuInst, fmt.Sprintf("sd%d", i), "", 0); err != nil {
			t.Fatal(err)
		}
	}
	b.Finish()
	if writes != 0 {
		t.Fatalf("%d writes while numbering instances", writes)
	}
	n.Save()
	n.Save()
	if writes != 1 {
		t.Errorf("%d writes for one batch, want 1", writes)
	}
	// A failed write is tried again by the next save.
	n.Assign("Disk", "new", nil)
	n.write = func(string, []byte, os.FileMode) error { writes++; return errors.New("disk full") }
	if err := n.Save(); err == nil {
		t.Fatal("a failed write was not reported")
	}
	n.write = trustdir.WriteFile
	if err := n.Save(); err != nil {
		t.Fatal(err)
	}
	r, _ := LoadNumbering(n.File())
	if _, ok := r.Lookup("Disk", "new"); !ok {
		t.Error("the assignment whose save failed was never written")
	}
}

// Under strace, a save syncs the new file before renaming it over the old
// one, then syncs the directory: the numbers survive a power cut.
func TestNumberingSaveSyncsFileThenDirectory(t *testing.T) {
	if dir := os.Getenv("NUMBERING_SAVE_DIR"); dir != "" {
		n := NewNumbering(filepath.Join(dir, "numbering.json"))
		n.Assign("Disk", "sda", nil)
		if err := n.Save(); err != nil {
			t.Fatal(err)
		}
		return
	}
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Fatal("no strace: install it (make test-deps does)")
	}
	dir := t.TempDir()
	out := filepath.Join(t.TempDir(), "trace")
	cmd := exec.Command(strace, "-f", "-y", "-qq", "-o", out, "-e", "trace=fsync,fdatasync,rename,renameat,renameat2",
		os.Args[0], "-test.run=^TestNumberingSaveSyncsFileThenDirectory$", "-test.count=1")
	cmd.Env = append(os.Environ(), "NUMBERING_SAVE_DIR="+dir)
	if b, err := cmd.CombinedOutput(); err != nil {
		if strings.Contains(string(b), "ptrace") || strings.Contains(string(b), "Operation not permitted") {
			t.Skipf("strace cannot trace here: %s", b)
		}
		t.Fatalf("%v: %s", err, b)
	}
	b, _ := os.ReadFile(out)
	trace := joinResumed(string(b))
	tmp := regexp.QuoteMeta(dir) + `/\.numbering\.json\.tmp-[0-9a-f]+`
	order := []*regexp.Regexp{
		regexp.MustCompile(`fsync\(\d+<` + tmp + `>\)\s*= 0`),
		regexp.MustCompile(`rename(at2?)?\(.*` + tmp + `".*` + regexp.QuoteMeta(filepath.Join(dir, "numbering.json")) + `".*= 0`),
		regexp.MustCompile(`fsync\(\d+<` + regexp.QuoteMeta(dir) + `>\)\s*= 0`),
	}
	at := 0
	for i, re := range order {
		loc := re.FindStringIndex(trace[at:])
		if loc == nil {
			t.Fatalf("step %d (%s) missing after the previous one in:\n%s", i, re, trace)
		}
		at += loc[1]
	}
}

// joinResumed joins the calls strace splits when another thread's output
// comes between their start and their end ("PID fsync(7</f> <unfinished
// ...>", later "PID <... fsync resumed>) = 0"): each call whole, where it
// ended.
func joinResumed(trace string) string {
	started := map[string]string{} // pid -> its unfinished call's start
	var out []string
	for _, line := range strings.Split(trace, "\n") {
		pid, rest, _ := strings.Cut(line, " ")
		if head, ok := strings.CutSuffix(rest, " <unfinished ...>"); ok {
			started[pid] = head
			continue
		}
		if _, tail, ok := strings.Cut(rest, " resumed>"); ok && strings.HasPrefix(rest, "<... ") {
			line = pid + " " + started[pid] + tail
			delete(started, pid)
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// A split call, as strace printed it on a loaded machine, reads whole.
func TestJoinResumed(t *testing.T) {
	trace := "32642 fsync(7</d/.n.tmp-a1> <unfinished ...>\n" +
		"32640 --- SIGURG {si_signo=SIGURG} ---\n" +
		"32642 <... fsync resumed>)              = 0\n" +
		"32642 renameat(AT_FDCWD</s>, \"/d/.n.tmp-a1\", AT_FDCWD</s>, \"/d/n\") = 0\n"
	want := "32640 --- SIGURG {si_signo=SIGURG} ---\n" +
		"32642 fsync(7</d/.n.tmp-a1>)              = 0\n" +
		"32642 renameat(AT_FDCWD</s>, \"/d/.n.tmp-a1\", AT_FDCWD</s>, \"/d/n\") = 0\n"
	if got := joinResumed(trace); got != want {
		t.Errorf("joinResumed:\n%s\nwant:\n%s", got, want)
	}
}
