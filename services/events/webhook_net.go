package events

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/couponsvc/couponsvc/models"
)

// specialPurpose are the prefixes of the IANA IPv4 and IPv6 Special-Purpose
// Address Registries (iana-ipv4-special-registry, iana-ipv6-special-registry)
// that are not globally reachable, plus the deprecated ones, which webhooks
// must not reach unless COUPON_WEBHOOK_ALLOW_PRIVATE is set (docs/events.md,
// Addresses). netip's classifications (loopback, private, link-local,
// multicast, unspecified) are checked besides. A few registry blocks are
// refused whole although a /32 or /48 inside is globally reachable
// (anycast relays such as 192.0.0.9/32 or 2001:1::1/128): no webhook
// receiver lives there. The prefixes that embed an IPv4 address (IPv4-mapped
// ::ffff:0:0/96, IPv4-compatible ::/96, NAT64 64:ff9b::/96, 6to4 2002::/16)
// are not listed: the embedded address is taken out and checked instead
// (embeddedIPv4).
var specialPurpose = func() []netip.Prefix {
	var out []netip.Prefix
	for _, p := range []string{
		// IPv4
		"0.0.0.0/8",          // "this network" (RFC 791)
		"10.0.0.0/8",         // private-use (RFC 1918)
		"100.64.0.0/10",      // shared address space, carrier-grade NAT (RFC 6598)
		"127.0.0.0/8",        // loopback (RFC 1122)
		"169.254.0.0/16",     // link local (RFC 3927)
		"172.16.0.0/12",      // private-use (RFC 1918)
		"192.0.0.0/24",       // IETF protocol assignments (RFC 6890)
		"192.0.2.0/24",       // documentation, TEST-NET-1 (RFC 5737)
		"192.88.99.0/24",     // 6to4 relay anycast, deprecated (RFC 7526)
		"192.168.0.0/16",     // private-use (RFC 1918)
		"198.18.0.0/15",      // benchmarking (RFC 2544)
		"198.51.100.0/24",    // documentation, TEST-NET-2 (RFC 5737)
		"203.0.113.0/24",     // documentation, TEST-NET-3 (RFC 5737)
		"224.0.0.0/4",        // multicast (RFC 5771)
		"240.0.0.0/4",        // reserved (RFC 1112)
		"255.255.255.255/32", // limited broadcast (RFC 919)
		// IPv6
		"::/128",         // unspecified (RFC 4291)
		"::1/128",        // loopback (RFC 4291)
		"64:ff9b:1::/48", // IPv4-IPv6 translation, local use (RFC 8215)
		"100::/64",       // discard-only (RFC 6666)
		"100:0:0:1::/64", // dummy IPv6 prefix (RFC 9780)
		"2001::/23",      // IETF protocol assignments, Teredo and benchmarking within (RFC 2928, 4380, 5180)
		"2001:db8::/32",  // documentation (RFC 3849)
		"3fff::/20",      // documentation (RFC 9637)
		"5f00::/16",      // segment routing SIDs (RFC 9602)
		"fc00::/7",       // unique local (RFC 4193)
		"fe80::/10",      // link-local unicast (RFC 4291)
		"fec0::/10",      // site-local, deprecated (RFC 3879)
		"ff00::/8",       // multicast (RFC 4291)
	} {
		out = append(out, netip.MustParsePrefix(p))
	}
	return out
}()

// Prefixes of IPv6 addresses that carry an IPv4 address.
var (
	ipv4Compatible = netip.MustParsePrefix("::/96")        // deprecated (RFC 4291): ::a.b.c.d
	nat64          = netip.MustParsePrefix("64:ff9b::/96") // well-known NAT64 prefix (RFC 6052): last 32 bits
	sixToFour      = netip.MustParsePrefix("2002::/16")    // 6to4 (RFC 3056): bits 16 to 47
)

