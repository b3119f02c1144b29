package packaging

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// repo is the repository root, where the Makefile is.
var repo, _ = filepath.Abs("..")

// tree is where the tests run make: the repository's files through links,
// with a bin/ of its own, so that the working tree's bin/ is never touched
// (nor raced with by a developer's make).
var tree string

// makeTimeout bounds one make run (a cold Go build included).
const makeTimeout = 10 * time.Minute

// scratch holds the trees the tests install, removed by TestMain.
var scratch string

func TestMain(m *testing.M) {
	var err error
	if scratch, err = os.MkdirTemp("", "sa-pkg"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if tree, err = linkTree(filepath.Join(scratch, "src")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(scratch)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(scratch)
	os.Exit(code)
}

// linkTree makes dir hold links to every top-level file of the
// repository but bin/ and .git.
func linkTree(dir string) (string, error) {
	ents, err := os.ReadDir(repo)
	if err != nil {
		return "", err
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", err
	}
	for _, e := range ents {
		if n := e.Name(); n != "bin" && n != ".git" {
			if err := os.Symlink(filepath.Join(repo, n), filepath.Join(dir, n)); err != nil {
				return "", err
			}
		}
	}
	return dir, nil
}

// heavy skips under -short: these tests build, install and package.
func heavy(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and installs the whole tree: skipped under -short")
	}
}

var depsOnce sync.Once
var depsErr error

// pkgDeps runs scripts/install-pkg-deps.sh once: it installs dpkg-dev,
// lintian, systemd, man-db as root on Debian and otherwise fails with the
// command to run. A missing tool fails the test, never skips it.
func pkgDeps(t *testing.T) {
	t.Helper()
	depsOnce.Do(func() {
		out, err := exec.Command("sh", filepath.Join(repo, "scripts", "install-pkg-deps.sh")).CombinedOutput()
		if err != nil {
			depsErr = fmt.Errorf("scripts/install-pkg-deps.sh: %v\n%s", err, out)
		}
	})
	if depsErr != nil {
		t.Fatal(depsErr)
	}
}

// run runs name with args in dir, bounded by makeTimeout, and returns its
// combined output; a failure fails the test.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	out, err := runErr(dir, env, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

func runErr(dir string, env []string, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), makeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// makeInstall runs `make TARGET DESTDIR=dest PREFIX=/usr` (install or
// uninstall) and returns its output.
func makeInstall(t *testing.T, dest string, target string) string {
	t.Helper()
	return run(t, tree, nil, "make", "--no-print-directory", target, "DESTDIR="+dest, "PREFIX=/usr")
}

var (
	sharedOnce sync.Once
	sharedDest string
	sharedErr  error
)

// installed is one tree installed with DESTDIR=<tmp> PREFIX=/usr, shared
// by the tests that only read it.
func installed(t *testing.T) string {
	t.Helper()
	heavy(t)
	sharedOnce.Do(func() {
		sharedDest = filepath.Join(scratch, "shared")
		out, err := runErr(tree, nil, "make", "--no-print-directory", "install", "DESTDIR="+sharedDest, "PREFIX=/usr")
		if err != nil {
			sharedErr = fmt.Errorf("make install: %v\n%s", err, out)
		}
	})
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return sharedDest
}

// version is the daemon's version, as the Makefile reads it.
func version(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repo, "daemon", "agent.go"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^var Version = "([^"]+)"$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("daemon/agent.go has no `var Version = \"...\"` line")
	}
	return string(m[1])
}

// entry is one installed file: its mode, or the target of a link.
type entry struct {
	mode fs.FileMode // permission bits of a regular file
	link string      // target of a symbolic link
}

func (e entry) String() string {
	if e.link != "" {
		return "link to " + e.link
	}
	return fmt.Sprintf("mode %#o", e.mode)
}

