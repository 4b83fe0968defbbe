package pages

import "github.com/couponsvc/couponsvc/services/checkout"

// knownItemsShown bounds the SKUs and the categories seen on orders that
// the template form names beside its target lists.
const knownItemsShown = 20

// targetList is one target list of the template form, with the values
// seen on orders that it may hold.
type targetList struct {
	Name, Label string
	Known       []string
	// ListID names the datalist of the known values (template_new.html),
	// "" for a list with none.
	ListID string
}

// targetGroup is a titled group of target lists: the lists an item must
// be in one of ("It applies to"), or in none of ("It never applies to").
type targetGroup struct {
	Key, Title string
	Lists      []targetList
}

// targetGroups puts the form's six target lists (targetFields: three to
// include, then three to exclude) in their two groups, the SKU and
// category lists with the values known seen on orders (docs/pages.md).
func targetGroups(known *checkout.KnownItems) []targetGroup {
	groups := []targetGroup{{Key: "include", Title: "It applies to"}, {Key: "exclude", Title: "It never applies to"}}
	for i, tf := range targetFields {
		l := targetList{Name: tf.Name, Label: tf.Label}
		switch tf.Name {
		case "skus", "exclude_skus":
			l.Known, l.ListID = known.SKUs, "known-skus"
		case "category_ids", "exclude_category_ids":
			l.Known, l.ListID = known.Categories, "known-categories"
		}
		g := &groups[0]
		if i >= 3 {
			g = &groups[1]
		}
		g.Lists = append(g.Lists, l)
	}
	return groups
}
