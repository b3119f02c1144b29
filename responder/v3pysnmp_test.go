package responder

import (
	"context"
	"os/exec"
	"strings"
	"testing"
)

// pysnmpGet is a pysnmp 4.4 GET at authPriv; it prints "oid = value" or
// the error indication.
const pysnmpGet = `
import sys
from pysnmp.hlapi import *
auth = {'SHA256': usmHMAC192SHA256AuthProtocol, 'SHA': usmHMACSHAAuthProtocol}[sys.argv[4]]
priv = {'AES': usmAesCfb128Protocol, 'AES256': usmAesBlumenthalCfb256Protocol, 'AES256C': usmAesCfb256Protocol}[sys.argv[5]]
host, port = sys.argv[1].rsplit(':', 1)
err, status, index, vbs = next(getCmd(SnmpEngine(),
    UsmUserData(sys.argv[3], sys.argv[6], sys.argv[7], authProtocol=auth, privProtocol=priv),
    UdpTransportTarget((host, int(port)), timeout=5, retries=0), ContextData(),
    ObjectType(ObjectIdentity(sys.argv[2]))))
if err or status:
    print('error', err or status.prettyPrint()); sys.exit(1)
for oid, val in vbs:
    print(str(oid.getOid()), '=', val.prettyPrint())
`

// pysnmp (Debian's python3-pysnmp4, installed by scripts/install-test-deps.sh)
// as a third manager: a GET at SHA-256/AES-128, SHA-1/AES-256 Blumenthal
// and SHA-1/AES-256 Reeder (pysnmp's names run opposite to net-snmp's).
// Without pysnmp the test fails saying what to install (skipped under -short).
func TestPysnmpV3Get(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test with pysnmp: skipped under -short")
	}
	if err := exec.Command(debianPython, "-c", "import pysnmp.hlapi").Run(); err != nil {
		t.Fatalf("pysnmp not importable (%v): install the Debian package python3-pysnmp4 (make test-deps)", err)
	}
	cases := [][2]string{{"SHA256", "AES"}, {"SHA", "AES256"}, {"SHA", "AES256C"}}
	var users []User
	for _, c := range cases {
		users = append(users, testUser(t, testCreds(strings.ToLower(c[0]+c[1]), c[0], c[1])))
	}
	r, _ := v3Responder(t, users...)
	_, addr := runResponder(t, r)
	want := fixtureEntries()[3]
	for _, c := range cases {
		ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
		out, err := exec.CommandContext(ctx, debianPython, "-c", pysnmpGet, addr, want.OID.String(),
			strings.ToLower(c[0]+c[1]), c[0], c[1], testAuthPass, testPrivPass).CombinedOutput()
		cancel()
		if got := strings.TrimSpace(string(out)); err != nil || got != want.OID.String()+" = "+want.Val.Str {
			t.Errorf("pysnmp %s/%s: exit %v, %q; counters %+v", c[0], c[1], err, got, r.stats.Snapshot())
		}
	}
}

// debianPython is Debian's interpreter, where python3-pysnmp4 installs
// (a python3 first in PATH, such as pyenv's, does not see it).
const debianPython = "/usr/bin/python3"
