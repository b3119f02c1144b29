// Package hoststats provides the host's performance statistics as SPMI
// providers, one per top-level context (CPU, Mem, PagSp, Disk, LAN, IP,
// TCP, UDP, ICMP, Proc, FS), read from procfs and sysfs through
// github.com/prometheus/procfs. The numbering is documented in docs/TREE.md.
package hoststats

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/procfs"
	"github.com/prometheus/procfs/blockdevice"
	"golang.org/x/sys/unix"

	"github.com/perfagent/subagent/spmi"
)

// Defaults of Config fields left empty.
const (
	DefaultProcRoot   = "/proc"
	DefaultSysRoot    = "/sys"
	DefaultDiskIgnore = `^(ram|loop|fd|sr)\d+$`
	// DefaultFSTypeIgnore lists pseudo and overlay file systems, whose
	// sizes say nothing about storage.
	DefaultFSTypeIgnore  = `^(autofs|binfmt_misc|bpf|cgroup2?|configfs|debugfs|devpts|devtmpfs|fusectl|hugetlbfs|iso9660|mqueue|nsfs|overlay|proc|procfs|pstore|rpc_pipefs|securityfs|selinuxfs|squashfs|sysfs|tracefs)$`
	DefaultStatfsTimeout = time.Second
)

// Config selects the sources of the host statistics.
type Config struct {
	ProcRoot, SysRoot string // mount points of procfs and sysfs ("" = defaults)
	DiskIgnore        string // block devices not reported ("" = DefaultDiskIgnore)
	FSTypeIgnore      string // file system types not reported ("" = DefaultFSTypeIgnore)
	StatfsTimeout     time.Duration
	// Statfs replaces unix.Statfs (nil = unix.Statfs), for fixtures.
	Statfs func(path string, st *unix.Statfs_t) error
	// Disabled names providers not to run (see Names).
	Disabled map[string]bool

	// pageSize converts page counts to KiB; 0 = the host's. Fixtures fix
	// it so that the reference tree is the same on every architecture.
	pageSize int
}

// resolved is a Config with defaults applied and sources opened.
type resolved struct {
	Config
	proc       procfs.FS
	block      blockdevice.FS
	diskIgnore *regexp.Regexp
	fsIgnore   *regexp.Regexp
}

type factory struct {
	name string
	new  func(*resolved) spmi.Provider
}

// factories are in the order of the top-level ASN numbers.
var factories = []factory{
	{"CPU", newCPU},
	{"Mem", newMem},
	{"PagSp", newPagSp},
	{"Disk", newDisk},
	{"LAN", newLAN},
	{"IP", newIP},
	{"TCP", newTCP},
	{"UDP", newUDP},
	{"ICMP", newICMP},
	{"Proc", newProc},
	{"FS", newFS},
}

// Names lists the providers, in the order of their top-level ASN numbers.
func Names() []string {
	out := make([]string, len(factories))
	for i, f := range factories {
		out[i] = f.name
	}
	return out
}

// Providers returns one provider per enabled top-level context, in ASN
// order. Bad regular expressions, unknown names in Disabled and unreadable
// roots are errors naming the Config field.
func Providers(cfg Config) ([]spmi.Provider, error) {
	r, err := resolve(cfg)
	if err != nil {
		return nil, err
	}
	var out []spmi.Provider
	for _, f := range factories {
		if !cfg.Disabled[f.name] {
			out = append(out, f.new(r))
		}
	}
	return out, nil
}

// FieldError is a Config field that cannot be used; callers with other
// names for the fields (configuration keys) rename them by Field.
type FieldError struct {
	Field string // "DiskIgnore"; "ProcRoot/SysRoot" when either may be wrong
	Err   error
}

func (e *FieldError) Error() string { return "hoststats: " + e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

func fieldErr(field string, err error) error { return &FieldError{Field: field, Err: err} }

func resolve(cfg Config) (*resolved, error) {
	r := &resolved{Config: cfg}
	for n, off := range cfg.Disabled {
		if off && !slices.Contains(Names(), n) {
			return nil, fieldErr("Disabled", fmt.Errorf("%q is not one of %s", n, strings.Join(Names(), ", ")))
		}
	}
	if r.ProcRoot == "" {
		r.ProcRoot = DefaultProcRoot
	}
	if r.SysRoot == "" {
		r.SysRoot = DefaultSysRoot
	}
	if r.DiskIgnore == "" {
		r.DiskIgnore = DefaultDiskIgnore
	}
	if r.FSTypeIgnore == "" {
		r.FSTypeIgnore = DefaultFSTypeIgnore
	}
	if r.StatfsTimeout <= 0 {
		r.StatfsTimeout = DefaultStatfsTimeout
	}
	if r.Statfs == nil {
		r.Statfs = unix.Statfs
	}
	if r.pageSize <= 0 {
		r.pageSize = os.Getpagesize()
	}
	var err error
	if r.diskIgnore, err = regexp.Compile(r.DiskIgnore); err != nil {
		return nil, fieldErr("DiskIgnore", fmt.Errorf("bad regular expression: %w", err))
	}
	if r.fsIgnore, err = regexp.Compile(r.FSTypeIgnore); err != nil {
		return nil, fieldErr("FSTypeIgnore", fmt.Errorf("bad regular expression: %w", err))
	}
	if r.proc, err = procfs.NewFS(r.ProcRoot); err != nil {
		return nil, fieldErr("ProcRoot", err)
	}
	// Only Disk and LAN read sysfs; a host without it can disable them.
	if !cfg.Disabled["Disk"] || !cfg.Disabled["LAN"] {
		if st, err := os.Stat(r.SysRoot); err != nil || !st.IsDir() {
			if err == nil {
				err = fmt.Errorf("%s is not a directory", r.SysRoot)
			}
			return nil, fieldErr("SysRoot", err)
		}
	}
	if !cfg.Disabled["Disk"] {
		if r.block, err = blockdevice.NewFS(r.ProcRoot, r.SysRoot); err != nil {
			return nil, fieldErr("ProcRoot/SysRoot", err)
		}
	}
	return r, nil
}
