package packaging

import (
	"bytes"
	"compress/gzip"
	"debug/elf"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstallLayoutAndUninstall: `make install DESTDIR=d PREFIX=/usr` lays
// out exactly the documented files with their modes, and `make uninstall`
// with the same variables leaves nothing but empty directories.
func TestInstallLayoutAndUninstall(t *testing.T) {
	heavy(t)
	dest := filepath.Join(scratch, "layout")
	makeInstall(t, dest, "install")
	checkLayout(t, dest, layout("usr/lib", "usr/lib/systemd/system", "usr/share/zsh/site-functions"))

	makeInstall(t, dest, "uninstall")
	var left []string
	filepath.WalkDir(dest, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			left = append(left, path)
		}
		return err
	})
	if len(left) > 0 {
		t.Errorf("make uninstall left %d files: %v", len(left), left)
	}
}

// TestInstallKeepsAnEditedConfiguration: a second install puts the new
// default beside an edited configuration (and says so); uninstall removes
// the .dist file and leaves the edited one.
func TestInstallKeepsAnEditedConfiguration(t *testing.T) {
	heavy(t)
	// A tree of its own each run: it leaves the edited configuration.
	dest, err := os.MkdirTemp(scratch, "edited")
	if err != nil {
		t.Fatal(err)
	}
	makeInstall(t, dest, "install")
	conf := filepath.Join(dest, "etc/subagent/subagent.yaml")
	drop := filepath.Join(dest, "etc/snmp/snmpd.conf.d/subagent.conf")
	pristine, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	edited := append(append([]byte(nil), pristine...), "\n# edited by the operator\n"...)
	if err := os.WriteFile(conf, edited, 0o644); err != nil {
		t.Fatal(err)
	}

	out := makeInstall(t, dest, "install")
	if b, _ := os.ReadFile(conf); !bytes.Equal(b, edited) {
		t.Fatalf("a second make install overwrote the edited %s", conf)
	}
	if b, _ := os.ReadFile(conf + ".dist"); !bytes.Equal(b, pristine) {
		t.Errorf("%s.dist is not the new default", conf)
	}
	if !strings.Contains(out, "kept your "+conf) {
		t.Errorf("make install did not say it kept the edited configuration:\n%s", out)
	}
	if _, err := os.Stat(drop + ".dist"); err == nil {
		t.Errorf("the unchanged drop-in got a .dist beside it")
	}

	out = makeInstall(t, dest, "uninstall")
	if b, _ := os.ReadFile(conf); !bytes.Equal(b, edited) {
		t.Errorf("make uninstall removed the edited %s", conf)
	}
	for _, gone := range []string{conf + ".dist", drop, filepath.Join(dest, "usr/bin/subagent")} {
		if _, err := os.Lstat(gone); err == nil {
			t.Errorf("make uninstall left %s", gone)
		}
	}
	if !strings.Contains(out, "kept your edited "+conf) {
		t.Errorf("make uninstall did not say it kept the edited configuration:\n%s", out)
	}
}

