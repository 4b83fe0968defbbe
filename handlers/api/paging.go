package api

import (
	"cmp"
	"slices"

	"github.com/couponsvc/couponsvc/handlers/web"

	"github.com/gin-gonic/gin"
)

// Cursor pages of the lists (docs/paging.md): a page is the items whose id
// is above after, in increasing id, at most limit of them; next is the id
// to pass as after for the next page, absent on the last one. Ids only
// grow, so a walk sees every item once, however many are added meanwhile
// (those land on later pages).
const (
	defaultPageLimit = 100
	maxPageLimit     = 1000
	// maxAfter bounds a cursor: far above any id, and within every
	// platform's int.
	maxAfter = 1 << 62
)

// afterSchema is the schema of a list's after.
var afterSchema = map[string]any{"type": "integer", "format": "int64", "minimum": 0, "maximum": maxAfter}

// pageParams are the query parameters of a list's row in the route table.
var pageParams = []web.Param{
	{Name: "after", Description: "the next of the previous page (0 or left out: from the start)",
		Schema: afterSchema},
	{Name: "limit", Description: "at most this many items (1 to 1000, default 100)",
		Schema: map[string]any{"type": "integer", "minimum": 1, "maximum": maxPageLimit}},
}

// pageQuery reads after and limit, answering 400 naming the one at fault.
func pageQuery(c *gin.Context) (after int64, limit int, ok bool) {
	a, ok := queryInt(c, "after", 0, 0, maxAfter)
	if !ok {
		return 0, 0, false
	}
	limit, ok = queryInt(c, "limit", defaultPageLimit, 1, maxPageLimit)
	return int64(a), limit, ok
}

// pageOf is the page of items after the cursor, in increasing id, and the
// next cursor (0 on the last page).
func pageOf[T any](items []T, id func(*T) int64, after int64, limit int) (page []T, next int64) {
	sorted := slices.Clone(items)
	slices.SortFunc(sorted, func(a, b T) int { return cmp.Compare(id(&a), id(&b)) })
	start, _ := slices.BinarySearchFunc(sorted, after+1, func(x T, target int64) int { return cmp.Compare(id(&x), target) })
	return cut(sorted[start:], id, limit)
}

// newestPageOf is the page of a list read newest first: the items whose id
// is below the cursor (every item when it is 0), in decreasing id, and the
// next cursor (0 on the last page). Items added during a walk are above
// its first page and are not seen by it; none is seen twice
// (docs/paging.md).
func newestPageOf[T any](items []T, id func(*T) int64, after int64, limit int) (page []T, next int64) {
	sorted := slices.Clone(items)
	slices.SortFunc(sorted, func(a, b T) int { return cmp.Compare(id(&b), id(&a)) })
	start := 0
	if after > 0 {
		start = slices.IndexFunc(sorted, func(x T) bool { return id(&x) < after })
		if start < 0 {
			start = len(sorted)
		}
	}
	return cut(sorted[start:], id, limit)
}

// cut keeps the first limit items, and says the last one's id as the next
// cursor when some are left.
func cut[T any](page []T, id func(*T) int64, limit int) ([]T, int64) {
	var next int64
	if len(page) > limit {
		page = page[:limit]
		next = id(&page[limit-1])
	}
	if page == nil {
		page = []T{}
	}
	return page, next
}

// Next is the cursor of an answer's next page.
type Next struct {
	Next int64 `json:"next,omitempty" doc:"pass as after to read the next page; absent on the last page"`
}
