// Package spmi is the data hierarchy of the System Performance Measurement
// Interface: contexts and statistics with short names, descriptions and
// ASN.1 numbers, instantiable contexts, statsets, and the SPMI error codes.
//
// A Hierarchy rebuilds an immutable Snapshot from its Providers on demand
// (never more often than a minimum age) and publishes it atomically, so
// readers — the SNMP front ends, the CLI, hotsets — never wait on a writer.
package spmi

import (
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/spmiwire"
)

// CxDesc describes a context. Instances of an instantiable context share
// the CxDesc of their template.
type CxDesc struct {
	Name  string
	Descr string
	ASN   uint32
	Inst  ddswire.InstFreq
	// Named: the instances keep their names and numbers across restarts
	// (ARM applications, unlike PIDs), so a MIB declares them although
	// they come and go.
	Named bool
	// RowName names the rows of the table of an instance's subcontexts
	// ("tran" for the transactions of an ARM application), where the
	// path has no name for them (TablesArc).
	RowName string
	// Aggregate marks a permanent subcontext of an instantiable context
	// that sums its instances (CPU/total): it is no instance and no row
	// of the context's table but scalars in every view, so that a sum
	// over the table counts each value once.
	Aggregate bool
	// NameIsNumber: an instance's name is its number (a process's PID),
	// so the table of the rows has no name column (ColName): it would
	// repeat the index.
	NameIsNumber bool
	// DescrStat names the statistic whose value an instance's description
	// repeats (FS: "mount", Proc/pid: "name"), so the table of the rows
	// has no description column (ColDescr).
	DescrStat string
}

// Validate checks the description against the guide's limits.
func (d *CxDesc) Validate() error {
	if err := spmiwire.CheckName("context", d.Name, d.Descr); err != nil {
		return err
	}
	if d.Inst > ddswire.SiContInst {
		return spmierr.Errorf(spmierr.SiBadArgument, "context %q: instantiability %d unknown", d.Name, d.Inst)
	}
	return nil
}
