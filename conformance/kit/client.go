package kit

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// A Client is what a rule's check works with: it sends requests to the server with the run's
// tokens, and creates users whose e-mail carries the rule's own tag.
type Client struct {
	run   *runner
	ctx   context.Context
	rule  Rule
	group string // kit-<run tag>-<rule number>: in the e-mail of every user the rule creates
	users int    // how many users the rule has made addresses for
}

// role is whose token a request carries.
type role int

const (
	anonymous role = iota // no Authorization header
	writer                // the write token
	reader                // the read token, or the write token on a server with one token
)

// framing is how a request tells the length of its body.
type framing int

const (
	declared framing = iota // Content-Length
	chunked                 // Transfer-Encoding: chunked, the length unknown until the end
)

// connection is the connection a request goes over.
type connection int

const (
	pooled        connection = iota // one that net/http's client keeps for the next request
	ownConnection                   // a fresh one the server closes after its answer: every byte it sends is seen
)

// request is one request a check sends.
type request struct {
	method  string
	target  string   // the path and query, sent as written
	as      role     // whose Authorization header it carries
	header  []string // more header lines, as name, value pairs; a name may come twice
	body    string
	framing framing
	over    connection // HEAD always goes over its own
}

// reply is a request as the kit wrote it, with the tokens' variables (tokens.go), and the answer
// to it.
type reply struct {
	method         string
	url            string
	header         http.Header // what the kit set, Authorization included, with the tokens' variables
	body           string
	framing        framing
	over           connection
	status         int
	responseHeader http.Header
	responseBody   []byte
	err            error // the request could not be sent, or no answer came
}

// send makes the request, waits for the whole answer, and returns both.
func (c *Client) send(req request) *reply {
	x := &reply{method: req.method, url: c.run.base + req.target, header: http.Header{}, body: req.body, framing: req.framing, over: req.over}
	switch req.as {
	case writer:
		x.header.Set("Authorization", "Bearer "+writeTokenVar)
	case reader:
		x.header.Set("Authorization", "Bearer "+c.run.readTokenVariable())
	}
	for i := 0; i+1 < len(req.header); i += 2 {
		x.header.Add(req.header[i], req.header[i+1])
	}
	if path, _, _ := strings.Cut(req.target, "?"); req.method == http.MethodPost && path == collection && c.rule.Needs&OwnUsers == 0 {
		panic("kit: rule " + c.rule.ID + " creates users but does not declare OwnUsers") // a mistake in the catalogue
	}
	c.run.exchange(c.ctx, x)
	if req.method == http.MethodPost && x.status/100 == 2 {
		c.run.created(x.responseBody) // whatever answered 2xx to a POST made a user to delete at the end
	}
	return x
}

// exchange sends x over HTTP, the tokens put in for their variables, and fills in the answer. HEAD
// goes over a connection of its own, as does any request that asks to, so that a body the server
// should not have sent can be seen.
func (r *runner) exchange(ctx context.Context, x *reply) {
	var body io.Reader
	if x.body != "" {
		body = strings.NewReader(x.body)
	}
	httpReq, err := http.NewRequestWithContext(ctx, x.method, r.expand(x.url), body)
	if err != nil {
		x.err = err
		return
	}
	for name, values := range x.header {
		for _, value := range values {
			httpReq.Header.Add(name, r.expand(value))
		}
	}
	httpReq.Header.Set("User-Agent", "users-conformance-kit/"+Version)
	if x.framing == chunked {
		httpReq.ContentLength = -1 // unknown: net/http sends the body chunked
		httpReq.GetBody = nil
	}
	var resp *http.Response
	if x.method == http.MethodHead || x.over == ownConnection {
		resp, x.responseBody, err = r.overItsOwnConnection(ctx, httpReq)
	} else {
		resp, err = r.http.Do(httpReq)
		if err == nil {
			defer resp.Body.Close()
			x.responseBody, err = io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
		}
	}
	if err != nil {
		x.err = err
		return
	}
	x.status, x.responseHeader = resp.StatusCode, resp.Header
}

