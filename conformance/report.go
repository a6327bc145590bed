package main

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"users/conformance/kit"
)

// writeReport writes the report for a person: the convention rules topic by topic, in the order a
// learner builds a server, then the rules of this reference only, apart; each failure with its
// requirement, what was sent, what was expected, what came back and a curl line. The last line
// counts the rules.
func writeReport(w io.Writer, report *kit.Report, baseline kit.Baseline, verbose bool) {
	byTopic := map[kit.Scope]map[string][]kit.Result{kit.Convention: {}, kit.ThisReference: {}}
	for _, r := range report.Results {
		byTopic[r.Rule.Scope][r.Rule.Topic()] = append(byTopic[r.Rule.Scope][r.Rule.Topic()], r)
	}
	if len(byTopic[kit.ThisReference]) > 0 {
		fmt.Fprintln(w, "The conventions:")
	}
	writeTopics(w, byTopic[kit.Convention], verbose)
	if len(byTopic[kit.ThisReference]) > 0 {
		fmt.Fprintln(w, "\nThis reference only, its own choices, written for users:")
		writeTopics(w, byTopic[kit.ThisReference], verbose)
	}
	writeSummary(w, report, baseline)
}

// writeTopics writes the results of a scope, topic by topic: a line of counts for each, then its
// failures in full and its skips, one line for each reason.
func writeTopics(w io.Writer, byTopic map[string][]kit.Result, verbose bool) {
	for _, topic := range kit.Topics() {
		results := byTopic[topic]
		if len(results) == 0 {
			continue
		}
		fmt.Fprintf(w, "%-13s %s\n", topic, counts(results))
		var skipReasons []string         // in the order they first come
		skipped := map[string][]string{} // the rules skipped for each reason, each with its tier
		for _, r := range results {
			switch {
			case r.Status == kit.Failed:
				writeFailure(w, r)
			case r.Status == kit.Skipped && verbose:
				fmt.Fprintf(w, "  skip %s [%s]: %s\n", r.Rule.ID, r.Rule.Tier, r.Reason)
			case r.Status == kit.Skipped:
				if len(skipped[r.Reason]) == 0 {
					skipReasons = append(skipReasons, r.Reason)
				}
				skipped[r.Reason] = append(skipped[r.Reason], fmt.Sprintf("%s [%s]", r.Rule.ID, r.Rule.Tier))
			case verbose:
				fmt.Fprintf(w, "  ok   %s\n", r.Rule.ID)
			}
		}
		for _, reason := range skipReasons { // which rules, and why
			fmt.Fprintf(w, "  %d skipped (%s): %s\n", len(skipped[reason]), strings.Join(skipped[reason], ", "), reason)
		}
	}
}

// writeSummary writes the end of the report: the baseline's part, where the run's items are, and
// the counts.
func writeSummary(w io.Writer, report *kit.Report, baseline kit.Baseline) {
	fmt.Fprintln(w)
	passed, failed, skipped := report.Counts()
	known, nowPassing := 0, []string{}
	for _, r := range report.Results {
		if r.Status == kit.Failed && r.Known {
			known++
		}
		if r.Status == kit.Passed && baseline[r.Rule.ID] {
			nowPassing = append(nowPassing, r.Rule.ID)
		}
	}
	if known > 0 {
		fmt.Fprintf(w, "%d of the failures are known, in the baseline: they do not fail the run.\n", known)
	}
	if len(nowPassing) > 0 {
		fmt.Fprintf(w, "In the baseline but passing now, so it can lose them: %s.\n", strings.Join(nowPassing, ", "))
	}
	switch {
	case report.Kept:
		fmt.Fprintf(w, "Checked in %s; the items of the run are kept, as -keep asked, so a curl line can be sent again: "+
			"they are those that hold %s%s.\n", report.Duration.Round(time.Millisecond), report.Tag, listedBy(report))
	case len(report.Leftovers) == 0:
		fmt.Fprintf(w, "Checked in %s; the items of the run (tag %s) are deleted.\n", report.Duration.Round(time.Millisecond), report.Tag)
	default:
		fmt.Fprintf(w, "Checked in %s; %d items of the run (tag %s) could not be deleted: see stderr.\n",
			report.Duration.Round(time.Millisecond), len(report.Leftovers), report.Tag)
	}
	fmt.Fprintf(w, "%d passed, %d failed, %d skipped\n", passed, failed, skipped)
}

// listedBy says which request lists the items of the run, where the description has a tag filter.
func listedBy(report *kit.Report) string {
	d := report.Description
	if d.Tag == nil {
		return ""
	}
	return fmt.Sprintf(" in %s (GET %s?%s=%s lists them)", d.Tag.Field, d.Collection, d.Tag.Filter, report.Tag)
}

