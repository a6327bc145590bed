package kit

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// A Client is what a rule's check works with: it sends requests to the server with the run's
// tokens, and creates items whose bodies carry the rule's own tag.
type Client struct {
	run   *runner
	ctx   context.Context
	rule  Rule
	group string // the rule's tag, kit-<run tag>-<rule number, 3 digits>: {tag} in a body
	n     int    // the last number a body of the rule was given: {n}
}

// role is whose token a request carries.
type role int

const (
	anonymous role = iota // no Authorization header
	writer                // the write token, on an API with authentication
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
	switch {
	case c.run.desc.Auth == nil: // an API without authentication is sent no token
	case req.as == writer:
		x.header.Set("Authorization", "Bearer "+writeTokenVar)
	case req.as == reader:
		x.header.Set("Authorization", "Bearer "+c.run.readTokenVariable())
	}
	for i := 0; i+1 < len(req.header); i += 2 {
		x.header.Add(req.header[i], req.header[i+1])
	}
	if path, _, _ := strings.Cut(req.target, "?"); req.method == http.MethodPost && path == c.collection() && c.rule.Needs&OwnItems == 0 {
		panic("kit: rule " + c.rule.ID + " creates items but does not declare OwnItems") // a mistake in the catalogue
	}
	c.run.exchange(c.ctx, x)
	if req.method == http.MethodPost && x.status/100 == 2 {
		c.run.created(x.responseBody) // whatever answered 2xx to a POST made an item to delete at the end
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

// maxAnswerBytes bounds what the kit reads of an answer: a list of thousands of items fits easily.
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

// asReader sends a request with the read token and, when it has a body, Content-Type: application/json.
func (c *Client) asReader(method, target, body string) *reply {
	req := request{method: method, target: target, as: reader, body: body}
	if body != "" {
		req.header = []string{"Content-Type", mediaTypeJSON}
	}
	return c.send(req)
}

// jsonString is s as a JSON string, quotes included.
func jsonString(s string) string { return string(mustMarshal(s)) }

func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only what JSON decoding made, strings and structs of strings are marshalled
	}
	return b
}

// number is the next number a body of the rule is given, {n}.
func (c *Client) number() string {
	c.n++
	return strconv.Itoa(c.n)
}

// unknownToken is a token no server knows: a b64token that carries the rule's tag.
func (c *Client) unknownToken() string { return c.group + "-unknown-token" }

// staleTag is an entity tag no representation has.
const staleTag = `"kit-stale"`

// describeHeaders writes every header line of an answer, for a search through them.
func describeHeaders(h http.Header) string {
	var lines []string
	for name := range h {
		lines = append(lines, describeHeader(h, name))
	}
	return strings.Join(lines, "\n")
}

// cannotCreate is the skip of a rule whose own item a server could not create: create/201 and its
// neighbours say what is wrong.
func cannotCreate(x *reply, path string) error {
	return cannotRun(x, "could not create an item to check it: POST %s answered %s, not 201 with the item", path, x.statusLine())
}