// layout is every file install puts into a tree, without the man pages
// (checked by manPages), for the given library, unit and zsh directories.
func layout(libdir, unitdir, zshdir string) map[string]entry {
	f := func(m fs.FileMode) entry { return entry{mode: m} }
	l := map[string]entry{
		"usr/bin/subagent":                                  f(0o755),
		"usr/include/spmi_dds.h":                            f(0o644),
		"usr/include/arm.h":                                 f(0o644),
		"usr/share/snmp/mibs/SUBAGENT-MIB.txt":              f(0o644),
		unitdir + "/subagent.service":                       f(0o644),
		"usr/lib/sysusers.d/subagent.conf":                  f(0o644),
		"usr/share/bash-completion/completions/subagent":    f(0o644),
		zshdir + "/_subagent":                               f(0o644),
		"usr/share/fish/vendor_completions.d/subagent.fish": f(0o644),
		"etc/subagent/subagent.yaml":                        f(0o644),
		"etc/snmp/snmpd.conf.d/subagent.conf":               f(0o644),
		libdir + "/pkgconfig/libspmi.pc":                    f(0o644),
		libdir + "/pkgconfig/libarm.pc":                     f(0o644),
	}
	for _, lib := range []string{"libSpmi", "libarm"} {
		l[libdir+"/"+lib+".so.1.0.0"] = f(0o644)
		l[libdir+"/"+lib+".so.1"] = entry{link: lib + ".so.1.0.0"}
		l[libdir+"/"+lib+".so"] = entry{link: lib + ".so.1"}
		l[libdir+"/"+lib+".a"] = f(0o644)
	}
	// The SMIv2 base modules the MIB imports, beside it (docs/MIB.md).
	for _, mod := range []string{"SNMPv2-SMI", "SNMPv2-TC", "SNMPv2-CONF", "HCNUM-TC"} {
		l["usr/share/snmp/mibs/00-subagent-"+mod+".txt"] = f(0o644)
	}
	// The guide's <sys/Spmidef.h>, only if the tree has one.
	if _, err := os.Stat(filepath.Join(repo, "libspmi", "include", "sys", "Spmidef.h")); err == nil {
		l["usr/include/sys/Spmidef.h"] = f(0o644)
	}
	return l
}

// manPages are the pages every tree must have: one per visible command.
var manPages = []string{"subagent.1.gz", "subagent-run.1.gz", "subagent-peek.1.gz", "subagent-get.1.gz",
	"subagent-create.1.gz", "subagent-delete.1.gz", "subagent-expr.1.gz", "subagent-expr-list.1.gz",
	"subagent-expr-create.1.gz", "subagent-expr-delete.1.gz", "subagent-mib.1.gz", "subagent-completion.1.gz"}

const manDir = "usr/share/man/man1"

// checkLayout compares the tree under root with want (plus man pages): the
// same files, links and modes, directories 0755, nothing writable by
// others. Files in extra are allowed beside want.
func checkLayout(t *testing.T, root string, want map[string]entry, extra ...string) {
	t.Helper()
	got := map[string]entry{}
	var pages []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		fi, err := os.Lstat(path)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			got[rel] = entry{link: target}
		case fi.IsDir():
			if rel != "." && fi.Mode().Perm() != 0o755 {
				t.Errorf("directory %s has mode %v, want 0755", rel, fi.Mode().Perm())
			}
		case fi.Mode().IsRegular():
			if filepath.Dir(rel) == manDir {
				pages = append(pages, filepath.Base(rel))
				if fi.Mode().Perm() != 0o644 {
					t.Errorf("%s has mode %v, want 0644", rel, fi.Mode().Perm())
				}
				return nil
			}
			got[rel] = entry{mode: fi.Mode().Perm()}
		default:
			t.Errorf("%s is neither a file, a directory nor a link: %v", rel, fi.Mode())
		}
		if fi.Mode()&fs.ModeSymlink == 0 && fi.Mode().Perm()&0o002 != 0 {
			t.Errorf("%s is writable by everyone: %v", rel, fi.Mode())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range extra {
		delete(got, x)
	}
	compare(t, "install", got, want)
	have := map[string]bool{}
	for _, p := range pages {
		have[p] = true
		if !strings.HasPrefix(p, "subagent") || !strings.HasSuffix(p, ".1.gz") {
			t.Errorf("unexpected man page %s", p)
		}
	}
	for _, p := range manPages {
		if !have[p] {
			t.Errorf("missing man page %s/%s", manDir, p)
		}
	}
	if have["subagent-gen-man.1.gz"] {
		t.Errorf("the hidden gen-man command has a man page")
	}
}