// embeddedIPv4 is the IPv4 address an IPv6 address a carries (IPv4-mapped,
// IPv4-compatible, NAT64 or 6to4), which is where a connection to a ends.
func embeddedIPv4(a netip.Addr) (netip.Addr, bool) {
	if !a.Is6() {
		return netip.Addr{}, false
	}
	b := a.As16()
	switch {
	case a.Is4In6():
		return a.Unmap(), true
	case ipv4Compatible.Contains(a), nat64.Contains(a):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}

// privateAddr reports whether a is an address webhooks must not reach unless
// COUPON_WEBHOOK_ALLOW_PRIVATE is set: not global unicast by netip (loopback,
// link-local, multicast, unspecified, broadcast), private, or in a special-
// purpose prefix; an IPv6 address carrying an IPv4 address is judged by the
// IPv4 address (docs/events.md, Addresses).
func privateAddr(a netip.Addr) bool {
	if !a.IsValid() {
		return true
	}
	a = a.WithZone("")
	if v4, ok := embeddedIPv4(a); ok {
		return privateAddr(v4)
	}
	if !a.IsGlobalUnicast() || a.IsPrivate() || a.IsLoopback() || a.IsMulticast() || a.IsUnspecified() ||
		a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast() {
		return true
	}
	for _, p := range specialPurpose {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// errPrivateAddress is the dial-time refusal of a private address.
var errPrivateAddress = errors.New("webhook address is loopback, private, link-local or special-purpose")

// MaxURLBytes bounds an endpoint's URL.
const MaxURLBytes = 2000

// checkWebhookURL validates an endpoint's URL at registration: http or https,
// a host, no user info; and unless allowPrivate, a host that is not, and does
// not resolve to, a private address. The dialer checks again at each
// connection (safeDialControl): a name may resolve elsewhere later.
func checkWebhookURL(ctx context.Context, raw string, allowPrivate bool, resolver *net.Resolver) (string, error) {
	raw = strings.TrimSpace(raw)
	if len(raw) > MaxURLBytes {
		return "", models.Invalid("url", "must be at most %d characters", MaxURLBytes)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" {
		return "", models.Invalid("url", "must be an absolute http or https URL")
	}
	if u.User != nil {
		return "", models.Invalid("url", "must not carry a user name or password")
	}
	if u.Fragment != "" {
		return "", models.Invalid("url", "must not have a fragment")
	}
	if allowPrivate {
		return u.String(), nil
	}
	host := u.Hostname()
	if a, err := netip.ParseAddr(host); err == nil {
		if privateAddr(a) {
			return "", models.Invalid("url", "%s is a loopback, private, link-local or special-purpose address (set COUPON_WEBHOOK_ALLOW_PRIVATE=1 to allow)", host)
		}
		return u.String(), nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := resolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return "", models.Invalid("url", "the host %s does not resolve", host)
	}
	for _, a := range addrs {
		if privateAddr(a) {
			return "", models.Invalid("url", "%s resolves to %s, a loopback, private, link-local or special-purpose address (set COUPON_WEBHOOK_ALLOW_PRIVATE=1 to allow)", host, a)
		}
	}
	return u.String(), nil
}

// safeDialControl refuses a connection to a private address. It runs after
// the name was resolved, on the very address dialled, so a name that
// resolved to a public address at registration and to a private one now (DNS
// rebinding) is refused all the same.
func safeDialControl(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", errPrivateAddress, address)
	}
	if privateAddr(ap.Addr()) {
		return fmt.Errorf("%w: %s", errPrivateAddress, ap.Addr())
	}
	return nil
}

// NewWebhookClient is the HTTP client of the dispatcher: no proxy from the
// environment (the proxy's address would be the one checked), no redirects
// (a 3xx is a failed delivery, and a redirect could lead to a private
// address), a timeout per delivery, and the dial-time address check unless
// allowPrivate. Names are resolved by resolver, the one registration uses.
func NewWebhookClient(timeout time.Duration, allowPrivate bool, resolver *net.Resolver) *http.Client {
	d := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second, Resolver: resolver}
	if !allowPrivate {
		d.Control = safeDialControl
	}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
	}
	return &http.Client{
		Transport:     tr,
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