// maxAnswerBytes bounds what the kit reads of an answer: a list of thousands of users fits easily.
const maxAnswerBytes = 64 << 20

// overItsOwnConnection sends a request on a fresh connection that the server closes after its
// answer. net/http's client never reads a body after HEAD, 204 or 304, so one sent anyway would
// only spoil the next answer on the connection; here every byte after the answer is seen, and
// for those answers it is the body that RFC 9110 §9.3.2, §15.3.5 and §15.4.5 forbid.
func (r *runner) overItsOwnConnection(ctx context.Context, httpReq *http.Request) (*http.Response, []byte, error) {
	host := httpReq.URL.Host
	if httpReq.URL.Port() == "" {
		host = net.JoinHostPort(httpReq.URL.Hostname(), map[string]string{"http": "80", "https": "443"}[httpReq.URL.Scheme])
	}
	dialer := &net.Dialer{Timeout: requestTimeout}
	conn, err := dialer.DialContext(ctx, "tcp", host)
	if err != nil {
		return nil, nil, err
	}
	defer conn.Close()
	if httpReq.URL.Scheme == "https" {
		tlsConn := tls.Client(conn, &tls.Config{ServerName: httpReq.URL.Hostname(), RootCAs: r.rootCAs})
		if err := tlsConn.HandshakeContext(ctx); err != nil {
			return nil, nil, err
		}
		conn = tlsConn
	}
	conn.SetDeadline(time.Now().Add(requestTimeout))
	httpReq.Close = true // Connection: close, so the answer ends where the connection does
	if err := httpReq.Write(conn); err != nil {
		return nil, nil, err
	}
	answer := bufio.NewReader(conn)
	resp, err := http.ReadResponse(answer, httpReq)
	if err != nil {
		return nil, nil, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	if err != nil {
		return nil, nil, err
	}
	// A server that keeps the connection open despite Connection: close is given a second to
	// send anything more.
	conn.SetReadDeadline(time.Now().Add(time.Second))
	extra, _ := io.ReadAll(io.LimitReader(answer, maxAnswerBytes))
	return resp, append(body, extra...), nil
}

// requestTimeout bounds each request: a server that does not answer fails the rule, not the run.
const requestTimeout = 15 * time.Second

// get, head, options and remove send a request with no body; get and head as a reader.
func (c *Client) get(target string, header ...string) *reply {
	return c.send(request{method: http.MethodGet, target: target, as: reader, header: header})
}

func (c *Client) head(target string, header ...string) *reply {
	return c.send(request{method: http.MethodHead, target: target, as: reader, header: header})
}

func (c *Client) options(target string, header ...string) *reply {
	return c.send(request{method: http.MethodOptions, target: target, header: header})
}

func (c *Client) remove(target string, header ...string) *reply {
	return c.send(request{method: http.MethodDelete, target: target, as: writer, header: header})
}

// write sends a JSON body as the writer: POST, PUT or PATCH, with Content-Type: application/json.
func (c *Client) write(method, target, body string, header ...string) *reply {
	return c.send(request{method: method, target: target, as: writer, body: body,
		header: append([]string{"Content-Type", mediaTypeJSON}, header...)})
}

// anonymously sends a request without a token; header may carry an Authorization of its own.
func (c *Client) anonymously(method, target string, header ...string) *reply {
	return c.send(request{method: method, target: target, header: header})
}

// email returns a new address that carries the rule's tag, in the e-mail of every user it creates.
func (c *Client) email() string {
	c.users++
	return fmt.Sprintf("%s-%d@example.com", c.group, c.users)
}

// userJSON is a request body with these fields, in this order.
func userJSON(name, email string) string {
	return string(mustMarshal(struct {
		Name  string `json:"name"`
		Email string `json:"email"`
	}{name, email}))
}

// jsonString is s as a JSON string, quotes included.
func jsonString(s string) string { return string(mustMarshal(s)) }

func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only strings and structs of strings are marshalled
	}
	return b
}

