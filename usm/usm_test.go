package usm

import (
	"encoding/hex"
	"strings"
	"testing"
)

// The vectors: RFC 3414 A.3 (MD5, SHA-1), keys checked against net-snmp's
// for SHA-224/256 (shared/notes), and the AES-256 extensions of
// draft-blumenthal-aes-usm-04 A.1 and draft-reeder-snmpv3-usm-3desede B.
func TestLocalizeVectors(t *testing.T) {
	engine, _ := hex.DecodeString("000000000000000000000002")
	const pass = "maplesyrup"
	cases := []struct{ auth, priv, wantAuth, wantPriv string }{
		{"MD5", "", "526f5eed9fcce26f8964c2930787d82b", ""},
		{"SHA", "", "6695febc9288e36282235fc7151f128497b38f3f", ""},
		{"SHA224", "", "0bd8827c6e29f8065e08e09237f177e410f69b90e1782be682075674", ""},
		{"SHA256", "", "8982e0e549e866db361a6b625d84cccc11162d453ee8ce3a6445c2d6776f0f8b", ""},
		{"SHA", "AES", "", "6695febc9288e36282235fc7151f1284"},
		{"MD5", "AES", "", "526f5eed9fcce26f8964c2930787d82b"},
		{"SHA", "AES256", "", "6695febc9288e36282235fc7151f128497b38f3f" + "505e07eb9af25568fa1f5dbe"},
		{"SHA", "AES256C", "", "6695febc9288e36282235fc7151f128497b38f3f" + "9b8b6d78936ba6e7d19dfd9c"},
		{"MD5", "AES256", "", "526f5eed9fcce26f8964c2930787d82b" + "fa24a92467426c2f4b09192be10dfaec"},
		{"MD5", "AES256C", "", "526f5eed9fcce26f8964c2930787d82b" + "79eff44a90650ee0a3a40abfac5acc12"},
		{"SHA", "AES192", "", ("6695febc9288e36282235fc7151f128497b38f3f" + "505e07eb9af25568fa1f5dbe")[:48]},
		{"MD5", "AES192C", "", ("526f5eed9fcce26f8964c2930787d82b" + "79eff44a90650ee0a3a40abfac5acc12")[:48]},
		// SHA-256's Kul is long enough for AES-256: both extensions agree.
		{"SHA256", "AES256", "", "8982e0e549e866db361a6b625d84cccc11162d453ee8ce3a6445c2d6776f0f8b"},
		{"SHA256", "AES256C", "", "8982e0e549e866db361a6b625d84cccc11162d453ee8ce3a6445c2d6776f0f8b"},
	}
	for _, c := range cases {
		cred := Credentials{User: "u", AuthProto: c.auth, AuthPass: pass}
		if c.priv != "" {
			cred.PrivProto, cred.PrivPass = c.priv, pass
		}
		cred, err := cred.Norm()
		if err != nil {
			t.Fatal(err)
		}
		k, err := Localize(cred, engine)
		if err != nil {
			t.Fatalf("%s/%s: %v", c.auth, c.priv, err)
		}
		if c.wantAuth != "" && hex.EncodeToString(k.AuthKey) != c.wantAuth {
			t.Errorf("%s auth key %x, want %s", c.auth, k.AuthKey, c.wantAuth)
		}
		if c.wantPriv != "" && hex.EncodeToString(k.PrivKey) != c.wantPriv {
			t.Errorf("%s/%s priv key %x, want %s", c.auth, c.priv, k.PrivKey, c.wantPriv)
		}
	}
}

func TestNormRefusesNamingTheKey(t *testing.T) {
	cases := []struct {
		c   Credentials
		key string
	}{
		{Credentials{}, "user:"},
		{Credentials{User: strings.Repeat("u", 33), AuthPass: "password1"}, "user:"},
		{Credentials{User: "u", AuthPass: "short"}, "auth_password:"},
		{Credentials{User: "u", AuthPass: "password1", PrivPass: "short"}, "priv_password:"},
		{Credentials{User: "u", PrivPass: "password1"}, "priv_password:"},
		{Credentials{User: "u", AuthProto: "SHA"}, "auth_password:"},
		{Credentials{User: "u", AuthPass: "password1", AuthProto: "SHA3"}, "auth_protocol:"},
		{Credentials{User: "u", AuthPass: "password1", PrivPass: "password1", PrivProto: "3DES"}, "priv_protocol:"},
	}
	for _, c := range cases {
		_, err := c.c.Norm()
		if err == nil || !strings.HasPrefix(err.Error(), c.key) {
			t.Errorf("%+v: %v, want an error starting %q", c.c, err, c.key)
		}
	}
	got, err := Credentials{User: "u", AuthPass: "password1", PrivPass: "password2", PrivProto: "aes256c"}.Norm()
	if err != nil || got.AuthProto != "SHA" || got.PrivProto != "AES256C" {
		t.Errorf("defaults: %+v, %v", got, err)
	}
}

func TestParseEngineID(t *testing.T) {
	for _, bad := range []string{"", "80", "zz00000000", "0000000000", "ffffffffff", strings.Repeat("ab", 33)} {
		if _, err := ParseEngineID(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if b, err := ParseEngineID("0x80007ed90401"); err != nil || len(b) != 6 {
		t.Errorf("%x, %v", b, err)
	}
}
