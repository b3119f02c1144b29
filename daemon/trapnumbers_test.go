package daemon

import (
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/agentx"
	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/derive"
	"github.com/perfagent/subagent/expr"
	"github.com/perfagent/subagent/mib/schema"
	"github.com/perfagent/subagent/settable"
	"github.com/perfagent/subagent/spmi"
)

// alarmSet is a createAndGo of a complete alarmDefTable row with trap
// number trapNo (alarmDefTrapNo, after RowStatus).
func alarmSet(base asn1tree.OID, name string, trapNo int, storage int) []agentx.VarBind {
	cell := func(col uint32) asn1tree.OID { return tableCell(base, schema.AlarmDefTable, col, name) }
	n := uint32(len(schema.AlarmDefTable.Columns))
	return []agentx.VarBind{
		{OID: cell(2), Value: asn1tree.Str("Mem/Real/free > 0")},
		{OID: cell(n + 2), Value: asn1tree.Int(int32(storage))},
		{OID: cell(n + 4), Value: asn1tree.Int(int32(trapNo))},
		{OID: cell(n + 3), Value: asn1tree.Int(settable.CreateAndGo)},
	}
}

// wantBoth checks that err refuses a trap number naming both users.
func wantBoth(t *testing.T, what string, err error, names ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: accepted", what)
		return
	}
	for _, n := range names {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("%s: %v, want it to name %s", what, err, n)
		}
	}
}

// The configuration file's alarms: a trap number a hotset or another
// alarm sends, or one of the daemon's own, is refused naming both; hotsets
// may still share one.
func TestConfigAlarmTrapNumbers(t *testing.T) {
	hot := func(name string, n int) config.HotsetConf {
		return config.HotsetConf{Name: name, Stat: "Disk/*/busy", MaxResp: 3, Threshold: 80, Frequency: 5 * time.Minute,
			FeedType: "threshold", ExcpType: "trap", TrapNo: n}
	}
	alarm := func(name string, n int) config.AlarmConf {
		return config.AlarmConf{Name: name, Expr: "Mem/Real/free > 0", TrapNo: n}
	}
	c := fixtureConfig(t)
	c.Hotsets = []config.HotsetConf{hot("busy", 7), hot("busy2", 7)}
	c.Alarms = []config.AlarmConf{alarm("low", 8), alarm("plain", 0), alarm("plain2", 0)}
	if err := Check(c); err != nil {
		t.Fatalf("hotsets sharing 7, alarms 8 and none: %v", err)
	}
	bad := *c
	bad.Alarms = []config.AlarmConf{alarm("low", 7)}
	wantBoth(t, "an alarm's number a hotset sends", Check(&bad), `alarm "low" (alarms[0])`, `hotset "busy" (hotsets[0])`, "trap number 7")
	bad.Alarms = []config.AlarmConf{alarm("low", 8), alarm("high", 8)}
	wantBoth(t, "two alarms' number", Check(&bad), `alarm "low" (alarms[0])`, `alarm "high" (alarms[1])`)
	for n, own := range schema.OwnTrapNumbers() {
		bad.Alarms = []config.AlarmConf{alarm("own", n)}
		wantBoth(t, own, Check(&bad), "alarms[0].trap_no", own)
	}
	bad.Alarms = []config.AlarmConf{alarm("big", 40000)}
	wantBoth(t, "40000", Check(&bad), "alarms[0].trap_no", "not from 1 to 32767")
	bad.Alarms = []config.AlarmConf{alarm("neg", -1)}
	wantBoth(t, "-1", Check(&bad), "alarms[0]", "trap_no")
}