// TestInstalledFilesAgree: the installed unit, configuration, drop-in and
// pkg-config files name the installed paths and each other.
func TestInstalledFilesAgree(t *testing.T) {
	dest := installed(t)
	read := func(rel string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dest, rel))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	unit := unitKeys(read("usr/lib/systemd/system/subagent.service"))
	for key, want := range map[string]string{
		"ExecStart":               "/usr/bin/subagent run --config /etc/subagent/subagent.yaml --run-dir %t/subagent --state-dir %S/subagent",
		"Type":                    "notify",
		"User":                    "subagent",
		"Group":                   "subagent",
		"RuntimeDirectory":        "subagent",
		"RuntimeDirectoryMode":    "0755",
		"StateDirectory":          "subagent",
		"StateDirectoryMode":      "0700",
		"AmbientCapabilities":     "CAP_NET_RAW",
		"CapabilityBoundingSet":   "CAP_NET_RAW",
		"ExecReload":              "/bin/kill -HUP $MAINPID",
		"Restart":                 "on-failure",
		"NoNewPrivileges":         "yes",
		"ProtectSystem":           "strict",
		"ProtectHome":             "yes",
		"PrivateTmp":              "yes",
		"PrivateDevices":          "yes",
		"RestrictAddressFamilies": "AF_UNIX AF_INET AF_INET6",
		"MemoryDenyWriteExecute":  "yes",
		"WantedBy":                "multi-user.target",
	} {
		if got := unit[key]; got != want {
			t.Errorf("unit %s=%q, want %q", key, got, want)
		}
	}
	if !strings.Contains(unit["After"], "snmpd.service") {
		t.Errorf("unit After=%q is not ordered after snmpd.service", unit["After"])
	}
	// Both sides of AgentX name the same socket.
	drop := dropIn(t, read("etc/snmp/snmpd.conf.d/subagent.conf"))
	conf := read("etc/subagent/subagent.yaml")
	if !strings.Contains(conf, "\nagentx: "+drop["agentXSocket"]+"\n") || !strings.Contains(conf, "\nlisten: none\n") {
		t.Errorf("installed configuration does not attach to the drop-in's socket %s with the responder off", drop["agentXSocket"])
	}
	if got := drop["agentXPerms"]; got != "0660 0755 Debian-snmp subagent" {
		t.Errorf("drop-in agentXPerms %q", got)
	}
	if got := read("usr/lib/sysusers.d/subagent.conf"); !strings.Contains(got, "\nu subagent - ") {
		t.Errorf("sysusers.d entry does not create user subagent:\n%s", got)
	}
	v := version(t)
	for _, pc := range []string{"libspmi", "libarm"} {
		got := read("usr/lib/pkgconfig/" + pc + ".pc")
		for _, want := range []string{"prefix=/usr\n", "libdir=/usr/lib\n", "includedir=/usr/include\n", "Version: " + v + "\n"} {
			if !strings.Contains(got, want) {
				t.Errorf("%s.pc lacks %q:\n%s", pc, want, got)
			}
		}
	}
	out := run(t, dest, nil, filepath.Join(dest, "usr/bin/subagent"), "--version")
	if !strings.Contains(out, v) {
		t.Errorf("installed subagent --version says %q, want %s", out, v)
	}
}

// TestInstalledLibrariesLink: a C program finds the installed headers and
// libraries through the installed pkg-config files, links against the
// shared libraries by their sonames and runs.
func TestInstalledLibrariesLink(t *testing.T) {
	dest := installed(t)
	pkgDeps(t)
	libdir := filepath.Join(dest, "usr/lib")
	for lib, soname := range map[string]string{"libSpmi.so.1.0.0": "libSpmi.so.1", "libarm.so.1.0.0": "libarm.so.1"} {
		f, err := elf.Open(filepath.Join(libdir, lib))
		if err != nil {
			t.Fatal(err)
		}
		names, err := f.DynString(elf.DT_SONAME)
		f.Close()
		if err != nil || len(names) != 1 || names[0] != soname {
			t.Errorf("%s has soname %v (%v), want %s", lib, names, err, soname)
		}
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "prog.c")
	prog := `#include <stdio.h>
#include <spmi_dds.h>
#include <arm.h>
int main(void) {
	/* Both libraries' entry points, resolved at load time. */
	printf("%p %p\n", (void *)SpmiDdsInit, (void *)arm_init);
	return 0;
}
`
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"PKG_CONFIG_PATH=" + filepath.Join(libdir, "pkgconfig"), "PKG_CONFIG_SYSROOT_DIR=" + dest}
	flags := strings.Fields(run(t, dir, env, "pkg-config", "--cflags", "--libs", "libspmi", "libarm"))
	bin := filepath.Join(dir, "prog")
	run(t, dir, nil, "cc", append([]string{"-o", bin, src}, flags...)...)
	out := run(t, dir, []string{"LD_LIBRARY_PATH=" + libdir}, bin)
	if f := strings.Fields(out); len(f) != 2 || !strings.HasPrefix(f[0], "0x") || !strings.HasPrefix(f[1], "0x") {
		t.Errorf("program linked against the installed libraries printed %q", out)
	}
	ldd := run(t, dir, []string{"LD_LIBRARY_PATH=" + libdir}, "ldd", bin)
	for _, want := range []string{"libSpmi.so.1 => " + libdir, "libarm.so.1 => " + libdir} {
		if !strings.Contains(ldd, want) {
			t.Errorf("ldd does not show %q:\n%s", want, ldd)
		}
	}
}

