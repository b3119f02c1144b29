package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/arm"
	"github.com/perfagent/subagent/client/testutil"
)

// writeOld writes a state file as the version that kept three stores
// wrote it: json.MarshalIndent, two spaces, a final newline.
func writeOld(t *testing.T, file string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, append(b, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
}

type oldNumbering struct {
	Version  int                          `json:"version"`
	Contexts map[string]map[string]uint32 `json:"contexts"`
}

type oldRTimeLAN struct {
	Version    int               `json:"version"`
	Numbers    map[string]uint32 `json:"numbers"`
	Referenced []string          `json:"referenced"`
}

// peekIDs reads the relative ids of the contexts and instances under
// prefix from `subagent peek --oid`: path (ending in "/") -> id.
func peekIDs(t *testing.T, e *env, prefix string) map[string]string {
	t.Helper()
	out, stderr, code := e.run(append([]string{"peek", "--oid", prefix}, e.args()...)...)
	if code != 0 {
		t.Fatalf("peek %s: exit %d: %s", prefix, code, stderr)
	}
	ids := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 2 && strings.HasSuffix(f[0], "/") {
			ids[f[0]] = f[1]
		}
	}
	return ids
}

// The three stores of older versions (numbering.json version 1,
// arm-numbering.json, rtimelan.json) are merged at the daemon's start:
// every instance of every context keeps its OID, a new name gets a number
// no old name had, the old files are renamed *.migrated only once the one
// numbering.json holds everything, and a restart changes nothing.
func TestMigrationOfThreeStoresKeepsEveryNumber(t *testing.T) {
	e := newEnv(t)
	if err := os.MkdirAll(e.state, 0o700); err != nil {
		t.Fatal(err)
	}
	// Numbers a fresh start would not give (it would give sda 4.1, ...).
	writeOld(t, filepath.Join(e.state, "numbering.json"), oldNumbering{Version: 1, Contexts: map[string]map[string]uint32{
		"Disk":      {"sda": 7, "sdb": 3},
		"FS":        {"root": 9, "boot": 8, "boot_efi": 20, "home": 11, "run": 12, "srv_backup_set": 13, "gone": 1},
		"PagSp":     {"sda3": 6, "swapfile": 4},
		"RTime/ARM": {"MigApp": 8, "OtherApp": 6},
	}})
	writeOld(t, filepath.Join(e.state, "arm-numbering.json"), oldNumbering{Version: 1, Contexts: map[string]map[string]uint32{
		"RTime/ARM/MigApp": {"t": 2, "gone": 1},
	}})
	// An address kept as typed ("0::1") by the older rtimelan store.
	writeOld(t, filepath.Join(e.state, "rtimelan.json"), oldRTimeLAN{Version: 1,
		Numbers: map[string]uint32{"127.0.0.1": 21, "0::1": 17, "gone.example": 16}, Referenced: []string{"0::1"}})
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(cfg, []byte("rtime_lan:\n  hosts: [127.0.0.1]\n"), 0o644)

	want := map[string]string{
		"Disk/sda/": "4.7", "Disk/sdb/": "4.3",
		"FS/root/": "11.9", "FS/boot/": "11.8", "FS/boot_efi/": "11.20", "FS/home/": "11.11", "FS/run/": "11.12", "FS/srv_backup_set/": "11.13",
		"PagSp/sda3/": "3.6", "PagSp/swapfile/": "3.4",
		"RTime/ARM/MigApp/": "13.1.8", "RTime/ARM/MigApp/t/": "13.1.8.2",
		"RTime/LAN/127.0.0.1/": "13.2.21", "RTime/LAN/::1/": "13.2.17",
	}
	check := func(when string) {
		t.Helper()
		got := map[string]string{}
		for _, p := range []string{"Disk/", "FS/", "PagSp/", "RTime/"} {
			for k, v := range peekIDs(t, e, p) {
				got[k] = v
			}
		}
		for path, id := range want {
			if got[path] != id {
				t.Errorf("%s: %s is %q, was %s", when, path, got[path], id)
			}
		}
	}
	e.start("--config", cfg)
	for _, log := range []string{"older state files merged", "arm-numbering.json", "rtimelan.json"} {
		if !strings.Contains(e.daemonLog.String(), log) {
			t.Errorf("the log does not say %q:\n%s", log, e.daemonLog)
		}
	}
	ag := arm.Open(&arm.Options{Socket: filepath.Join(e.runDir, arm.SocketName), Retry: 50 * time.Millisecond, Wait: 2 * time.Minute})
	t.Cleanup(ag.Close)
	h := ag.App("MigApp", "").Transaction("t", "").Start()
	h.Stop(arm.Good)
	armWait(t, e, "RTime/ARM/MigApp/t/count", "1")
	check("after the migration")

	// A new host gets a number no old name had: 16 was gone.example's.
	rtlCreate(t, e, cfg, "RTime/LAN/farvel")
	want["RTime/LAN/farvel/"] = "13.2.18"
	testutil.Eventually(t, "farvel served", 5*time.Second, func() bool { return peekIDs(t, e, "RTime/LAN/")["RTime/LAN/farvel/"] != "" })
	check("after a create")

	// One file now, version 2; the old ones are kept aside, never read.
	var merged struct {
		Version  int                            `json:"version"`
		Contexts map[string]map[string]uint32   `json:"contexts"`
		Marks    map[string]map[string][]string `json:"marks"`
	}
	b, err := os.ReadFile(filepath.Join(e.state, "numbering.json"))
	if err != nil || json.Unmarshal(b, &merged) != nil || merged.Version != 2 {
		t.Fatalf("numbering.json after the migration (%v):\n%s", err, b)
	}
	for ctx, names := range map[string]map[string]uint32{
		"FS": {"gone": 1}, "RTime/ARM": {"OtherApp": 6}, "RTime/ARM/MigApp": {"gone": 1, "t": 2},
		"RTime/LAN": {"gone.example": 16, "::1": 17, "farvel": 18, "127.0.0.1": 21},
	} {
		for name, k := range names {
			if merged.Contexts[ctx][name] != k {
				t.Errorf("numbering.json: %s/%s is %d, want %d", ctx, name, merged.Contexts[ctx][name], k)
			}
		}
	}
	if got := strings.Join(merged.Marks["RTime/LAN"]["referenced"], " "); got != "::1 farvel" {
		t.Errorf("hosts created by reference: %q, want \"::1 farvel\"", got)
	}
	for _, f := range []string{"arm-numbering.json", "rtimelan.json"} {
		if _, err := os.Lstat(filepath.Join(e.state, f)); !os.IsNotExist(err) {
			t.Errorf("%s is still there: %v", f, err)
		}
		if _, err := os.Lstat(filepath.Join(e.state, f+".migrated")); err != nil {
			t.Errorf("%s.migrated: %v", f, err)
		}
	}

	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	e.start("--config", cfg)
	if strings.Contains(e.daemonLog.String(), "merged") {
		t.Errorf("a second start merged again:\n%s", e.daemonLog)
	}
	// The agent reconnects by itself; a transaction before that is lost.
	testutil.Eventually(t, "MigApp/t served again", 20*time.Second, func() bool {
		h := ag.App("MigApp", "").Transaction("t", "").Start()
		h.Stop(arm.Good)
		c := armGet(t, e, "RTime/ARM/MigApp/t/count")["RTime/ARM/MigApp/t/count"]
		return c != "" && c != "0"
	})
	check("after a restart")
}

