package services

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

	"couponsvc/models"
)

// sharedAddressSpace is 100.64.0.0/10 (carrier-grade NAT), private in all
// but name.
var sharedAddressSpace = netip.MustParsePrefix("100.64.0.0/10")

// privateAddr reports whether a is an address webhooks must not reach unless
// COUPON_WEBHOOK_ALLOW_PRIVATE is set: loopback, private, link-local,
// unspecified, multicast or shared (docs/events.md, Addresses).
func privateAddr(a netip.Addr) bool {
	a = a.Unmap()
	return !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() || sharedAddressSpace.Contains(a)
}

// errPrivateAddress is the dial-time refusal of a private address.
var errPrivateAddress = errors.New("webhook address is loopback, private or link-local")

// checkWebhookURL validates an endpoint's URL at registration: http or https,
// a host, no user info; and unless allowPrivate, a host that is not, and does
// not resolve to, a private address. The dialer checks again at each
// connection (safeDialControl): a name may resolve elsewhere later.
func checkWebhookURL(ctx context.Context, raw string, allowPrivate bool, resolver *net.Resolver) (string, error) {
	raw = strings.TrimSpace(raw)
	if len(raw) > 2000 {
		return "", models.Invalid("url", "must be at most 2000 characters")
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
			return "", models.Invalid("url", "%s is a loopback, private or link-local address (set COUPON_WEBHOOK_ALLOW_PRIVATE=1 to allow)", host)
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
			return "", models.Invalid("url", "%s resolves to %s, a loopback, private or link-local address (set COUPON_WEBHOOK_ALLOW_PRIVATE=1 to allow)", host, a)
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

// newWebhookClient is the HTTP client of the dispatcher: no proxy from the
// environment (the proxy's address would be the one checked), no redirects
// (a 3xx is a failed delivery, and a redirect could lead to a private
// address), a timeout per delivery, and the dial-time address check unless
// allowPrivate.
func newWebhookClient(timeout time.Duration, allowPrivate bool) *http.Client {
	d := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
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