// TestManPagesRender: every installed page renders with man -l, without a
// warning from groff, naming its command.
func TestManPagesRender(t *testing.T) {
	dest := installed(t)
	pkgDeps(t)
	pages, _ := filepath.Glob(filepath.Join(dest, manDir, "*.1.gz"))
	if len(pages) < len(manPages) {
		t.Fatalf("%d man pages installed", len(pages))
	}
	env := []string{"MANPAGER=cat", "MANWIDTH=80", "LC_ALL=C.UTF-8"}
	for _, p := range pages {
		cmd := strings.ReplaceAll(strings.TrimSuffix(filepath.Base(p), ".1.gz"), "-", " ")
		out, err := runErr(filepath.Dir(p), env, "man", "-l", p)
		if err != nil {
			t.Errorf("man -l %s: %v\n%s", p, err, out)
			continue
		}
		if !strings.Contains(out, "NAME") || !strings.Contains(out, cmd) || !strings.Contains(out, "SYNOPSIS") {
			t.Errorf("man -l %s does not show NAME and SYNOPSIS of %q:\n%s", p, cmd, out)
		}
		// lintian's check: groff's warnings on stderr.
		c := exec.Command("man", "--warnings", "-E", "UTF-8", "-l", "-Tutf8", "-Z", p)
		c.Env = append(os.Environ(), env...)
		var stderr bytes.Buffer
		c.Stdout, c.Stderr = io.Discard, &stderr
		if err := c.Run(); err != nil || stderr.Len() > 0 {
			t.Errorf("man --warnings %s: %v %s", p, err, stderr.String())
		}
	}
}

// TestCompletionsInstalled: the three shells' completion files are the
// command's own, for the command "subagent".
func TestCompletionsInstalled(t *testing.T) {
	dest := installed(t)
	for rel, want := range map[string]string{
		"usr/share/bash-completion/completions/subagent":    "__start_subagent",
		"usr/share/zsh/site-functions/_subagent":            "#compdef subagent",
		"usr/share/fish/vendor_completions.d/subagent.fish": "complete -c subagent",
	} {
		b, err := os.ReadFile(filepath.Join(dest, rel))
		if err != nil {
			t.Error(err)
			continue
		}
		if !strings.Contains(string(b), want) {
			t.Errorf("%s (%d bytes) lacks %q", rel, len(b), want)
		}
	}
}

// gunzip reads a gzipped file.
func gunzip(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return string(b)
}

// unitKeys reads a systemd unit's Key=Value lines (the last value wins).
func unitKeys(unit string) map[string]string {
	keys := map[string]string{}
	for _, line := range strings.Split(unit, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == '[' {
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			keys[k] = v
		}
	}
	return keys
}

// dropIn reads snmpd.conf lines as directive -> the rest of the line; a
// directive given twice fails the test.
func dropIn(t *testing.T, conf string) map[string]string {
	t.Helper()
	d := map[string]string{}
	for _, line := range strings.Split(conf, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if _, dup := d[f[0]]; dup {
			t.Fatalf("drop-in gives %s twice", f[0])
		}
		d[f[0]] = strings.Join(f[1:], " ")
	}
	return d
}
