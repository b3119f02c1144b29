package spmi

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

// Peek lists the node at path and everything below it (all of the
// hierarchy for an empty path) in ASN order.
func Peek(s *Snapshot, path string) ([]Entry, error) {
	start := s.Top
	if path != "" && path != "/" {
		n, err := s.Lookup(path)
		if err != nil {
			return nil, err
		}
		start = n
	}
	var out []Entry
	Walk(start, func(n *Node) bool {
		if n == s.Top {
			return true
		}
		e := Entry{Path: n.Path, Descr: n.Descr, Rel: n.Rel.String(), OID: n.FullOID(s.Base).String(), Stat: n.Stat, Instance: n.Instance, Named: n.Named(), Rows: n.HasRows(), RowName: n.RowName(), Aggregate: n.Aggregate()}
		if c := n.Cell(); c != nil {
			e.Cell = c.String()
		}
		if !n.IsStat() {
			e.Inst = n.Inst().String()
			if n.Cx != nil {
				e.NameIsNumber, e.DescrStat = n.Cx.NameIsNumber, n.Cx.DescrStat
			}
		}
		out = append(out, e)
		return true
	})
	return out, nil
}
