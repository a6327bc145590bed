// Command users serves a collection of users over HTTP: a small REST API to read, learn from and
// copy. Start it with `go run .` and read README.md for a walk through the API.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

const version = "3.2.0"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// Once the first signal has come, stop gives the signals back their default handling, so a
	// second Ctrl-C ends the process at once instead of waiting for the requests in flight.
	context.AfterFunc(ctx, stop)
	if err := run(ctx, os.Args, os.Getenv, os.Stdout, os.Stderr); err != nil {
		printError(os.Stderr, err)
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// errUsage marks a mistake in the flags or the environment: exit status 2.
var errUsage = errors.New("usage")

// An advisedError is an error with what the person who started the program can do about it, which
// printError prints once, after the error. withAdvice makes one.
type advisedError struct {
	err    error
	advice string
}

// withAdvice returns err with advice for the person who started the program.
func withAdvice(err error, advice string) error { return &advisedError{err: err, advice: advice} }

func (e *advisedError) Error() string { return e.err.Error() }
func (e *advisedError) Unwrap() error { return e.err }

// printError prints the error that stopped the program and, on the next line, the advice it
// carries, if any: the one place advice is printed.
func printError(stderr io.Writer, err error) {
	fmt.Fprintln(stderr, "users:", err)
	var advised *advisedError
	if errors.As(err, &advised) {
		fmt.Fprintln(stderr, "  "+advised.advice)
	}
}

// run is the whole program, given what main takes from the process, so tests call it directly.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseConfig(args, getenv, stdout)
	switch {
	case errors.Is(err, flag.ErrHelp): // -h, which printed the usage
		return nil
	case err != nil:
		return err
	case cfg.showVersion:
		fmt.Fprintln(stdout, "users", version)
		return nil
	}
	return start(ctx, cfg, stderr)
}

// start runs the service as cfg says until ctx is done. It opens the store and listens, and only
// then prints the generated tokens, if any, and the start-up log, which names the address it bound:
// a start that fails prints no token. Once ctx is done it stops accepting and lets the requests in
// flight finish.
func start(ctx context.Context, cfg *config, stderr io.Writer) error {
	logger := newLogger(cfg.logFormat, stderr)
	storeCtx, stopStore := context.WithCancel(ctx) // what the store runs (the data file's look) stops with start
	defer stopStore()
	store, storage, err := openStore(storeCtx, cfg, logger)
	if err != nil {
		return err
	}
	defer store.close() // once the server has stopped; close waits for a write in progress, if any

	_, users, err := store.list(ctx, listQuery{page: &pageQuery{number: 1, size: 1}}) // how many, for the start-up log: the total of a page
	if err != nil {
		return err
	}
	handler, err := newServer(*cfg, logger, store)
	if err != nil {
		return err
	}
	server := newHTTPServer(handler, cfg.timeouts, logger)
	server.TLSConfig = cfg.tls
	listener, err := net.Listen("tcp", cfg.addr) // listening ourselves gives tests a free port with :0
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return withAdvice(err, "choose another port, such as -addr "+nextPort(cfg.addr)+", or port 0 for any free one")
	case err != nil:
		return err
	}
	served := make(chan error, 1)
	go func() { // Serve and ServeTLS close the listener when they return
		if server.TLSConfig != nil {
			served <- server.ServeTLS(listener, "", "") // the certificate is in TLSConfig (tls.go)
		} else {
			served <- server.Serve(listener)
		}
	}()

	baseURL := serverURL(cfg.scheme(), listener.Addr())
	if cfg.generated != nil {
		printTokenNotice(stderr, cfg.generated, curlCommand(cfg, baseURL, cfg.generated.read))
	}
	logger.Info("listening", "addr", listener.Addr().String(), "url", baseURL, "users", users, "storage", storage,
		"cors_origins", cfg.cors, "version", version)
	if cfg.tls == nil && !isLoopback(listener.Addr()) { // README, "HTTPS": RFC 6750 §5.3 asks for TLS
		logger.Warn("bearer tokens in clear text", "addr", listener.Addr().String())
	}

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	logger.Info("stopping") // the requests in flight finish first
	// A fresh context: ctx is done already. The requests in flight get theirs as they were.
	stopCtx, cancel := context.WithTimeout(context.Background(), cfg.timeouts.shutdown) // but not forever
	defer cancel()
	if err := server.Shutdown(stopCtx); err != nil {
		return fmt.Errorf("stopping: requests still running after %s: %w", cfg.timeouts.shutdown, err)
	}
	logger.Info("stopped")
	return nil
}

