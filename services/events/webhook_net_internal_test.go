package events

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/models"
)

// lastAddr is the last address of p.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// refusedEverywhere checks a at registration (an IP literal) and at the
// connection (the dial-time control), and that both agree with want.
func refusedEverywhere(t *testing.T, a netip.Addr, refused bool) {
	t.Helper()
	u := "http://" + netip.AddrPortFrom(a, 443).String() + "/hook"
	_, err := checkWebhookURL(context.Background(), u, false, nil)
	dialErr := safeDialControl("tcp", netip.AddrPortFrom(a, 443).String(), nil)
	switch {
	case refused && (!models.IsCode(err, models.CodeInvalidRequest) || !strings.Contains(err.Error(), "url")):
		t.Errorf("register %s: %v, want 400 naming url", u, err)
	case refused && !errors.Is(dialErr, errPrivateAddress):
		t.Errorf("connect to %s: %v, want the refusal", a, dialErr)
	case !refused && (err != nil || dialErr != nil):
		t.Errorf("%s refused (register: %v, connect: %v), want it allowed", a, err, dialErr)
	}
}

// TestWebhookSpecialPurposeAddresses: the first and last address of every
// prefix of the special-purpose table are refused at registration and at
// connection, as are the addresses netip classifies as not global and
// IPv6 addresses carrying a refused IPv4 address (mapped, compatible,
// NAT64, 6to4); public neighbours just outside the prefixes, and IPv6
// addresses carrying a public IPv4 address, are allowed.
func TestWebhookSpecialPurposeAddresses(t *testing.T) {
	for _, p := range specialPurpose {
		refusedEverywhere(t, p.Masked().Addr(), true)
		refusedEverywhere(t, lastAddr(p), true)
	}
	for _, s := range []string{
		// From outside testing: NAT64, 6to4, IPv4-compatible, benchmarking,
		// reserved, protocol assignments, broadcast.
		"64:ff9b::7f00:1", "64:ff9b::a00:1", "64:ff9b::a9fe:a9fe", "64:ff9b::c0a8:101",
		"2002:7f00:1::1", "2002:a00:1::", "2002:c0a8:101::1", "2002:a9fe:a9fe::",
		"::127.0.0.1", "::10.0.0.1", "::169.254.169.254", "::", "::1",
		"198.18.0.1", "198.19.255.255", "240.0.0.1", "250.1.2.3", "192.0.0.1", "192.0.0.170", "255.255.255.255",
		// netip's own classes, and mapped forms.
		"127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0",
		"224.0.0.1", "239.255.255.250", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:198.18.0.1",
		"fe80::1", "fe80::1%eth0", "fc00::1", "fd12:3456::1", "ff02::1", "fec0::1",
		// IPv6 special-purpose.
		"64:ff9b:1::1", "100::1", "2001::1", "2001:2::1", "2001:db8::1", "3fff::1", "5f00::1",
	} {
		refusedEverywhere(t, netip.MustParseAddr(s), true)
	}
	for _, s := range []string{
		"8.8.8.8", "1.1.1.1", "93.184.215.14",
		"198.17.255.255", "198.20.0.0", // around 198.18.0.0/15
		"239.255.255.255" /* multicast */, "223.255.255.255", // below 224.0.0.0/4 and 240.0.0.0/4
		"192.0.1.0", "192.0.3.0", "191.255.255.255", // around 192.0.0.0/24 and 192.0.2.0/24
		"100.63.255.255", "100.128.0.0", // around 100.64.0.0/10
		"198.51.99.255", "198.51.101.0", "203.0.112.255", "203.0.114.0",
		"11.0.0.0", "9.255.255.255", "172.15.255.255", "172.32.0.0", "192.167.255.255", "192.169.0.0",
		"126.255.255.255", "128.0.0.0", "169.253.255.255", "169.255.0.0", "1.0.0.0",
		"192.88.98.255", "192.88.100.0", "192.31.196.1", "192.175.48.1",
		"64:ff9b::808:808", "2002:808:808::1", "::ffff:8.8.8.8", "::8.8.8.8",
		"2001:200::1", "2001:dc0::1", "2001:db9::1", "2620:4f:8000::1", "2606:4700:4700::1111", "2a00:1450::1",
		"3fff:1000::1", "5f01::1", "fbff::1", "fe7f::1",
	} {
		want := s == "239.255.255.255"
		refusedEverywhere(t, netip.MustParseAddr(s), want)
	}
	// Not an address at all, at connection.
	if err := safeDialControl("tcp", "nonsense", nil); !errors.Is(err, errPrivateAddress) {
		t.Errorf("connect to nonsense: %v, want the refusal", err)
	}
}
