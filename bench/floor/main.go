// Command floor is the yardstick of bench/load.sh: net/http answering every request with a
// constant JSON body that was encoded once at start. No routing, no authentication, no log, no
// store: what it costs per request is what net/http itself costs on this machine, the floor under
// any service built on it. The service is measured beside it, on the same routes and body sizes.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "`address` to listen on; port 0 picks a free port")
	users := flag.Int("users", 1000, "how many seed users the answer to GET /api/users holds")
	flag.Parse()

	// The same bytes the service sends for its seed users, so both write bodies of the same size.
	one := []byte(`{"id":1,"name":"Seed User 1","email":"seed1@bench.test"}`)
	var list strings.Builder
	list.WriteString(`{"data":[`)
	for i := 1; i <= *users; i++ {
		if i > 1 {
			list.WriteByte(',')
		}
		n := strconv.Itoa(i)
		list.WriteString(`{"id":` + n + `,"name":"Seed User ` + n + `","email":"seed` + n + `@bench.test"}`)
	}
	list.WriteString(`],"total":` + strconv.Itoa(*users) + `}`)
	all := []byte(list.String())

	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, status := one, http.StatusOK
		switch {
		case r.Method == http.MethodPost:
			status = http.StatusCreated
		case r.Method == http.MethodGet && r.URL.Path == "/api/users":
			body = all
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(body)
	})

	listener, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
	fmt.Println("listening", listener.Addr()) // bench/load.sh reads the port from this line
	if err := http.Serve(listener, handler); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
}
