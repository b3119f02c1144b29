package hotset

import "github.com/perfagent/subagent/spmi"

// Probe evaluates d alone on snap, as the guide's SpmiAddSetHot checks
// a peer set before it is added: a statistic that matches nothing is the
// engine's own error (with its nearest path); else the most memory the
// peer set may hold on snap (Engine.Bound). The control socket's
// hotset.add and a hotset row written over SNMP both ask it.
func Probe(d Def, snap *spmi.Snapshot) (int64, error) {
	probe, err := New([]Def{d}, 1, nil)
	if err != nil {
		return 0, err
	}
	probe.Evaluate(snap)
	if v := probe.Views(); len(v) == 1 && v[0].Result.Err != nil {
		return 0, v[0].Result.Err
	}
	return probe.Bound(), nil
}
