package snmpdtest

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ToolTimeout bounds one run of a command-line tool.
const ToolTimeout = 30 * time.Second

// Var is one line of net-snmp output: a numeric OID without the leading
// dot, the type as net-snmp prints it ("Counter64", "STRING", "INTEGER",
// "Gauge32", "Timeticks", "OID", ...; "noSuchObject", "noSuchInstance" or
// "endOfMibView" for the exceptions) and the value: unquoted for STRING,
// the tick count for Timeticks, without the leading dot for OID.
type Var struct {
	OID, Type, Value string
}

func (v Var) String() string { return v.OID + " = " + v.Type + ": " + v.Value }

// Cmd runs a net-snmp tool against this snmpd (SNMPv2c, numeric output):
// tool opts... address args... It returns stdout and stderr; ctx and
// ToolTimeout bound the run, the tool's -t/-r its retries.
func (s *Snmpd) Cmd(ctx context.Context, tool string, opts []string, args ...string) (stdout, stderr string, err error) {
	ctx, cancel := context.WithTimeout(ctx, ToolTimeout)
	defer cancel()
	full := append([]string{"-v2c", "-c", s.Community, "-On", "-Oe", "-t", "2", "-r", "1"}, opts...)
	full = append(append(full, "udp:"+s.Addr), args...)
	cmd := exec.CommandContext(ctx, tool, full...)
	cmd.Env = env(s.stateDir())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	if err != nil {
		err = fmt.Errorf("%s %s: %w: %s", filepath.Base(tool), strings.Join(full, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), errb.String(), err
}

func (s *Snmpd) vars(tool string, opts []string, args ...string) ([]Var, error) {
	out, _, err := s.Cmd(context.Background(), tool, opts, args...)
	if err != nil {
		return nil, err
	}
	return Parse(out)
}

// Get runs snmpget for the OIDs.
func (s *Snmpd) Get(oids ...string) ([]Var, error) { return s.vars(s.Tools.Snmpget, nil, oids...) }

// GetNext runs snmpgetnext for the OIDs.
func (s *Snmpd) GetNext(oids ...string) ([]Var, error) {
	return s.vars(s.Tools.Snmpgetnext, nil, oids...)
}

// Walk runs snmpwalk below oid; snmpwalk itself fails on an OID that does
// not increase.
func (s *Snmpd) Walk(oid string) ([]Var, error) { return s.vars(s.Tools.Snmpwalk, nil, oid) }

// BulkWalk runs snmpbulkwalk below oid with the given max-repetitions.
func (s *Snmpd) BulkWalk(oid string, maxRepetitions int) ([]Var, error) {
	return s.vars(s.Tools.Snmpbulkwalk, []string{"-Cr" + strconv.Itoa(maxRepetitions)}, oid)
}

// Set runs snmpset oid type value with Options.RWCommunity (the read-only
// community when unset); the error carries the tool's stderr, where
// net-snmp reports the SNMP error status (e.g. "notWritable").
func (s *Snmpd) Set(oid, typ, value string) ([]Var, error) {
	var opts []string
	if s.opts.RWCommunity != "" {
		opts = []string{"-c", s.opts.RWCommunity}
	}
	return s.vars(s.Tools.Snmpset, opts, oid, typ, value)
}

var exceptions = map[string]string{
	"No Such Object available on this agent at this OID":                           "noSuchObject",
	"No Such Instance currently exists at this OID":                                "noSuchInstance",
	"No more variables left in this MIB View (It is past the end of the MIB tree)": "endOfMibView",
}

// Parse reads "-On" output: one ".OID = TYPE: value" per variable; a line
// not starting a variable continues the previous value (multi-line strings).
func Parse(out string) ([]Var, error) {
	var vars []Var
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		oid, rest, ok := strings.Cut(line, " = ")
		if !ok || !strings.HasPrefix(oid, ".") || strings.ContainsAny(oid, " \t") {
			if len(vars) == 0 {
				if strings.TrimSpace(line) == "" {
					continue
				}
				return nil, fmt.Errorf("net-snmp output line %q is not OID = value", line)
			}
			vars[len(vars)-1].Value += "\n" + line
			continue
		}
		v := Var{OID: strings.TrimPrefix(oid, ".")}
		if exc, ok := exceptions[rest]; ok {
			v.Type = exc
		} else if typ, val, ok := strings.Cut(rest, ": "); ok && !strings.ContainsAny(typ, " \"") {
			v.Type, v.Value = typ, val
		} else {
			v.Value = rest // e.g. an empty string prints as = ""
		}
		vars = append(vars, v)
	}
	for i := range vars {
		vars[i].Value = cleanValue(vars[i].Type, vars[i].Value)
	}
	return vars, nil
}

func cleanValue(typ, val string) string {
	switch typ {
	case "STRING", "":
		if len(val) >= 2 && val[0] == '"' && val[len(val)-1] == '"' {
			return val[1 : len(val)-1]
		}
	case "Timeticks":
		if strings.HasPrefix(val, "(") {
			if n, _, ok := strings.Cut(val[1:], ")"); ok {
				return n
			}
		}
	case "OID":
		return strings.TrimPrefix(val, ".")
	}
	return val
}
