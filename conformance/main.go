// Command conformance checks a server against the rules of REST and HTTP that docs/api.md follows,
// and reports each rule it breaks with the requirement, what was sent, what was expected, what came
// back, and a curl line that sends it again:
//
//	USERS_WRITE_TOKEN=... USERS_READ_TOKEN=... go run ./conformance -url http://localhost:8080
//
// What it checks is a collection that a description names (docs/kit.md): this service's users,
// with no -resource, or any other with -resource FILE. describe drafts a description from an
// OpenAPI document, to edit:
//
//	go run ./conformance describe -openapi URL_OR_FILE -collection /api/books
//
// A server on a certificate of its own, such as a self-signed one, is checked with that
// certificate to trust, as curl's --cacert: -url https://localhost:8443 -cacert cert.pem.
//
// It creates items of its own, with a tag unique to the run, and deletes them at the end (unless
// -keep asks to leave them, so that a failure's curl line can be sent again); it never changes data
// it did not create, and its rules read only its own items, so several runs may share a server.
// Exit status: 0 when no rule failed, 1 when one did, 2 when the run could not proceed.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"

	"users/conformance/kit"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// Once the first signal has come, stop gives the signals back their default handling, so a
	// second Ctrl-C ends the kit at once, its clean-up of the users it made left undone.
	context.AfterFunc(ctx, stop)
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// Exit statuses.
const (
	allPassed   = 0
	ruleFailed  = 1
	cannotCheck = 2 // bad flags or description, no server at the URL, a certificate not trusted, a token refused
)

// options is what the flags decide.
type options struct {
	url, origin   string
	resource      string // the description's file; "" for users.json
	cacert        string // the PEM file of the certificates to trust, for https
	tier          kit.Tier
	run           *regexp.Regexp
	junit, json   string // the files to write the results to
	baseline      string // the file of known failures
	list, verbose bool
	keep          bool // leave the run's items in place at its end
}

// run is the whole command, given what main takes from the process; it returns the exit status.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "describe" {
		return describe(ctx, args[1:], stdout, stderr)
	}
	opts, err := parseFlags(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return allPassed
	}
	if err != nil {
		fmt.Fprintln(stderr, "conformance:", err)
		return cannotCheck
	}
	description, err := readDescription(opts.resource)
	if err != nil {
		fmt.Fprintln(stderr, "conformance:", err)
		return cannotCheck
	}
	rules := selectRules(kit.RulesFor(description), opts.tier, opts.run)
	fmt.Fprintln(stdout, "users conformance kit", kit.Version)
	fmt.Fprintln(stdout, describeDescription(description))
	if opts.list {
		writeList(stdout, rules)
		return allPassed
	}
	cfg := kit.Config{URL: opts.url, Description: description, WriteToken: getenv("USERS_WRITE_TOKEN"), ReadToken: getenv("USERS_READ_TOKEN"),
		Origin: opts.origin, CACert: opts.cacert, Keep: opts.keep}
	if description.Auth != nil && cfg.WriteToken == "" {
		fmt.Fprintln(stderr, "conformance: USERS_WRITE_TOKEN is not set: the description declares auth, so set it to a token that may read and write "+
			"(and USERS_READ_TOKEN to one that may only read, if the server has one)")
		return cannotCheck
	}
	if cfg.Baseline, err = readBaseline(opts.baseline); err != nil {
		fmt.Fprintln(stderr, "conformance:", err)
		return cannotCheck
	}
	fmt.Fprintf(stdout, "%s: %d rules of tier %s; %s; origin %s\n\n", opts.url, len(rules), describeTier(opts.tier),
		tokensNote(cfg), opts.origin)
	report, err := kit.Run(ctx, cfg, rules)
	if err != nil && report == nil {
		fmt.Fprintln(stderr, "conformance:", err)
		return cannotCheck
	}
	writeReport(stdout, report, cfg.Baseline, opts.verbose)
	for _, leftover := range report.Leftovers {
		fmt.Fprintln(stderr, "conformance: could not delete an item the run created:", leftover)
	}
	for _, out := range []struct {
		file  string
		write func(io.Writer, *kit.Report) error
	}{{opts.junit, writeJUnit}, {opts.json, writeJSON}} {
		if out.file != "" {
			if err := writeFile(out.file, report, out.write); err != nil {
				fmt.Fprintln(stderr, "conformance:", err)
				return cannotCheck
			}
		}
	}
	switch {
	case err != nil: // interrupted: the report is of the rules checked so far
		fmt.Fprintln(stderr, "conformance:", err)
		return cannotCheck
	case report.Failed():
		return ruleFailed
	}
	return allPassed
}

