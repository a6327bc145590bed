package kit

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// docs/kit.md, the kit's page, is checked against the kit: what it says of the keys and its example
// description.

// kitDocs is docs/kit.md.
func kitDocs(t *testing.T) string {
	t.Helper()
	text, err := os.ReadFile("../../docs/kit.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(text)
}

// docs/kit.md documents every optional key of a description under a heading of its own, ### `KEY`,
// with a line "Turns on: `id`, `id`." that names exactly the rules that need the key, in the
// catalogue's order.
func TestKitDocsNameTheRulesOfEveryKey(t *testing.T) {
	turnsOn := map[string]string{} // key: its "Turns on" line
	var key string
	for _, line := range strings.Split(kitDocs(t), "\n") {
		if m := regexp.MustCompile("^### `([a-z_.]+)`").FindStringSubmatch(line); m != nil {
			key = m[1]
		}
		if strings.HasPrefix(line, "Turns on: ") {
			turnsOn[key] = line
		}
	}
	for _, kn := range keyNames {
		var ids []string
		for _, r := range Rules() {
			if r.Keys&kn.key != 0 {
				ids = append(ids, "`"+r.ID+"`")
			}
		}
		if want := "Turns on: " + strings.Join(ids, ", ") + "."; turnsOn[kn.name] != want {
			t.Errorf("docs/kit.md, ### `%s`:\n%s\nwant\n%s", kn.name, turnsOn[kn.name], want)
		}
	}
}

// The books description docs/kit.md shows is that of the books copy of the service
// (testdata/books/books.json), which conformance_test.go checks: every convention rule passes with
// it. Only its collection differs, as the copy changes user.go alone and still serves /api/users.
func TestKitDocsShowTheBooksCopysDescription(t *testing.T) {
	example := regexp.MustCompile("(?s)```json\n(.*?)```").FindStringSubmatch(kitDocs(t))
	if example == nil {
		t.Fatal("docs/kit.md shows no description")
	}
	shown, err := ParseDescription("docs/kit.md", strings.NewReader(example[1]))
	if err != nil {
		t.Fatal(err)
	}
	file, err := os.Open("../../testdata/books/books.json")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	copied, err := ParseDescription("docs/kit.md", file)
	if err != nil {
		t.Fatal(err)
	}
	if shown.Collection != "/api/books" || copied.Collection != "/api/users" {
		t.Errorf("collections %q and %q, want /api/books shown and /api/users for the copy", shown.Collection, copied.Collection)
	}
	shown.Collection = copied.Collection
	if !reflect.DeepEqual(shown, copied) {
		t.Errorf("docs/kit.md shows a description other than testdata/books/books.json:\n%s", example[1])
	}
}
