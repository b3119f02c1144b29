package agentx_test

import (
	"context"
	"log"
	"sync/atomic"

	"github.com/perfagent/subagent/agentx"
	"github.com/perfagent/subagent/asn1tree"
)

// A daemon publishes each new tree with an atomic store; the subagent
// loads it once per SNMP request.
func Example() {
	var current atomic.Pointer[asn1tree.Tree[asn1tree.Value]]
	tree, _ := asn1tree.Build([]asn1tree.Entry[asn1tree.Value]{
		{OID: asn1tree.MustParse("1.3.6.1.4.1.32473.1.1.0"), Val: asn1tree.Counter(42)},
	})
	current.Store(tree)

	sa, err := agentx.New(agentx.Config{
		Address:      "unix:/var/agentx/master",
		ID:           asn1tree.MustParse("1.3.6.1.4.1.32473.1"),
		Description:  "perfagent subagent",
		Subtrees:     []asn1tree.OID{asn1tree.MustParse("1.3.6.1.4.1.32473.1")},
		Capabilities: []agentx.Capability{{ID: asn1tree.MustParse("1.3.6.1.4.1.32473.99.1"), Description: "perfagent"}},
	}, func() asn1tree.View { return current.Load() })
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go sa.Run(ctx) // keeps the session alive until cancel

	// Later, e.g. from a hotset:
	_ = sa.Notify(ctx, []agentx.VarBind{
		{OID: agentx.SnmpTrapOID0, Value: asn1tree.Value{Kind: asn1tree.ObjectIdentifier, OID: asn1tree.MustParse("1.3.6.1.4.1.32473.2.0.1")}},
		{OID: asn1tree.MustParse("1.3.6.1.4.1.32473.1.1.0"), Value: asn1tree.Counter(42)},
	})
}
