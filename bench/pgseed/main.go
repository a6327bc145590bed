// Command pgseed writes users as CSV for PostgreSQL's COPY, for bench/postgres.sh, which loads a
// million with it in a minute or two, where the API would take several. Each row is name, email,
// name_key, email_key: the keys lower-cased with strings.ToLower, as examples/postgres's store
// makes them. The same -users always gives the same rows. A name is a given name, some in other
// scripts than Latin, and a family name of two or three syllables: in a million users, 129 are
// Kalomi (three syllables) and 1,981 Hibe (two). User N's e-mail is given.familyN@bench.test.
//
//	go run ./bench/pgseed -users 100000 | psql -c "COPY users (name, email, name_key, email_key) FROM STDIN (FORMAT csv)"
package main

import (
	"encoding/csv"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
)

func main() {
	users := flag.Int("users", 1000, "how many users to write")
	flag.Parse()
	given := []string{"Ada", "Alan", "Grace", "Edsger", "Barbara", "Donald", "Margaret", "Ken", "Radia", "Dennis",
		"Frances", "John", "Zoë", "Émile", "Łukasz", "Åsa", "İlker", "Søren", "José", "Ana", "Chloé", "Jürgen",
		"Niamh", "Siobhán", "Mañuel", "Ørjan", "Björk", "Ğülay", "Ярослав", "Αθηνά"}
	syllables := []string{"ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "be", "da", "fo", "gu", "hi", "jo", "ly", "wa"}
	random := rand.New(rand.NewPCG(1, 2))
	out := csv.NewWriter(os.Stdout)
	for n := 1; n <= *users; n++ {
		family := ""
		for range 2 + random.IntN(2) {
			family += syllables[random.IntN(len(syllables))]
		}
		first := given[random.IntN(len(given))]
		name := first + " " + strings.ToUpper(family[:1]) + family[1:]
		email := fmt.Sprintf("%s.%s%d@bench.test", strings.ToLower(first), family, n)
		if err := out.Write([]string{name, email, strings.ToLower(name), strings.ToLower(email)}); err != nil {
			fmt.Fprintln(os.Stderr, "pgseed:", err)
			os.Exit(1)
		}
	}
	out.Flush()
	if err := out.Error(); err != nil {
		fmt.Fprintln(os.Stderr, "pgseed:", err)
		os.Exit(1)
	}
}
