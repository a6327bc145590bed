package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
)

// The list over PostgreSQL answers what the repository's own service answers in memory, byte for
// byte. check.sh starts both: the in-memory service, and this one on a new database whose own
// collation, ICU's English, orders "é" before "f", where Go's byte order puts it after "z". This
// test puts the same users into both, changes and deletes some alike, then asks both every sort
// with every filter and several pages. It needs MEMORY_URL, POSTGRES_URL and WRITE_TOKEN.
func TestListIsTheMemoryServicesByteForByte(t *testing.T) {
	memory, postgres, token := os.Getenv("MEMORY_URL"), os.Getenv("POSTGRES_URL"), os.Getenv("WRITE_TOKEN")
	if memory == "" || postgres == "" || token == "" {
		t.Skip("MEMORY_URL, POSTGRES_URL and WRITE_TOKEN are not set: check.sh sets them")
	}
	both := func(method, path, body string) {
		inMemory, overPostgres := send(t, memory, token, method, path, body), send(t, postgres, token, method, path, body)
		if inMemory != overPostgres {
			at := 0
			for at < min(len(inMemory), len(overPostgres)) && inMemory[at] == overPostgres[at] {
				at++
			}
			from := max(at-100, 0)
			t.Fatalf("%s %s %s: the answers differ from byte %d on:\nin memory      %q\nover PostgreSQL %q", method, path, body,
				at, inMemory[from:min(at+100, len(inMemory))], overPostgres[from:min(at+100, len(overPostgres))])
		}
	}
	users := listTestUsers()
	for _, u := range users {
		both("POST", "/api/users", fmt.Sprintf(`{"name": %q, "email": %q}`, u.Name, u.Email))
	}
	for id := 1; id <= len(users); id += 10 { // a new name, in capitals: its key changes
		both("PATCH", fmt.Sprint("/api/users/", id), fmt.Sprintf(`{"name": %q}`, strings.ToUpper(users[id+4].Name)))
	}
	for id := 3; id <= len(users); id += 13 {
		both("DELETE", fmt.Sprint("/api/users/", id), "")
	}

	sorts := []string{"", "sort=id", "sort=-id", "sort=name", "sort=-name", "sort=email", "sort=-email"}
	filters := []string{""}
	for _, text := range []string{"a", "ANN", "ann lee", "å", "Å", "é", "e", "i", "İ", "ı", "ss", "ß", "strasse",
		"k", "\u212a", "σ", "Σ", "%", "_", `\`, "100%", "e_c", "lee", " lee", "'", "@example", ".com", "😀", "李", "zzz",
		"\x00", "\xff", "a\xc3"} {
		filters = append(filters, "q="+url.QueryEscape(text))
	}
	for _, address := range []string{strings.ToUpper(users[0].Email), users[7].Email, strings.ToUpper(users[20].Email),
		"nobody@example.com", "\x00", "\xff"} {
		filters = append(filters, "email="+url.QueryEscape(address))
	}
	pages := []string{"", "page=2", "page=3&per_page=7", "page=9223372036854775807&per_page=100"}
	for _, sort := range sorts {
		for _, filter := range filters {
			for _, page := range pages {
				both("GET", "/api/users?"+join(sort, filter, page), "")
			}
		}
		for page := 1; page <= len(users)/100+1; page++ { // every page of the whole list
			both("GET", "/api/users?"+join(sort, fmt.Sprintf("page=%d&per_page=100", page)), "")
		}
	}
}

// listTestUsers are 3,000 users to list: names in many scripts, names that differ only in case
// (Ann, ann and ANN), names that are equal (each name is given about 7 times), names whose lower
// case Go and a database's locale may give differently (İ, ǅ, the Kelvin sign), and the characters
// LIKE reads as a pattern (%, _ and \). Every e-mail is distinct, in any case.
func listTestUsers() []user {
	given := []string{"Ann", "ann", "ANN", "Åsa", "åsa", "Émile", "émile", "Zoë", "ZOË", "İlker", "ılgaz", "Iris",
		"Straße", "STRASSE", "Ωmega", "ǅemal", "\u212aate", "kate", "Łukasz", "Ñandú", "李", "😀 Smile", "100% Real",
		"snake_case", `Back\slash`, "O'Brien", "Zed", "zed", "_under", "Ann-Marie"}
	family := []string{"Lee", "lee", "LEE", "Ng", "Ó Briain", "Müller", "MÜLLER", "Σίσυφος", "ΣΊΣΥΦΟΣ", "Smith",
		"van Dijk", "Van Dijk", "de la Cruz", "Œuvre", "Ærø"}
	mailbox := []string{"ann", "ANN", "zoë", "Zoë", "straße", "100%real", "snake_case", "o'brien", "Émile", "li"}
	domain := []string{"example.com", "Example.COM", "exämple.org"}
	users := make([]user, 3000)
	for i := range users {
		users[i] = user{
			Name:  given[i%len(given)] + " " + family[i/len(given)%len(family)],
			Email: fmt.Sprintf("%s.%d@%s", mailbox[i%len(mailbox)], i, domain[i%len(domain)]),
		}
	}
	return users
}

// join joins the parts of a query that are not empty.
func join(parts ...string) string {
	var given []string
	for _, part := range parts {
		if part != "" {
			given = append(given, part)
		}
	}
	return strings.Join(given, "&")
}

// send sends a request to the service at base and returns what a client reads of its answer:
// the status, the header fields but Date and X-Request-Id, which differ from answer to answer
// wherever the users are kept, and the body.
func send(t *testing.T, base, token, method, path, body string) string {
	t.Helper()
	request, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	request.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		request.Header.Set("Content-Type", "application/json")
	}
	response, err := http.DefaultClient.Do(request)
	if err != nil {
		t.Fatal(err)
	}
	defer response.Body.Close()
	read, err := io.ReadAll(response.Body)
	if err != nil {
		t.Fatal(err)
	}
	response.Header.Del("Date")
	response.Header.Del("X-Request-Id")
	var answer bytes.Buffer
	fmt.Fprintln(&answer, response.Status)
	response.Header.Write(&answer)
	answer.Write(read)
	return answer.String()
}
