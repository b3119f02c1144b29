package ddswire_test

import (
	"strings"
	"testing"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/ddswire/ddswiretest"
	"github.com/perfagent/subagent/client/spmierr"
)

func TestGuideRegistrationIsValid(t *testing.T) {
	v, err := ddswire.CheckInit(ddswiretest.GuideInit(), ddswire.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if v.Name != "IBM" || v.ASN != 2 || v.Path() != "DDS/IBM" {
		t.Fatalf("vendor %+v", v)
	}
}

func TestCheckInitRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(m *ddswire.Init)
		code spmierr.Code
		subs []string
	}{
		{"version", func(m *ddswire.Init) { m.Version = 2 }, spmierr.SiInitFailed, []string{"version 2"}},
		{"generation 0", func(m *ddswire.Init) { m.Generation = 0 }, spmierr.SiBadArgument, []string{"generation"}},
		{"relative file", func(m *ddswire.Init) { m.File = "shm" }, spmierr.SiBadArgument, []string{`file "shm"`}},
		{"NUL in file", func(m *ddswire.Init) { m.File = "/a\x00b" }, spmierr.SiBadArgument, []string{"file"}},
		{"area 0", func(m *ddswire.Init) { m.AreaLen = 0 }, spmierr.SiBadArgument, []string{"area length 0"}},
		{"area odd", func(m *ddswire.Init) { m.AreaLen = 65535 }, spmierr.SiBadArgument, []string{"area length 65535"}},
		{"area too big", func(m *ddswire.Init) { m.AreaLen = 128 << 20 }, spmierr.SiBadArgument, []string{"area length"}},
		{"perm odd", func(m *ddswire.Init) { m.PermLen = 33 }, spmierr.SiBadArgument, []string{"permanent length 33"}},
		{"perm past area", func(m *ddswire.Init) { m.AreaLen, m.PermLen = 8, 32 }, spmierr.SiBadArgument, []string{"permanent length 32"}},
		{"no contexts", func(m *ddswire.Init) { m.Contexts = nil }, spmierr.SiBadArgument, []string{"no contexts"}},
		{"too many contexts", func(m *ddswire.Init) { m.Contexts = make([]ddswire.Cx, 1025) }, spmierr.SiBadArgument, []string{"1025 contexts"}},
		{"too many templates", func(m *ddswire.Init) { m.Templates = make([]ddswire.Cx, 65) }, spmierr.SiBadArgument, []string{"65 volatile templates"}},
		{"too many stats", func(m *ddswire.Init) { m.Contexts[1].Stats = make([]ddswire.Stat, 1025) }, spmierr.SiBadArgument, []string{"1025 statistics"}},
		{"too many stats in all", func(m *ddswire.Init) {
			for i := range m.Contexts {
				m.Contexts[i].Stats = make([]ddswire.Stat, 1000)
			}
			m.Contexts = append(m.Contexts, m.Contexts...)
			for len(m.Contexts) < 70 {
				m.Contexts = append(m.Contexts, m.Contexts[0])
			}
		}, spmierr.SiBadArgument, []string{"in all"}},
		{"not under DDS", func(m *ddswire.Init) { m.Contexts[0].Path = "CPU/IBM" }, spmierr.SiBadArgument, []string{"not under DDS/<vendor>"}},
		{"bare DDS", func(m *ddswire.Init) { m.Contexts[0].Path = "DDS" }, spmierr.SiBadArgument, []string{"not under"}},
		{"empty component", func(m *ddswire.Init) { m.Contexts[2].Path = "DDS/IBM//x" }, spmierr.SiBadArgument, []string{"name is empty"}},
		{"trailing slash", func(m *ddswire.Init) { m.Contexts[2].Path = "DDS/IBM/" }, spmierr.SiBadArgument, []string{"name is empty"}},
		{"dot component", func(m *ddswire.Init) { m.Contexts[2].Path = "DDS/IBM/.." }, spmierr.SiBadArgument, []string{"reserved"}},
		{"control char", func(m *ddswire.Init) { m.Contexts[2].Path = "DDS/IBM/a\tb" }, spmierr.SiBadArgument, []string{"contains"}},
		{"path too long", func(m *ddswire.Init) {
			m.Contexts[2].Path = "DDS/IBM/" + strings.Repeat("a", 30) + "/" + strings.Repeat("b", 30)
		}, spmierr.SiBadArgument, []string{"at most 63"}},
		{"component too long", func(m *ddswire.Init) { m.Contexts[2].Path = "DDS/IBM/" + strings.Repeat("a", 32) }, spmierr.SiBadArgument, []string{"at most 31"}},
		{"bad UTF-8 descr", func(m *ddswire.Init) { m.Contexts[1].Descr = "\xff" }, spmierr.SiBadArgument, []string{"UTF-8"}},
		{"descr too long", func(m *ddswire.Init) { m.Contexts[1].Descr = strings.Repeat("d", 64) }, spmierr.SiBadArgument, []string{"at most 63"}},
		{"inst_freq", func(m *ddswire.Init) { m.Contexts[1].InstFreq = 3 }, spmierr.SiBadArgument, []string{"inst_freq 3"}},
		{"permanent datasize", func(m *ddswire.Init) { m.Contexts[1].DataSize = 8 }, spmierr.SiBadArgument, []string{"datasize 8"}},
		{"vendor with stats", func(m *ddswire.Init) { m.Contexts[0].Stats = m.Contexts[1].Stats }, spmierr.SiBadArgument, []string{"must have none"}},
		{"vendor ASN 0", func(m *ddswire.Init) { m.Contexts[0].ASN = 0 }, spmierr.SiBadArgument, []string{"enterprise number"}},
		{"second vendor", func(m *ddswire.Init) { m.Contexts[2].Path = "DDS/HAL" }, spmierr.SiBadArgument, []string{"second vendor"}},
		{"vendor twice", func(m *ddswire.Init) { m.Contexts[2] = m.Contexts[0] }, spmierr.SiDuplicate, []string{"appears twice"}},
		{"no vendor", func(m *ddswire.Init) {
			m.Contexts = m.Contexts[:0]
			m.Contexts = append(m.Contexts, ddswire.Cx{Path: "DDS/IBM/x", ASN: 1})
		}, spmierr.SiInvalidCx, []string{`parent "DDS/IBM"`}},
		{"no vendor at all", func(m *ddswire.Init) {
			m.Contexts = []ddswire.Cx{}
			m.Contexts = append(m.Contexts, ddswire.Cx{Path: "DDS/IBM/x", ASN: 1})
		}, spmierr.SiInvalidCx, []string{"not an earlier context"}},
		{"child before parent", func(m *ddswire.Init) { m.Contexts[2], m.Contexts[3] = m.Contexts[3], m.Contexts[2] }, spmierr.SiInvalidCx, []string{`parent "DDS/IBM/Moretest"`}},
		{"under another vendor", func(m *ddswire.Init) { m.Contexts[1].Path = "DDS/HAL/Test" }, spmierr.SiInvalidCx, []string{`parent "DDS/HAL"`}},
		{"duplicate path", func(m *ddswire.Init) { m.Contexts[2].Path = "DDS/IBM/Test" }, spmierr.SiDuplicate, []string{"appears twice"}},
		{"duplicate context ASN", func(m *ddswire.Init) { m.Contexts[2].ASN = 220 }, spmierr.SiDuplicate, []string{"ASN.1 number 220", `"Test"`}},
		{"duplicate stat name", func(m *ddswire.Init) { m.Contexts[1].Stats[1].Name = "gadgets" }, spmierr.SiDuplicate, []string{`"gadgets"`, "DDS/IBM/Test"}},
		{"duplicate stat ASN", func(m *ddswire.Init) { m.Contexts[1].Stats[1].ASN = 1 }, spmierr.SiDuplicate, []string{"ASN.1 number 1"}},
		{"subcontext name clashes with stat", func(m *ddswire.Init) {
			m.Contexts = append(m.Contexts, ddswire.Cx{Path: "DDS/IBM/Test/gadgets", ASN: 9})
		}, spmierr.SiDuplicate, []string{`"gadgets"`, "statistic"}},
		{"subcontext ASN clashes with stat", func(m *ddswire.Init) {
			m.Contexts = append(m.Contexts, ddswire.Cx{Path: "DDS/IBM/Test/sub", ASN: 2})
		}, spmierr.SiDuplicate, []string{"ASN.1 number 2", `"widgets"`}},
		{"stat name empty", func(m *ddswire.Init) { m.Contexts[1].Stats[0].Name = "" }, spmierr.SiBadArgument, []string{"name is empty"}},
		{"stat name slash", func(m *ddswire.Init) { m.Contexts[1].Stats[0].Name = "a/b" }, spmierr.SiBadArgument, []string{"contains '/'"}},
		{"stat name DEL", func(m *ddswire.Init) { m.Contexts[1].Stats[0].Name = "a\x7f" }, spmierr.SiBadArgument, []string{"contains"}},
		{"stat descr", func(m *ddswire.Init) { m.Contexts[1].Stats[0].Descr = "a\nb" }, spmierr.SiBadArgument, []string{"statistic description"}},
		{"value_type", func(m *ddswire.Init) { m.Contexts[1].Stats[0].ValType = 2 }, spmierr.SiBadArgument, []string{"value_type 2"}},
		{"data_type", func(m *ddswire.Init) { m.Contexts[1].Stats[0].DataType = 13 }, spmierr.SiBadArgument, []string{"data_type 13"}},
		{"source type", func(m *ddswire.Init) { m.Contexts[1].Stats[0].Type = 200 }, spmierr.SiBadArgument, []string{"source type 200"}},
		{"min above max", func(m *ddswire.Init) { m.Contexts[1].Stats[0].Min = 101 }, spmierr.SiBadArgument, []string{"min 101 above max 100"}},
		{"size for type", func(m *ddswire.Init) { m.Contexts[1].Stats[0].Size = 3 }, spmierr.SiBadArgument, []string{"SiULong source field cannot be 3 bytes"}},
		{"float size", func(m *ddswire.Init) { m.Contexts[1].Stats[0].Type, m.Contexts[1].Stats[0].Size = ddswire.SiFloat, 2 }, spmierr.SiBadArgument, []string{"SiFloat"}},
		{"timeval size", func(m *ddswire.Init) { m.Contexts[1].Stats[0].Type, m.Contexts[1].Stats[0].Size = ddswire.SiTimeval, 4 }, spmierr.SiBadArgument, []string{"SiTimeval source field cannot be 4 bytes"}},
		{"misaligned", func(m *ddswire.Init) { m.Contexts[1].Stats[0].Offset = 4 }, spmierr.SiBadArgument, []string{"not 8-byte aligned"}},
		{"past permanent area", func(m *ddswire.Init) { m.Contexts[1].Stats[0].Offset = 32 }, spmierr.SiBadArgument, []string{"past the 32-byte area", `"gadgets"`}},
		{"offset overflow", func(m *ddswire.Init) { m.Contexts[1].Stats[0].Offset = 0xfffffff8 }, spmierr.SiBadArgument, []string{"past the"}},
		{"template path", func(m *ddswire.Init) { m.Templates[0].Path = strings.Repeat("p", 64) }, spmierr.SiBadArgument, []string{"volatile template 0", "at most 63"}},
		{"template descr", func(m *ddswire.Init) { m.Templates[0].Descr = "\x01" }, spmierr.SiBadArgument, []string{"volatile template 0"}},
		{"template datasize odd", func(m *ddswire.Init) { m.Templates[0].DataSize = 12 }, spmierr.SiBadArgument, []string{"datasize 12"}},
		{"template never fits", func(m *ddswire.Init) { m.Templates[0].DataSize = 65536 }, spmierr.SiBadArgument, []string{"could never be added"}},
		{"template stat past slot", func(m *ddswire.Init) { m.Templates[0].DataSize = 8 }, spmierr.SiBadArgument, []string{"past the 8-byte area"}},
		{"template duplicate stat", func(m *ddswire.Init) { m.Templates[0].Stats[1].Name = "problems" }, spmierr.SiDuplicate, []string{"volatile template 0", `"problems"`}},
		{"template inst_freq", func(m *ddswire.Init) { m.Templates[0].InstFreq = 9 }, spmierr.SiBadArgument, []string{"inst_freq 9"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := ddswiretest.GuideInit()
			tc.edit(m)
			_, err := ddswire.CheckInit(m, ddswire.Limits{})
			ddswiretest.WantErr(t, err, tc.code, tc.subs...)
		})
	}
}