// serverURL is where a client on this machine reaches the server: the address it bound, with
// localhost for one that binds every interface (-addr :8080).
func serverURL(scheme string, addr net.Addr) string {
	host, port, _ := net.SplitHostPort(addr.String())
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "localhost"
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

// curlCommand is the token notice's curl line, which works as pasted, over HTTPS too (curlTrust).
func curlCommand(cfg *config, baseURL, token string) string {
	return fmt.Sprintf("curl %s-H 'Authorization: Bearer %s' %s/api/users", curlTrust(cfg), token, baseURL)
}

// isLoopback reports whether the server listens on loopback only (127.0.0.0/8 or ::1; -addr
// localhost binds one of them), where no other machine can read what clients send.
func isLoopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// nextPort returns addr with the port after its own, for a start whose port is taken.
func nextPort(addr string) string {
	host, port, _ := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(port)
	return net.JoinHostPort(host, strconv.Itoa(n+1))
}

// newHTTPServer is the http.Server of a handler, with its time-outs: a zero http.Server has none,
// and a slow or stalled client would hold a connection forever (README, "What it withstands").
// A program that copies this service takes this function with newServer.
func newHTTPServer(handler http.Handler, t timeouts, logger *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: t.readHeader,
		ReadTimeout:       t.read,
		WriteTimeout:      t.write,
		IdleTimeout:       t.idle,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
}

// timeouts bound how long a client may hold a connection, and a stop may wait for requests.
type timeouts struct {
	readHeader, read, write, idle, shutdown time.Duration
}

// defaultTimeouts are the time-outs of a server with this -delay: the write time-out covers the
// delay, and time to answer after it, and a stop waits for a delayed request as for any other.
func defaultTimeouts(delay time.Duration) timeouts {
	return timeouts{readHeader: 5 * time.Second, read: 15 * time.Second, write: delay + 20*time.Second,
		idle: 2 * time.Minute, shutdown: delay + 10*time.Second}
}

// openStore opens the store kept in the file -data names, whose edits it then loads until ctx is
// done, or an empty one in memory, and says which for the start-up log. With -sample-data it adds
// the sample users to a store that never had a user. It is where a program that keeps its users
// elsewhere (a database) opens its own store (examples/postgres).
func openStore(ctx context.Context, cfg *config, logger *slog.Logger) (store *userStore, storage string, err error) {
	store, storage = newUserStore(), "memory"
	if cfg.dataFile != "" {
		if store, err = openUserStore(cfg.dataFile, logger); err != nil {
			return nil, "", err
		}
		go store.watch(ctx) // a person's edits of the file, loaded while the server runs
		storage = "file " + cfg.dataFile
	}
	if cfg.sampleData {
		if err := addSampleUsers(ctx, store); err != nil {
			store.close()
			return nil, "", err
		}
	}
	return store, storage, nil
}

// config is everything the flags and the environment decide.
type config struct {
	addr        string
	dataFile    string // -data: "" keeps the users in memory only
	logFormat   string
	cors        corsPolicy
	delay       time.Duration
	timeouts    timeouts
	sampleData  bool
	showVersion bool
	tlsCert     string           // -tls-cert, which the token notice's curl line may name (curlTrust)
	tls         *tls.Config      // from -tls-cert and -tls-key; nil for plain HTTP
	tokens      tokens           // from USERS_TOKENS, or generated
	generated   *generatedTokens // the tokens made for this run, to be shown once; nil when USERS_TOKENS sets them
}

// scheme is the scheme the server speaks.
func (c config) scheme() string {
	if c.tls != nil {
		return "https"
	}
	return "http"
}

// parseConfig reads the flags and USERS_TOKENS, and the files -tls-cert and -tls-key name: every
// mistake is found before the server starts, and is errUsage. For -h it prints the usage to stdout
// and returns flag.ErrHelp, as the flag package does.
func parseConfig(args []string, getenv func(string) string, stdout io.Writer) (*config, error) {
	cfg := &config{}
	flags := flag.NewFlagSet("users", flag.ContinueOnError)
	flags.SetOutput(io.Discard) // we print the usage and the errors ourselves, each to its place
	flags.Usage = func() {}     // else the flag package prints the usage after every mistake too
	flags.StringVar(&cfg.addr, "addr", "localhost:8080", "`address` to listen on; port 0 picks a free port")
	flags.StringVar(&cfg.dataFile, "data", "", "keep users in this JSON `file`, such as users.json; without it they live in memory only")
	flags.StringVar(&cfg.logFormat, "log-format", "text", "log as `text` or json")
	cors := flags.String("cors-origin", "", "comma-separated `origins` whose pages may call the API (for example http://localhost:3000), or *")
	delay := flags.String("delay", "0s", "slow every /api/ answer by this `duration` (0 to 10s, such as 500ms), to show loading states")
	flags.BoolVar(&cfg.sampleData, "sample-data", false, "add 12 example users to an empty store")
	flags.StringVar(&cfg.tlsCert, "tls-cert", "", "serve only HTTPS, with the PEM certificate (chain) in this `file`; needs -tls-key")
	tlsKey := flags.String("tls-key", "", "the PEM private key `file` of -tls-cert")
	flags.BoolVar(&cfg.showVersion, "version", false, "print the version and exit")

	err := flags.Parse(args[1:])
	switch {
	case errors.Is(err, flag.ErrHelp): // -h, -help or --help
		fmt.Fprintf(stdout, "Usage: users [flags]\n\nServes a collection of users over HTTP at /api/users.\n"+
			"Tokens come from USERS_TOKENS=\"TOKEN:write,TOKEN:read\"; without it, two are generated and printed.\n\nFlags:\n")
		flags.SetOutput(stdout)
		flags.PrintDefaults()
		return nil, flag.ErrHelp
	case err != nil:
		return nil, withAdvice(fmt.Errorf("%w: %w", errUsage, err), "run with -h to see the flags")
	case cfg.showVersion:
		return cfg, nil // -version prints the version whatever else the flags and the environment say
	case flags.NArg() > 0:
		return nil, withAdvice(fmt.Errorf("%w: unexpected argument %q", errUsage, flags.Arg(0)), "the service takes only flags: run with -h to see them")
	case !isListenAddress(cfg.addr):
		return nil, withAdvice(fmt.Errorf("%w: -addr %q is not host:port", errUsage, cfg.addr),
			"write it as localhost:8080, with a port from 0 (any free port) to 65535")
	case cfg.logFormat != "text" && cfg.logFormat != "json":
		return nil, fmt.Errorf("%w: -log-format %q is neither text nor json", errUsage, cfg.logFormat)
	}
	if cfg.delay, err = parseDelay(*delay); err != nil {
		return nil, err
	}
	cfg.timeouts = defaultTimeouts(cfg.delay)
	if cfg.cors, err = parseCORSOrigins(*cors); err != nil {
		return nil, fmt.Errorf("%w: %w", errUsage, err)
	}
	if cfg.tokens, cfg.generated, err = loadTokens(getenv("USERS_TOKENS")); err != nil {
		return nil, withAdvice(fmt.Errorf("%w: %w", errUsage, err),
			"write USERS_TOKENS as TOKEN:ROLE entries separated by commas, ROLE read or write, such as USERS_TOKENS=\"TOKEN1:write,TOKEN2:read\"")
	}
	if cfg.generated != nil && cfg.logFormat == "json" {
		// JSON logs go to a collector, which would keep a generated token in a log record.
		return nil, withAdvice(fmt.Errorf("%w: -log-format json without USERS_TOKENS", errUsage),
			"set USERS_TOKENS: the tokens a server makes itself are shown only in a text notice, never in a log record")
	}
	if cfg.tls, err = loadTLSConfig(cfg.tlsCert, *tlsKey); err != nil {
		return nil, fmt.Errorf("%w: %w", errUsage, err)
	}
	return cfg, nil
}

// parseDelay reads -delay: a duration from 0 to 10s.
func parseDelay(text string) (time.Duration, error) {
	delay, err := time.ParseDuration(text)
	if _, isNumber := strconv.ParseFloat(text, 64); err != nil && isNumber == nil {
		return 0, withAdvice(fmt.Errorf("%w: -delay %s has no unit", errUsage, text), "write -delay "+text+"ms")
	}
	if err != nil || delay < 0 || delay > 10*time.Second {
		return 0, withAdvice(fmt.Errorf("%w: -delay %s is not a duration from 0 to 10s", errUsage, text), "write it as 500ms or 2s")
	}
	return delay, nil
}

// isListenAddress checks -addr at once, so a typo is a usage error (exit 2), not exit 1.
func isListenAddress(addr string) bool {
	_, port, err := net.SplitHostPort(addr)
	_, convErr := strconv.ParseUint(port, 10, 16) // digits only, 0 to 65535
	return err == nil && convErr == nil
}

// printTokenNotice shows generated tokens, with a curl line that works as pasted: nowhere else.
// It is plain lines before any log record, so that the curl line pastes as it is.
func printTokenNotice(stderr io.Writer, generated *generatedTokens, curl string) {
	fmt.Fprintf(stderr, "No USERS_TOKENS set, so this run made two tokens. They are shown only here.\n"+
		"  write token: %s\n  read token:  %s\nTry it:\n  %s\n\n", generated.write, generated.read, curl)
}

// newLogger is log/slog's own text or JSON handler: no handler of our own.
func newLogger(format string, out io.Writer) *slog.Logger {
	if format == "json" {
		return slog.New(slog.NewJSONHandler(out, nil))
	}
	return slog.New(slog.NewTextHandler(out, nil))
}

// addSampleUsers adds the sample users (user.go) for demos (-sample-data) to a store that never
// had a user, writing as the API does.
func addSampleUsers(ctx context.Context, store *userStore) error {
	if never, err := store.neverHadUsers(ctx); err != nil || !never {
		return err
	}
	for _, fields := range sampleUsers() {
		if _, err := store.create(ctx, fields, preconditions{}.onCollection); err != nil {
			return fmt.Errorf("adding sample users: %w", err)
		}
	}
	return nil
}
