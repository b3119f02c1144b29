package agentx

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// DefaultAddress is where net-snmp's master listens unless told otherwise.
const DefaultAddress = "unix:/var/agentx/master"

// defaultTCPPort is the IANA port for AgentX.
const defaultTCPPort = "705"

// ParseAddress splits an AgentX address into a Go network and address for
// net.Dial. Accepted forms, as in net-snmp's agentXSocket:
//
//	unix:/var/agentx/master    a Unix stream socket
//	/var/agentx/master         the same (a bare absolute path)
//	tcp:localhost:705          TCP; the port defaults to 705
//	tcp:[::1]:705              IPv6 literals in brackets
func ParseAddress(s string) (network, address string, err error) {
	in := s
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "/") {
		return "unix", s, nil
	}
	scheme, rest, ok := strings.Cut(s, ":")
	if !ok {
		return "", "", fmt.Errorf("agentx: address %q has no transport: want unix:/path or tcp:host:port", in)
	}
	switch strings.ToLower(scheme) {
	case "unix":
		if rest == "" {
			return "", "", fmt.Errorf("agentx: address %q has an empty socket path (want unix:/path)", in)
		}
		return "unix", rest, nil
	case "tcp", "tcp4", "tcp6":
		host, port, err := net.SplitHostPort(rest)
		if err != nil {
			// No port given: the whole rest is the host (IPv6 in brackets).
			host, port = strings.TrimSuffix(strings.TrimPrefix(rest, "["), "]"), defaultTCPPort
			if strings.Contains(host, ":") && !strings.HasPrefix(rest, "[") {
				return "", "", fmt.Errorf("agentx: address %q: put an IPv6 host in brackets, as in tcp:[::1]:705", in)
			}
		}
		if host == "" {
			return "", "", fmt.Errorf("agentx: address %q: empty host: want tcp:host:port", in)
		}
		n, perr := strconv.ParseUint(port, 10, 16)
		if perr != nil || n == 0 {
			return "", "", fmt.Errorf("agentx: address %q: port %q is not a number from 1 to 65535", in, port)
		}
		return strings.ToLower(scheme), net.JoinHostPort(host, port), nil
	}
	return "", "", fmt.Errorf("agentx: address %q: unknown transport %q: want unix:/path or tcp:host:port", in, scheme)
}