func TestCheckInitAcceptsVariants(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(m *ddswire.Init)
	}{
		{"no templates", func(m *ddswire.Init) { m.Templates = nil }},
		{"only the vendor context", func(m *ddswire.Init) { m.Contexts, m.PermLen = m.Contexts[:1], 0 }},
		{"version 0 means current", func(m *ddswire.Init) { m.Version = 0 }},
		{"32-bit u_long", func(m *ddswire.Init) {
			for i := range m.Contexts[1].Stats {
				m.Contexts[1].Stats[i].Size = 4
			}
		}},
		{"every integer size", func(m *ddswire.Init) {
			s := m.Contexts[1].Stats
			s[0].Type, s[0].Size, s[0].Offset = ddswire.SiChar, 1, 3
			s[1].Type, s[1].Size, s[1].Offset = ddswire.SiShort, 2, 6
		}},
		{"timeval and double", func(m *ddswire.Init) {
			s := m.Contexts[3].Stats
			s[0].Type, s[0].Size, s[0].Offset, s[0].DataType = ddswire.SiTimeval, 16, 0, ddswire.SiFloat
			s[1].Type, s[1].Size, s[1].Offset, s[1].DataType = ddswire.SiDouble, 8, 16, ddswire.SiDouble
		}},
		{"template of no stats", func(m *ddswire.Init) { m.Templates[0].Stats, m.Templates[0].DataSize = nil, 0 }},
		{"same stat name in different contexts", func(m *ddswire.Init) { m.Contexts[3].Stats[0].Name = "gadgets" }},
		{"high ASN numbers", func(m *ddswire.Init) { m.Contexts[0].ASN = 4_000_000_000; m.Contexts[1].ASN = 0 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := ddswiretest.GuideInit()
			tc.edit(m)
			if _, err := ddswire.CheckInit(m, ddswire.Limits{}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestCheckAddCx(t *testing.T) {
	in := ddswiretest.GuideInit()
	v, err := ddswire.CheckInit(in, ddswire.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := ddswire.CheckAddCx(&ddswire.AddCx{Ix: 0, Path: "DDS/IBM/Moretest/Bingo", Descr: "Dynamically added", ASN: 1}, in, v)
	if err != nil || tmpl != &in.Templates[0] {
		t.Fatalf("template %v, %v", tmpl, err)
	}
	for _, tc := range []struct {
		name string
		m    ddswire.AddCx
		in   *ddswire.Init
		code spmierr.Code
		sub  string
	}{
		{"ix out of range", ddswire.AddCx{Ix: 1, Path: "DDS/IBM/x"}, in, spmierr.SiBadArgument, "ix 1, the volatile table has 1"},
		{"no table", ddswire.AddCx{Path: "DDS/IBM/x"}, &ddswire.Init{}, spmierr.SiBadArgument, "no volatile context table"},
		{"vendor level", ddswire.AddCx{Path: "DDS/IBM"}, in, spmierr.SiBadArgument, "below the supplier's vendor"},
		{"other vendor", ddswire.AddCx{Path: "DDS/HAL/x"}, in, spmierr.SiBadArgument, "DDS/IBM"},
		{"bad path", ddswire.AddCx{Path: "DDS/IBM/a//b"}, in, spmierr.SiBadArgument, "empty"},
		{"outside DDS", ddswire.AddCx{Path: "Mem/IBM/x"}, in, spmierr.SiBadArgument, "not under"},
		{"bad descr", ddswire.AddCx{Path: "DDS/IBM/x", Descr: "\x00"}, in, spmierr.SiBadArgument, "description"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ddswire.CheckAddCx(&tc.m, tc.in, v)
			ddswiretest.WantErr(t, err, tc.code, tc.sub)
		})
	}
}