// The same name numbered differently in two old files stops the start
// with an error naming both files; neither file is touched.
func TestMigrationConflictNamesBothFiles(t *testing.T) {
	e := newEnv(t)
	os.MkdirAll(e.state, 0o700)
	num := filepath.Join(e.state, "numbering.json")
	armFile := filepath.Join(e.state, "arm-numbering.json")
	writeOld(t, num, oldNumbering{Version: 1, Contexts: map[string]map[string]uint32{"RTime/ARM/App": {"t": 2}}})
	writeOld(t, armFile, oldNumbering{Version: 1, Contexts: map[string]map[string]uint32{"RTime/ARM/App": {"t": 3}}})
	before1, _ := os.ReadFile(num)
	before2, _ := os.ReadFile(armFile)
	_, stderr, code := e.run(append([]string{"run"}, e.args("--listen", "none")...)...)
	if code == 0 || !strings.Contains(stderr, num) || !strings.Contains(stderr, armFile) || !strings.Contains(stderr, "RTime/ARM/App/t") {
		t.Errorf("exit %d, stderr %q: want a failure naming %s, %s and the name", code, stderr, num, armFile)
	}
	after1, _ := os.ReadFile(num)
	after2, _ := os.ReadFile(armFile)
	if string(after1) != string(before1) || string(after2) != string(before2) {
		t.Error("a conflicting migration changed the files")
	}
}
