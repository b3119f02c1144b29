package hoststats

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"strings"
	"syscall"

	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/spmi"
)

// pct is part of whole in percent; undefined (NoValue) for an empty whole.
func pct(part, whole float64) spmiwire.Value {
	if whole == 0 {
		return spmiwire.NoValue
	}
	return spmiwire.Float(part / whole * 100)
}

// opt is a field procfs may not have found in its file.
func opt(p *uint64) spmiwire.Value {
	if p == nil {
		return spmiwire.NoValue
	}
	return spmiwire.Uint(*p)
}

// optF is a /proc/net/snmp field, which procfs parses as a float.
func optF(p *float64) spmiwire.Value {
	switch {
	case p == nil:
		return spmiwire.NoValue
	case *p < 0:
		return spmiwire.Int(int64(*p))
	}
	return spmiwire.Uint(uint64(*p))
}

// ticks turns procfs's seconds (ticks / USER_HZ) back into hundredths of
// a second; USER_HZ is 100 on every Linux platform Go supports.
func ticks(seconds float64) spmiwire.Value { return spmiwire.Uint(uint64(math.Round(seconds * 100))) }

// seen is an instance as last read, re-added without values when its
// source fails so that its OIDs do not vanish on a transient error.
type seen struct {
	name, descr string
	asn         uint32
}

// readdSeen adds the remembered instances with every statistic NoValue.
func readdSeen(b *spmi.Builder, parent *spmi.Node, tmpl *spmi.CxDesc, last []seen, ds []spmiwire.StatDesc) error {
	for _, s := range last {
		in, err := b.Instance(parent, tmpl, s.name, s.descr, s.asn)
		if err != nil {
			return err
		}
		if err := b.Stats(in, ds, nil); err != nil {
			return err
		}
	}
	return nil
}

// vanished reports an error of a process that exited while it was read.
func vanished(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH)
}

// guard runs a procfs reader and turns a panic into an error: some procfs
// parsers index fields without checking a line's length, and a damaged
// file must fail one source, not the daemon.
func guard(read func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed content: %v", r)
		}
	}()
	return read()
}

// unescapeOctal undoes the kernel's \ooo escapes (space, tab, newline,
// backslash) in mount points and swap file names.
func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] <= '3' && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }
