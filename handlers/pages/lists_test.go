package pages

import (
	"bytes"
	"html/template"
	"testing"
)

// TestNewPager: Newest only off the first page, Older only when older
// entries remain, each keeping the filter.
func TestNewPager(t *testing.T) {
	for _, tc := range []struct {
		path          string
		query         template.URL
		before, older int64
		want          pager
	}{
		{"/admin/audit", "", 0, 0, pager{}},
		{"/admin/audit", "", 0, 7, pager{Older: "/admin/audit?before=7"}},
		{"/admin/audit", "actor=ann", 9, 7, pager{Newest: "/admin/audit?actor=ann", Older: "/admin/audit?actor=ann&before=7"}},
		{"/admin/coupons", "status=used", 9, 0, pager{Newest: "/admin/coupons?status=used"}},
		{"", "hours=24", 0, 3, pager{Older: "?hours=24&before=3"}},
	} {
		if got := newPager(tc.path, tc.query, tc.before, tc.older); got != tc.want {
			t.Errorf("newPager(%q, %q, %d, %d) = %+v, want %+v", tc.path, tc.query, tc.before, tc.older, got, tc.want)
		}
	}
}

// TestListPartials: the pager and filter bar partials write exactly the
// markup the list pages had, the filter bar with each field's error.
func TestListPartials(t *testing.T) {
	p := newTestPages(t)
	run := func(name string, data any) string {
		t.Helper()
		var buf bytes.Buffer
		if err := p.tmpl["audit"].ExecuteTemplate(&buf, name, data); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	for _, tc := range []struct {
		pg   pager
		want string
	}{
		{pager{}, ``},
		{pager{Older: "?hours=24&before=3"}, `<nav class="pager" aria-label="Pages"> <a href="?hours=24&amp;before=3" rel="next">Older</a></nav>`},
		{pager{Newest: "/admin/audit?", Older: "/admin/audit?before=3"},
			`<nav class="pager" aria-label="Pages"><a href="/admin/audit?">Newest</a> <a href="/admin/audit?before=3" rel="next">Older</a></nav>`},
	} {
		if got := run("pager", tc.pg); got != tc.want {
			t.Errorf("pager %+v:\n got %s\nwant %s", tc.pg, got, tc.want)
		}
	}

	bar := filterBar{Action: "/admin/x", Clear: true, Mark: "data-x-form", Submit: "Find",
		Errors: formErrors{"": "Something is off.", "code": "No coupon has this code."},
		Fields: []filterField{
			{Name: "who", ID: "f-who", Label: "Who", Hint: "a name", Type: "text", Value: "ann", Placeholder: "anyone", Verbatim: true},
			{Name: "code", ID: "lookup", Label: "Code", Type: "text", Value: "AB<C", Code: true},
			{Name: "status", ID: "f-status", Label: "Status", Type: "select", Value: "used",
				Options: []filterOption{{"", "any"}, {"used", "used"}}},
		}}
	want := `<form method="get" action="/admin/x" class="form filters" novalidate data-x-form>
    <div class="notice notice-err" role="alert">Something is off.</div>
    <div class="field-row">
      <div class="field">
        <label for="f-who">Who <span class="optional">a name</span></label>
        <input id="f-who" name="who" type="text" value="ann" placeholder="anyone" autocomplete="off" spellcheck="false">
        
      </div>
      <div class="field has-error">
        <label for="lookup">Code</label>
        <input id="lookup" name="code" type="text" value="AB&lt;C" class="code-input" autocapitalize="characters" autocomplete="off" spellcheck="false" aria-invalid="true" aria-describedby="lookup-error">
        <p class="field-error" id="lookup-error" role="alert">No coupon has this code.</p>
      </div>
      <div class="field">
        <label for="f-status">Status</label>
        <select id="f-status" name="status">
          <option value="">any</option><option value="used" selected>used</option>
        </select>
        
      </div>
      
    </div>
    <div class="form-actions">
      <button class="button primary" type="submit">Find</button>
      <a class="button ghost" href="/admin/x">Clear</a>
    </div>
  </form>`
	if got := run("filterbar", bar); got != want {
		t.Errorf("filter bar:\n%s\nwant\n%s", got, want)
	}
}
