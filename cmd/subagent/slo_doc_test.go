package main

import (
	"regexp"
	"strings"
	"testing"
)

// docs/ARM.md's objectives created over SNMP and the control socket, as
// printed, beside snmpd on localhost with the drop-in's SNMPv3 writer:
// sloDefTable read by name and subagent slo list show both with what
// was set, the one over SNMP nonVolatile.
func TestARMDocObjectiveWritesRunAsWritten(t *testing.T) {
	out, stderr := runDocWrites(t, "TestARMDocObjectiveWritesRunAsWritten", beside{})
	if strings.Contains(stderr, "Cannot find module") || strings.Contains(stderr, "Unknown Object Identifier") {
		t.Errorf("the named commands did not find the installed module:\n%s", stderr)
	}
	for _, want := range []string{
		`iso\.3\.6\.1\.4\.1\.32473\.1\.110\.5\.1\.8\.8\.99\.104\.101\.99\.107\.111\.117\.116 = INTEGER: 4`,
		`\s*"?checkout"?\s+"?Shop"?\s+"?Checkout\*"?\s+300( milliseconds)?\s+99900( parts per 100000)?\s+2592000( seconds)?\s+nonVolatile\s+active`,
		`\s*"?login"?\s+"?Shop"?\s+"?Login"?\s+0( milliseconds)?\s+99900( parts per 100000)?\s+86400( seconds)?\s+nonVolatile\s+active`,
		`checkout\s+nonVolatile\s+Shop\s+Checkout\*\s+300ms\s+0\.999\s+720h0m0s`,
		`login\s+nonVolatile\s+Shop\s+Login\s+availability\s+0\.999\s+24h0m0s`,
	} {
		if !regexp.MustCompile(`(?m)^` + want).MatchString(out) {
			t.Errorf("the block's output lacks %s:\n%s\n%s", want, out, stderr)
		}
	}
}
