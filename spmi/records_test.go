package spmi

import (
	"path/filepath"
	"testing"
)

// Records survive a save and a load, and removing one is saved too.
func TestNumberingRecordsPersist(t *testing.T) {
	file := filepath.Join(t.TempDir(), "numbering.json")
	n := NewNumbering(file)
	if !n.SetRecord("SNMP/hotsetDef", "a", `{"stat":"Disk/*/busy"}`) || !n.SetRecord("SNMP/hotsetDef", "b", "x") {
		t.Fatal("SetRecord changed nothing")
	}
	if n.SetRecord("SNMP/hotsetDef", "b", "x") {
		t.Error("the same record again counts as a change")
	}
	if err := n.Save(); err != nil {
		t.Fatal(err)
	}
	m, err := LoadNumbering(file)
	if err != nil {
		t.Fatal(err)
	}
	names, recs := m.Records("SNMP/hotsetDef")
	if len(names) != 2 || recs["a"] != `{"stat":"Disk/*/busy"}` || recs["b"] != "x" {
		t.Fatalf("loaded %v %v", names, recs)
	}
	m.SetRecord("SNMP/hotsetDef", "a", "")
	if err := m.Save(); err != nil {
		t.Fatal(err)
	}
	m, _ = LoadNumbering(file)
	if names, _ := m.Records("SNMP/hotsetDef"); len(names) != 1 || names[0] != "b" {
		t.Errorf("after removal: %v", names)
	}
	if names, _ := m.Detached().Records("SNMP/hotsetDef"); len(names) != 1 {
		t.Errorf("Detached lost the records: %v", names)
	}
}
