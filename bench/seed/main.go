// Command seed adds users to a running service through its API, for bench/load.sh: user N is
// "Seed User N" with the e-mail seedN@bench.test, and on an empty store it gets the id N, which the
// load's PUTs rely on. It posts one user at a time, so ids follow the names; 1,000 take well under
// a second on one kept-alive connection. The write token comes from BENCH_TOKEN, not from argv.
package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
)

func main() {
	base := flag.String("url", "http://127.0.0.1:8080", "the service's base `URL`")
	users := flag.Int("users", 1000, "how many users to add")
	flag.Parse()
	token := os.Getenv("BENCH_TOKEN")
	if token == "" {
		fmt.Fprintln(os.Stderr, "seed: set BENCH_TOKEN to a write token of the service")
		os.Exit(2)
	}
	for i := 1; i <= *users; i++ {
		body := fmt.Sprintf(`{"name":"Seed User %d","email":"seed%d@bench.test"}`, i, i)
		request, err := http.NewRequest("POST", *base+"/api/users", strings.NewReader(body))
		if err != nil {
			fail(err)
		}
		request.Header.Set("Authorization", "Bearer "+token)
		request.Header.Set("Content-Type", "application/json")
		response, err := http.DefaultClient.Do(request)
		if err != nil {
			fail(err)
		}
		io.Copy(io.Discard, response.Body) // read to the end, so the connection is kept alive
		response.Body.Close()
		if response.StatusCode != http.StatusCreated {
			fail(fmt.Errorf("user %d: status %s", i, response.Status))
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "seed:", err)
	os.Exit(1)
}
