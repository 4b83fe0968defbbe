// Package webhook verifies the deliveries couponsvc sends to a webhook
// endpoint. Each delivery carries
//
//	Couponsvc-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>
//
// Verify checks it against one or more secrets (several while a secret is
// rotated: the old one and the new one) and refuses a delivery whose time is
// further than a tolerance from now, so that a captured delivery cannot be
// replayed later. Verify, Read and Sign need only this file; ReadEvent
// (event.go) also decodes a verified body into the client's typed events.
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Header is the name of the header that carries a delivery's signature.
const Header = "Couponsvc-Signature"

// DefaultTolerance is how far a delivery's time may be from now when no
// tolerance is given: long enough for clock skew and a slow network, short
// enough that a captured delivery is soon useless.
const DefaultTolerance = 5 * time.Minute

// Why a delivery is refused.
var (
	ErrNoSignature = errors.New("webhook: no Couponsvc-Signature header")
	ErrMalformed   = errors.New("webhook: the signature header is not t=<unix>,v1=<hex>")
	ErrTooOld      = errors.New("webhook: the delivery's time is outside the tolerance")
	ErrNoMatch     = errors.New("webhook: no secret signs this body")
	ErrNoSecret    = errors.New("webhook: no secret given")
)

// Verify checks a signature header against the raw body and the secrets,
// and that its time is within tolerance of now (DefaultTolerance when
// tolerance is 0). It returns nil when one of the secrets signed the body,
// else one of the errors above. Empty secrets are skipped (an unset
// "previous secret" must not let a body signed with an empty key in).
func Verify(header string, body []byte, tolerance time.Duration, secrets ...string) error {
	return verifyAt(header, body, time.Now(), tolerance, secrets)
}

func verifyAt(header string, body []byte, now time.Time, tolerance time.Duration, secrets []string) error {
	if !slices.ContainsFunc(secrets, func(s string) bool { return s != "" }) {
		return ErrNoSecret
	}
	if strings.TrimSpace(header) == "" {
		return ErrNoSignature
	}
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	var ts string
	var sigs [][]byte
	for _, part := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return ErrMalformed
		}
		switch k {
		case "t":
			ts = v
		case "v1":
			sig, err := hex.DecodeString(v)
			if err != nil || len(sig) != sha256.Size {
				return ErrMalformed
			}
			sigs = append(sigs, sig)
		}
		// Other schemes (a later v2) are skipped: a receiver keeps working
		// while couponsvc sends both during a change.
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return ErrMalformed
	}
	if d := now.Sub(time.Unix(unix, 0)); d > tolerance || d < -tolerance {
		return ErrTooOld
	}
	for _, secret := range secrets {
		if secret == "" {
			continue
		}
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(ts))
		mac.Write([]byte{'.'})
		mac.Write(body)
		want := mac.Sum(nil)
		for _, sig := range sigs {
			if hmac.Equal(sig, want) {
				return nil
			}
		}
	}
	return ErrNoMatch
}

// MaxBodyBytes bounds the body Read reads: couponsvc's events are far
// smaller.
const MaxBodyBytes = 1 << 20

// Read reads a delivery's body from r and verifies it (see Verify). The
// body is returned only when it verified; decode it then.
func Read(r *http.Request, tolerance time.Duration, secrets ...string) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	if err != nil {
		return nil, err
	}
	if len(body) > MaxBodyBytes {
		return nil, errors.New("webhook: the body is larger than MaxBodyBytes")
	}
	if err := Verify(r.Header.Get(Header), body, tolerance, secrets...); err != nil {
		return nil, err
	}
	return body, nil
}

// Sign returns the Couponsvc-Signature header of body sent at t under
// secret, as couponsvc signs a delivery: for a receiver's tests, which can
// then sign their own deliveries without the service.
func Sign(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac.Sum(nil))
}
