package agentx

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
)

func TestNotify(t *testing.T) {
	m := newFakeMaster(t)
	cfg := testConfig(m.addr)
	r := start(t, cfg)
	c := m.accept()
	c.handshake(cfg)
	waitFor(t, "Connected", r.sa.Connected)

	trap := asn1tree.MustParse("1.3.6.1.4.1.32473.2.0.1")
	vbs := []VarBind{
		{OID: SysUpTime0, Value: asn1tree.Value{Kind: asn1tree.TimeTicks, Num: 77}},
		{OID: SnmpTrapOID0, Value: asn1tree.Value{Kind: asn1tree.ObjectIdentifier, OID: trap}},
		{OID: b("4.0"), Value: asn1tree.Str("why")},
	}
	for _, code := range []ErrorCode{NoError, ProcessingError} {
		errc := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), ioTimeout)
			defer cancel()
			errc <- r.sa.Notify(ctx, vbs)
		}()
		n := c.expect(typeNotify)
		want := "1.3.6.1.2.1.1.3.0=TimeTicks:77 1.3.6.1.6.3.1.1.4.1.0=OID:1.3.6.1.4.1.32473.2.0.1 4.0=OctetString:why"
		if got := vbStrings(n.varbinds); got != want || n.sessionID != 42 {
			t.Errorf("Notify carried %s in session %d, want %s", got, n.sessionID, want)
		}
		c.respond(n, code)
		err := <-errc
		if code == NoError && err != nil {
			t.Errorf("Notify: %v", err)
		}
		if code != NoError && !errors.Is(err, code) {
			t.Errorf("Notify answered %s returned %v", code, err)
		}
	}
}

func TestNotifyChecksVarBinds(t *testing.T) {
	trap := asn1tree.Value{Kind: asn1tree.ObjectIdentifier, OID: asn1tree.MustParse("1.3.6.1.4.1.32473.2.0.1")}
	up := asn1tree.Value{Kind: asn1tree.TimeTicks, Num: 1}
	ok := [][]VarBind{
		{{OID: SnmpTrapOID0, Value: trap}},
		{{OID: SysUpTime0, Value: up}, {OID: SnmpTrapOID0, Value: trap}, {OID: b("1.0"), Value: asn1tree.Counter(1)}},
	}
	for _, vbs := range ok {
		if _, err := notifyVarBinds(vbs); err != nil {
			t.Errorf("%v refused: %v", vbs, err)
		}
	}
	bad := map[string][]VarBind{
		"empty":                   nil,
		"no snmpTrapOID":          {{OID: b("1.0"), Value: asn1tree.Int(1)}},
		"snmpTrapOID third":       {{OID: SysUpTime0, Value: up}, {OID: b("1.0"), Value: asn1tree.Int(1)}, {OID: SnmpTrapOID0, Value: trap}},
		"sysUpTime after trap":    {{OID: SnmpTrapOID0, Value: trap}, {OID: SysUpTime0, Value: up}},
		"snmpTrapOID not an OID":  {{OID: SnmpTrapOID0, Value: asn1tree.Int(1)}},
		"sysUpTime not TimeTicks": {{OID: SysUpTime0, Value: asn1tree.Int(1)}, {OID: SnmpTrapOID0, Value: trap}},
		"NoValue":                 {{OID: SnmpTrapOID0, Value: trap}, {OID: b("1.0")}},
		"empty OID":               {{OID: SnmpTrapOID0, Value: trap}, {Value: asn1tree.Int(1)}},
	}
	for name, vbs := range bad {
		if _, err := notifyVarBinds(vbs); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestNotifyWithoutMaster(t *testing.T) {
	cfg := testConfig("unix:" + socketDir(t) + "/nobody")
	r := start(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err := r.sa.Notify(ctx, []VarBind{{OID: SnmpTrapOID0, Value: asn1tree.Value{Kind: asn1tree.ObjectIdentifier, OID: b("0")}}})
	if !errors.Is(err, ErrNotConnected) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Notify without a master returned %v", err)
	}
}