// parseFlags reads the flags. Tokens never come from a flag: argv is visible in ps.
func parseFlags(args []string, stdout io.Writer) (options, error) {
	var opts options
	flags := flag.NewFlagSet("conformance", flag.ContinueOnError)
	flags.SetOutput(io.Discard) // the usage goes to stdout on -h, and a mistake is one line on stderr
	flags.StringVar(&opts.url, "url", "", "base `URL` of the server to check, such as http://localhost:8080")
	flags.StringVar(&opts.resource, "resource", "", "the description of the collection to check, a JSON `file` (docs/kit.md); without it, this\n"+
		"service's users (users.json, built in)")
	tier := flags.String("tier", "reference", "check this `tier` and those above it: must, should or reference (all)")
	runPattern := flags.String("run", "", "check only the rules whose id matches this `regexp`")
	flags.StringVar(&opts.junit, "junit", "", "also write the results to this `file` as JUnit XML, a test case per rule")
	flags.StringVar(&opts.json, "json", "", "also write the results to this `file` as JSON")
	flags.StringVar(&opts.baseline, "baseline", "", "a `file` of known failures, one rule id a line: reported, but they do not fail the run")
	flags.StringVar(&opts.origin, "origin", "http://localhost:3000", "the page `origin` the CORS rules send; they are skipped if the server does not allow it")
	flags.StringVar(&opts.cacert, "cacert", "", "for an https URL, trust the certificates in this PEM `file`, such as a self-signed server's own, as\n"+
		"curl's --cacert: only these, and the server's name is still checked; the curl lines say it too")
	flags.BoolVar(&opts.list, "list", false, "list the rules of the description, with their tier, the keys and what they need, their source and\n"+
		"section of docs/api.md, and send nothing")
	flags.BoolVar(&opts.verbose, "v", false, "show every rule, not only those that fail")
	flags.BoolVar(&opts.keep, "keep", false, "leave the items the run created in place at its end, so that a failure's curl line can be sent\n"+
		"again afterwards (the report names the run's tag, which they hold)")
	if err := flags.Parse(args); errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(stdout, "users conformance kit %s\n\nUsage: conformance -url URL [-resource FILE] [flags]\n"+
			"       conformance describe -openapi URL_OR_FILE -collection PATH\n\n"+
			"Checks a server against the rules of REST and HTTP that docs/api.md follows, on the collection a\n"+
			"description names (docs/kit.md): this service's users without -resource, any other with it.\n"+
			"describe drafts a description from an OpenAPI document in JSON, to edit.\n\n"+
			"Tokens come from the environment, for an API whose description declares auth: USERS_WRITE_TOKEN\n"+
			"(read and write) and USERS_READ_TOKEN (read only; without it the rules of roles are skipped). A\n"+
			"server on https whose certificate the system does not trust, such as a self-signed one, is\n"+
			"checked with -cacert and that certificate.\n\nFlags:\n", kit.Version)
		flags.SetOutput(stdout)
		flags.PrintDefaults()
		return opts, err
	} else if err != nil {
		return opts, fmt.Errorf("%w (run with -h for the flags)", err)
	}
	var err error
	switch {
	case flags.NArg() > 0:
		return opts, fmt.Errorf("unexpected argument %q: the command takes only flags (run with -h)", flags.Arg(0))
	case opts.url == "" && !opts.list:
		return opts, errors.New("-url is required: the base URL of the server to check, such as http://localhost:8080")
	}
	if opts.tier, err = kit.ParseTier(*tier); err != nil {
		return opts, fmt.Errorf("-tier: %w", err)
	}
	if opts.run, err = regexp.Compile(*runPattern); err != nil {
		return opts, fmt.Errorf("-run: %w", err)
	}
	return opts, nil
}

// selectRules keeps the rules of tier and the tiers above it whose id matches pattern.
func selectRules(rules []kit.Rule, tier kit.Tier, pattern *regexp.Regexp) []kit.Rule {
	var selected []kit.Rule
	for _, r := range rules {
		if r.Tier <= tier && pattern.MatchString(r.ID) {
			selected = append(selected, r)
		}
	}
	return selected
}

// readBaseline reads -baseline, if given; an id the kit does not have is a mistake in the file.
func readBaseline(file string) (kit.Baseline, error) {
	if file == "" {
		return nil, nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("-baseline: %w", err)
	}
	defer f.Close()
	baseline, err := kit.ParseBaseline(f)
	if err != nil {
		return nil, fmt.Errorf("-baseline: %w", err)
	}
	if unknown := baseline.Unknown(kit.Rules()); len(unknown) > 0 {
		return nil, fmt.Errorf("-baseline %s names rules the kit does not have: %s", file, strings.Join(unknown, ", "))
	}
	return baseline, nil
}

// describeTier says which tiers a run checks.
func describeTier(tier kit.Tier) string {
	return map[kit.Tier]string{kit.Must: "must", kit.Should: "should and must", kit.Reference: "reference and above (all)"}[tier]
}

// readDescription reads the description of -resource, or gives users.json without one.
func readDescription(file string) (*kit.Description, error) {
	if file == "" {
		return kit.UsersDescription(), nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("-resource: %w", err)
	}
	defer f.Close()
	return kit.ParseDescription(file, f)
}

// describeDescription says which description a run uses, what it names, and what it leaves out.
func describeDescription(d *kit.Description) string {
	line := fmt.Sprintf("description %s: the collection %s", d.Name, d.Collection)
	if d.ThisReference {
		return line + ", of this reference"
	}
	return fmt.Sprintf("%s; the %d rules of this reference only are left out, as it is not this reference", line, len(kit.Rules())-len(kit.RulesFor(d)))
}

// tokensNote says which tokens a run has.
func tokensNote(cfg kit.Config) string {
	if cfg.Description.Auth == nil {
		return "no authentication, as the description declares none (the rules of auth are skipped)"
	}
	if cfg.ReadToken == "" {
		return "one token (no USERS_READ_TOKEN: the rules of roles are skipped)"
	}
	return "a write and a read token"
}

// writeFile writes the report to a file with write.
func writeFile(name string, report *kit.Report, write func(io.Writer, *kit.Report) error) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := write(f, report); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return f.Close()
}
