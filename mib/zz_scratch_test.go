package mib_test

import (
	"fmt"
	"testing"

	"github.com/perfagent/subagent/mib"
)

func TestZZScratch(t *testing.T) {
	m, err := mib.Generate(referenceTree(t), mib.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range m.Objects {
		fmt.Printf("%-40s %-30s %-18s %-25s %s\n", o.Name, o.OID, o.Macro, o.Syntax, o.Path)
	}
	for _, tb := range m.Tables {
		fmt.Printf("TABLE %s %s %s %v %s %s\n", tb.Name, tb.OID, tb.Pattern, tb.Index, tb.Label, tb.Descr)
		for _, c := range tb.Columns {
			fmt.Printf("   %-30s %v scale=%d val=%v wide=%v units=%q\n", c.Name, c.Kind, c.Scale, c.Stat.Val, c.Stat.Wide, c.Stat.Units)
		}
	}
}
