package pages_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	adminsvc "github.com/couponsvc/couponsvc/services/admin"
)

// TestWebhookPages: an admin registers an endpoint on the Webhooks page (its
// secret shown once), sees a delivery in its log with the answer code,
// resends it (the receiver gets the same event again), and deletes it.
func TestWebhookPages(t *testing.T) {
	e := testsupport.NewPageEnvWith(t, services.Config{EventsConfig: services.EventsConfig{WebhookAllowPrivate: true}})
	var got atomic.Int64
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer rcv.Close()
	admin := e.Client(t)
	admin.Login("admin")

	bad := admin.Form("/admin/webhooks", "/admin/webhooks", url.Values{"url": {"ftp://example.com/x"}})
	if bad.Status != http.StatusBadRequest || !strings.Contains(bad.Text(), "http or https") {
		t.Fatalf("register an ftp address: %v, want 400 with the error by the field", bad)
	}
	// The form's token makes a second send of it register nothing more;
	// the answer goes to the list (POST-redirect-GET), which shows the
	// secret once: a reload shows it no more.
	form := url.Values{"url": {rcv.URL + "/hook"}, "event_types": {models.EventTemplatePaused}, "description": {"orders"},
		"form_token": {strings.Repeat("ab", 16)}}
	sent := admin.Form("/admin/webhooks", "/admin/webhooks", form)
	if sent.Status != http.StatusSeeOther || !strings.HasPrefix(sent.Location(), "/admin/webhooks?made=") {
		t.Fatalf("register: %v, want 303 to the list naming the endpoint", sent)
	}
	created := admin.Get(sent.Location())
	secret := regexp.MustCompile(`id="webhook-secret">(whsec_[A-Za-z0-9]+)<`).FindStringSubmatch(created.Body)
	if created.Status != http.StatusOK || secret == nil {
		t.Fatalf("the list after registering: %v, want 200 showing the secret", created)
	}
	if again := admin.Get(sent.Location()); strings.Contains(again.Body, secret[1]) ||
		!strings.Contains(again.Text(), "its signing secret was shown once, when it was registered, and is not shown again") {
		t.Fatalf("the list reloaded: %v, want the endpoint named without its secret", again)
	}
	twice := admin.Form("/admin/webhooks", "/admin/webhooks", form)
	if twice.Status != http.StatusSeeOther || twice.Location() != sent.Location() {
		t.Fatalf("the same form sent again: %v, want 303 to %s", twice, sent.Location())
	}
	if p := admin.Get(twice.Location()); strings.Contains(p.Body, secret[1]) || !strings.Contains(p.Text(), "Already created") {
		t.Fatalf("the list after the form sent again: %v, want Already created and no secret", p)
	}
	eps, err := e.Service.ListWebhooks(context.Background())
	if err != nil || len(eps) != 1 || len(eps[0].EventTypes) != 1 || eps[0].EventTypes[0] != models.EventTemplatePaused {
		t.Fatalf("endpoints: %+v %v", eps, err)
	}
	if list := admin.Get("/admin/webhooks"); strings.Contains(list.Body, secret[1]) || !strings.Contains(list.Body, rcv.URL) {
		t.Fatalf("the list shows the secret again, or not the endpoint: %v", list)
	}
	tp := e.Template(t, "")
	paused := models.TemplatePaused
	if _, err := e.Service.UpdateTemplate(context.Background(), "admin", tp.ID, adminsvc.TemplatePatch{Status: &paused}); err != nil {
		t.Fatal(err)
	}
	if n, err := e.Service.DispatchOnce(context.Background()); n != 1 || err != nil {
		t.Fatalf("dispatch = %d, %v", n, err)
	}
	logPath := fmt.Sprintf("/admin/webhooks/%d", eps[0].ID)
	log := admin.Get(logPath)
	resend := regexp.MustCompile(`action="(/admin/webhooks/\d+/deliveries/\d+/resend)"`).FindStringSubmatch(log.Body)
	if log.Status != 200 || !strings.Contains(log.Text(), "template.paused") || !strings.Contains(log.Text(), "204") || resend == nil {
		t.Fatalf("delivery log: %v, want the delivery with 204 and a resend button", log)
	}
	if p := admin.Form(logPath, resend[1], url.Values{}); p.Status != http.StatusSeeOther || p.Location() != logPath {
		t.Fatalf("resend: %v", p)
	}
	if n, err := e.Service.DispatchOnce(context.Background()); n != 1 || err != nil || got.Load() != 2 {
		t.Fatalf("dispatch after resend = %d, %v; receiver got %d, want 2", n, err, got.Load())
	}
	if p := admin.Form("/admin/webhooks", logPath+"/delete", url.Values{}); p.Status != http.StatusSeeOther {
		t.Fatalf("delete: %v", p)
	}
	if eps, _ := e.Service.ListWebhooks(context.Background()); len(eps) != 0 {
		t.Fatalf("after delete: %+v", eps)
	}
}