// user is a user as the server answers it.
type user struct {
	ID    int64  `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
}

func (u user) path() string { return collection + "/" + strconv.FormatInt(u.ID, 10) }

func (u user) String() string { return string(mustMarshal(u)) }

// newUser creates a user with a name and a new address. A server that cannot create one makes
// the rule a skip: create/201 and its neighbours say what is wrong.
func (c *Client) newUser(name string) (user, error) {
	return c.newUserWith(name, c.email())
}

// newUserWith creates a user with this name and address, which must carry the rule's tag.
func (c *Client) newUserWith(name, email string) (user, error) {
	x := c.write(http.MethodPost, collection, userJSON(name, email))
	u, err := x.decodeUser()
	if x.status/100 != 2 || err != nil {
		return user{}, cannotRun(x, "could not create a user to check it: POST /api/users answered %s, not 201 with the user", x.statusLine())
	}
	return u, nil
}

// newUsers creates one user for each name, in order, so their ids increase.
func (c *Client) newUsers(names ...string) ([]user, error) {
	var users []user
	for _, name := range names {
		u, err := c.newUser(name)
		if err != nil {
			return nil, err
		}
		users = append(users, u)
	}
	return users, nil
}

// gone makes a user of the rule's and deletes it, for a user that does not exist.
func (c *Client) gone() (user, error) {
	u, err := c.newUser("Kit Gone")
	if err != nil {
		return u, err
	}
	if x := c.remove(u.path()); x.status/100 != 2 {
		return u, cannotRun(x, "could not delete a user to check it: DELETE %s answered %s, not 204", u.path(), x.statusLine())
	}
	return u, nil
}

// find reads the user with this id as it is stored: by GET of the user, or where a server has no
// such route, from the whole list.
func (c *Client) find(id int64) (u user, found bool, err error) {
	x := c.get(user{ID: id}.path())
	switch x.status {
	case http.StatusOK:
		u, err := x.decodeUser()
		return u, err == nil, err
	case http.StatusNotFound:
		return user{}, false, nil
	}
	return c.findInList(func(u user) bool { return u.ID == id })
}

// findInList looks for a user in the whole list, as GET /api/users gives it.
func (c *Client) findInList(match func(user) bool) (user, bool, error) {
	x := c.get(collection)
	list, err := x.decodeList()
	if err != nil {
		return user{}, false, err
	}
	for _, u := range list.Data {
		if match(u) {
			return u, true, nil
		}
	}
	return user{}, false, nil
}

// unchanged checks that a refused request x left the user as it was.
func (c *Client) unchanged(x *reply, before user) error {
	after, found, err := c.find(before.ID)
	switch {
	case err != nil:
		return err
	case !found:
		return failf(x, "the user left as it was, "+before.String(), "the user is gone after the request")
	case after != before:
		return failf(x, "the user left as it was, "+before.String(), "afterwards it is "+after.String())
	}
	return nil
}

// notCreated checks that a refused POST x made no user with this address.
func (c *Client) notCreated(x *reply, email string) error {
	return c.noneLike(x, func(u user) bool { return strings.EqualFold(u.Email, email) })
}

// noneLike checks that after a refused request x the whole list holds no user that matches.
func (c *Client) noneLike(x *reply, match func(user) bool) error {
	u, found, err := c.findInList(match)
	if err != nil {
		return err
	}
	if found {
		return failf(x, "no user created", "the list holds "+u.String())
	}
	return nil
}

// mine returns the list of the rule's own users, filtered by q and the extra query.
func (c *Client) mine(query string) *reply {
	target := collection + "?q=" + c.group + "-"
	if query != "" {
		target += "&" + query
	}
	return c.get(target)
}
