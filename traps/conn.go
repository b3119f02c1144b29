package traps

import (
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/usm"
)

// conn is one destination's gosnmp session over its own connected UDP
// socket (sock: ICMP errors told to the notification they belong to).
type conn struct {
	d   Dest
	g   *gosnmp.GoSNMP
	s   *sock
	eng usm.Engine // v3 traps are sent from it
}

func dial(d Dest, eng usm.Engine) (*conn, error) {
	host, port, _ := net.SplitHostPort(d.Address)
	p, _ := parsePort(port)
	g := &gosnmp.GoSNMP{
		Target: host, Port: p, Transport: "udp", Community: d.Community,
		Timeout: d.Timeout, Retries: d.Retries, MaxOids: gosnmp.MaxOids, Control: recvErrControl,
	}
	c := &conn{d: d, g: g, eng: eng}
	switch d.Version {
	case "v1":
		g.Version = gosnmp.Version1
	case "v2c":
		g.Version = gosnmp.Version2c
	default:
		if len(eng.ID) == 0 {
			return nil, errors.New("SNMPv3 needs the agent's engine, which is off (see the log)")
		}
		g.Version = gosnmp.Version3
		g.SecurityModel = gosnmp.UserSecurityModel
		// RFC 3413 3.2: a notification's contextEngineID is the
		// originator's snmpEngineID, informs included.
		g.ContextEngineID = string(eng.ID)
		u := &gosnmp.UsmSecurityParameters{UserName: d.User}
		g.MsgFlags = gosnmp.NoAuthNoPriv
		if d.AuthPass != "" {
			g.MsgFlags = gosnmp.AuthNoPriv
			u.AuthenticationProtocol = authProto(d.AuthProto)
			u.AuthenticationPassphrase = d.AuthPass
		}
		if d.PrivPass != "" {
			g.MsgFlags = gosnmp.AuthPriv
			u.PrivacyProtocol = privProto(d.PrivProto)
			u.PrivacyPassphrase = d.PrivPass
		}
		if !d.Inform {
			// A trap's authoritative engine is the agent's; an inform
			// discovers the receiver's on its first send.
			u.AuthoritativeEngineID = string(eng.ID)
			u.AuthoritativeEngineBoots = eng.Boots
		}
		g.SecurityParameters = u
	}
	if err := g.Connect(); err != nil {
		return nil, err
	}
	s, err := newSock(g.Conn)
	if err != nil {
		g.Conn.Close()
		return nil, err
	}
	g.Conn, c.s = s, s
	return c, nil
}

// rediscover forgets the receiver's engine an inform discovered (its ID,
// boots, time and the keys localized to it): the next send discovers it
// anew, as after the receiver restarted.
func (c *conn) rediscover() {
	u := c.g.SecurityParameters.(*gosnmp.UsmSecurityParameters)
	u.AuthoritativeEngineID, u.AuthoritativeEngineBoots, u.AuthoritativeEngineTime = "", 0, 0
	u.SecretKey, u.PrivacyKey = nil, nil
}

func (c *conn) close() {
	if c.g.Conn != nil {
		c.g.Conn.Close()
	}
}

func (c *conn) takeLost(drain bool) []lost { return c.s.takeLost(drain) }

func (c *conn) waiting() bool { return c.s.waiting() }

func (c *conn) send(n Notification) error {
	vars := make([]gosnmp.SnmpPDU, 0, len(n.Vars)+2)
	ticks := uint32(n.Uptime.Milliseconds() / 10)
	t := gosnmp.SnmpTrap{IsInform: c.d.Inform}
	if c.g.Version == gosnmp.Version1 {
		t.Enterprise = "." + n.Enterprise.String()
		t.AgentAddress = "0.0.0.0"
		if a, ok := c.s.LocalAddr().(*net.UDPAddr); ok && a.IP.To4() != nil {
			t.AgentAddress = a.IP.String()
		}
		t.GenericTrap, t.SpecificTrap, t.Timestamp = 6, n.Specific, uint(ticks)
	} else {
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
	c.s.begin(&n, !c.d.Inform)
	if c.g.Version != gosnmp.Version3 {
		_, err := c.g.SendTrap(t)
		return err
	}
	if !c.d.Inform {
		// The agent's engine time now: the receiver keeps the latest
		// boots and time it saw of this engine (RFC 3414 3.2 7b).
		c.g.SecurityParameters.(*gosnmp.UsmSecurityParameters).AuthoritativeEngineTime = c.eng.Time(time.Now())
		_, err := c.g.SendTrap(t)
		return err
	}
	var err error
	for try := 0; ; try++ {
		if _, err = c.g.SendTrap(t); err == nil || try >= c.d.Retries || timedOut(err) {
			return err
		}
		// Not authentic, not in time, unknown engine, ...: the receiver
		// restarted (new boots and time, maybe a new engine ID). Forget
		// what was discovered and send again, discovering anew.
		c.rediscover()
	}
}

// timedOut tells whether an inform failed for want of any answer, after
// gosnmp's own retries: sending again would not help.
func timedOut(err error) bool {
	var ne net.Error
	return errors.Is(err, gosnmp.ErrMaxRetriesExceeded) || errors.As(err, &ne) && ne.Timeout()
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
