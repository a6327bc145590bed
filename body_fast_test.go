package main

import (
	"bytes"
	"net/mail"
	"testing"
	"unicode/utf8"
)

// decodeSimpleUserBody is a fast path for the usual body; these prove it never disagrees with the
// general decoder, which judges every body it declines.

var simpleBodySeeds = []string{
	`{"name":"Ann","email":"ann@example.com"}`,
	` { "email" : "ann@example.com" ,` + "\n\t\r" + `"name": "Ann Lee" } ` + "\n",
	`{"name":"Zoë ✓","email":"zoe@example.com"}`,
	`{}`, `{"name":"Ann"}`, `{"email":""}`, `{"name":"  padded  "}`,
	`{"name":"Ann","name":"Bob"}`, `{"name":"Ann",}`, `{"name":"Ann" "email":"a@b.c"}`,
	`{"name":"Ann"}{}`, `{"name":"Ann"} x`, `{"name":"A\"nn"}`, `{"n\u0061me":"Ann"}`,
	`{"Name":"Ann"}`, `{"id":7,"name":"Ann"}`, `{"name":null}`, `{"name":5}`, `{"name":"Ann"`,
	`{"name":"Ann",`, `{"name"}`, `{"name":}`, `{,}`, `[]`, `"Ann"`, `{"name":"` + "\x01" + `"}`,
	`{"name":"` + "\x7f" + `"}`, `{"name":"Ann"}` + "\u00a0",
}

func TestSimpleUserBodyAgreesWithTheGeneralDecoder(t *testing.T) {
	for _, body := range simpleBodySeeds {
		checkSimpleUserBodyAgrees(t, []byte(body))
	}
	if _, ok := decodeSimpleUserBody([]byte(simpleBodySeeds[0])); !ok {
		t.Errorf("the fast path declines the most usual body %s", simpleBodySeeds[0])
	}
}

func FuzzSimpleUserBodyAgrees(f *testing.F) {
	for _, body := range simpleBodySeeds {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkSimpleUserBodyAgrees(t, body) })
}

// checkSimpleUserBodyAgrees fails when the fast path accepts a body that the general decoder
// refuses or reads otherwise. Bodies that decodeUserBody refuses before either runs are skipped.
func checkSimpleUserBodyAgrees(t *testing.T, body []byte) {
	t.Helper()
	if !utf8.Valid(body) || bytes.HasPrefix(body, []byte("\uFEFF")) || len(bytes.TrimSpace(body)) == 0 {
		return
	}
	fast, ok := decodeSimpleUserBody(body)
	if !ok {
		return
	}
	general, err := decodeUserBodyTokens(body, 7)
	if err != nil {
		t.Fatalf("%q: the fast path accepts it, the general decoder says %v", body, err)
	}
	if fast != general {
		t.Fatalf("%q: the fast path reads %+v, the general decoder %+v", body, fast, general)
	}
}

// isCommonAddress is a fast path for isPlainAddress: every address it accepts, net/mail must
// accept unchanged.

var addressSeeds = []string{
	"ann@example.com", "a.b-c_d%e+f@sub-1.example.co.uk", "A@B", "1@2", "a@-", "-@a",
	".a@b", "a.@b", "a..b@c", "a@b..c", "a@.b", "a@b.", "@b", "a@", "a", "a@b@c", "a b@c",
	`"a"@b`, "a@[1.2.3.4]", "<a@b>", "Ann <a@b>", "a@b (comment)", "é@b", "a@b\n", "a!#$&'*/=?^`{|}~@b",
}

func TestCommonAddressesAreWhatNetMailAccepts(t *testing.T) {
	for _, address := range addressSeeds {
		checkCommonAddress(t, address)
	}
	if !isCommonAddress("ann.lee+tag@example.com") {
		t.Error("the fast path declines a usual address")
	}
}

func FuzzCommonAddress(f *testing.F) {
	for _, address := range addressSeeds {
		f.Add(address)
	}
	f.Fuzz(checkCommonAddress)
}

func checkCommonAddress(t *testing.T, address string) {
	if !isCommonAddress(address) {
		return
	}
	parsed, err := mail.ParseAddress(address)
	if err != nil || parsed.Name != "" || parsed.Address != address {
		t.Fatalf("%q: the fast path accepts it, net/mail reads %+v, %v", address, parsed, err)
	}
}