// counts says how the rules of a topic went, leaving out what is zero.
func counts(results []kit.Result) string {
	n := map[kit.Status]int{}
	for _, r := range results {
		n[r.Status]++
	}
	var parts []string
	for _, s := range []kit.Status{kit.Passed, kit.Failed, kit.Skipped} {
		if n[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[s], s))
		}
	}
	return strings.Join(parts, ", ")
}

// writeFailure writes one failure: the h2spec way, with Schemathesis's curl line at the end.
func writeFailure(w io.Writer, r kit.Result) {
	label := "FAIL"
	if r.Known {
		label = "FAIL (known, in the baseline)"
	}
	fmt.Fprintf(w, "\n  %s %s [%s]\n", label, r.Rule.ID, r.Rule.Tier)
	field := func(name, value string) {
		fmt.Fprintf(w, "    %-12s %s\n", name+":", strings.ReplaceAll(value, "\n", "\n                 "))
	}
	field("requirement", r.Rule.Requirement+"\n("+sourceOf(r.Rule)+")")
	if r.Exchange != nil {
		field("sent", describeRequest(r.Exchange))
	}
	if r.Expected != "" {
		field("expected", r.Expected)
	}
	field("got", r.Got)
	if r.Exchange != nil {
		fmt.Fprintf(w, "    %s\n", r.Exchange.Curl())
	}
	fmt.Fprintln(w)
}

// sourceOf names where a rule comes from, and the docs/api.md section that states it.
func sourceOf(r kit.Rule) string {
	if strings.Contains(r.Source, r.Doc) {
		return r.Source
	}
	return r.Source + "; stated in " + r.Doc
}

// describeRequest writes a request as it went: its line, the headers the kit set, and its body.
func describeRequest(e *kit.Exchange) string {
	lines := []string{e.Method + " " + e.URL}
	names := make([]string, 0, len(e.Header))
	for name := range e.Header {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		for _, value := range e.Header[name] {
			lines = append(lines, name+": "+value)
		}
	}
	if e.Chunked {
		lines = append(lines, "Transfer-Encoding: chunked")
	}
	if len(e.Body) > 0 {
		lines = append(lines, shown(e.Body, 200))
	}
	return strings.Join(lines, "\n")
}

// shown is a body as a report shows it: quoted when it holds what would not print, and cut short
// after most bytes.
func shown(body []byte, most int) string {
	s := string(body)
	if !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) || r == '\uFEFF' }) {
		s = strconv.Quote(s)
	}
	if len(s) > most {
		s = strings.ToValidUTF8(s[:most], "") + fmt.Sprintf("... (%d bytes in all)", len(body))
	}
	return s
}

// writeList writes the rules with their tier, their scope, the keys and what they need, their
// requirement and their source.
func writeList(w io.Writer, rules []kit.Rule) {
	for _, r := range rules {
		scope := ""
		if r.Scope == kit.ThisReference {
			scope = " (this reference only)"
		}
		keys := ""
		if r.Keys != 0 {
			keys = "; keys " + r.Keys.String()
		}
		fmt.Fprintf(w, "\n%s [%s]%s needs %s%s\n    %s\n    %s\n", r.ID, r.Tier, scope, r.Needs, keys, r.Requirement, sourceOf(r))
	}
	fmt.Fprintf(w, "\n%d rules\n", len(rules))
}