// The shipped example alarms' trap numbers are those the shipped MIB
// declares, and they take none of the example hotsets'.
func TestShippedAlarmTrapExamples(t *testing.T) {
	var alarms []string // without the commands, whose programs this host lacks
	for _, l := range strings.Split(uncommented(t, "alarms"), "\n") {
		if !strings.Contains(l, "command") {
			alarms = append(alarms, l)
		}
	}
	c, err := load(t, uncommented(t, "hotsets")+strings.Join(alarms, "\n"))
	if err != nil {
		t.Fatal(err)
	}
	var nums []uint32
	for _, a := range c.Alarms {
		if a.TrapNo != 0 {
			nums = append(nums, uint32(a.TrapNo))
		}
	}
	if !slices.Equal(nums, schema.ExampleAlarmTrapNumbers) {
		t.Errorf("the example alarms' trap numbers %v, want schema.ExampleAlarmTrapNumbers %v", nums, schema.ExampleAlarmTrapNumbers)
	}
	if err := checkConfigTraps(c); err != nil {
		t.Errorf("the examples together: %v", err)
	}
}

// At run time every path applies the same rules, against everything
// defined however it came: an alarm row (SNMP SET) or an alarm made on
// the control socket is refused a number a hotset row or a configured
// alarm sends; a hotset row is refused an alarm's number; a reload is
// refused a configured number a row sends; and a start leaves out a
// restored row whose number the configuration now takes.
func TestRunTimeAlarmTrapNumbers(t *testing.T) {
	c := fixtureConfig(t)
	c.Alarms = []config.AlarmConf{{Name: "cfgalarm", Expr: "Mem/Real/free > 0", TrapNo: 50}}
	loaded := *c
	d, err := New(c, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	w := d.WritableTables()
	if serr := set(t, w, hotsetSet(c.Base, "hot41")); serr != nil { // trap number 41
		t.Fatal(serr)
	}
	alarmRows := func() []string {
		var out []string
		for _, r := range (exprRows{d: d, alarm: true}).Rows() {
			out = append(out, r.Name)
		}
		return out
	}
	for _, tc := range []struct {
		n    int
		user string
	}{{41, `hotset "hot41" (hotsetDefTable)`}, {50, `alarm "cfgalarm" (alarms[0])`}} {
		serr := set(t, w, alarmSet(c.Base, "snmpalarm", tc.n, settable.NonVolatile))
		if serr == nil || serr.Code != agentx.InconsistentValue {
			t.Errorf("alarm row with trap number %d: %v, want inconsistentValue", tc.n, serr)
		} else {
			wantBoth(t, "alarm row", serr, `"snmpalarm"`, tc.user)
		}
		err := exprStore{d}.Create(spmiwire.ExprDef{Kind: "alarm", Name: "ctlalarm", Expr: "1", TrapNo: tc.n})
		wantBoth(t, "control alarm", err, `alarm "ctlalarm"`, tc.user)
	}
	if rows := alarmRows(); !slices.Equal(rows, []string{"cfgalarm"}) {
		t.Errorf("refused alarms changed alarmDefTable: %v", rows)
	}
	err = exprStore{d}.Create(spmiwire.ExprDef{Kind: "alarm", Name: "ctlalarm", Expr: "1", TrapNo: int(schema.AlarmRaisedNo)})
	wantBoth(t, "control alarm 32770", err, "alarmRaised")
	if err := (exprStore{d}).Create(spmiwire.ExprDef{Kind: "alarm", Name: "ctlalarm", Expr: "1", TrapNo: 42}); err != nil {
		t.Fatal(err)
	}
	if serr := set(t, w, alarmSet(c.Base, "snmpalarm", 43, settable.Volatile)); serr != nil {
		t.Fatalf("alarm row with a free number: %v", serr)
	}
	vbs := volatileHotset(c.Base, "hot42")
	vbs[7].Value = asn1tree.Int(42) // hotsetDefTrapNo
	serr := set(t, w, vbs)
	if serr == nil || serr.Code != agentx.InconsistentValue {
		t.Errorf("hotset row with the control alarm's number: %v, want inconsistentValue", serr)
	} else {
		wantBoth(t, "hotset row", serr, `hotset "hot42"`, `alarm "ctlalarm" (alarmDefTable)`)
	}
	if rows := activeRows(d); !slices.Equal(rows, []string{"hot41"}) {
		t.Errorf("a refused hotset row changed hotsetDefTable: %v", rows)
	}

	n := loaded
	n.Alarms = append(slices.Clone(loaded.Alarms), config.AlarmConf{Name: "newalarm", Expr: "1", TrapNo: 41})
	wantBoth(t, "reload: an alarm on a hotset row's number", d.Reload(&n), `alarm "newalarm" (alarms[1])`, `hotset "hot41" (hotsetDefTable)`)
	n = loaded
	n.Hotsets = []config.HotsetConf{{Name: "newhot", Stat: "Disk/*/busy", MaxResp: 3, Threshold: 80, Frequency: 5 * time.Minute,
		FeedType: "threshold", ExcpType: "trap", TrapNo: 43}}
	wantBoth(t, "reload: a hotset on an alarm row's number", d.Reload(&n), `hotset "newhot" (hotsets[0])`, `alarm "snmpalarm" (alarmDefTable)`)
	if users := d.trapsNow(nil, nil, nil); len(users) != 4 {
		t.Errorf("refused reloads changed the users: %v, want hot41, cfgalarm, ctlalarm and snmpalarm", users)
	}

	// A restart whose configuration takes 41 and 42: the rows holding
	// them (nonVolatile, restored) are left out, the others stay.
	n = loaded
	n.Alarms = append(slices.Clone(loaded.Alarms), config.AlarmConf{Name: "newalarm", Expr: "1", TrapNo: 41})
	n.Hotsets = []config.HotsetConf{{Name: "newhot", Stat: "Disk/*/busy", MaxResp: 3, Threshold: 80, Frequency: 5 * time.Minute,
		FeedType: "threshold", ExcpType: "trap", TrapNo: 42}}
	d2, err := New(&n, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	var users []string
	for _, u := range d2.trapsNow(nil, nil, nil) {
		users = append(users, u.String())
	}
	want := []string{`hotset "newhot" (hotsets[0])`, `alarm "cfgalarm" (alarms[0])`, `alarm "newalarm" (alarms[1])`}
	if !slices.Equal(users, want) {
		t.Errorf("after the restart: %q, want %q", users, want)
	}
}

// An alarm with a trap number raises with alarmTrapN (base.0.N), the
// objects of alarmRaised in order; its clear is alarmCleared.
func TestAlarmNotificationTrapNo(t *testing.T) {
	base := asn1tree.OID{1, 3, 6, 1, 4, 1, 32473, 1}
	x, err := expr.Parse("Mem/Real/free")
	if err != nil {
		t.Fatal(err)
	}
	a := derive.Alarm{Name: "mine", X: x, For: 1, Keep: 1, Severity: 2, TrapNo: 12}
	for _, tc := range []struct {
		cleared bool
		trapNo  int
		want    uint32
	}{{false, 12, 12}, {true, 12, schema.AlarmClearedNo}, {false, 0, schema.AlarmRaisedNo}} {
		a.TrapNo = tc.trapNo
		n, err := AlarmNotification(base, derive.Event{Alarm: a, Instance: "", Value: 5, Cleared: tc.cleared}, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if n.Specific != int(tc.want) || !slices.Equal(n.TrapOID(), base.Append(spmi.ASNNotifications, tc.want)) {
			t.Errorf("trap_no %d cleared %v: specific %d, trap OID %v, want %d", tc.trapNo, tc.cleared, n.Specific, n.TrapOID(), tc.want)
		}
		if len(n.Vars) != len(schema.AlarmRaised.Objects) || n.Vars[0].Value.Str != "mine" {
			t.Errorf("trap_no %d: varbinds %+v, want alarmRaised's objects", tc.trapNo, n.Vars)
		}
	}
}
