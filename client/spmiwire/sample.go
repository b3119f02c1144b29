package spmiwire

import (
	"time"

	"github.com/perfagent/subagent/client/spmierr"
)

// Entry is one line of peek output: a context or a statistic.
type Entry struct {
	Path  string `json:"path"`
	Descr string `json:"descr"`
	Rel   string `json:"rel"`
	OID   string `json:"oid"`
	Inst  string `json:"inst,omitempty"` // instantiability of contexts
	// Instance marks a context created by instantiation (cpu0, sda, a PID).
	Instance bool `json:"instance,omitempty"`
	// Named: the instances keep their names and numbers (CxDesc.Named).
	Named bool `json:"named,omitempty"`
	// Rows: its subcontexts are rows of a table (Node.HasRows), whose
	// rows are called RowName where the path does not name them.
	Rows    bool      `json:"rows,omitempty"`
	Cell    string    `json:"cell,omitempty"` // the statistic's OID in the table view
	RowName string    `json:"row_name,omitempty"`
	Stat    *StatDesc `json:"stat,omitempty"`
	// Aggregate: a context summing the instances beside it, served as
	// scalars, never as a row (CxDesc.Aggregate).
	Aggregate bool `json:"aggregate,omitempty"`
	// NameIsNumber and DescrStat: the table of its rows leaves out the
	// name or description column (CxDesc, RowColumns).
	NameIsNumber bool   `json:"name_is_number,omitempty"`
	DescrStat    string `json:"descr_stat,omitempty"`
}

// Sample is the values of several statistics read at one time.
type Sample struct {
	Time  time.Time
	Items []Item
}

// Item is one statistic of a Sample. Err is set (SiNotFound, SiNoValue,
// SiBadArgument) when the path gave no value.
type Item struct {
	Path  string         `json:"path"`
	Stat  *StatDesc      `json:"stat,omitempty"`
	Value Value          `json:"value"`
	Err   *spmierr.Error `json:"err,omitempty"`
	// NotYet: the statistic has no value only because nothing has
	// measured it yet (Unmeasured: a host created a moment ago, a hotset
	// not evaluated yet); Err holds the reason. Readers show the reason
	// rather than a failed source.
	NotYet bool `json:"not_yet,omitempty"`
}
