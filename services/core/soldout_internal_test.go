package core

import (
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
)

// TestSoldOutMemoryProbe: once a second has passed since the script last said
// sold_out, exactly one claim goes to the script while the others are still
// answered from memory; a probe that never answers is replaced a second
// later; a read that kept nothing is not tried again within a second.
func TestSoldOutMemoryProbe(t *testing.T) {
	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	tpl := &models.Template{ID: 7, Status: models.TemplateActive, ClaimStartsAt: at.Add(-time.Hour)}
	var m soldOutMemory
	if m.Refuse(tpl, "u9", "k", at) {
		t.Fatal("refused with nothing remembered")
	}
	if !m.Observe(7, true, "3", at) {
		t.Fatal("a first sold_out did not ask to learn")
	}
	if m.Observe(7, true, "3", at) {
		t.Fatal("a second sold_out asked to learn while learning")
	}
	if m.Refuse(tpl, "u9", "k", at) {
		t.Fatal("refused before the holders were learnt")
	}
	m.learnt(7, "3", map[string]struct{}{claimKey("u1", "k"): {}}, at)
	if !m.Refuse(tpl, "u9", "k", at) || m.Refuse(tpl, "u1", "k", at) {
		t.Fatal("want u9 refused from memory and u1's claim sent to the script")
	}
	if !m.Refuse(tpl, "u1", "k2", at) {
		t.Fatal("u1's new claim (another key) was not refused from memory")
	}
	later := at.Add(soldOutFresh)
	if m.Refuse(tpl, "u9", "k", later) {
		t.Fatal("the first claim a second later was not the probe")
	}
	if !m.Refuse(tpl, "u8", "k", later) || !m.Refuse(tpl, "u7", "k", later.Add(soldOutFresh/2)) {
		t.Fatal("claims during the probe were not answered from memory")
	}
	// The probe never answers: a second after it started, another probes.
	if m.Refuse(tpl, "u6", "k", later.Add(soldOutFresh)) {
		t.Fatal("a lost probe was not replaced")
	}
	// The script answers sold_out with another generation: learn anew.
	if !m.Observe(7, true, "4", later.Add(soldOutFresh)) {
		t.Fatal("a new generation did not ask to learn")
	}
	if m.Refuse(tpl, "u9", "k", later.Add(soldOutFresh)) {
		t.Fatal("refused with the holders of an old generation")
	}
	m.learnt(7, "4", nil, later.Add(soldOutFresh))
	if m.Observe(7, true, "4", later.Add(soldOutFresh+soldOutFresh/2)) {
		t.Fatal("a read that kept nothing was tried again within the second")
	}
	if !m.Observe(7, true, "4", later.Add(2*soldOutFresh)) {
		t.Fatal("a read that kept nothing was not tried again after a second")
	}
	// Any other answer of the script forgets the template.
	m.Observe(7, false, "", later.Add(2*soldOutFresh))
	if m.Refuse(tpl, "u9", "k", later.Add(2*soldOutFresh)) || len(m.items) != 0 {
		t.Fatal("a claim answered after stock came back did not forget the sell-out")
	}
}
