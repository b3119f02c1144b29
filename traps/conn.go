package traps

import (
	"encoding/hex"
	"fmt"
	"net"
	"strings"

	"github.com/gosnmp/gosnmp"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/usm"
)

// conn is one destination's gosnmp session over a connected UDP socket.
type conn struct {
	d Dest
	g *gosnmp.GoSNMP
}

func dial(d Dest) (*conn, error) {
	host, port, _ := net.SplitHostPort(d.Address)
	p, _ := parsePort(port)
	g := &gosnmp.GoSNMP{
		Target: host, Port: p, Transport: "udp", Community: d.Community,
		Timeout: d.Timeout, Retries: d.Retries, MaxOids: gosnmp.MaxOids,
	}
	switch d.Version {
	case "v1":
		g.Version = gosnmp.Version1
	case "v2c":
		g.Version = gosnmp.Version2c
	default:
		g.Version = gosnmp.Version3
		g.SecurityModel = gosnmp.UserSecurityModel
		usm := &gosnmp.UsmSecurityParameters{UserName: d.User}
		g.MsgFlags = gosnmp.NoAuthNoPriv
		if d.AuthPass != "" {
			g.MsgFlags = gosnmp.AuthNoPriv
			usm.AuthenticationProtocol = authProto(d.AuthProto)
			usm.AuthenticationPassphrase = d.AuthPass
		}
		if d.PrivPass != "" {
			g.MsgFlags = gosnmp.AuthPriv
			usm.PrivacyProtocol = privProto(d.PrivProto)
			usm.PrivacyPassphrase = d.PrivPass
		}
		if !d.Inform {
			// A trap's sender is the authoritative engine; an inform
			// discovers the receiver's engine instead.
			id, _ := hex.DecodeString(strings.TrimPrefix(d.EngineID, "0x"))
			usm.AuthoritativeEngineID = string(id)
			usm.AuthoritativeEngineBoots = 1
		}
		g.SecurityParameters = usm
	}
	if err := g.Connect(); err != nil {
		return nil, err
	}
	return &conn{d: d, g: g}, nil
}

func (c *conn) close() {
	if c.g.Conn != nil {
		c.g.Conn.Close()
	}
}

func (c *conn) send(n Notification) error {
	vars := make([]gosnmp.SnmpPDU, 0, len(n.Vars)+2)
	ticks := uint32(n.Uptime.Milliseconds() / 10)
	t := gosnmp.SnmpTrap{IsInform: c.d.Inform}
	if c.g.Version == gosnmp.Version1 {
		t.Enterprise = "." + n.Enterprise.String()
		t.AgentAddress = "0.0.0.0"
		if a, ok := c.g.Conn.LocalAddr().(*net.UDPAddr); ok && a.IP.To4() != nil {
			t.AgentAddress = a.IP.String()
		}
		t.GenericTrap, t.SpecificTrap, t.Timestamp = 6, n.Specific, uint(ticks)
	} else {
		if usm, ok := c.g.SecurityParameters.(*gosnmp.UsmSecurityParameters); ok && !c.d.Inform {
			usm.AuthoritativeEngineTime = ticks / 100
		}
		vars = append(vars,
			gosnmp.SnmpPDU{Name: ".1.3.6.1.2.1.1.3.0", Type: gosnmp.TimeTicks, Value: ticks},
			gosnmp.SnmpPDU{Name: ".1.3.6.1.6.3.1.1.4.1.0", Type: gosnmp.ObjectIdentifier, Value: "." + n.TrapOID().String()})
	}
	for _, vb := range n.Vars {
		p, err := pdu(vb)
		if err != nil {
			return err
		}
		vars = append(vars, p)
	}
	t.Variables = vars
	_, err := c.g.SendTrap(t)
	return err
}

func pdu(vb VarBind) (gosnmp.SnmpPDU, error) {
	p := gosnmp.SnmpPDU{Name: "." + vb.OID.String()}
	v := vb.Value
	switch v.Kind {
	case asn1tree.Integer32:
		p.Type, p.Value = gosnmp.Integer, int(int32(v.Num))
	case asn1tree.Gauge32:
		p.Type, p.Value = gosnmp.Gauge32, uint32(v.Num)
	case asn1tree.Counter32:
		p.Type, p.Value = gosnmp.Counter32, uint32(v.Num)
	case asn1tree.Counter64:
		p.Type, p.Value = gosnmp.Counter64, v.Num
	case asn1tree.TimeTicks:
		p.Type, p.Value = gosnmp.TimeTicks, uint32(v.Num)
	case asn1tree.OctetString:
		p.Type, p.Value = gosnmp.OctetString, []byte(v.Str)
	case asn1tree.ObjectIdentifier:
		p.Type, p.Value = gosnmp.ObjectIdentifier, "."+v.OID.String()
	default:
		return p, fmt.Errorf("traps: %s has no value to send (%s)", vb.OID, v.Kind)
	}
	return p, nil
}

func parsePort(s string) (uint16, error) {
	var p uint16
	_, err := fmt.Sscanf(s, "%d", &p)
	return p, err
}

func authProto(s string) gosnmp.SnmpV3AuthProtocol {
	a, _ := usm.FindAuth(s) // checked by Dest.Check
	return a.Proto
}

func privProto(s string) gosnmp.SnmpV3PrivProtocol {
	p, _ := usm.FindPriv(s)
	return p.Proto
}
