package packaging

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestDebPackage: `make deb` builds bin/subagent_<version>-1_<arch>.deb;
// its contents are the install layout under /usr with multiarch libraries
// plus the Debian documentation; its control fields, conffiles and
// maintainer scripts are there; lintian reports no error.
func TestDebPackage(t *testing.T) {
	heavy(t)
	pkgDeps(t)
	out := run(t, tree, nil, "make", "--no-print-directory", "deb")
	// dpkg-shlibdeps is given the ELF files alone: it warned about each
	// man page, header and MIB ("unknown executable format").
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "dpkg-shlibdeps: warning") {
			t.Errorf("make deb: %s", line)
		}
	}
	arch := strings.TrimSpace(run(t, repo, nil, "dpkg", "--print-architecture"))
	multiarch := strings.TrimSpace(run(t, repo, nil, "dpkg-architecture", "-qDEB_HOST_MULTIARCH"))
	debVersion := version(t) + "-1"
	deb := filepath.Join(tree, "bin", "subagent_"+debVersion+"_"+arch+".deb")
	if _, err := os.Stat(deb); err != nil {
		t.Fatalf("make deb did not build %s: %v", deb, err)
	}

	// dpkg-deb --contents: "mode owner/group size date time ./path[ -> target]".
	want := layout("usr/lib/"+multiarch, "lib/systemd/system", "usr/share/zsh/vendor-completions")
	for _, doc := range []string{"usr/share/doc/subagent/copyright", "usr/share/doc/subagent/changelog.Debian.gz",
		"usr/share/lintian/overrides/subagent"} {
		want[doc] = entry{mode: 0o644}
	}
	got := map[string]entry{}
	var pages []string
	for _, line := range strings.Split(strings.TrimSpace(run(t, repo, nil, "dpkg-deb", "--contents", deb)), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 {
			t.Fatalf("dpkg-deb --contents line %q", line)
		}
		if f[1] != "root/root" {
			t.Errorf("%s belongs to %s, want root/root", f[5], f[1])
		}
		path := strings.TrimPrefix(f[5], "./")
		switch f[0][0] {
		case 'd':
			if f[0] != "drwxr-xr-x" {
				t.Errorf("directory %s has mode %s", path, f[0])
			}
		case 'l':
			got[path] = entry{link: f[7]}
		case '-':
			if filepath.Dir(path) == manDir {
				pages = append(pages, filepath.Base(path))
				continue
			}
			got[path] = entry{mode: perm(f[0])}
		default:
			t.Errorf("unexpected entry %q", line)
		}
	}
	compare(t, "package", got, want)
	sort.Strings(pages)
	for _, p := range manPages {
		if i := sort.SearchStrings(pages, p); i == len(pages) || pages[i] != p {
			t.Errorf("package lacks man page %s", p)
		}
	}

	field := func(name string) string {
		return strings.TrimSpace(run(t, repo, nil, "dpkg-deb", "--field", deb, name))
	}
	for name, want := range map[string]string{"Package": "subagent", "Version": debVersion, "Architecture": arch,
		"Recommends": "snmpd"} {
		if got := field(name); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	if dep := field("Depends"); !strings.Contains(dep, "libc6 (>= ") {
		t.Errorf("Depends %q lacks the versioned libc6 dpkg-shlibdeps finds", dep)
	}
	if dep := field("Depends"); strings.Contains(dep, "snmpd") {
		t.Errorf("Depends %q requires snmpd, which is only recommended", dep)
	}

	ctrl := t.TempDir()
	run(t, repo, nil, "dpkg-deb", "--control", deb, ctrl)
	conffiles, _ := os.ReadFile(filepath.Join(ctrl, "conffiles"))
	if got := strings.Fields(string(conffiles)); strings.Join(got, " ") != "/etc/subagent/subagent.yaml /etc/snmp/snmpd.conf.d/subagent.conf" {
		t.Errorf("conffiles %q", got)
	}
	for _, script := range []string{"postinst", "prerm", "postrm"} {
		fi, err := os.Stat(filepath.Join(ctrl, script))
		if err != nil || fi.Mode().Perm() != 0o755 {
			t.Errorf("%s: %v %v, want an executable maintainer script", script, fi, err)
		}
	}
	postinst, _ := os.ReadFile(filepath.Join(ctrl, "postinst"))
	for _, want := range []string{"systemd-sysusers /usr/lib/sysusers.d/subagent.conf", "adduser --system --group",
		"deb-systemd-helper enable 'subagent.service'"} {
		if !strings.Contains(string(postinst), want) {
			t.Errorf("postinst lacks %q", want)
		}
	}
	// Enabled, never started by the package.
	for _, start := range []string{"deb-systemd-invoke start", "systemctl start", "systemctl restart", "--now"} {
		if strings.Contains(string(postinst), start) {
			t.Errorf("postinst starts the service (%q)", start)
		}
	}
	if triggers, _ := os.ReadFile(filepath.Join(ctrl, "triggers")); !strings.Contains(string(triggers), "activate-noawait ldconfig") {
		t.Errorf("no ldconfig trigger for the shared libraries")
	}

	stage := filepath.Join(tree, "bin", "deb", "root")
	changelog := gunzip(t, filepath.Join(stage, "usr/share/doc/subagent/changelog.Debian.gz"))
	if !strings.HasPrefix(changelog, "subagent ("+debVersion+") ") {
		t.Errorf("changelog.Debian starts %q", strings.SplitN(changelog, "\n", 2)[0])
	}

	out, err := runErr(repo, nil, "lintian", "--no-tag-display-limit", deb)
	var errs, warns []string
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "E: "):
			errs = append(errs, line)
		case strings.HasPrefix(line, "W: "):
			warns = append(warns, line)
		}
	}
	if err != nil || len(errs) > 0 {
		t.Errorf("lintian: %v\n%s", err, out)
	}
	if len(warns) > 0 {
		t.Logf("lintian warnings (allowed; docs/INSTALL.md lists them):\n%s", strings.Join(warns, "\n"))
	}
}

// perm reads the permission bits of an ls-style mode ("-rw-r--r--").
func perm(s string) os.FileMode {
	var m os.FileMode
	for i, c := range s[1:10] {
		if c != '-' {
			m |= 1 << (8 - i)
		}
	}
	return m
}

// compare reports the differences between got and want.
func compare(t *testing.T, what string, got, want map[string]entry) {
	t.Helper()
	var diffs []string
	for p, w := range want {
		g, ok := got[p]
		switch {
		case !ok:
			diffs = append(diffs, what+" lacks "+p)
		case g != w:
			diffs = append(diffs, what+" "+p+": "+g.String()+", want "+w.String())
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			diffs = append(diffs, what+" has unexpected "+p)
		}
	}
	sort.Strings(diffs)
	for _, d := range diffs {
		t.Error(d)
	}
}