// junitSuites is the JUnit XML report: a test suite per topic, a test case per rule. A known
// failure is a skip whose message says so, since it must not fail the build.
type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Name    string       `xml:"name,attr"`
	Tests   int          `xml:"tests,attr"`
	Failed  int          `xml:"failures,attr"`
	Skipped int          `xml:"skipped,attr"`
	Time    string       `xml:"time,attr"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name    string      `xml:"name,attr"`
	Tests   int         `xml:"tests,attr"`
	Failed  int         `xml:"failures,attr"`
	Skipped int         `xml:"skipped,attr"`
	Cases   []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure"`
	Skipped   *junitMessage `xml:"skipped"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// writeJUnit writes the report as JUnit XML, which CI systems show test by test.
func writeJUnit(w io.Writer, report *kit.Report) error {
	suites := junitSuites{Name: "users conformance kit " + report.Version, Time: seconds(report.Duration.Seconds())}
	for _, topic := range kit.Topics() {
		suite := junitSuite{Name: topic}
		for _, r := range report.Results {
			if r.Rule.Topic() != topic {
				continue
			}
			c := junitCase{Name: r.Rule.ID, Classname: "conformance." + topic, Time: seconds(r.Duration.Seconds())}
			if r.Rule.Scope == kit.ThisReference {
				c.Classname = "conformance.this-reference." + topic
			}
			switch {
			case r.Status == kit.Failed && r.Known:
				c.Skipped = &junitMessage{Message: "known failure, in the baseline: " + r.Rule.Requirement, Text: failureText(r)}
				suite.Skipped++
			case r.Status == kit.Failed:
				c.Failure = &junitMessage{Message: r.Rule.Requirement, Text: failureText(r)}
				suite.Failed++
			case r.Status == kit.Skipped:
				c.Skipped = &junitMessage{Message: r.Reason}
				suite.Skipped++
			}
			suite.Cases = append(suite.Cases, c)
		}
		if len(suite.Cases) > 0 {
			suite.Tests = len(suite.Cases)
			suites.Suites = append(suites.Suites, suite)
			suites.Tests, suites.Failed, suites.Skipped = suites.Tests+suite.Tests, suites.Failed+suite.Failed, suites.Skipped+suite.Skipped
		}
	}
	io.WriteString(w, xml.Header)
	encoder := xml.NewEncoder(w)
	encoder.Indent("", "  ")
	if err := encoder.Encode(suites); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// failureText is a failure as the report for a person writes it, for the body of a JUnit failure.
func failureText(r kit.Result) string {
	var b strings.Builder
	writeFailure(&b, r)
	return b.String()
}

func seconds(s float64) string { return strconv.FormatFloat(s, 'f', 3, 64) }

// jsonReport is the JSON report: the run, then a result per rule, with the exchange that failed.
type jsonReport struct {
	Version     string       `json:"version"`
	URL         string       `json:"url"`
	Description string       `json:"description"`
	Collection  string       `json:"collection"`
	Tag         string       `json:"tag"`
	DurationMS  int64        `json:"duration_ms"`
	Passed      int          `json:"passed"`
	Failed      int          `json:"failed"`
	Skipped     int          `json:"skipped"`
	Leftovers   []string     `json:"leftovers,omitempty"`
	Results     []jsonResult `json:"results"`
}

type jsonResult struct {
	ID          string        `json:"id"`
	Tier        string        `json:"tier"`
	Requirement string        `json:"requirement"`
	Source      string        `json:"source"`
	Doc         string        `json:"doc"`
	Scope       string        `json:"scope"`
	Keys        string        `json:"keys,omitempty"`
	Needs       string        `json:"needs"`
	Status      string        `json:"status"`
	Known       bool          `json:"known,omitempty"`
	Reason      string        `json:"reason,omitempty"`
	Expected    string        `json:"expected,omitempty"`
	Got         string        `json:"got,omitempty"`
	Sent        *jsonRequest  `json:"sent,omitempty"`
	Received    *jsonResponse `json:"received,omitempty"`
	Curl        string        `json:"curl,omitempty"`
	DurationMS  float64       `json:"duration_ms"`
}

type jsonRequest struct {
	Method  string      `json:"method"`
	URL     string      `json:"url"`
	Header  http.Header `json:"header"`
	Body    string      `json:"body,omitempty"`
	Chunked bool        `json:"chunked,omitempty"`
}

type jsonResponse struct {
	Status int         `json:"status"`
	Header http.Header `json:"header"`
	Body   string      `json:"body,omitempty"`
}

// writeJSON writes the report as JSON, bodies cut short after 4 KiB.
func writeJSON(w io.Writer, report *kit.Report) error {
	out := jsonReport{Version: report.Version, URL: report.URL, Description: report.Description.Name, Collection: report.Description.Collection,
		Tag: report.Tag, DurationMS: report.Duration.Milliseconds(), Leftovers: report.Leftovers, Results: []jsonResult{}}
	out.Passed, out.Failed, out.Skipped = report.Counts()
	for _, r := range report.Results {
		result := jsonResult{ID: r.Rule.ID, Tier: r.Rule.Tier.String(), Requirement: r.Rule.Requirement, Source: r.Rule.Source,
			Doc: r.Rule.Doc, Scope: r.Rule.Scope.String(), Keys: r.Rule.Keys.String(), Needs: r.Rule.Needs.String(), Status: r.Status.String(), Known: r.Known, Reason: r.Reason,
			Expected: r.Expected, Got: r.Got, DurationMS: float64(r.Duration.Microseconds()) / 1000}
		if e := r.Exchange; e != nil {
			result.Sent = &jsonRequest{Method: e.Method, URL: e.URL, Header: e.Header, Body: shown(e.Body, 4096), Chunked: e.Chunked}
			if e.Status != 0 {
				result.Received = &jsonResponse{Status: e.Status, Header: e.ResponseHeader, Body: shown(e.ResponseBody, 4096)}
			}
			result.Curl = e.Curl()
		}
		out.Results = append(out.Results, result)
	}
	encoder := json.NewEncoder(w)
	encoder.SetIndent("", "  ")
	return encoder.Encode(out)
}
